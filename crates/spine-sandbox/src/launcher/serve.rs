//! The launcher's side (`spine __sandbox POLICY --serve`, its control socket on stdin):
//! confines itself once, says `ready`, then starts each requested command as its child and
//! reports its start and its end (see the module documentation).
//!
//! Contract: a command starts with exactly the request's environment, working directory and
//! three descriptors, leading a new process group; a command that cannot start gets its
//! `spine sandbox: PROGRAM: …` line on its stderr and `failed ID CODE` (127 not found, else
//! 126), as the one-shot helper would. A request that does not decode is answered
//! `failed ID 126` when its id can be read, and ignored otherwise. The launcher ends when its
//! control socket closes; a confinement failure ends it before `ready` (code 126).

use std::io::Write;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{Command, ExitCode, Stdio};
use std::sync::Arc;

use super::wire::{self, Answer, SpawnRequest};
use crate::policy::Policy;
use crate::run::{CANNOT_EXECUTE, NOT_FOUND};

/// Serves requests on stdin once confined to `policy`.
pub(crate) fn serve(policy: &Policy) -> ExitCode {
    let control = match std::io::stdin().as_fd().try_clone_to_owned() {
        Ok(fd) => Arc::new(fd),
        Err(error) => return refuse(&format!("no control socket: {error}")),
    };
    let mut timing = crate::timing::Timing::default();
    if let Err(error) = crate::linux::confine::confine(policy, &mut timing) {
        return refuse(&format!("cannot confine the command: {}", error.one_line()));
    }
    if wire::send(control.as_fd(), &Answer::Ready.encode(), &[]).is_err() {
        return ExitCode::from(CANNOT_EXECUTE);
    }
    let mut buffer = vec![0u8; wire::MAX_MESSAGE];
    loop {
        match wire::recv(control.as_fd(), &mut buffer) {
            Ok(Some((len, fds))) => start(&control, &buffer[..len], fds),
            Ok(None) => return ExitCode::SUCCESS,
            Err(error) => return refuse(&format!("the control socket failed: {error}")),
        }
    }
}

fn refuse(message: &str) -> ExitCode {
    eprintln!("spine sandbox: {message}");
    ExitCode::from(CANNOT_EXECUTE)
}

/// Starts the command of one request and the thread that reports its end.
fn start(control: &Arc<OwnedFd>, bytes: &[u8], fds: Vec<OwnedFd>) {
    let answer = |answer: Answer| {
        let _ = wire::send(control.as_fd(), &answer.encode(), &[]);
    };
    let request = match SpawnRequest::decode(bytes) {
        Ok(request) => request,
        Err(_) => {
            if let Some(id) = readable_id(bytes) {
                answer(Answer::Failed { id, code: i32::from(CANNOT_EXECUTE) });
            }
            return;
        }
    };
    let Ok([stdin, stdout, stderr]) = <[OwnedFd; 3]>::try_from(fds) else {
        answer(Answer::Failed { id: request.id, code: i32::from(CANNOT_EXECUTE) });
        return;
    };
    let Ok(mut error_end) = stderr.try_clone().map(std::fs::File::from) else {
        answer(Answer::Failed { id: request.id, code: i32::from(CANNOT_EXECUTE) });
        return;
    };
    let mut command = Command::new(&request.program);
    command
        .args(&request.args)
        .env_clear()
        .envs(request.env.iter().map(|(name, value)| (name, value)))
        .current_dir(&request.cwd)
        .process_group(0)
        .stdin(Stdio::from(stdin))
        .stdout(Stdio::from(stdout))
        .stderr(Stdio::from(stderr));
    let mut child = match command.spawn() {
        Ok(child) => child,
        Err(error) => {
            let program = request.program.to_string_lossy();
            let _ = writeln!(error_end, "spine sandbox: {program}: {}", crate::run::spawn_error(&error));
            let code = if error.kind() == std::io::ErrorKind::NotFound { NOT_FOUND } else { CANNOT_EXECUTE };
            answer(Answer::Failed { id: request.id, code: i32::from(code) });
            return;
        }
    };
    // The command holds its descriptors now; the launcher keeps none of them open.
    drop(command);
    drop(error_end);
    answer(Answer::Started { id: request.id, pid: child.id() });
    let reporter = Arc::clone(control);
    let id = request.id;
    let waiter = std::thread::Builder::new().name("spine-launcher-wait".into()).spawn(move || {
        // A wait that fails reports SIGKILL's status: the command is gone for the caller.
        let raw = child.wait().map(|status| status.into_raw()).unwrap_or(9);
        let _ = wire::send(reporter.as_fd(), &Answer::Exited { id, raw }.encode(), &[]);
    });
    if waiter.is_err() {
        // No thread to wait with: the caller ends the command's group on this report.
        answer(Answer::Exited { id, raw: 9 });
    }
}

/// The id of a request that does not decode, when its first two fields are readable.
fn readable_id(bytes: &[u8]) -> Option<u64> {
    let mut fields = bytes.split(|b| *b == 0);
    (fields.next()? == b"spawn").then_some(())?;
    std::str::from_utf8(fields.next()?).ok()?.parse().ok()
}
