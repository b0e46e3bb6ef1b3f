//! The hand-written front of the seccomp program: it decides by number alone every system
//! call whose verdict does not depend on its arguments.
//!
//! Contract: [`front`] returns instructions to put before the program `seccompiler` compiles
//! from the rules that read arguments (which starts with its own architecture check). For
//! this architecture's system calls, the front returns ENOSYS for x32 numbers and `clone3`,
//! EPERM for the `denied` numbers, jumps to the rules for the `checked` numbers, and returns
//! ALLOW for every other number (the rules' default action). Another architecture's system
//! calls go straight to the rules, which kill the process. The numbers are looked up in a
//! balanced tree of comparisons, so a decision takes a few instructions instead of two per
//! named system call: that keeps cheap both each system call a command makes and the
//! kernel's work when the filter is installed (it runs the filter once for every system call
//! number to cache those always allowed, and compiles each instruction).

use nix::libc;
use seccompiler::{BackendError, sock_filter};

const BPF_LD_W_ABS: u16 = 0x20;
const BPF_JEQ_K: u16 = 0x15;
const BPF_JGE_K: u16 = 0x35;
const BPF_RET_K: u16 = 0x06;
const SECCOMP_RET_ALLOW: u32 = 0x7fff_0000;
const SECCOMP_RET_ERRNO: u32 = 0x0005_0000;
/// Offsets in `struct seccomp_data`.
const NR_OFFSET: u32 = 0;
const ARCH_OFFSET: u32 = 4;
const X32_SYSCALL_BIT: u32 = 0x4000_0000;

/// This architecture's `AUDIT_ARCH_*` value.
pub(crate) fn audit_arch() -> u32 {
    if cfg!(target_arch = "aarch64") {
        0xC000_00B7
    } else if cfg!(target_arch = "riscv64") {
        0xC000_00F3
    } else {
        0xC000_003E
    }
}

/// Where a jump goes.
#[derive(Debug, Clone, Copy)]
enum To {
    Next,
    Allow,
    NoSys,
    Deny,
    Rules,
    At(usize),
}

#[derive(Debug, Clone, Copy)]
enum Insn {
    Stmt(u16, u32),
    Jump { code: u16, k: u32, jt: To, jf: To },
}

/// The front: EPERM for `denied`, the rules for `checked` (see the module documentation).
pub(crate) fn front(denied: &[u32], checked: &[u32]) -> Result<Vec<sock_filter>, BackendError> {
    let mut sorted: Vec<(u32, To)> = denied.iter().map(|nr| (*nr, To::Deny)).collect();
    sorted.extend(checked.iter().map(|nr| (*nr, To::Rules)));
    sorted.sort_unstable_by_key(|(nr, _)| *nr);
    // A number in both lists is checked by the rules (which may deny it).
    sorted.dedup_by(|later, earlier| {
        let same = later.0 == earlier.0;
        if same && matches!(later.1, To::Rules) {
            earlier.1 = To::Rules;
        }
        same
    });
    let clone3 = u32::try_from(libc::SYS_clone3).unwrap_or(u32::MAX);
    let mut code = vec![
        Insn::Stmt(BPF_LD_W_ABS, ARCH_OFFSET),
        Insn::Jump { code: BPF_JEQ_K, k: audit_arch(), jt: To::Next, jf: To::Rules },
        Insn::Stmt(BPF_LD_W_ABS, NR_OFFSET),
        Insn::Jump { code: BPF_JGE_K, k: X32_SYSCALL_BIT, jt: To::NoSys, jf: To::Next },
        Insn::Jump { code: BPF_JEQ_K, k: clone3, jt: To::NoSys, jf: To::Next },
    ];
    tree(&sorted, &mut code);
    let allow = code.len();
    code.push(Insn::Stmt(BPF_RET_K, SECCOMP_RET_ALLOW));
    let nosys = code.len();
    code.push(Insn::Stmt(BPF_RET_K, SECCOMP_RET_ERRNO | libc::ENOSYS as u32));
    let deny = code.len();
    code.push(Insn::Stmt(BPF_RET_K, SECCOMP_RET_ERRNO | libc::EPERM as u32));
    let rules = code.len();

    let too_long = || BackendError::FilterTooLarge(rules);
    let offset = |from: usize, to: To| -> Result<u8, BackendError> {
        let target = match to {
            To::Next => from + 1,
            To::Allow => allow,
            To::NoSys => nosys,
            To::Deny => deny,
            To::Rules => rules,
            To::At(index) => index,
        };
        target.checked_sub(from + 1).and_then(|jump| u8::try_from(jump).ok()).ok_or_else(too_long)
    };
    code.iter()
        .enumerate()
        .map(|(index, insn)| match *insn {
            Insn::Stmt(code, k) => Ok(sock_filter { code, jt: 0, jf: 0, k }),
            Insn::Jump { code, k, jt, jf } => {
                Ok(sock_filter { code, jt: offset(index, jt)?, jf: offset(index, jf)?, k })
            }
        })
        .collect()
}

/// A balanced tree of comparisons over `sorted`: each leaf goes where its number says when
/// the number is its own and allows otherwise; an empty list falls through (to the ALLOW
/// that follows).
fn tree(sorted: &[(u32, To)], code: &mut Vec<Insn>) {
    match sorted {
        [] => {}
        [(nr, to)] => code.push(Insn::Jump { code: BPF_JEQ_K, k: *nr, jt: *to, jf: To::Allow }),
        _ => {
            let (left, right) = sorted.split_at(sorted.len() / 2);
            let node = code.len();
            code.push(Insn::Stmt(0, 0)); // replaced once the right subtree's start is known
            tree(left, code);
            code[node] = Insn::Jump { code: BPF_JGE_K, k: right[0].0, jt: To::At(code.len()), jf: To::Next };
            tree(right, code);
        }
    }
}

/// Runs `program` on one system call, as the kernel would; `None` for an instruction this
/// interpreter does not know or a jump out of the program. For tests.
#[cfg(test)]
pub(crate) fn evaluate(program: &[sock_filter], arch: u32, nr: u32, args: [u64; 6]) -> Option<(u32, usize)> {
    let mut data = Vec::with_capacity(64);
    data.extend_from_slice(&nr.to_ne_bytes());
    data.extend_from_slice(&arch.to_ne_bytes());
    data.extend_from_slice(&0u64.to_ne_bytes());
    for arg in args {
        data.extend_from_slice(&arg.to_ne_bytes());
    }
    let (mut accumulator, mut pc, mut steps) = (0u32, 0usize, 0usize);
    loop {
        let insn = program.get(pc)?;
        steps += 1;
        pc += 1;
        let k = insn.k;
        match insn.code {
            BPF_LD_W_ABS => {
                let at = usize::try_from(k).ok()?;
                accumulator = u32::from_ne_bytes(data.get(at..at + 4)?.try_into().ok()?);
            }
            0x54 => accumulator &= k,               // BPF_ALU | BPF_AND | BPF_K
            0x05 => pc += usize::try_from(k).ok()?, // BPF_JMP | BPF_JA
            BPF_JEQ_K | BPF_JGE_K | 0x25 | 0x45 => {
                let taken = match insn.code {
                    BPF_JEQ_K => accumulator == k,
                    BPF_JGE_K => accumulator >= k,
                    0x25 => accumulator > k,   // BPF_JGT
                    _ => accumulator & k != 0, // BPF_JSET
                };
                pc += usize::from(if taken { insn.jt } else { insn.jf });
            }
            BPF_RET_K => return Some((k, steps)),
            _ => return None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ARCH: u32 = 0xC000_003E;
    const RULES: u32 = 0xdead;

    /// The front followed by a stand-in for the rules, which returns `RULES`.
    fn with_rules(denied: &[u32], checked: &[u32]) -> Vec<sock_filter> {
        let mut program = front(denied, checked).expect("builds");
        program.push(sock_filter { code: BPF_RET_K, jt: 0, jf: 0, k: RULES });
        program
    }

    #[test]
    fn numbers_go_where_their_list_says_and_the_others_are_allowed_in_a_few_steps() {
        let many: Vec<u32> = (0..60).map(|n| n * 7 + 3).collect();
        let cases: [(&[u32], &[u32]); 6] =
            [(&[], &[]), (&[41], &[]), (&[], &[41]), (&[0, 1], &[2]), (&many[..30], &many[30..]), (&[5, 9], &[9])];
        for (denied, checked) in cases {
            let program = with_rules(denied, checked);
            for nr in 0..600 {
                let Some((verdict, steps)) = evaluate(&program, audit_arch(), nr, [0; 6]) else {
                    panic!("{denied:?} {checked:?}: {nr} ran off the program");
                };
                let expected = if u64::from(nr) == libc::SYS_clone3 as u64 {
                    SECCOMP_RET_ERRNO | libc::ENOSYS as u32
                } else if checked.contains(&nr) {
                    RULES
                } else if denied.contains(&nr) {
                    SECCOMP_RET_ERRNO | libc::EPERM as u32
                } else {
                    SECCOMP_RET_ALLOW
                };
                assert_eq!(verdict, expected, "{denied:?} {checked:?}: {nr}");
                assert!(steps <= 14, "{denied:?} {checked:?}: {nr} took {steps} steps");
            }
        }
    }

    #[test]
    fn x32_calls_get_enosys_and_other_architectures_go_to_the_rules() {
        if audit_arch() != ARCH {
            return;
        }
        let program = with_rules(&[101], &[41, 56]);
        let enosys = SECCOMP_RET_ERRNO | libc::ENOSYS as u32;
        assert_eq!(evaluate(&program, ARCH, X32_SYSCALL_BIT | 41, [0; 6]).map(|r| r.0), Some(enosys));
        assert_eq!(evaluate(&program, ARCH, X32_SYSCALL_BIT | 1, [0; 6]).map(|r| r.0), Some(enosys));
        assert_eq!(evaluate(&program, 0x4000_0003, 1, [0; 6]).map(|r| r.0), Some(RULES));
    }
}
