//! The seccomp layer: system calls a confined command never needs, and the socket families
//! its network policy excludes, fail with EPERM.
//!
//! Contract: [`install`] puts one filter on the calling thread (inherited by everything it
//! starts; `no_new_privs` is set first). It returns EPERM for:
//! - debugging and memory access to other processes: `ptrace`, `process_vm_readv/writev`,
//!   and `pidfd_getfd` (taking a descriptor of another process of the sandbox: the session
//!   launcher's socket to spine);
//! - mount and namespace changes: `mount`, `umount2`, `pivot_root`, the new mount API,
//!   `unshare`, `setns`, and `clone` with any namespace flag;
//! - kernel attack surface: `keyctl`, `add_key`, `request_key`, `bpf`, `perf_event_open`,
//!   `userfaultfd`, `io_uring_*` (which can open sockets behind the socket filter's back),
//!   `open_by_handle_at`, module and kexec loading, `swapon/off`, `reboot`, `acct`, `quotactl`;
//! - typing into a terminal: `ioctl` `TIOCSTI` (input pushed into the terminal the command
//!   shares with spine and the user's shell) and `TIOCLINUX` (the console's paste); the
//!   request is compared on its low 32 bits, which is all the kernel reads;
//! - sockets: every family but unix, IPv4, IPv6 and netlink; netlink except `NETLINK_ROUTE`;
//!   raw and packet IP sockets; IP sockets when the network is off (unless local binding is
//!   allowed: the namespace has only a loopback then), UDP when no network namespace
//!   isolates the command; unix sockets unless the policy allows some. `socketpair` stays
//!   allowed for unix sockets (pipes between a command's own processes reach nothing).
//!   When the rules say so ([`SocketRules`]: no network namespace and no socket to make but a
//!   pair), netlink and `bind` too.
//!
//! It returns ENOSYS for `clone3` (its flags are behind a pointer the filter cannot read; C
//! libraries fall back to `clone`, which the filter checks) and for x32 system call numbers
//! (which would bypass rules keyed on numbers). Other architectures' system calls (e.g.
//! `int 0x80` on x86_64) kill the process.
//!
//! The program is a hand-written front (`bpf.rs`) that decides by number alone (ENOSYS,
//! EPERM for the calls denied whatever their arguments, ALLOW for the calls no rule names),
//! then the rules that read arguments (`clone`, `ioctl`, `socket`, `socketpair`), compiled by
//! `seccompiler`. A unit test checks that the program answers every call as the rules all
//! compiled by `seccompiler` would behind the former ENOSYS filter.

use std::collections::BTreeMap;

use nix::libc;
use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen as Len, SeccompCmpOp as Op, SeccompCondition as Cond, SeccompFilter,
    SeccompRule, TargetArch,
};

use super::bpf;
use crate::error::{Layer, SandboxError};
use crate::timing::Timing;

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
    /// Whether `socket(AF_NETLINK, …, NETLINK_ROUTE)` is allowed.
    pub netlink: bool,
    /// Whether `bind` is allowed.
    pub bind: bool,
}

const DENIED: &[libc::c_long] = &[
    libc::SYS_ptrace,
    libc::SYS_process_vm_readv,
    libc::SYS_process_vm_writev,
    libc::SYS_pidfd_getfd,
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

/// Installs the filter on the calling thread.
pub(crate) fn install(sockets: SocketRules, timing: &mut Timing) -> Result<(), SandboxError> {
    let program = build(sockets)?;
    timing.mark("seccomp.build");
    seccompiler::apply_filter(&program).map_err(SandboxError::Seccomp)?;
    timing.mark("seccomp.install");
    Ok(())
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

/// The whole program for `sockets`: the front (which denies the system calls the rules deny
/// whatever their arguments), then the rules that read arguments.
pub(crate) fn build(sockets: SocketRules) -> Result<BpfProgram, SandboxError> {
    let (denied, checked): (Rules, Rules) =
        build_rules(sockets).map_err(SandboxError::SeccompBuild)?.into_iter().partition(|(_, chain)| chain.is_empty());
    let numbers = |rules: &Rules| rules.keys().filter_map(|nr| u32::try_from(*nr).ok()).collect::<Vec<u32>>();
    let mut program = bpf::front(&numbers(&denied), &numbers(&checked)).map_err(SandboxError::SeccompBuild)?;
    program.extend(compile(checked)?);
    if program.len() > BPF_MAX_LEN {
        return Err(SandboxError::SeccompBuild(seccompiler::BackendError::FilterTooLarge(program.len())));
    }
    Ok(program)
}

/// Rules by system call number: an empty chain denies the call whatever its arguments.
type Rules = BTreeMap<i64, Vec<SeccompRule>>;

/// `rules` compiled by `seccompiler`: EPERM on a match, ALLOW otherwise.
fn compile(rules: Rules) -> Result<BpfProgram, SandboxError> {
    let eperm = SeccompAction::Errno(libc::EPERM as u32);
    let filter =
        SeccompFilter::new(rules, SeccompAction::Allow, eperm, target_arch()?).map_err(SandboxError::SeccompBuild)?;
    filter.try_into().map_err(SandboxError::SeccompBuild)
}

/// The kernel's limit on a filter's length (`BPF_MAXINSNS`).
const BPF_MAX_LEN: usize = 4096;

fn build_rules(sockets: SocketRules) -> Result<Rules, seccompiler::BackendError> {
    let mut rules: Rules = DENIED.iter().map(|nr| (*nr, Vec::new())).collect();
    let clone_rules = NAMESPACE_FLAGS
        .iter()
        .map(|flag| SeccompRule::new(vec![cond(0, Op::MaskedEq(*flag as u64), *flag)?]))
        .collect::<Result<Vec<_>, _>>()?;
    rules.insert(libc::SYS_clone, clone_rules);
    let typing = [TIOCSTI, TIOCLINUX].map(|request| SeccompRule::new(vec![cond(1, Op::Eq, request)?]));
    rules.insert(libc::SYS_ioctl, typing.into_iter().collect::<Result<Vec<_>, _>>()?);

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
    if !sockets.netlink {
        socket.push(SeccompRule::new(vec![cond(0, Op::Eq, libc::AF_NETLINK)?])?);
    }
    if !sockets.bind {
        rules.insert(libc::SYS_bind, Vec::new());
    }
    rules.insert(libc::SYS_socket, socket);
    rules.insert(libc::SYS_socketpair, vec![SeccompRule::new(vec![cond(0, Op::Ne, libc::AF_UNIX)?])?]);
    Ok(rules)
}

/// `ioctl` requests that put input into a terminal (`asm-generic/ioctls.h`; the same values
/// on every architecture spine builds for).
const TIOCSTI: libc::c_int = 0x5412;
const TIOCLINUX: libc::c_int = 0x541C;

/// The obsolete `SOCK_PACKET` type (libc deprecates the constant).
const SOCK_PACKET: libc::c_int = 10;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::linux::bpf::{audit_arch, evaluate};

    const ALLOW: u32 = 0x7fff_0000;
    const EPERM: u32 = 0x0005_0000 | libc::EPERM as u32;
    const ENOSYS: u32 = 0x0005_0000 | libc::ENOSYS as u32;

    fn every_socket_rules() -> Vec<SocketRules> {
        let mut all = Vec::new();
        for inet in [Inet::Deny, Inet::StreamOnly, Inet::Allow] {
            for (unix, netlink, bind) in (0..8).map(|bits| (bits & 1 != 0, bits & 2 != 0, bits & 4 != 0)) {
                all.push(SocketRules { inet, unix, netlink, bind });
            }
        }
        all
    }

    /// What the kernel returns when two filters answer `a` and `b`: the stricter action.
    fn stricter(a: u32, b: u32) -> u32 {
        let action = |v: u32| (v & 0xffff_0000) as i32;
        if action(a) <= action(b) { a } else { b }
    }

    fn nr(call: libc::c_long) -> u32 {
        u32::try_from(call).expect("small")
    }

    fn verdict(program: &[seccompiler::sock_filter], arch: u32, call: u32, args: [u64; 6]) -> u32 {
        evaluate(program, arch, call, args).unwrap_or_else(|| panic!("{call} {args:?} ran off the program")).0
    }

    /// Every rule compiled by `seccompiler` behind the former separate filter (ENOSYS for x32
    /// numbers and `clone3`): the front must change no verdict of that pair.
    #[test]
    fn the_program_answers_like_the_rules_behind_the_former_enosys_filter() {
        let clone3 = nr(libc::SYS_clone3);
        let mut arg_sets: Vec<[u64; 6]> = vec![[0; 6], [u64::MAX; 6]];
        for family in 0..48u64 {
            for kind in [1u64, 2, 3, 5, 10, 0x80001, 0x802] {
                for protocol in [0u64, 1, 4, 9, 255] {
                    arg_sets.push([family, kind, protocol, 0, 0, 0]);
                }
            }
        }
        for flags in [0x11u64, 0x0002_0000, 0x1000_0000, 0x4000_0000, 0x7e02_0000, 0x0010_0000] {
            arg_sets.push([flags, 0, 0, 0, 0, 0]);
        }
        for sockets in every_socket_rules() {
            let program = build(sockets).expect("builds");
            let rules = compile(build_rules(sockets).expect("rules")).expect("compiles");
            for arch in [audit_arch(), 0x4000_0003] {
                let calls = (0..520).chain([clone3, 0x4000_0000, 0x4000_0029, u32::MAX]);
                for call in calls {
                    let many = [nr(libc::SYS_socket), nr(libc::SYS_socketpair), nr(libc::SYS_clone)].contains(&call);
                    for args in if many { &arg_sets[..] } else { &arg_sets[..2] } {
                        let former = if arch == audit_arch() && (call >= 0x4000_0000 || call == clone3) {
                            ENOSYS
                        } else {
                            ALLOW
                        };
                        let expected = stricter(former, verdict(&rules, arch, call, *args));
                        assert_eq!(
                            verdict(&program, arch, call, *args),
                            expected,
                            "{sockets:?} {arch:x} {call} {args:?}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn a_closed_command_gets_no_netlink_and_no_bind_but_keeps_socket_pairs() {
        let (socket, pair, bind) = (nr(libc::SYS_socket), nr(libc::SYS_socketpair), nr(libc::SYS_bind));
        let args = |family: libc::c_int, kind: libc::c_int, protocol: libc::c_int| {
            [family as u64, kind as u64, protocol as u64, 0, 0, 0]
        };
        let netlink_route = args(libc::AF_NETLINK, libc::SOCK_RAW, libc::NETLINK_ROUTE);
        let closed = build(SocketRules { inet: Inet::Deny, unix: false, netlink: false, bind: false }).expect("builds");
        let arch = audit_arch();
        assert_eq!(verdict(&closed, arch, socket, netlink_route), EPERM);
        assert_eq!(verdict(&closed, arch, socket, args(libc::AF_UNIX, libc::SOCK_STREAM, 0)), EPERM);
        assert_eq!(verdict(&closed, arch, socket, args(libc::AF_INET, libc::SOCK_STREAM, 0)), EPERM);
        assert_eq!(verdict(&closed, arch, socket, args(libc::AF_VSOCK, libc::SOCK_STREAM, 0)), EPERM);
        assert_eq!(verdict(&closed, arch, bind, [3, 0, 12, 0, 0, 0]), EPERM);
        for kind in [libc::SOCK_STREAM, libc::SOCK_DGRAM, libc::SOCK_SEQPACKET] {
            assert_eq!(verdict(&closed, arch, pair, args(libc::AF_UNIX, kind, 0)), ALLOW);
        }
        let open = build(SocketRules { inet: Inet::Deny, unix: false, netlink: true, bind: true }).expect("builds");
        assert_eq!(verdict(&open, arch, socket, netlink_route), ALLOW);
        assert_eq!(verdict(&open, arch, bind, [3, 0, 12, 0, 0, 0]), ALLOW);
        assert_eq!(verdict(&open, arch, socket, args(libc::AF_NETLINK, libc::SOCK_RAW, 4)), EPERM);
    }

    #[test]
    fn the_program_is_one_filter_within_the_kernels_limit() {
        for sockets in every_socket_rules() {
            let program = build(sockets).expect("builds");
            assert!(program.len() > DENIED.len() && program.len() <= BPF_MAX_LEN, "{sockets:?}: {}", program.len());
        }
    }
}
