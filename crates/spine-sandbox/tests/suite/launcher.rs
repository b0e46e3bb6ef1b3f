//! The per-session launcher: commands started by one confined process, each confined as a
//! one-shot helper's command is, reported when they start and when they end.

use std::io::Read;
use std::os::fd::AsFd;
use std::os::unix::process::ExitStatusExt;
use std::process::ExitStatus;
use std::sync::mpsc;
use std::time::Duration;

use spine_sandbox::Policy;
use spine_sandbox::launcher::{Launcher, SessionLauncher, SpawnRequest, Started};

use crate::common::{Fixture, helper};

/// What one command did: how it started, its stdout and stderr, and its status.
struct Ran {
    started: Started,
    stdout: String,
    stderr: String,
    status: ExitStatus,
}

fn request(f: &Fixture, program: &str, args: &[&str]) -> SpawnRequest {
    SpawnRequest {
        id: 0,
        cwd: f.ws.clone().into(),
        program: program.into(),
        args: args.iter().map(Into::into).collect(),
        env: vec![("PATH".into(), "/usr/bin:/bin".into()), ("TMPDIR".into(), f.tmp.clone().into())],
    }
}

fn run(launcher: &Launcher, request: SpawnRequest) -> Ran {
    let (out_read, out_write) = std::io::pipe().expect("pipe");
    let (err_read, err_write) = std::io::pipe().expect("pipe");
    let null = std::fs::File::open("/dev/null").expect("null");
    let (tx, rx) = mpsc::channel();
    let stdio = [null.as_fd(), out_write.as_fd(), err_write.as_fd()];
    let started = launcher
        .spawn(
            request,
            stdio,
            Box::new(move |raw| {
                let _ = tx.send(raw);
            }),
        )
        .expect("spawn");
    drop((out_write, err_write, null));
    let read = |mut pipe: std::io::PipeReader| {
        let mut text = String::new();
        pipe.read_to_string(&mut text).expect("read");
        text
    };
    let (stdout, stderr) = (read(out_read), read(err_read));
    let status = match started {
        Started::Pid(_) => ExitStatus::from_raw(rx.recv_timeout(Duration::from_secs(20)).expect("the end is reported")),
        Started::Failed(code) => ExitStatus::from_raw(code << 8),
    };
    Ran { started, stdout, stderr, status }
}

fn in_place(f: &Fixture) -> Policy {
    Policy { caller_undoes: true, ..f.policy() }
}

#[test]
fn a_launched_command_leads_its_group_gets_its_stdio_and_its_status_is_reported() {
    let f = Fixture::new();
    let launcher = Launcher::start(&helper(), &in_place(&f)).expect("the launcher starts");
    let ran = run(
        &launcher,
        request(&f, "sh", &["-c", "echo $$ $(ps -o pgid= -p $$) \"$TMPDIR\" \"$PWD\"; echo oops >&2; exit 3"]),
    );
    let Started::Pid(pid) = ran.started else { panic!("not started: {:?}", ran.started) };
    let fields: Vec<&str> = ran.stdout.split_whitespace().collect();
    assert_eq!(fields.first().copied(), Some(pid.to_string().as_str()), "{}", ran.stdout);
    assert_eq!(fields.get(1).copied(), Some(pid.to_string().as_str()), "the command leads its group: {}", ran.stdout);
    assert_eq!(fields.get(2).copied(), Some(f.tmp.to_string_lossy().as_ref()), "the request's environment");
    assert_eq!(fields.get(3).copied(), Some(f.ws.to_string_lossy().as_ref()), "the request's directory");
    assert_eq!(ran.stderr, "oops\n");
    assert_eq!(ran.status.code(), Some(3));
    // A second command of the same launcher: the same process started it.
    let again = run(&launcher, request(&f, "sh", &["-c", "kill -TERM $$"]));
    assert_eq!(again.status.signal(), Some(15));
}

#[test]
fn a_launched_command_is_confined_as_a_one_shot_helpers_command_is() {
    let f = Fixture::new();
    let launcher = Launcher::start(&helper(), &in_place(&f)).expect("the launcher starts");
    let write = run(&launcher, request(&f, "sh", &["-c", &format!("echo x > {}", f.outside.display())]));
    assert!(!write.status.success() && write.stderr.contains("Permission denied"), "{}", write.stderr);
    assert!(!f.outside.exists());
    let read = run(&launcher, request(&f, "cat", &[&format!("{}/.ssh/id_ed25519", f.home.display())]));
    assert!(!read.status.success() && !read.stdout.contains("PRIVATE KEY"), "{}", read.stdout);
    let inside = run(&launcher, request(&f, "sh", &["-c", "echo x > inside && cat inside"]));
    assert_eq!((inside.status.code(), inside.stdout.as_str()), (Some(0), "x\n"), "{}", inside.stderr);
}

#[test]
fn a_command_that_cannot_start_fails_with_the_helpers_line_and_code() {
    let f = Fixture::new();
    let launcher = Launcher::start(&helper(), &in_place(&f)).expect("the launcher starts");
    let ran = run(&launcher, request(&f, "no-such-command-spine", &[]));
    assert_eq!(ran.started, Started::Failed(127));
    assert!(ran.stderr.starts_with("spine sandbox: no-such-command-spine:"), "{}", ran.stderr);
}

#[test]
fn when_the_launcher_dies_its_running_commands_are_killed_and_reported() {
    let f = Fixture::new();
    let launcher = Launcher::start(&helper(), &in_place(&f)).expect("the launcher starts");
    let null = std::fs::File::open("/dev/null").expect("null");
    let (tx, rx) = mpsc::channel();
    let stdio = [null.as_fd(), null.as_fd(), null.as_fd()];
    let started = launcher.spawn(
        request(&f, "sleep", &["60"]),
        stdio,
        Box::new(move |raw| {
            let _ = tx.send(raw);
        }),
    );
    let Ok(Started::Pid(pid)) = started else { panic!("not started: {started:?}") };
    // The launcher is the parent of the command.
    let parent = std::fs::read_to_string(format!("/proc/{pid}/stat")).expect("stat");
    let ppid: u32 = parent
        .rsplit(')')
        .next()
        .and_then(|rest| rest.split_whitespace().nth(1))
        .and_then(|p| p.parse().ok())
        .expect("ppid");
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(ppid as i32), nix::sys::signal::Signal::SIGKILL).expect("kill");
    let raw = rx.recv_timeout(Duration::from_secs(20)).expect("reported");
    assert_eq!(ExitStatus::from_raw(raw).signal(), Some(9));
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| !s.contains(") Z")) {
        assert!(std::time::Instant::now() < deadline, "the command outlived its launcher");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_session_keeps_its_launcher_until_a_protected_path_changes() {
    let f = Fixture::new();
    let session = SessionLauncher::new(helper(), in_place(&f));
    let first = session.launcher().expect("starts");
    let same = session.launcher().expect("kept");
    assert!(std::sync::Arc::ptr_eq(&first, &same), "one launcher while nothing changed");
    // spine writes a protected file (an "always" rule): the next command gets a launcher whose
    // mounts protect it.
    std::fs::create_dir_all(f.ws.join(".spine")).expect("mkdir");
    let next = session.launcher().expect("starts again");
    assert!(!std::sync::Arc::ptr_eq(&first, &next), "a new launcher for the new state");
    let write = run(&next, request(&f, "sh", &["-c", "echo x > .spine/settings.local.json"]));
    assert!(!write.status.success(), "{}", write.stderr);
}

#[test]
fn a_launcher_that_never_says_ready_is_an_error_and_not_retried() {
    let f = Fixture::new();
    // A program that exits at once stands for a helper that could not confine itself: the
    // socket closes before `ready`.
    let quits = spine_sandbox::Helper::new("/bin/true", Vec::<String>::new());
    assert!(Launcher::start(&quits, &in_place(&f)).is_err());
    let session = SessionLauncher::new(quits, in_place(&f));
    assert!(session.launcher().is_none());
    assert!(session.launcher().is_none(), "not started again");
}

#[test]
fn a_session_starts_a_new_launcher_when_its_launcher_was_killed() {
    let f = Fixture::new();
    let session = SessionLauncher::new(helper(), in_place(&f));
    let first = session.launcher().expect("starts");
    let ran = run(&first, request(&f, "sh", &["-c", "echo $PPID"]));
    let launcher_pid: i32 = ran.stdout.trim().parse().expect("the launcher's pid");
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(launcher_pid), nix::sys::signal::Signal::SIGKILL).expect("kill");
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while first.is_running() {
        assert!(std::time::Instant::now() < deadline, "the launcher survived SIGKILL");
        std::thread::sleep(Duration::from_millis(10));
    }
    let next = session.launcher().expect("a new one");
    assert!(!std::sync::Arc::ptr_eq(&first, &next));
    assert_eq!(run(&next, request(&f, "true", &[])).status.code(), Some(0));
}

#[test]
fn a_command_cannot_take_the_launchers_socket_with_pidfd_getfd() {
    let Some(python) = crate::common::python() else { return };
    let f = Fixture::new();
    let launcher = Launcher::start(&helper(), &in_place(&f)).expect("the launcher starts");
    // pidfd_open(2) the parent (the launcher), then pidfd_getfd(2) its descriptor 0.
    let script = "import ctypes, os\n\
        libc = ctypes.CDLL(None, use_errno=True)\n\
        pidfd = libc.syscall(434, os.getppid(), 0)\n\
        assert pidfd >= 0, ctypes.get_errno()\n\
        fd = libc.syscall(438, pidfd, 0, 0)\n\
        print('taken' if fd >= 0 else 'refused', ctypes.get_errno())\n";
    let ran = run(&launcher, request(&f, python, &["-c", script]));
    assert!(ran.stdout.starts_with("refused 1"), "EPERM expected: {} {}", ran.stdout, ran.stderr);
}
