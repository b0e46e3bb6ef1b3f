//! `spine hooks test`: fire one event against the configured hooks, without a session.
//!
//! Contract of [`fire`]:
//! - The hooks are built as for a run, except that `async` hooks run in the foreground (so
//!   their answers can be shown), and each call's raw answer is recorded ([`crate::record`]).
//!   Their processes get [`FireRequest::child_env`], the environment a run of the same
//!   settings gives its children.
//!   Prompt hooks ask [`FireRequest::models`] and agent hooks run the verifiers of
//!   [`FireRequest::agents`], as in a run; without them such a hook fails when it fires.
//! - The event's input is built from defaults overlaid with the caller's fields (`--input`,
//!   e.g. `{"tool_input": {...}}`); a field the event does not have is an error.
//! - Tool events go through the real tool registry: the call is prepared (tool known, schema
//!   valid, paths normalised) exactly as in a run, so PreToolUse rewrites are re-validated.
//! - The event is fired through spine-core's engine, so the merged decision follows the real
//!   merge rules; it is reported as JSON ([`FireReport::merged`]), with the text the model
//!   would read where there is one.
//! - `transcript_path` names a real transcript in Claude Code's format: the caller's own
//!   ([`TranscriptFile::Existing`]), or one written before the hooks run
//!   ([`TranscriptFile::Write`]) with what the conversation would hold at that event: a prompt,
//!   the model turn that made the call (tool events) or the final answer (Stop events, the
//!   `last_assistant_message` given or the default).

/// `Fire` for one event whose input is plain data: `$input` built from `$defaults` overlaid with
/// the caller's fields, fired by the engine method `$method` (with the event as its type
/// argument when the method is generic), the merged decision reported by `$json`. Used by
/// `events` and `session_events`; an event that needs a tool call or a context of its own
/// keeps a hand-written `impl Fire`.
macro_rules! fire_with {
    ($($event:ty: $input:ty = $defaults:expr => $method:ident $(::<$generic:ty>)?, $json:expr;)*) => {$(
        impl Fire for $event {
            async fn fire(
                runtime: &HookRuntime,
                ctx: &HookContext,
                _request: &FireRequest,
                fields: Map<String, Value>,
            ) -> Result<(Value, Value), FireError> {
                let input: $input = typed($defaults, fields)?;
                let input_shown = shown(ctx, &input);
                Ok((input_shown, $json(&runtime.$method $(::<$generic>)? (ctx, input).await)))
            }
        }
    )*};
}

mod events;
mod session_events;

use std::sync::{Arc, Mutex, PoisonError};

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};
use spine_core::CancellationToken;
use spine_core::hooks::engine::HaltBy;
use spine_core::hooks::{HookContext, HookRegistryBuilder, HookRuntime, SessionInfo};
use spine_core::observer::NullObserver;
use spine_core::registry::{PreparedCall, ToolRegistry};
use spine_core::session::{Transcript, TranscriptRecord};
use spine_core::trace::Trace;
use spine_core::workspace::Workspace;
use spine_process::ChildEnv;
use spine_protocol::hook::{HookEventName, WireInput};
use spine_protocol::message::{AssistantMessage, Message};
use spine_protocol::tool::{ToolArguments, ToolCall};
use spine_protocol::trace::TraceRecord;
use spine_protocol::with_hook_event;
use thiserror::Error;

use self::events::Fire;
use crate::agent_hook::HookAgents;
use crate::build::{BuildError, BuildOptions, register};
use crate::config::HookConfig;
use crate::mcp_tool::HookTools;
use crate::record::{AnswerRecord, AnswerSink};

/// What to fire.
pub struct FireRequest {
    /// The event to fire.
    pub event: HookEventName,
    /// The tool, for tool events (default `Bash`).
    pub tool: Option<String>,
    /// The event's own fields, overriding the defaults.
    pub input: Option<Value>,
    /// The session the hooks see.
    pub session: SessionInfo,
    /// The tools calls are prepared with.
    pub tools: Arc<ToolRegistry>,
    /// Whether `session.transcript_path` is to be written first.
    pub transcript: TranscriptFile,
    /// The models of prompt hooks (without them, a prompt hook fails when it fires).
    pub models: Option<Arc<dyn crate::prompt::HookModels>>,
    /// The verifiers of agent hooks, as a run builds them (without them, an agent hook fails
    /// when it fires).
    pub agents: Option<Arc<dyn HookAgents>>,
    /// The environment of the hooks' processes (the settings' `env`, the provider keys passed
    /// through), as in a run.
    pub child_env: ChildEnv,
}

/// The transcript the hooks read at `transcript_path`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TranscriptFile {
    /// An existing transcript (a real session's), read as it is.
    Existing,
    /// Written by [`fire`] before the hooks run (the file must not exist yet).
    Write,
}

/// What happened.
#[derive(Debug)]
pub struct FireReport {
    /// The event that was fired.
    pub event: HookEventName,
    /// The event JSON the hooks received.
    pub input: Value,
    /// Each hook's raw answer, in configuration order.
    pub answers: Vec<AnswerRecord>,
    /// The merged decision.
    pub merged: Value,
    /// Warnings the engine recorded (hooks failing open, discarded rewrites…).
    pub warnings: Vec<String>,
}

/// A test that cannot be fired.
#[derive(Debug, Error)]
pub enum FireError {
    /// The input does not fit the event, or the tool call is invalid.
    #[error("{0}")]
    Input(String),
    /// The hooks could not be built.
    #[error(transparent)]
    Build(#[from] BuildError),
}

#[derive(Default)]
struct Collect(Mutex<Vec<AnswerRecord>>);

impl AnswerSink for Collect {
    fn record(&self, record: AnswerRecord) {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).push(record);
    }
}

/// Fires one event against the configured hooks.
pub async fn fire(config: &HookConfig, request: FireRequest) -> Result<FireReport, FireError> {
    let sink = Arc::new(Collect::default());
    let mut builder = HookRegistryBuilder::new();
    let options = BuildOptions {
        child_env: request.child_env.clone(),
        sink: Some(Arc::clone(&sink) as Arc<dyn AnswerSink>),
        force_blocking: true,
        models: request.models.clone(),
        tools: Workspace::new(&request.session.project_dir)
            .ok()
            .map(|ws| HookTools { registry: Arc::clone(&request.tools), workspace: Arc::new(ws) }),
        agents: request.agents.clone(),
        // `spine hooks test` fires the settings' hooks: there is no SDK host.
        callbacks: None,
    };
    register(config, &mut builder, &options)?;
    let trace = Trace::default();
    let project_dir = request.session.project_dir.clone();
    let runtime = HookRuntime::new(Arc::new(builder.build()), trace.clone(), Arc::new(NullObserver), project_dir);
    let before_prompt = matches!(request.event, HookEventName::SessionStart | HookEventName::UserPromptSubmit);
    let ctx = HookContext {
        session: Arc::new(request.session.clone()),
        event: request.event,
        prompt_id: (!before_prompt).then(|| Arc::from("hooks-test-prompt")),
        cancel: CancellationToken::new(),
        agent: None,
    };
    let fields = match &request.input {
        None => Map::new(),
        Some(Value::Object(map)) => map.clone(),
        Some(other) => return Err(FireError::Input(format!("--input must be a JSON object, found {other}"))),
    };
    if request.transcript == TranscriptFile::Write {
        write_transcript(&request, &fields).map_err(|e| {
            FireError::Input(format!("cannot write {}: {e}", request.session.transcript_path.display()))
        })?;
    }
    let (input, merged) =
        with_hook_event!(request.event, E => <E as Fire>::fire(&runtime, &ctx, &request, fields).await)?;
    runtime.shutdown();
    let mut answers = std::mem::take(&mut *sink.0.lock().unwrap_or_else(PoisonError::into_inner));
    let order: Vec<&str> = config.active_groups().iter().flat_map(|g| &g.handlers).map(|h| h.path.as_str()).collect();
    answers.sort_by_key(|a| order.iter().position(|p| *p == a.path).unwrap_or(usize::MAX));
    let warnings = trace
        .entries()
        .into_iter()
        .filter_map(|e| match e.record {
            TraceRecord::Warning(w) => Some(w.message),
            _ => None,
        })
        .collect();
    Ok(FireReport { event: request.event, input, answers, merged, warnings })
}

/// Writes the conversation as it would be when `request.event` fires.
fn write_transcript(request: &FireRequest, fields: &Map<String, Value>) -> std::io::Result<()> {
    let session = &request.session;
    let transcript = Transcript::open(&session.transcript_path)?;
    transcript.append(&TranscriptRecord::Session {
        session_id: session.session_id.clone(),
        cwd: session.cwd.clone(),
        model: "hooks-test".to_owned(),
    })?;
    let mut messages = Vec::new();
    if !matches!(request.event, HookEventName::SessionStart | HookEventName::UserPromptSubmit) {
        messages.push(Message::user("spine hooks test"));
    }
    if request.event.has_tool_call() {
        let call = test_call(request, fields);
        messages.push(Message::Assistant(AssistantMessage {
            content: None,
            tool_calls: vec![call],
            reasoning: Vec::new(),
        }));
    }
    if matches!(request.event, HookEventName::Stop | HookEventName::SubagentStop) {
        let text = fields.get("last_assistant_message").and_then(Value::as_str).unwrap_or(DEFAULT_ANSWER);
        messages.push(Message::assistant_text(text));
    }
    for message in messages {
        transcript.append(&TranscriptRecord::Message { message })?;
    }
    Ok(())
}

/// The call id of a tool event when `--input` gives none.
const DEFAULT_CALL_ID: &str = "toolu_hooks_test";

/// The model's final answer at a Stop event when `--input` gives none.
const DEFAULT_ANSWER: &str = "Done.";

/// An event's input as the hooks see it: the common fields, then the event's own.
fn shown<I: Serialize>(ctx: &HookContext, input: &I) -> Value {
    serde_json::to_value(WireInput { common: &ctx.common_input(), event: input }).unwrap_or(Value::Null)
}

/// Defaults overlaid with the caller's fields, as the event's typed input. A field the input
/// type does not have is an error (a typo in `--input` must not pass silently).
fn typed<T: DeserializeOwned + Serialize>(defaults: Value, fields: Map<String, Value>) -> Result<T, FireError> {
    let mut value = defaults;
    if let Some(obj) = value.as_object_mut() {
        obj.extend(fields);
    }
    let parsed: T = serde_json::from_value(value.clone())
        .map_err(|e| FireError::Input(format!("--input does not fit the event: {e}")))?;
    let known = serde_json::to_value(&parsed).unwrap_or(Value::Null);
    if let (Some(given), Some(known)) = (value.as_object(), known.as_object())
        && let Some((unknown, _)) = given.iter().find(|(k, v)| !v.is_null() && !known.contains_key(*k))
    {
        return Err(FireError::Input(format!("--input: unknown field `{unknown}` for this event")));
    }
    Ok(parsed)
}

/// The call of a tool event: `--tool` (else `tool_name`, else `Bash`), `tool_input` (else the
/// tool's default input) and `tool_use_id` from `--input`.
fn test_call(request: &FireRequest, fields: &Map<String, Value>) -> ToolCall {
    let name = request
        .tool
        .clone()
        .or_else(|| fields.get("tool_name").and_then(Value::as_str).map(str::to_owned))
        .unwrap_or_else(|| "Bash".to_owned());
    let args = fields.get("tool_input").cloned().unwrap_or_else(|| default_tool_input(&name));
    let id = fields.get("tool_use_id").and_then(Value::as_str).unwrap_or(DEFAULT_CALL_ID).to_owned();
    ToolCall { id, name, arguments: ToolArguments::Json(args) }
}

/// Prepares the tool call of a tool event through the registry.
fn prepare(request: &FireRequest, fields: &Map<String, Value>) -> Result<PreparedCall, FireError> {
    let known = ["tool_name", "tool_input", "tool_use_id"];
    if let Some(unknown) = fields.keys().find(|k| !known.contains(&k.as_str())) {
        return Err(FireError::Input(format!("--input: unknown field `{unknown}` for {}", request.event)));
    }
    let call = test_call(request, fields);
    request
        .tools
        .prepare(&call, &request.session.cwd)
        .map_err(|e| FireError::Input(format!("the tool call is not valid: {}", e.render())))
}

fn default_tool_input(tool: &str) -> Value {
    match tool {
        "Bash" => json!({"command": "echo hello"}),
        "Read" => json!({"file_path": "README.md"}),
        "Write" => json!({"file_path": "hooks-test.txt", "content": "hello\n"}),
        "Edit" => json!({"file_path": "README.md", "old_string": "a", "new_string": "b"}),
        "Glob" | "Grep" => json!({"pattern": "*"}),
        _ => json!({}),
    }
}

fn default_response(tool: &str) -> Value {
    match tool {
        "Bash" => json!({"stdout": "hello\n", "stderr": "", "interrupted": false, "exit_code": 0}),
        _ => json!({}),
    }
}

/// Adds what every event shares to its decision: the contexts and `continue: false`.
fn with(mut decision: Value, contexts: &[String], halt: Option<&HaltBy>) -> Value {
    if let Some(obj) = decision.as_object_mut() {
        obj.insert("additional_context".into(), json!(contexts));
        if let Some(halt) = halt {
            obj.insert("continue".into(), json!(false));
            obj.insert("halted_by".into(), json!(halt.hook_id));
            obj.insert("stop_reason".into(), json!(halt.stop_reason));
        }
    }
    decision
}
