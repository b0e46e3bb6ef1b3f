//! What each external hook returned, before interpretation, for `spine hooks test`.
//!
//! Every external hook carries a [`HookMeta`]; when the registry is built with an
//! [`AnswerSink`], each call reports an [`AnswerRecord`]: the raw answer (exit status, stdout,
//! stderr; HTTP status and body; the answer line) and what it meant (the hook's output or its
//! error). Runs without a sink pay nothing. The same raw answer goes to the engine when it
//! listens ([`spine_core::hooks::raw`]: stream-json's `hook_response` lines).
//!
//! A hook that answers `suppressOutput: true` has its raw output withheld from the record
//! (stdout, the HTTP body, the answer line, the reply: empty, [`AnswerRecord::suppressed`]
//! set); stderr, the exit status and what the answer meant are kept.

use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;
use serde_json::Value;
use spine_core::hooks::HookError;
use spine_core::hooks::raw::HookRaw;
use spine_protocol::hook::{HookEvent, HookEventName, HookKind, HookOutput};

/// A hook's raw answer.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Raw {
    /// A process exited (or was killed).
    Exit {
        /// Its exit code (`None` after a signal or a time-out).
        exit_code: Option<i32>,
        /// Its stdout (capped).
        stdout: String,
        /// Its stderr (capped).
        stderr: String,
        /// Whether stdout went over the cap.
        stdout_overflow: bool,
        /// Whether it read its stdin to the end.
        stdin_read: bool,
    },
    /// An HTTP response.
    Http {
        /// The HTTP status.
        status: u16,
        /// The body (capped).
        body: String,
    },
    /// A persistent hook's answer line.
    Line {
        /// The line as read, `spine_seq` included.
        line: String,
    },
    /// A prompt hook's model reply, an MCP tool's text, an SDK callback's answer (its JSON).
    Reply {
        /// The reply's text.
        text: String,
    },
    /// No answer at all (could not start, no connection, timed out before answering).
    None,
}

impl Raw {
    /// What the hook printed, as observers see it: a process's streams and status, an HTTP
    /// body and status, a line or a reply as stdout; for no answer at all, the failure as
    /// stderr.
    fn printed(&self, error: Option<&HookError>) -> HookRaw {
        match self {
            Raw::Exit { exit_code, stdout, stderr, .. } => {
                HookRaw { stdout: stdout.clone(), stderr: stderr.clone(), exit_code: *exit_code, http_status: None }
            }
            Raw::Http { status, body } => {
                HookRaw { stdout: body.clone(), http_status: Some(*status), ..HookRaw::default() }
            }
            Raw::Line { line: text } | Raw::Reply { text } => HookRaw { stdout: text.clone(), ..HookRaw::default() },
            Raw::None => HookRaw { stderr: error.map(|e| e.detail.clone()).unwrap_or_default(), ..HookRaw::default() },
        }
    }

    /// The same answer without the hook's raw output (`suppressOutput`).
    fn suppressed(self) -> Raw {
        match self {
            Raw::Exit { exit_code, stderr, stdout_overflow, stdin_read, .. } => {
                Raw::Exit { exit_code, stdout: String::new(), stderr, stdout_overflow, stdin_read }
            }
            Raw::Http { status, .. } => Raw::Http { status, body: String::new() },
            Raw::Line { .. } => Raw::Line { line: String::new() },
            Raw::Reply { .. } => Raw::Reply { text: String::new() },
            Raw::None => Raw::None,
        }
    }
}

/// One call of one external hook.
#[derive(Debug, Clone)]
pub struct AnswerRecord {
    /// The event that fired.
    pub event: HookEventName,
    /// The hook's id (its command or URL).
    pub hook_id: String,
    /// Its JSON path in its settings source (unique per handler).
    pub path: String,
    /// Its settings source.
    pub source: String,
    /// Command, HTTP or persistent.
    pub kind: HookKind,
    /// What it returned.
    pub raw: Raw,
    /// What that meant: its output as JSON, or its error.
    pub outcome: Result<Value, HookError>,
    /// The hook answered `suppressOutput: true`: its raw output is left out of [`Self::raw`].
    pub suppressed: bool,
    /// How long it took.
    pub duration: Duration,
}

/// Receives every call's record.
pub trait AnswerSink: Send + Sync {
    /// One call finished.
    fn record(&self, record: AnswerRecord);
}

/// Who a hook is, for records.
#[derive(Clone)]
pub struct HookMeta {
    /// The hook's id.
    pub hook_id: String,
    /// Its JSON path.
    pub path: String,
    /// Its settings source.
    pub source: String,
    /// Command, HTTP or persistent.
    pub kind: HookKind,
    /// Where records go.
    pub sink: Option<Arc<dyn AnswerSink>>,
}

impl HookMeta {
    /// Reports one call, when there is a sink.
    pub fn report<E: HookEvent>(
        &self,
        raw: impl FnOnce() -> Raw,
        result: &Result<HookOutput<E::Action>, HookError>,
        duration: Duration,
    ) {
        // The engine keeps what the hook printed for its observers (stream-json's
        // `hook_response`), when it listens.
        let listening = spine_core::hooks::raw::listening();
        if self.sink.is_none() && !listening {
            return;
        }
        let suppressed = result.as_ref().is_ok_and(|output| output.suppress_output);
        let raw = if suppressed { raw().suppressed() } else { raw() };
        if listening {
            spine_core::hooks::raw::report(raw.printed(result.as_ref().err()));
        }
        let Some(sink) = &self.sink else { return };
        let outcome = match result {
            Ok(output) => Ok(serde_json::to_value(output).unwrap_or(Value::Null)),
            Err(e) => Err(e.clone()),
        };
        sink.record(AnswerRecord {
            event: E::NAME,
            hook_id: self.hook_id.clone(),
            path: self.path.clone(),
            source: self.source.clone(),
            kind: self.kind,
            raw,
            outcome,
            suppressed,
            duration,
        });
    }

    /// Interprets a text reply (a prompt hook's model, an MCP tool), reports it with the reply
    /// as its raw answer, and returns the hook's result.
    pub fn settle_reply<E: HookEvent>(
        &self,
        reply: Result<String, HookError>,
        started: std::time::Instant,
        interpret: impl FnOnce(&str) -> Result<HookOutput<E::Action>, HookError>,
    ) -> Result<HookOutput<E::Action>, HookError> {
        let result = match &reply {
            Ok(text) => interpret(text),
            Err(e) => Err(e.clone()),
        };
        let raw = || match reply {
            Ok(text) => Raw::Reply { text },
            Err(_) => Raw::None,
        };
        self.report::<E>(raw, &result, started.elapsed());
        result
    }
}
