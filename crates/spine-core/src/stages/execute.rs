//! `execute`: runs one approved call's tool and says how it ended — completed with a
//! structured response, failed with a [`ToolError`], or canceled — in one trace entry
//! `{"hook": "execute", "tool_name", "ok"}`. A command tool (one with a command argument)
//! whose session has a sandbox also records `"sandbox"`: the profile its commands ran under
//! (`workspace-write,net=off,landlock-v7,seccomp,userns`), or `off (WHY)` for a call the
//! sandbox rules took out of it.
//!
//! Two clocks bound a call:
//! - the run's cancel token: the tool is asked to stop (its [`ToolContext::cancel`] is a child
//!   of the run's) and gets [`CANCEL_GRACE`] to return before it is dropped; the call ends
//!   [`Executed::Canceled`] whatever it returned;
//! - the tool's [`Tool::time_limit`], when it has one: past it the call's own token fires, the
//!   tool gets the same grace, and the call fails with `timeout`.
//!
//! A tool error with code `canceled` is a cancellation too (the tool saw the token first).

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Map, Value};
use spine_protocol::tool::{ErrorCode, ToolError};
use spine_protocol::trace::StageName;
use tokio_util::sync::CancellationToken;

use crate::fields;
use crate::tool::{Tool, ToolContext};
use crate::trace::Trace;

/// How long a canceled or timed-out tool gets to stop (and kill what it started) before it is
/// dropped.
pub const CANCEL_GRACE: Duration = Duration::from_secs(2);

/// How an executed call ended.
#[derive(Debug, Clone, PartialEq)]
pub enum Executed {
    /// The tool returned its structured response.
    Completed(Value),
    /// The tool returned an error, or outlived its time limit (`timeout`).
    Failed(ToolError),
    /// The run was canceled while the tool ran.
    Canceled,
}

/// The product of the stage.
#[derive(Debug, Clone, PartialEq)]
pub struct Execution {
    /// How the call ended.
    pub executed: Executed,
    /// Wall time from the start of the tool to its end (or to giving up on it).
    pub duration: Duration,
}

impl Execution {
    /// [`Execution::duration`] in whole milliseconds, as hooks read it (`duration_ms`).
    pub fn duration_ms(&self) -> u64 {
        u64::try_from(self.duration.as_millis()).unwrap_or(u64::MAX)
    }
}

/// Runs `tool` with `args` under `ctx`. `run_cancel` is the run's token; `ctx.cancel` must be a
/// child of it (the stage cancels `ctx.cancel` alone at the time limit).
pub async fn execute(
    tool: &Arc<dyn Tool>,
    args: &Map<String, Value>,
    ctx: &ToolContext,
    run_cancel: &CancellationToken,
    trace: &Trace,
) -> Execution {
    let started = Instant::now();
    let limit = tool.time_limit();
    let result = {
        let exec = tool.execute(args, ctx);
        tokio::pin!(exec);
        let expired = async {
            match limit {
                Some(limit) => tokio::time::sleep(limit).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            r = &mut exec => r,
            () = run_cancel.cancelled() => match tokio::time::timeout(CANCEL_GRACE, &mut exec).await {
                Ok(r) => r,
                Err(_) => Err(ToolError::new(ErrorCode::Canceled, "the run was canceled while the tool ran")),
            },
            () = expired => {
                // Ask the tool to stop (walks check the token), wait a little for it, and
                // answer `timeout` whatever it returns after being stopped.
                ctx.cancel.cancel();
                let _stopped = tokio::time::timeout(CANCEL_GRACE, &mut exec).await;
                Err(timed_out(&ctx.tool_name, limit))
            }
        }
    };
    let duration = started.elapsed();
    let mut fields = fields! { "tool_name" => ctx.tool_name, "ok" => result.is_ok() };
    if tool.command_argument().is_some()
        && let Some(sandbox) = sandbox_label(ctx)
    {
        fields.insert("sandbox".to_owned(), Value::String(sandbox));
        let notes = ctx.sandbox_report.lines();
        if !notes.is_empty() {
            fields.insert("sandbox_notes".to_owned(), Value::from(notes));
        }
    }
    trace.stage(StageName::Execute, Some(&ctx.call_id), started, fields);
    let executed = match result {
        Ok(response) => Executed::Completed(response),
        Err(error) if run_cancel.is_cancelled() || error.code == ErrorCode::Canceled => Executed::Canceled,
        Err(error) => Executed::Failed(error),
    };
    Execution { executed, duration }
}

/// The sandbox a command tool's call ran under, when the session has one.
fn sandbox_label(ctx: &ToolContext) -> Option<String> {
    match (&ctx.sandbox_exemption, ctx.child_env.confinement()) {
        (Some(why), _) => Some(format!("off ({why})")),
        (None, Some(confinement)) => Some(confinement.profile()),
        (None, None) => None,
    }
}

/// The error of a call stopped at its tool's time limit.
fn timed_out(tool_name: &str, limit: Option<Duration>) -> ToolError {
    let ms = limit.map_or(0, |l| u64::try_from(l.as_millis()).unwrap_or(u64::MAX));
    ToolError::new(
        ErrorCode::Timeout,
        format!("{tool_name} timed out after {ms} ms (the time limit of {tool_name} calls) and was stopped"),
    )
}

#[cfg(test)]
mod tests {
    use async_trait::async_trait;
    use serde_json::json;
    use spine_protocol::tool::{Effect, ToolSpec};

    use super::*;
    use crate::workspace::Workspace;

    /// Sleeps for `secs`; when `obeys`, returns `canceled` as soon as its token fires.
    struct Sleeper {
        limit: Option<Duration>,
        obeys: bool,
    }

    #[async_trait]
    impl Tool for Sleeper {
        fn spec(&self) -> ToolSpec {
            ToolSpec { name: "sleeper".into(), description: "sleeps".into(), input_schema: json!({"type": "object"}) }
        }
        fn effect(&self) -> Effect {
            Effect::Read
        }
        fn time_limit(&self) -> Option<Duration> {
            self.limit
        }
        async fn execute(&self, args: &Map<String, Value>, ctx: &ToolContext) -> Result<Value, ToolError> {
            let secs = args.get("secs").and_then(Value::as_u64).unwrap_or(0);
            let sleep = tokio::time::sleep(Duration::from_secs(secs));
            if self.obeys {
                tokio::select! {
                    () = sleep => Ok(json!("slept")),
                    () = ctx.cancel.cancelled() => Err(ToolError::new(ErrorCode::Canceled, "stopped")),
                }
            } else {
                sleep.await;
                Ok(json!("slept"))
            }
        }
    }

    fn context(cancel: &CancellationToken) -> (tempfile::TempDir, ToolContext) {
        let dir = tempfile::tempdir().expect("tmp");
        let workspace = Arc::new(Workspace::new(dir.path()).expect("workspace"));
        let mut ctx = ToolContext::new(workspace, "call-1", "sleeper", crate::tool::ChildEnv::default());
        ctx.cancel = cancel.child_token();
        (dir, ctx)
    }

    fn args(secs: u64) -> Map<String, Value> {
        json!({"secs": secs}).as_object().cloned().unwrap_or_default()
    }

    #[tokio::test]
    async fn a_completed_call_is_completed_and_traced_ok() {
        let cancel = CancellationToken::new();
        let (_dir, ctx) = context(&cancel);
        let tool: Arc<dyn Tool> = Arc::new(Sleeper { limit: None, obeys: true });
        let trace = Trace::default();
        let run = execute(&tool, &args(0), &ctx, &cancel, &trace).await;
        assert_eq!(run.executed, Executed::Completed(json!("slept")));
        assert_eq!(trace.stage_names(), ["execute"]);
    }

    #[tokio::test(start_paused = true)]
    async fn a_call_past_its_time_limit_fails_with_timeout_after_the_grace() {
        let cancel = CancellationToken::new();
        let (_dir, ctx) = context(&cancel);
        let tool: Arc<dyn Tool> = Arc::new(Sleeper { limit: Some(Duration::from_secs(1)), obeys: false });
        let run = execute(&tool, &args(3600), &ctx, &cancel, &Trace::default()).await;
        match run.executed {
            Executed::Failed(e) => {
                assert_eq!(e.code, ErrorCode::Timeout);
                assert!(e.message.contains("timed out after 1000 ms"), "{}", e.message);
            }
            other => panic!("expected a timeout, got {other:?}"),
        }
        assert!(ctx.cancel.is_cancelled(), "the call's own token fires at the limit");
        assert!(!cancel.is_cancelled(), "the run's token does not");
    }

    #[tokio::test(start_paused = true)]
    async fn a_run_canceled_while_the_tool_runs_is_canceled_when_the_tool_stops_in_the_grace() {
        let cancel = CancellationToken::new();
        let (_dir, ctx) = context(&cancel);
        let tool: Arc<dyn Tool> = Arc::new(Sleeper { limit: None, obeys: true });
        let canceler = cancel.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_secs(5)).await;
            canceler.cancel();
        });
        let run = execute(&tool, &args(3600), &ctx, &cancel, &Trace::default()).await;
        assert_eq!(run.executed, Executed::Canceled);
    }

    #[tokio::test(start_paused = true)]
    async fn a_tool_that_ignores_cancellation_is_dropped_after_the_grace() {
        let cancel = CancellationToken::new();
        let (_dir, ctx) = context(&cancel);
        let tool: Arc<dyn Tool> = Arc::new(Sleeper { limit: None, obeys: false });
        let canceler = cancel.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_secs(5)).await;
            canceler.cancel();
        });
        let run = execute(&tool, &args(3600), &ctx, &cancel, &Trace::default()).await;
        assert_eq!(run.executed, Executed::Canceled);
    }
}
