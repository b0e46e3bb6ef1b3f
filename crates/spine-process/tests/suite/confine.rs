//! A confined `ChildEnv`: commands go through the launcher, a command built bare is refused,
//! a refusing confinement starts nothing, and the spawn's guard is finished once the group is
//! gone (its lines in `Finished::sandbox_notes`).

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use spine_process::{ChildEnv, Confine, ConfineError, Launch, Limits, ProcessError, RunOptions, SpawnGuard, run};

use crate::support::sh;

/// A launcher that is `/usr/bin/env MARK=1 PROGRAM ARGS…`: visible, harmless; with `launch`,
/// it offers that [`Launch`] too.
#[derive(Debug, Default)]
pub(crate) struct Marking {
    pub(crate) refuse: Option<String>,
    pub(crate) finished: Arc<AtomicUsize>,
    pub(crate) prefix: Vec<OsString>,
    pub(crate) explained: Mutex<Vec<String>>,
    pub(crate) launch: Option<Arc<dyn Launch>>,
}

#[derive(Debug)]
struct Counting(Arc<AtomicUsize>);

impl SpawnGuard for Counting {
    fn finish(self: Box<Self>) -> Vec<String> {
        self.0.fetch_add(1, Ordering::SeqCst);
        vec!["guard finished".to_owned()]
    }
}

impl Confine for Marking {
    fn program(&self) -> &Path {
        Path::new("/usr/bin/env")
    }
    fn prefix(&self) -> &[OsString] {
        &self.prefix
    }
    fn env(&self) -> Vec<(OsString, OsString)> {
        vec![("SPINE_T_CONFINED".into(), "yes".into())]
    }
    fn before_spawn(&self) -> Result<Box<dyn SpawnGuard>, ConfineError> {
        match &self.refuse {
            Some(why) => Err(ConfineError::Unavailable(why.clone())),
            None => Ok(Box::new(Counting(Arc::clone(&self.finished)))),
        }
    }
    fn profile(&self) -> String {
        "marking".to_owned()
    }
    fn explain(&self, output: &str, _cwd: &Path) -> Vec<String> {
        self.explained.lock().map(|mut e| e.push(output.to_owned())).ok();
        Vec::new()
    }
    fn launcher(&self) -> Option<&dyn Launch> {
        self.launch.as_deref()
    }
}

fn marking(refuse: Option<&str>) -> (Arc<Marking>, ChildEnv) {
    let confine = Arc::new(Marking {
        refuse: refuse.map(str::to_owned),
        prefix: vec!["SPINE_T_MARK=launched".into()],
        ..Marking::default()
    });
    let env = ChildEnv::default().confined(Arc::clone(&confine) as Arc<dyn Confine>);
    (confine, env)
}

fn limits() -> Limits {
    Limits { timeout: Duration::from_secs(5), stdout_cap: 1000, stderr_cap: 1000 }
}

#[tokio::test]
async fn a_confined_env_runs_its_commands_through_the_launcher_and_finishes_the_guard_after_the_group() {
    let (confine, env) = marking(None);
    let mut command = env.command("/bin/sh");
    command.arg("-c").arg("echo \"$SPINE_T_MARK $SPINE_T_CONFINED\"");
    assert_eq!(command.as_std().get_program(), "/usr/bin/env");
    let finished = run(command, RunOptions::new(limits(), &env)).await.expect("run");
    assert_eq!(finished.stdout.text(), "launched yes\n");
    assert_eq!(confine.finished.load(Ordering::SeqCst), 1, "the guard is finished once");
    assert_eq!(finished.sandbox_notes, vec!["guard finished".to_owned()]);
    assert_eq!(env.unconfined().command("/bin/sh").as_std().get_program(), "/bin/sh");
}

#[tokio::test]
async fn a_command_built_bare_is_refused_under_a_confined_env() {
    let (confine, env) = marking(None);
    let err = run(sh("echo ran"), RunOptions::new(limits(), &env)).await.expect_err("refused");
    assert!(matches!(err, ProcessError::Confinement { source: ConfineError::NotWrapped, .. }), "{err}");
    assert_eq!(confine.finished.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn a_refusing_confinement_starts_nothing_and_says_why() {
    let dir = tempfile::tempdir().expect("tmp");
    let marker: PathBuf = dir.path().join("ran");
    let (_confine, env) = marking(Some("landlock: unavailable; sandbox.failIfUnavailable refuses"));
    let mut command = env.command("/bin/sh");
    command.arg("-c").arg(format!("touch {}", marker.display()));
    let err = run(command, RunOptions::new(limits(), &env)).await.expect_err("refused");
    assert!(err.to_string().contains("landlock: unavailable"), "{err}");
    assert!(!marker.exists(), "nothing ran");
}
