//! The seccomp layer: system calls a confined command never needs, and the socket families
//! its network policy excludes, fail with EPERM.
//!
//! Contract: [`install`] puts two filters on the calling thread (inherited by everything it
//! starts; `no_new_privs` is set first). The first returns EPERM for:
//! - debugging and memory access to other processes: `ptrace`, `process_vm_readv/writev`;
//! - mount and namespace changes: `mount`, `umount2`, `pivot_root`, the new mount API,
//!   `unshare`, `setns`, and `clone` with any namespace flag;
//! - kernel attack surface: `keyctl`, `add_key`, `request_key`, `bpf`, `perf_event_open`,
//!   `userfaultfd`, `io_uring_*` (which can open sockets behind the socket filter's back),
//!   `open_by_handle_at`, module and kexec loading, `swapon/off`, `reboot`, `acct`, `quotactl`;
//! - sockets: every family but unix, IPv4, IPv6 and netlink; netlink except `NETLINK_ROUTE`;
//!   raw and packet IP sockets; IP sockets when the network is off (unless local binding is
//!   allowed: the namespace has only a loopback then), UDP when no network namespace
//!   isolates the command; unix sockets unless the policy allows some. `socketpair` stays
//!   allowed for unix sockets (pipes between a command's own processes reach nothing).
//!
//! The second, hand-written filter returns ENOSYS for `clone3` (its flags are behind a
//! pointer the filter cannot read; C libraries fall back to `clone`, which the first filter
//! checks) and for x32 system call numbers (which would bypass filters keyed on numbers).
//! Other architectures' system calls (e.g. `int 0x80` on x86_64) kill the process.

use std::collections::BTreeMap;

use nix::libc;
use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen as Len, SeccompCmpOp as Op, SeccompCondition as Cond, SeccompFilter,
    SeccompRule, TargetArch, sock_filter,
};

use crate::error::{Layer, SandboxError};

/// What IP sockets the command may create.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Inet {
    /// None at all.
    Deny,
    /// TCP only (no namespace isolates the command, so UDP would reach the machine's network).
    StreamOnly,
    /// Any (the network namespace, or the policy, makes them safe).
    Allow,
}

/// The policy-dependent part of the filter.
#[derive(Debug, Clone, Copy)]
pub(crate) struct SocketRules {
    /// IP sockets.
    pub inet: Inet,
    /// Whether `socket(AF_UNIX, …)` is allowed.
    pub unix: bool,
}

const DENIED: &[libc::c_long] = &[
    libc::SYS_ptrace,
    libc::SYS_process_vm_readv,
    libc::SYS_process_vm_writev,
    libc::SYS_mount,
    libc::SYS_umount2,
    libc::SYS_pivot_root,
    libc::SYS_fsopen,
    libc::SYS_fsconfig,
    libc::SYS_fsmount,
    libc::SYS_fspick,
    libc::SYS_move_mount,
    libc::SYS_open_tree,
    libc::SYS_mount_setattr,
    libc::SYS_unshare,
    libc::SYS_setns,
    libc::SYS_keyctl,
    libc::SYS_add_key,
    libc::SYS_request_key,
    libc::SYS_bpf,
    libc::SYS_perf_event_open,
    libc::SYS_userfaultfd,
    libc::SYS_io_uring_setup,
    libc::SYS_io_uring_enter,
    libc::SYS_io_uring_register,
    libc::SYS_open_by_handle_at,
    libc::SYS_kexec_load,
    libc::SYS_kexec_file_load,
    libc::SYS_init_module,
    libc::SYS_finit_module,
    libc::SYS_delete_module,
    libc::SYS_swapon,
    libc::SYS_swapoff,
    libc::SYS_reboot,
    libc::SYS_acct,
    libc::SYS_quotactl,
];

const NAMESPACE_FLAGS: &[libc::c_int] = &[
    libc::CLONE_NEWNS,
    libc::CLONE_NEWUSER,
    libc::CLONE_NEWNET,
    libc::CLONE_NEWPID,
    libc::CLONE_NEWIPC,
    libc::CLONE_NEWUTS,
    libc::CLONE_NEWCGROUP,
];

/// Installs both filters on the calling thread.
pub(crate) fn install(sockets: SocketRules) -> Result<(), SandboxError> {
    let main = build(sockets)?;
    seccompiler::apply_filter(&fallback_filter()).map_err(SandboxError::Seccomp)?;
    seccompiler::apply_filter(&main).map_err(SandboxError::Seccomp)
}

fn target_arch() -> Result<TargetArch, SandboxError> {
    TargetArch::try_from(std::env::consts::ARCH).map_err(|_| SandboxError::Unavailable {
        layer: Layer::Seccomp,
        reason: format!("no seccomp filter for the {} architecture", std::env::consts::ARCH),
    })
}

fn cond(arg: u8, op: Op, value: libc::c_int) -> Result<Cond, seccompiler::BackendError> {
    Cond::new(arg, Len::Dword, op, value as u64)
}

/// The EPERM filter for `sockets`.
pub(crate) fn build(sockets: SocketRules) -> Result<BpfProgram, SandboxError> {
    let arch = target_arch()?;
    let rules = build_rules(sockets).map_err(SandboxError::SeccompBuild)?;
    let eperm = SeccompAction::Errno(libc::EPERM as u32);
    let filter = SeccompFilter::new(rules, SeccompAction::Allow, eperm, arch).map_err(SandboxError::SeccompBuild)?;
    filter.try_into().map_err(SandboxError::SeccompBuild)
}

fn build_rules(sockets: SocketRules) -> Result<BTreeMap<i64, Vec<SeccompRule>>, seccompiler::BackendError> {
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = DENIED.iter().map(|nr| (*nr, Vec::new())).collect();
    let clone_rules = NAMESPACE_FLAGS
        .iter()
        .map(|flag| SeccompRule::new(vec![cond(0, Op::MaskedEq(*flag as u64), *flag)?]))
        .collect::<Result<Vec<_>, _>>()?;
    rules.insert(libc::SYS_clone, clone_rules);

    let type_is = |kind: libc::c_int| cond(1, Op::MaskedEq(0xf), kind);
    let mut socket = vec![
        SeccompRule::new(vec![
            cond(0, Op::Ne, libc::AF_UNIX)?,
            cond(0, Op::Ne, libc::AF_INET)?,
            cond(0, Op::Ne, libc::AF_INET6)?,
            cond(0, Op::Ne, libc::AF_NETLINK)?,
        ])?,
        SeccompRule::new(vec![cond(0, Op::Eq, libc::AF_NETLINK)?, cond(2, Op::Ne, libc::NETLINK_ROUTE)?])?,
    ];
    for family in [libc::AF_INET, libc::AF_INET6] {
        socket.push(SeccompRule::new(vec![cond(0, Op::Eq, family)?, type_is(libc::SOCK_RAW)?])?);
        socket.push(SeccompRule::new(vec![cond(0, Op::Eq, family)?, type_is(SOCK_PACKET)?])?);
        match sockets.inet {
            Inet::Deny => socket.push(SeccompRule::new(vec![cond(0, Op::Eq, family)?])?),
            Inet::StreamOnly => {
                socket.push(SeccompRule::new(vec![cond(0, Op::Eq, family)?, type_is(libc::SOCK_DGRAM)?])?)
            }
            Inet::Allow => {}
        }
    }
    if !sockets.unix {
        socket.push(SeccompRule::new(vec![cond(0, Op::Eq, libc::AF_UNIX)?])?);
    }
    rules.insert(libc::SYS_socket, socket);
    rules.insert(libc::SYS_socketpair, vec![SeccompRule::new(vec![cond(0, Op::Ne, libc::AF_UNIX)?])?]);
    Ok(rules)
}

/// The obsolete `SOCK_PACKET` type (libc deprecates the constant).
const SOCK_PACKET: libc::c_int = 10;
const BPF_LD_W_ABS: u16 = 0x20;
const BPF_JEQ_K: u16 = 0x05 | 0x10;
const BPF_JGE_K: u16 = 0x05 | 0x30;
const BPF_RET_K: u16 = 0x06;
const SECCOMP_RET_ALLOW: u32 = 0x7fff_0000;
const SECCOMP_RET_ERRNO: u32 = 0x0005_0000;
const X32_SYSCALL_BIT: u32 = 0x4000_0000;

fn audit_arch() -> u32 {
    if cfg!(target_arch = "aarch64") { 0xC000_00B7 } else { 0xC000_003E }
}

/// ENOSYS for `clone3` and x32 system calls of this architecture; everything else passes.
fn fallback_filter() -> Vec<sock_filter> {
    let op = |code, jt, jf, k| sock_filter { code, jt, jf, k };
    vec![
        op(BPF_LD_W_ABS, 0, 0, 4),                                    // 0: load seccomp_data.arch
        op(BPF_JEQ_K, 0, 3, audit_arch()), // 1: another architecture: allow (the main filter kills it)
        op(BPF_LD_W_ABS, 0, 0, 0),         // 2: load seccomp_data.nr
        op(BPF_JGE_K, 2, 0, X32_SYSCALL_BIT), // 3: x32: ENOSYS
        op(BPF_JEQ_K, 1, 0, libc::SYS_clone3 as u32), // 4: clone3: ENOSYS
        op(BPF_RET_K, 0, 0, SECCOMP_RET_ALLOW), // 5
        op(BPF_RET_K, 0, 0, SECCOMP_RET_ERRNO | libc::ENOSYS as u32), // 6
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filters_build_for_every_socket_policy() {
        for inet in [Inet::Deny, Inet::StreamOnly, Inet::Allow] {
            for unix in [false, true] {
                let program = build(SocketRules { inet, unix }).expect("builds");
                assert!(program.len() > DENIED.len(), "{inet:?} {unix}: {}", program.len());
            }
        }
    }

    #[test]
    fn the_fallback_filter_jumps_stay_inside_the_program() {
        let program = fallback_filter();
        for (index, instruction) in program.iter().enumerate() {
            if instruction.code & 0x07 == 0x05 {
                assert!(index + 1 + usize::from(instruction.jt) < program.len());
                assert!(index + 1 + usize::from(instruction.jf) < program.len());
            }
        }
    }
}
