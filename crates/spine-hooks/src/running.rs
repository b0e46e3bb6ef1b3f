//! A command hook's process between its spawn and its end, for hooks that may go on in the
//! background.
//!
//! Contract of [`Running`]:
//! - The process runs as [`spine_process::run()`] runs it (own process group, environment
//!   prepared by the hook's [`ChildEnv`], stdin payload then closed, capped stdout and
//!   stderr), under a kill token that is a child of the run's cancellation: a canceled run
//!   kills it, wherever it is waited for.
//! - The time limit is kept here, not by the process layer, so that it can change when the hook
//!   announces `asyncTimeout`: when a deadline passes, the whole group is killed and the end is
//!   [`Ended::timed_out`] with the limit that was passed.
//! - With `watch`, stdout is watched for the async form on its first line
//!   ([`crate::wire::async_form::FirstLine`]); [`Running::first`] returns
//!   [`Phase::Announced`] as soon as it is seen, and the process keeps running, owned by the
//!   [`Running`] (dropping it kills the group).

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use spine_process::{ChildEnv, Emit, Finished, Limits, ProcessError, RunOptions, Stream};
use tokio::process::Command;
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

use crate::command::{STDERR_CAP, STDOUT_CAP};
use crate::wire::async_form::{AsyncForm, FirstLine};

/// The process layer's own limit: never reached (the hook's limits are kept by [`Running`]).
const NO_LIMIT: Duration = Duration::from_secs(365 * 24 * 3600);

type Process = Pin<Box<dyn Future<Output = Result<Finished, ProcessError>> + Send>>;

/// A hook's process, started.
pub struct Running {
    process: Process,
    kill: CancellationToken,
    announced: Option<oneshot::Receiver<AsyncForm>>,
    started: Instant,
}

/// How far a process got.
pub enum Phase {
    /// It ended (or was killed).
    Ended(Box<Ended>),
    /// Its first line announced that it goes on in the background.
    Announced(AsyncForm),
}

/// A process that ended.
pub struct Ended {
    /// What the process layer returned.
    pub finished: Result<Finished, ProcessError>,
    /// The limit it ran out of, when a deadline killed it.
    pub timed_out: Option<Duration>,
}

impl Running {
    /// Spawns `command` with `payload` on stdin and its environment prepared by `env`; the
    /// run's `cancel` kills it.
    pub fn spawn(command: Command, payload: Vec<u8>, env: &ChildEnv, cancel: &CancellationToken, watch: bool) -> Self {
        let kill = cancel.child_token();
        let (emit, announced) = if watch {
            let (tx, rx) = oneshot::channel();
            let state = Mutex::new((FirstLine::default(), Some(tx)));
            let emit: Emit = Arc::new(move |stream, text| {
                if stream != Stream::Stdout {
                    return;
                }
                let mut state = state.lock().unwrap_or_else(PoisonError::into_inner);
                if let Some(form) = state.0.push(text)
                    && let Some(tx) = state.1.take()
                {
                    let _ = tx.send(form);
                }
            });
            (Some(emit), Some(rx))
        } else {
            (None, None)
        };
        let token = kill.clone();
        let env = env.clone();
        let process = Box::pin(async move {
            let limits = Limits { timeout: NO_LIMIT, stdout_cap: STDOUT_CAP, stderr_cap: STDERR_CAP };
            let mut options = RunOptions::new(limits, &env).stdin(payload).cancel(&token);
            if let Some(emit) = emit {
                options = options.emit(emit);
            }
            spine_process::run(command, options).await
        });
        Running { process, kill, announced, started: Instant::now() }
    }

    /// When it was spawned.
    pub fn started(&self) -> Instant {
        self.started
    }

    /// Waits for the end, or for the async form on the first line, within `limit` of the spawn.
    pub async fn first(&mut self, limit: Duration) -> Phase {
        enum Step {
            Done(Box<Result<Finished, ProcessError>>),
            Form(AsyncForm),
            Late,
        }
        let deadline = tokio::time::Instant::from_std(self.started + limit);
        let step = {
            let process = &mut self.process;
            let announced = &mut self.announced;
            tokio::select! {
                biased;
                finished = process => Step::Done(Box::new(finished)),
                Ok(form) = async {
                    match announced {
                        Some(rx) => rx.await,
                        None => std::future::pending::<Result<AsyncForm, oneshot::error::RecvError>>().await,
                    }
                } => Step::Form(form),
                () = tokio::time::sleep_until(deadline) => Step::Late,
            }
        };
        match step {
            Step::Done(finished) => Phase::Ended(Box::new(Ended { finished: *finished, timed_out: None })),
            Step::Form(form) => Phase::Announced(form),
            Step::Late => Phase::Ended(Box::new(self.kill_and_wait(limit).await)),
        }
    }

    /// Waits for the end, killing the process at `deadline` (`limit` names it in the failure).
    pub async fn finish(mut self, deadline: Instant, limit: Duration) -> Ended {
        let deadline = tokio::time::Instant::from_std(deadline);
        let finished = {
            let process = &mut self.process;
            tokio::select! {
                finished = process => Some(finished),
                () = tokio::time::sleep_until(deadline) => None,
            }
        };
        match finished {
            Some(finished) => Ended { finished, timed_out: None },
            None => self.kill_and_wait(limit).await,
        }
    }

    async fn kill_and_wait(&mut self, limit: Duration) -> Ended {
        self.kill.cancel();
        Ended { finished: (&mut self.process).await, timed_out: Some(limit) }
    }
}
