//! `Bash {command, description?, timeout?, run_in_background?}` (effect: execute).
//!
//! Runs `bash -c COMMAND` (`sh -c` when `/bin/bash` is missing) in the call's working
//! directory, in its own process group, with the run's environment file applied
//! (`env_file`). The working directory persists between calls, as in Claude Code: with the
//! agent's shell directory in the context, the next command starts where this one left the
//! shell, inside the workspace, else back in the project directory with `Shell cwd was reset
//! to DIR` ending `stderr` (`shell_cwd`). Output is streamed to the progress sink and kept capped: at most
//! [`OUTPUT_CAP`] characters of stdout and stderr together, each stream keeping its head and
//! tail around a `[output truncated: N characters omitted]` marker (`output`).
//!
//! `timeout` is in milliseconds (default [`DEFAULT_TIMEOUT_MS`], at most [`MAX_TIMEOUT_MS`]).
//! `run_in_background: true` is refused (`validation_error`) with a pointer to `exec_command` and `process_exec`.
//!
//! Under a sandbox (a confined [`ChildEnv`](spine_process::ChildEnv) in the context) the shell
//! starts through the sandbox launcher. Lines the sandbox has for the call end `stderr`: a
//! protected path the command created and that was removed, and, when the command failed, one
//! `… (sandbox: REASON)` line per denial its output shows that the policy explains (so the
//! model can ask instead of guessing). `dangerouslyDisableSandbox: true` (Claude Code's
//! parameter) is read by the permission step, not here: only an approved call gets an
//! unconfined context; the tool itself never leaves the sandbox.
//!
//! The response is Claude Code's `{stdout, stderr, interrupted, isImage, noOutputExpected}`
//! (the last two always `false`: spine neither detects image output nor classifies silent
//! commands) plus spine's `exit_code` (null when the shell died of a signal). As in Claude
//! Code, `stdout` drops its trailing newlines (`echo hi` gives `"hi"`), so a hook comparing it
//! sees the same text in both. Exit 0 is a success; any other ending is a [`ToolError`]
//! carrying that response and, in its message, the output (the model reads the message):
//! `command_failed` (`Exit code N`), `timeout`, `canceled`; a shell that cannot start is a
//! `runtime_error`.
//!
//! The projection heads the output with how the command ended. A response without an
//! `exit_code` field (a PostToolUse hook's replacement in Claude Code's shape) is projected as
//! its output alone: the hook said what the command printed, not how it ended.

use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value, json};
use spine_core::tool::{OutputStream, Projection, Tool, ToolContext};
use spine_process::{Ending, Finished, Limits, RunOptions, Stream};
use spine_protocol::tool::{Effect, ErrorCode, ToolError, ToolSpec};

use crate::args::{self, Count};
use crate::env_file;
use crate::output;
use crate::shell_cwd::{self, CwdReport};

/// Default time limit, in milliseconds.
pub const DEFAULT_TIMEOUT_MS: u64 = 120_000;
/// Largest accepted time limit, in milliseconds.
pub const MAX_TIMEOUT_MS: u64 = 600_000;
/// Characters of output kept (stdout and stderr together; the marker is extra).
pub const OUTPUT_CAP: usize = 30_000;

/// The `Bash` tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct BashTool;

#[derive(Deserialize, JsonSchema)]
struct BashArgs {
    /// The command to run.
    command: String,
    /// What the command does, in a few words.
    #[allow(dead_code, reason = "for the transcript and hooks; the tool does not read it")]
    description: Option<String>,
    /// Time limit in milliseconds.
    #[schemars(range(min = 1, max = MAX_TIMEOUT_MS))]
    timeout: Option<Count>,
    /// Not supported: use exec_command or process_exec; must be false or absent.
    run_in_background: Option<bool>,
    /// Set this to true to dangerously override sandbox mode and run commands without sandboxing.
    #[serde(rename = "dangerouslyDisableSandbox")]
    #[allow(dead_code, reason = "read by the permission step; the tool runs in the context it is given")]
    dangerously_disable_sandbox: Option<bool>,
}

#[async_trait]
impl Tool for BashTool {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "Bash".to_owned(),
            description: format!(
                "Runs a shell command with bash in the working directory and returns its \
                 output. The working directory persists between commands (a `cd` that leaves \
                 the workspace is undone). The command is killed (with everything it started) after `timeout` \
                 milliseconds (default {DEFAULT_TIMEOUT_MS}, max {MAX_TIMEOUT_MS}). Output \
                 beyond {OUTPUT_CAP} characters is cut in the middle."
            ),
            input_schema: args::schema::<BashArgs>(),
        }
    }

    fn effect(&self) -> Effect {
        Effect::Execute
    }

    fn command_argument(&self) -> Option<&'static str> {
        Some("command")
    }

    async fn execute(&self, args: &Map<String, Value>, ctx: &ToolContext) -> Result<Value, ToolError> {
        let BashArgs { command, timeout, run_in_background, .. } = args::parse(args)?;
        let timeout_ms = timeout.map_or(DEFAULT_TIMEOUT_MS, Count::get).clamp(1, MAX_TIMEOUT_MS);
        if run_in_background == Some(true) {
            return Err(ToolError::new(
                ErrorCode::ValidationError,
                "run_in_background is not supported by Bash; use exec_command (returns a command_run_id) or process_exec for a long-lived service",
            ));
        }
        if ctx.cancel.is_cancelled() {
            return Err(ToolError::new(ErrorCode::Canceled, "the run was canceled before the command started"));
        }

        let shell = if Path::new("/bin/bash").exists() { "/bin/bash" } else { "/bin/sh" };
        // With a kept shell directory, the shell reports where the command left it.
        let (start, mut note) = shell_cwd::start(ctx);
        // A confined shell writes only its private TMPDIR: its report goes there.
        let private_tmp = ctx
            .child_env
            .confinement()
            .and_then(|c| c.env().into_iter().find(|(name, _)| name == "TMPDIR").map(|(_, dir)| PathBuf::from(dir)));
        let report = ctx.shell_cwd.as_ref().and_then(|_| CwdReport::create(private_tmp.as_deref()));
        let script = match &report {
            Some(report) => report.wrap(&command),
            None => command,
        };
        let mut cmd = ctx.child_env.command(shell);
        cmd.arg("-c").arg(script).current_dir(&start);
        if let Some(path) = &ctx.env_file {
            cmd.envs(env_file::load(path));
        }
        let emit: spine_process::Emit = {
            let ctx = ctx.clone();
            Arc::new(move |stream, text| {
                let stream = match stream {
                    Stream::Stdout => OutputStream::Stdout,
                    Stream::Stderr => OutputStream::Stderr,
                };
                ctx.emit(stream, text);
            })
        };
        let limits =
            Limits { timeout: Duration::from_millis(timeout_ms), stdout_cap: OUTPUT_CAP, stderr_cap: OUTPUT_CAP };
        let options = RunOptions::new(limits, &ctx.child_env).cancel(&ctx.cancel).emit(emit);
        let finished = spine_process::run(cmd, options)
            .await
            .map_err(|e| ToolError::new(ErrorCode::RuntimeError, e.to_string()))?;
        if let Some(report) = &report {
            note = shell_cwd::settle(ctx, &start, report.read().as_deref()).or(note);
        }
        let mut notes: Vec<String> = note.into_iter().collect();
        let sandboxed = sandbox_notes(ctx, &finished, &start);
        ctx.sandbox_report.extend(sandboxed.iter().cloned());
        notes.extend(sandboxed);
        outcome(&finished, timeout_ms, &notes)
    }

    fn project(&self, response: &Value) -> Projection {
        let stdout = str_field(response, "stdout");
        let stderr = str_field(response, "stderr");
        let exit = response.get("exit_code").and_then(Value::as_i64);
        let interrupted = response.get("interrupted").and_then(Value::as_bool).unwrap_or(false);
        let headline = match exit {
            Some(code) => Some(format!("Command exited with status {code}.")),
            None if interrupted => Some("Command was interrupted.".to_owned()),
            // A replaced response (PostToolUse) that says nothing about the ending.
            None if response.get("exit_code").is_none() => None,
            None => Some("Command ended without an exit status.".to_owned()),
        };
        let body = render_output(stdout, stderr);
        let content = match (headline, body.is_empty()) {
            (Some(headline), true) => format!("{headline} It printed nothing."),
            (Some(headline), false) => format!("{headline}\n{body}"),
            (None, true) => "The command printed nothing.".to_owned(),
            (None, false) => body,
        };
        Projection::plain(content)
            .with("exit_status", exit.map_or(Value::Null, Value::from))
            .with("stdout_bytes", stdout.len())
            .with("stderr_bytes", stderr.len())
            .with("truncated", output::is_truncated(stdout) || output::is_truncated(stderr))
            .with("interrupted", interrupted)
    }
}

/// What the sandbox says about a finished command: the guard's lines, then, when the command
/// failed, the denials its output shows that the policy explains.
fn sandbox_notes(ctx: &ToolContext, finished: &Finished, cwd: &Path) -> Vec<String> {
    let Some(confinement) = ctx.child_env.confinement() else { return Vec::new() };
    let mut notes = finished.sandbox_notes.clone();
    let failed = finished.ending == Ending::Exited && finished.status.is_none_or(|s| !s.success());
    if failed {
        let printed = format!("{}\n{}", finished.stdout.text(), finished.stderr.text());
        notes.extend(confinement.explain(&printed, cwd));
    }
    notes
}

/// Maps a finished run to the tool's result; `notes` (the shell's directory was reset, what
/// the sandbox says) end `stderr`.
fn outcome(finished: &Finished, timeout_ms: u64, notes: &[String]) -> Result<Value, ToolError> {
    let (stdout, stderr, _) = output::render_pair(&finished.stdout, &finished.stderr, OUTPUT_CAP);
    let stderr = notes.iter().fold(stderr, |stderr, note| shell_cwd::with_note(&stderr, note));
    // Claude Code's `tool_response.stdout` has no trailing newline.
    let stdout = stdout.trim_end_matches(['\n', '\r']).to_owned();
    let exit_code = finished.status.and_then(|s| s.code());
    let interrupted = finished.ending != Ending::Exited;
    let response = json!({
        "stdout": stdout,
        "stderr": stderr,
        "interrupted": interrupted,
        "isImage": false,
        "noOutputExpected": false,
        "exit_code": exit_code,
    });
    let text = render_output(&stdout, &stderr);
    let with_text = |head: String| {
        if text.is_empty() { head } else { format!("{head}\n{text}") }
    };
    match finished.ending {
        Ending::TimedOut => {
            Err(ToolError::new(ErrorCode::Timeout, with_text(format!("Command timed out after {timeout_ms} ms")))
                .with_response(response))
        }
        Ending::Canceled => {
            Err(ToolError::new(ErrorCode::Canceled, with_text("Command canceled".to_owned())).with_response(response))
        }
        Ending::Exited => match (exit_code, finished.status.and_then(|s| s.signal())) {
            (Some(0), _) => Ok(response),
            (Some(code), _) => Err(ToolError::new(ErrorCode::CommandFailed, with_text(format!("Exit code {code}")))
                .with_response(response)),
            (None, Some(signal)) => {
                Err(ToolError::new(ErrorCode::CommandFailed, with_text(format!("Command killed by signal {signal}")))
                    .with_response(response))
            }
            (None, None) => Err(ToolError::new(
                ErrorCode::RuntimeError,
                with_text("Command ended without an exit status".to_owned()),
            )
            .with_response(response)),
        },
    }
}

/// Stdout, then stderr under a `stderr:` label when there is any.
fn render_output(stdout: &str, stderr: &str) -> String {
    let mut text = stdout.trim_end_matches('\n').to_owned();
    let stderr = stderr.trim_end_matches('\n');
    if !stderr.is_empty() {
        if !text.is_empty() {
            text.push('\n');
        }
        text.push_str("stderr:\n");
        text.push_str(stderr);
    }
    text
}

fn str_field<'a>(response: &'a Value, key: &str) -> &'a str {
    response.get(key).and_then(Value::as_str).unwrap_or("")
}
