//! The helper's whole life: [`helper_main`] parses `ENCODED-POLICY -- PROGRAM ARGS…`,
//! [`run_confined`] confines the process, runs the command as its child and exits like it.
//!
//! Contract:
//! - Confinement failure: one line `spine sandbox: cannot confine the command: LAYER: …` on
//!   stderr and exit code 126 (a shell's "cannot execute"); the command never runs
//!   unconfined. A bad policy string or command line: `spine sandbox: …`, code 126.
//! - The command not found: code 127, other spawn failures 126, with a `spine sandbox:` line.
//! - Otherwise the helper exits with the command's code; when the command died of a signal
//!   the helper dies of the same signal (default action restored and the signal re-raised,
//!   core dumps off), or exits with 128+n if that somehow fails.
//! - In place or as a child: when the caller undoes (`caller_undoes`), no proxy bridge is
//!   needed and timing is off, nothing remains for the helper to do after the command, so it
//!   execs the command in its own place (same pid, same process group; the command's fate is
//!   the helper's, and no signal handler is installed: a signal that arrives while the helper
//!   confines itself ends it before the command runs). Otherwise it runs the command as its
//!   child and stays, as below.
//! - Signals: the helper and the command share the caller's process group, so a group
//!   signal (Ctrl-C, spine's timeout) reaches both. The helper catches SIGINT, SIGTERM,
//!   SIGHUP and SIGQUIT with a handler that only notes them, so it outlives the command long
//!   enough to undo protected paths and report the command's fate; handlers are reset by
//!   `exec`, so the command starts with the dispositions and the mask it was given (a signal
//!   the caller ignores gets no handler and stays ignored, as `nohup` expects).
//!   A signal sent to the helper's pid alone is not forwarded: signal the group. SIGKILL
//!   ends the helper at once, without the undo.
//! - After the command, the helper removes what it created at protected paths that did not
//!   exist (printing a line each), unless the policy says the caller does
//!   (`caller_undoes`). Behind the proxy bridge, the command gets the proxy variables and
//!   loses `NO_PROXY`/`no_proxy`.
//! - With `SPINE_SANDBOX_REPORT` set in its environment, the helper prints
//!   `spine sandbox: profile PROFILE` and any missing layer on stderr before the command runs.
//! - With `SPINE_SANDBOX_TIMING` set, it prints what each of its phases cost, in one
//!   `spine sandbox: timing (µs) …` line on stderr after the command (see `timing.rs`); with
//!   a value that begins with `exec` (`exec`, `exec:NS`) it execs in place when it may (as
//!   when timing is off) and prints the line just before the exec.

use std::ffi::OsString;
use std::process::{Command, ExitCode, ExitStatus};

use crate::policy::Policy;
use crate::timing::Timing;

/// The argument separating the encoded policy from the command.
pub const SEPARATOR: &str = "--";
/// The argument that makes [`helper_main`] run the namespace trial for
/// [`probe_with`](crate::probe_with) instead of a command.
pub const PROBE_ARGUMENT: &str = "--probe";
/// Set in the helper's environment to print the profile on stderr.
pub const REPORT_VARIABLE: &str = "SPINE_SANDBOX_REPORT";

/// Exit code when confinement (or the helper's own command line) fails.
pub const CANNOT_EXECUTE: u8 = 126;
/// Exit code when the command does not exist.
pub const NOT_FOUND: u8 = 127;

/// The helper's entry point: `args` are the arguments after the helper subcommand, i.e.
/// `ENCODED-POLICY -- PROGRAM ARGS…` (or [`PROBE_ARGUMENT`]). Call it first thing in `main`,
/// before any thread or async runtime starts.
pub fn helper_main(args: impl IntoIterator<Item = OsString>) -> ExitCode {
    let mut timing = Timing::from_env();
    let mut args = args.into_iter();
    let Some(first) = args.next() else {
        return refuse("missing the encoded policy (usage: ENCODED-POLICY -- PROGRAM [ARGS…])");
    };
    if first == PROBE_ARGUMENT {
        return crate::probe::trial_main();
    }
    let Some(encoded) = first.to_str() else { return refuse("the encoded policy is not UTF-8") };
    let policy = match Policy::decode(encoded) {
        Ok(policy) => policy,
        Err(error) => return refuse(&crate::error::error_chain(&error)),
    };
    match args.next() {
        Some(arg) if arg == SEPARATOR => {}
        #[cfg(target_os = "linux")]
        Some(arg) if arg == crate::launcher::SERVE_ARGUMENT => return crate::launcher::serve(&policy),
        _ => return refuse("expected `--` after the encoded policy"),
    }
    let argv: Vec<OsString> = args.collect();
    timing.mark("decode");
    run_timed(&policy, &argv, timing)
}

fn refuse(message: &str) -> ExitCode {
    eprintln!("spine sandbox: {message}");
    ExitCode::from(CANNOT_EXECUTE)
}

/// Confines this process to `policy`, runs `argv` as its child, and returns the exit code
/// the helper must end with (having already died of the command's signal, if it had one).
pub fn run_confined(policy: &Policy, argv: &[OsString]) -> ExitCode {
    run_timed(policy, argv, Timing::default())
}

fn run_timed(policy: &Policy, argv: &[OsString], timing: Timing) -> ExitCode {
    let Some((program, args)) = argv.split_first() else { return refuse("no command to run") };
    imp::run(policy, program, args, timing)
}

/// What a command that could not start is told (a refused `execve` names the sandbox).
pub(crate) fn spawn_error(error: &std::io::Error) -> String {
    match error.raw_os_error() {
        Some(nix::libc::EACCES) | Some(nix::libc::EPERM) => {
            format!("{error} (sandbox: executing it is not permitted)")
        }
        _ => error.to_string(),
    }
}

#[cfg(target_os = "linux")]
mod imp {
    use std::ffi::OsString;
    use std::io;
    use std::os::unix::process::{CommandExt, ExitStatusExt};
    use std::process::ExitCode;
    use std::sync::Arc;
    use std::sync::atomic::AtomicBool;

    use nix::sys::resource::{Resource, setrlimit};
    use signal_hook::consts::{SIGHUP, SIGINT, SIGQUIT, SIGTERM};

    use super::{CANNOT_EXECUTE, Command, ExitStatus, NOT_FOUND, Policy, REPORT_VARIABLE, Timing, refuse};
    use crate::policy::Network;

    pub(super) fn run(policy: &Policy, program: &OsString, args: &[OsString], mut timing: Timing) -> ExitCode {
        let in_place = policy.caller_undoes && !matches!(policy.network, Network::Proxy { .. }) && timing.allows_exec();
        if !in_place {
            // Noted, not acted on: the command decides its own fate and the helper follows it.
            let noted = Arc::new(AtomicBool::new(false));
            // A signal the caller ignores stays ignored (`nohup`, a background job's SIGINT): a
            // handler would be reset to the default action at exec, so none is installed for it.
            let ignored = ignored_signals();
            for signal in [SIGINT, SIGTERM, SIGHUP, SIGQUIT] {
                if is_set(ignored, signal) {
                    continue;
                }
                if let Err(error) = signal_hook::flag::register(signal, Arc::clone(&noted)) {
                    return refuse(&format!("cannot install a signal handler: {error}"));
                }
            }
            timing.mark("signals");
        }
        let applied = match crate::linux::confine::confine(policy, &mut timing) {
            Ok(applied) => applied,
            Err(error) => return refuse(&format!("cannot confine the command: {}", error.one_line())),
        };
        if std::env::var_os(REPORT_VARIABLE).is_some() {
            eprintln!("spine sandbox: profile {}", applied.profile());
            for warning in applied.warnings() {
                eprintln!("spine sandbox: {warning}");
            }
        }
        let mut command = Command::new(program);
        command.args(args).envs(applied.proxy_env());
        if applied.proxy_port.is_some() {
            // Nothing is reachable around the proxy: an inherited exception would only fail.
            for name in crate::applied::NO_PROXY_VARIABLES {
                command.env_remove(name);
            }
        }
        if in_place {
            timing.mark("command");
            if let Some(line) = timing.report() {
                eprintln!("{line}");
            }
            // Returns only when the exec failed.
            let error = command.exec();
            return spawn_failed(program, &error);
        }
        let status = command.spawn().and_then(|mut child| {
            timing.mark("spawn");
            child.wait()
        });
        timing.mark("wait");
        let status = match status {
            Ok(status) => status,
            Err(error) => return spawn_failed(program, &error),
        };
        if !policy.caller_undoes {
            for message in applied.guard.undo() {
                eprintln!("spine sandbox: {message}");
            }
        }
        timing.mark("undo");
        if let Some(line) = timing.report() {
            eprintln!("{line}");
        }
        exit_like(status)
    }

    /// The signals this process ignores, as the kernel reports them (`SigIgn` in
    /// `/proc/self/status`: bit `n - 1` for signal `n`); none when it cannot be read.
    fn ignored_signals() -> u64 {
        let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
        status
            .lines()
            .find_map(|line| line.strip_prefix("SigIgn:"))
            .and_then(|mask| u64::from_str_radix(mask.trim(), 16).ok())
            .unwrap_or(0)
    }

    /// Whether `signal` is in `mask` (bit `signal - 1`).
    fn is_set(mask: u64, signal: i32) -> bool {
        u32::try_from(signal - 1).ok().and_then(|bit| 1u64.checked_shl(bit)).is_some_and(|b| mask & b != 0)
    }

    /// The line and the exit code of a command that could not start.
    fn spawn_failed(program: &OsString, error: &io::Error) -> ExitCode {
        eprintln!("spine sandbox: {}: {}", program.to_string_lossy(), super::spawn_error(error));
        ExitCode::from(if error.kind() == io::ErrorKind::NotFound { NOT_FOUND } else { CANNOT_EXECUTE })
    }

    /// Ends like `status`: dies of its signal when it has one, else returns its code.
    fn exit_like(status: ExitStatus) -> ExitCode {
        if let Some(code) = status.code() {
            return ExitCode::from(u8::try_from(code & 0xff).unwrap_or(1));
        }
        let Some(signal) = status.signal() else { return ExitCode::from(1) };
        // No core file of the helper for the command's crash.
        let _ = setrlimit(Resource::RLIMIT_CORE, 0, 0);
        // Restores the default action (even for SIGPIPE, which Rust ignores), unblocks and
        // raises: the helper ends here, by the same signal.
        let _ = signal_hook::low_level::emulate_default_handler(signal);
        ExitCode::from(u8::try_from(128 + signal).unwrap_or(255))
    }
}

#[cfg(not(target_os = "linux"))]
mod imp {
    use super::{OsString, Policy, Timing, refuse};
    use std::process::ExitCode;

    pub(super) fn run(_policy: &Policy, _program: &OsString, _args: &[OsString], _timing: Timing) -> ExitCode {
        refuse("cannot confine the command: sandboxing is only implemented on Linux")
    }
}
