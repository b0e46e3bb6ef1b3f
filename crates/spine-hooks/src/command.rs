//! Command hooks: one process per event.
//!
//! Contract of [`CommandHook`] (docs/hooks.md, "Answers of command hooks"):
//! - `bash -c COMMAND` (the shell per [`crate::shell`]) or the exec form, in its own process
//!   group, cwd = the run's working directory, environment per [`crate::env`].
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

use std::sync::Arc;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use spine_core::hooks::{Hook, HookContext, HookError};
use spine_process::{Ending, Limits, RunOptions, StdinOutcome};
use spine_protocol::hook::{HookEventName, HookOutput};

use crate::config::Program;
use crate::env;
use crate::launch;
use crate::record::{HookMeta, Raw};
use crate::syntax::SyntaxCheck;
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
}

impl CommandHook {
    /// A hook running `program` with a time limit.
    pub fn new(program: Program, timeout: Duration, meta: Arc<HookMeta>) -> Self {
        CommandHook { program, timeout, meta, syntax: SyntaxCheck::new() }
    }
}

#[async_trait]
impl<E: WireEvent> Hook<E> for CommandHook {
    async fn call(&self, ctx: &HookContext, input: &E::Input) -> Result<HookOutput<E::Action>, HookError> {
        let started = Instant::now();
        let unrunnable = match launch::missing_script(&self.program, &ctx.session) {
            Some(missing) => Some(missing),
            None => self.syntax.error(&self.program, &ctx.session).await,
        };
        let command = match unrunnable {
            Some(why) => Err(why),
            None => env::command(&self.program, &ctx.session, E::NAME == HookEventName::SessionStart),
        };
        let command = match command {
            Ok(command) => command,
            Err(why) => {
                let result = Err(HookError::launch(why));
                self.meta.report::<E>(|| Raw::None, &result, started.elapsed());
                return result;
            }
        };
        let payload = input::encode::<E>(ctx, input);
        let limits = Limits { timeout: self.timeout, stdout_cap: STDOUT_CAP, stderr_cap: STDERR_CAP };
        let options = RunOptions::new(limits).stdin(payload).cancel(&ctx.cancel);
        let finished = match spine_process::run(command, options).await {
            Ok(finished) => finished,
            Err(e) => {
                let result = Err(HookError::launch(e.to_string()));
                self.meta.report::<E>(|| Raw::None, &result, started.elapsed());
                return result;
            }
        };
        let stdout = if finished.stdout.exceeded() { String::new() } else { finished.stdout.text() };
        let stderr = finished.stderr.text();
        let code = finished.status.and_then(|s| s.code());
        let result = match finished.ending {
            Ending::TimedOut => Err(HookError::timeout(format!(
                "no answer within {:.1} s; process group killed",
                self.timeout.as_secs_f64()
            ))),
            Ending::Canceled => Err(HookError::failed("the run was canceled; process group killed")),
            Ending::Exited => decide::from_exit::<E>(&Exit {
                code,
                stdout: &stdout,
                stdout_overflow: finished.stdout.exceeded(),
                stderr: &stderr,
            }),
        };
        self.meta.report::<E>(
            || Raw::Exit {
                exit_code: code,
                stdout_overflow: finished.stdout.exceeded(),
                stdin_read: !matches!(finished.stdin, StdinOutcome::NotRead),
                stdout,
                stderr,
            },
            &result,
            started.elapsed(),
        );
        result
    }
}
