//! A confinement that offers a `Launch`: `run` starts its commands through it, with their
//! streams, their whole environment and their directory; the group is ended as any other; a
//! launch that declines leaves the command to the launcher program.

use std::io;
use std::os::fd::BorrowedFd;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use spine_process::{ChildEnv, Confine, Ending, Launch, LaunchCommand, LaunchedChild, Limits, RunOptions, run};

use crate::confine::Marking;

/// Starts each command itself, marked `SPINE_T_VIA=launch`, unless it declines (the
/// command then goes through `Marking`'s launcher program).
#[derive(Debug)]
struct FakeLaunch {
    decline: bool,
    launched: AtomicUsize,
}

impl Launch for FakeLaunch {
    fn launch(&self, command: LaunchCommand, stdio: [BorrowedFd<'_>; 3]) -> Option<io::Result<LaunchedChild>> {
        if self.decline {
            return None;
        }
        self.launched.fetch_add(1, Ordering::SeqCst);
        let [stdin, stdout, stderr] = stdio.map(|fd| fd.try_clone_to_owned().expect("dup"));
        let mut child = std::process::Command::new(&command.program)
            .args(&command.args)
            .env_clear()
            .envs(command.env)
            .env("SPINE_T_VIA", "launch")
            .current_dir(&command.cwd)
            .process_group(0)
            .stdin(stdin)
            .stdout(stdout)
            .stderr(stderr)
            .spawn()
            .expect("spawn");
        let pid = child.id();
        let (tx, exit) = tokio::sync::oneshot::channel();
        std::thread::spawn(move || {
            let status = child.wait().unwrap_or_else(|_| std::process::ExitStatus::from_raw(9));
            let _ = tx.send(status);
        });
        Some(Ok(LaunchedChild { pid: Some(pid), exit }))
    }
}

fn launching(decline: bool) -> (Arc<FakeLaunch>, ChildEnv) {
    let launch = Arc::new(FakeLaunch { decline, launched: AtomicUsize::new(0) });
    let confine = Marking {
        prefix: vec!["SPINE_T_MARK=launched".into()],
        launch: Some(Arc::clone(&launch) as Arc<dyn Launch>),
        ..Marking::default()
    };
    (launch, ChildEnv::default().confined(Arc::new(confine) as Arc<dyn Confine>))
}

fn limits(timeout: Duration) -> Limits {
    Limits { timeout, stdout_cap: 10_000, stderr_cap: 1000 }
}

#[tokio::test]
async fn a_launching_confinement_starts_the_command_with_its_environment_directory_and_streams() {
    let (launch, env) = launching(false);
    let dir = tempfile::tempdir().expect("tmp");
    let mut command = env.command("/bin/sh");
    command.arg("-c").arg("echo \"$SPINE_T_VIA $SPINE_T_CONFINED $HOME $PWD\"; cat; echo err >&2; exit 4");
    command.current_dir(dir.path());
    let finished = run(command, RunOptions::new(limits(Duration::from_secs(10)), &env).stdin(b"input\n".to_vec()))
        .await
        .expect("run");
    let home = std::env::var("HOME").unwrap_or_default();
    let cwd = dir.path().canonicalize().expect("canonical");
    assert_eq!(finished.stdout.text(), format!("launch yes {home} {}\ninput\n", cwd.display()));
    assert_eq!(finished.stderr.text(), "err\n");
    assert_eq!(finished.status.and_then(|s| s.code()), Some(4));
    assert_eq!(launch.launched.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_launched_commands_group_is_ended_at_the_time_limit() {
    let (_confine, env) = launching(false);
    let dir = tempfile::tempdir().expect("tmp");
    let pidfile = dir.path().join("pid");
    let mut command = env.command("/bin/sh");
    command.arg("-c").arg(format!("sleep 30 & echo $! > {}; wait", pidfile.display()));
    let finished = run(command, RunOptions::new(limits(Duration::from_millis(500)), &env)).await.expect("run");
    assert_eq!(finished.ending, Ending::TimedOut);
    let pid: i32 = std::fs::read_to_string(&pidfile).expect("pid").trim().parse().expect("number");
    let alive = nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), None).is_ok()
        && !std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default().contains(") Z");
    assert!(!alive, "the background sleep of the launched command was ended with its group");
}

#[tokio::test]
async fn a_launch_that_declines_leaves_the_command_to_the_launcher_program() {
    let (launch, env) = launching(true);
    let mut command = env.command("/bin/sh");
    command.arg("-c").arg("echo \"$SPINE_T_MARK ${SPINE_T_VIA:-program}\"");
    let finished = run(command, RunOptions::new(limits(Duration::from_secs(10)), &env)).await.expect("run");
    assert_eq!(finished.stdout.text(), "launched program\n");
    assert_eq!(launch.launched.load(Ordering::SeqCst), 0);
}
