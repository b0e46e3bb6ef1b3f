//! Command hooks: one process per event.
//!
//! Contract of [`CommandHook`] (docs/hooks.md, "Answers of command hooks"):
//! - `bash -c COMMAND` (the shell per [`crate::shell`]) or the exec form, in its own process
//!   group, cwd = the run's working directory, environment per [`crate::env`] prepared by the
//!   hook's [`ChildEnv`] (the settings' `env`, provider keys removed unless passed through).
//! - stdin gets the event JSON and is then closed; a hook that never reads it is fine (EPIPE
//!   means "did not read its input", not a failure).
//! - stdout and stderr are read concurrently and capped: the first [`STDOUT_CAP`] characters
//!   of stdout are kept for the answer (more is a failure, in bounded memory), and
//!   [`STDERR_CAP`] characters of stderr (head and tail).
//! - The time limit kills the whole group: [`HookError::timeout`]. A canceled run kills it too.
//! - A program that cannot start is a launch error ([`HookError::launch`]), distinct from any
//!   decision: a program or script path that does not exist ([`crate::launch::missing_script`],
//!   checked before spawning), a command line or shell script that does not parse
//!   ([`crate::syntax`], checked before the first firing and when the script changes), a shell
//!   that is not installed, or a spawn that fails. What the exit status and output mean is
//!   [`crate::wire::decide::from_exit`] (exit 2 is a block, whatever stderr says).
//! - **The async form.** A hook whose first stdout line is `{"async": true}` (optionally with
//!   `"asyncTimeout": <ms>`, [`crate::wire::async_form`]) goes on in the background
//!   ([`Started::Background`]): the firing proceeds as if it had no opinion, the process keeps
//!   running (until `asyncTimeout` after that line, else until the hook's `timeout` from its
//!   start), and the rest of its stdout is its late answer, read as above. The form decides,
//!   not timing: a hook that printed it and ended at once is in the background too. A hook
//!   built [`CommandHook::in_foreground`] (`spine hooks test`) waits for the end instead; the
//!   first line is then only removed from the answer.

use std::sync::Arc;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use spine_core::hooks::{Hook, HookContext, HookError, Late, Started};
use spine_process::{ChildEnv, Ending, StdinOutcome};
use spine_protocol::hook::{HookEventName, HookOutput};
use tokio::process::Command;

use crate::config::Program;
use crate::env;
use crate::launch;
use crate::record::{HookMeta, Raw};
use crate::running::{Ended, Phase, Running};
use crate::syntax::SyntaxCheck;
use crate::wire::async_form;
use crate::wire::decide::{self, Exit};
use crate::wire::{WireEvent, input};

/// Characters of stdout kept for the JSON answer; more is a failure.
pub const STDOUT_CAP: usize = 1 << 20;
/// Characters of stderr kept (head and tail) for block reasons and failure details.
pub const STDERR_CAP: usize = 64 * 1024;

/// A command hook.
pub struct CommandHook {
    program: Program,
    timeout: Duration,
    meta: Arc<HookMeta>,
    syntax: SyntaxCheck,
    foreground: bool,
    child_env: ChildEnv,
}

/// How a hook process ended, interpreted.
pub struct Exited<A> {
    /// Its answer or failure.
    pub result: Result<HookOutput<A>, HookError>,
    /// Its exit code (`None`: killed, timed out, or never started).
    pub code: Option<i32>,
    /// Its stdout, without an async first line.
    pub stdout: String,
    /// Its stderr.
    pub stderr: String,
    /// Whether its first line was the async form.
    pub announced: bool,
}

impl CommandHook {
    /// A hook running `program` with a time limit, its processes getting `child_env`.
    pub fn new(program: Program, timeout: Duration, meta: Arc<HookMeta>, child_env: ChildEnv) -> Self {
        CommandHook { program, timeout, meta, syntax: SyntaxCheck::new(), foreground: false, child_env }
    }

    /// A hook that never goes to the background: it is waited for even after an async first
    /// line (`spine hooks test`, to show its answer).
    pub fn in_foreground(mut self) -> Self {
        self.foreground = true;
        self
    }

    /// The process ready to spawn, or why it cannot start.
    async fn prepare<E: WireEvent>(&self, ctx: &HookContext) -> Result<Command, HookError> {
        let unrunnable = match launch::missing_script(&self.program, &ctx.session) {
            Some(missing) => Some(missing),
            None => self.syntax.error(&self.program, &ctx.session, &self.child_env).await,
        };
        if let Some(why) = unrunnable {
            return Err(HookError::launch(why));
        }
        // Claude Code gives the environment file to SessionStart, CwdChanged and FileChanged hooks.
        let env_file =
            matches!(E::NAME, HookEventName::SessionStart | HookEventName::CwdChanged | HookEventName::FileChanged);
        env::command(&self.program, &ctx.session, env_file).map_err(HookError::launch)
    }

    /// Starts the process; a launch error is reported and returned.
    async fn launch<E: WireEvent>(
        &self,
        ctx: &HookContext,
        input: &E::Input,
        watch: bool,
    ) -> Result<Running, HookError> {
        let started = Instant::now();
        match self.prepare::<E>(ctx).await {
            Ok(command) => {
                let payload = input::encode::<E>(ctx, input);
                Ok(Running::spawn(command, payload, &self.child_env, &ctx.cancel, watch))
            }
            Err(e) => {
                let result = Err(e.clone());
                self.meta.report::<E>(|| Raw::None, &result, started.elapsed());
                Err(e)
            }
        }
    }

    /// Runs the hook to its end (an async first line is only removed from its answer).
    pub async fn run_to_end<E: WireEvent>(&self, ctx: &HookContext, input: &E::Input) -> Exited<E::Action> {
        let mut running = match self.launch::<E>(ctx, input, false).await {
            Ok(running) => running,
            Err(e) => return Exited::failed(e),
        };
        let started = running.started();
        let ended = match running.first(self.timeout).await {
            Phase::Ended(ended) => *ended,
            // Not watched: never announced.
            Phase::Announced(_) => running.finish(started + self.timeout, self.timeout).await,
        };
        settle::<E>(ended, &self.meta, started)
    }
}

#[async_trait]
impl<E: WireEvent> Hook<E> for CommandHook {
    async fn call(&self, ctx: &HookContext, input: &E::Input) -> Result<HookOutput<E::Action>, HookError> {
        self.run_to_end::<E>(ctx, input).await.result
    }

    async fn start(&self, ctx: &HookContext, input: &E::Input) -> Started<E::Action> {
        if self.foreground {
            return Started::Answered(self.run_to_end::<E>(ctx, input).await.result);
        }
        let mut running = match self.launch::<E>(ctx, input, true).await {
            Ok(running) => running,
            Err(e) => return Started::Answered(Err(e)),
        };
        let started = running.started();
        match running.first(self.timeout).await {
            Phase::Ended(ended) => {
                let exited = settle::<E>(*ended, &self.meta, started);
                if exited.announced {
                    let late = Late::answered(exited.result);
                    Started::Background { answer: Box::pin(async move { late }), wakes: false }
                } else {
                    Started::Answered(exited.result)
                }
            }
            Phase::Announced(form) => {
                let meta = Arc::clone(&self.meta);
                let (deadline, limit) = match form.timeout {
                    Some(limit) => (Instant::now() + limit, limit),
                    None => (started + self.timeout, self.timeout),
                };
                let answer = Box::pin(async move {
                    let ended = running.finish(deadline, limit).await;
                    Late::answered(settle::<E>(ended, &meta, started).result)
                });
                Started::Background { answer, wakes: false }
            }
        }
    }
}

impl<A> Exited<A> {
    fn failed(error: HookError) -> Self {
        Exited { result: Err(error), code: None, stdout: String::new(), stderr: String::new(), announced: false }
    }
}

/// What an ended process means (stdout without an async first line), reported to the hook's
/// answer sink.
pub fn settle<E: WireEvent>(ended: Ended, meta: &HookMeta, started: Instant) -> Exited<E::Action> {
    let finished = match ended.finished {
        Ok(finished) => finished,
        Err(e) => {
            let error = HookError::launch(e.to_string());
            meta.report::<E>(|| Raw::None, &Err(error.clone()), started.elapsed());
            return Exited::failed(error);
        }
    };
    let overflow = finished.stdout.exceeded();
    let raw_stdout = if overflow { String::new() } else { finished.stdout.text() };
    let (form, answer) = async_form::split(&raw_stdout);
    let stdout = answer.to_owned();
    let stderr = finished.stderr.text();
    let code = finished.status.and_then(|s| s.code());
    let result = match (finished.ending, ended.timed_out) {
        (_, Some(limit)) => {
            Err(HookError::timeout(format!("no answer within {:.1} s; process group killed", limit.as_secs_f64())))
        }
        (Ending::TimedOut, None) => Err(HookError::timeout("the process ran out of time; process group killed")),
        (Ending::Canceled, None) => Err(HookError::failed("the run was canceled; process group killed")),
        (Ending::Exited, None) => {
            decide::from_exit::<E>(&Exit { code, stdout: &stdout, stdout_overflow: overflow, stderr: &stderr })
        }
    };
    meta.report::<E>(
        || Raw::Exit {
            exit_code: code,
            stdout_overflow: overflow,
            stdin_read: !matches!(finished.stdin, StdinOutcome::NotRead),
            stdout: raw_stdout.clone(),
            stderr: stderr.clone(),
        },
        &result,
        started.elapsed(),
    );
    Exited { result, code, stdout, stderr, announced: form.is_some() }
}
