//! Test support shared by spine's crates (a dev-dependency only).
//!
//! - [`Script`]: a model that answers from a list of assistant messages, checks that every
//!   request it receives is paired, and records every request for assertions.
//! - Message builders: [`text`], [`calls`], [`raw_call`].
//! - [`write_mcp_server`]: a tiny stdio MCP server (Python, `/usr/bin/python3`) that proves it
//!   was started with a marker file and can be slow to initialize.
//! - Inspectors: [`results`] (the tool results of a conversation) and [`roles`] (its roles,
//!   context messages as `context:<Event>`).

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use async_trait::async_trait;
use serde_json::Value;
use spine_core::CancellationToken;
use spine_core::model::{FinishReason, ModelClient, ModelError, ModelErrorKind, ModelReply, ModelRequest, StreamSink};
use spine_protocol::message::{AssistantMessage, Message, ToolResultMessage};
use spine_protocol::pairing::validate_pairing;
use spine_protocol::tool::{ToolArguments, ToolCall};

/// A model that answers from a list and records every request.
pub struct Script {
    replies: Mutex<VecDeque<AssistantMessage>>,
    requests: Mutex<Vec<Vec<Message>>>,
    delay: Option<Duration>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Script {
    /// A script answering with `replies`, in order; past the end every request fails with
    /// `script exhausted`.
    pub fn new(replies: Vec<AssistantMessage>) -> Arc<Self> {
        Arc::new(Script { replies: Mutex::new(replies.into()), requests: Mutex::default(), delay: None })
    }

    /// The same, answering each request after `delay`.
    pub fn with_delay(replies: Vec<AssistantMessage>, delay: Duration) -> Arc<Self> {
        Arc::new(Script { replies: Mutex::new(replies.into()), requests: Mutex::default(), delay: Some(delay) })
    }

    /// Every request received so far.
    pub fn requests(&self) -> Vec<Vec<Message>> {
        lock(&self.requests).clone()
    }
}

#[async_trait]
impl ModelClient for Script {
    fn model(&self) -> &str {
        "script"
    }

    async fn complete(
        &self,
        request: ModelRequest<'_>,
        _stream: &dyn StreamSink,
        _cancel: &CancellationToken,
    ) -> Result<ModelReply, ModelError> {
        if let Err(e) = validate_pairing(request.messages) {
            return Err(ModelError::new(
                ModelErrorKind::InvalidReply,
                format!("the runner sent an unpaired history: {e}"),
            ));
        }
        lock(&self.requests).push(request.messages.to_vec());
        if let Some(d) = self.delay {
            tokio::time::sleep(d).await;
        }
        match lock(&self.replies).pop_front() {
            Some(message) => {
                let finish = if message.tool_calls.is_empty() { FinishReason::Stop } else { FinishReason::ToolCalls };
                Ok(ModelReply { message, finish_reason: finish, usage: None })
            }
            None => Err(ModelError::new(ModelErrorKind::Exhausted, "script exhausted")),
        }
    }
}

/// A final answer.
pub fn text(t: &str) -> AssistantMessage {
    AssistantMessage { content: Some(t.to_owned()), tool_calls: vec![] }
}

/// One model turn with these tool calls `(id, name, arguments)`.
pub fn calls(list: &[(&str, &str, Value)]) -> AssistantMessage {
    AssistantMessage {
        content: None,
        tool_calls: list
            .iter()
            .map(|(id, name, args)| ToolCall {
                id: (*id).into(),
                name: (*name).into(),
                arguments: ToolArguments::Json(args.clone()),
            })
            .collect(),
    }
}

/// One model turn with a call whose arguments did not parse.
pub fn raw_call(id: &str, name: &str, raw: &str) -> AssistantMessage {
    AssistantMessage {
        content: None,
        tool_calls: vec![ToolCall { id: id.into(), name: name.into(), arguments: ToolArguments::Raw(raw.into()) }],
    }
}

/// The tool results of a conversation, in order.
pub fn results(messages: &[Message]) -> Vec<ToolResultMessage> {
    messages
        .iter()
        .filter_map(|m| match m {
            Message::Tool(t) => Some(t.clone()),
            _ => None,
        })
        .collect()
}

/// The roles of a conversation, context messages as `context:<Event>`.
pub fn roles(messages: &[Message]) -> Vec<String> {
    messages
        .iter()
        .map(|m| match m {
            Message::Context(c) => format!("context:{}", c.event),
            other => other.role().to_owned(),
        })
        .collect()
}

/// Process liveness, for tests that check nothing outlives what started it.
pub mod procs {
    use std::path::Path;
    use std::time::Duration;

    /// Whether a process is gone (or only a zombie waiting to be reaped).
    pub fn dead(pid: u32) -> bool {
        match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
            Err(_) => true,
            // The state follows the parenthesised command name.
            Ok(stat) => stat.rsplit_once(')').is_some_and(|(_, rest)| rest.trim_start().starts_with(['Z', 'X'])),
        }
    }

    /// Polls [`dead`] for up to three seconds.
    pub async fn eventually_dead(pid: u32) -> bool {
        for _ in 0..300 {
            if dead(pid) {
                return true;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        dead(pid)
    }

    /// Reads a pid written by a test command, waiting up to three seconds for the file.
    pub async fn read_pid(path: &Path) -> Option<u32> {
        for _ in 0..300 {
            if let Ok(text) = std::fs::read_to_string(path)
                && let Ok(pid) = text.trim().parse()
            {
                return Some(pid);
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        None
    }
}

/// Calling one tool directly, the way the runner does (prepare, then execute).
pub mod direct {
    use serde_json::Value;
    use spine_core::registry::ToolRegistry;
    use spine_core::tool::{Projection, ToolContext};
    use spine_protocol::tool::{ErrorCode, ToolArguments, ToolCall, ToolError};

    /// Prepares (schema, normalisation) and executes a call of `tool` in `ctx`.
    pub async fn call(registry: &ToolRegistry, tool: &str, args: Value, ctx: &ToolContext) -> Result<Value, ToolError> {
        let call = ToolCall { id: ctx.call_id.clone(), name: tool.to_owned(), arguments: ToolArguments::Json(args) };
        let prepared = registry.prepare(&call, &ctx.cwd)?;
        let mut ctx = ctx.clone();
        ctx.tool_name = tool.to_owned();
        registry.tool(prepared.handle).execute(&prepared.args, &ctx).await
    }

    /// The projection of a response by the named tool.
    pub fn project(registry: &ToolRegistry, tool: &str, response: &Value) -> Result<Projection, ToolError> {
        let handle = registry
            .lookup(tool)
            .ok_or_else(|| ToolError::new(ErrorCode::UnknownTool, format!("no tool named `{tool}`")))?;
        Ok(registry.tool(handle).project(response))
    }
}

/// The source of the script server [`write_mcp_server`] writes.
const MCP_SERVER_PY: &str = r#"import json, sys, time
# argv: NAME MARKER_FILE INIT_DELAY_MS
name, marker, delay_ms = sys.argv[1], sys.argv[2], int(sys.argv[3])
with open(marker, "a") as f:
    f.write("started\n")
def send(m):
    sys.stdout.write(json.dumps(m) + "\n")
    sys.stdout.flush()
for line in sys.stdin:
    line = line.strip()
    if not line:
        continue
    msg = json.loads(line)
    method, mid = msg.get("method"), msg.get("id")
    if mid is None:
        continue
    if method == "initialize":
        time.sleep(delay_ms / 1000.0)
        version = msg.get("params", {}).get("protocolVersion", "2025-06-18")
        send({"jsonrpc": "2.0", "id": mid, "result": {"protocolVersion": version, "capabilities": {"tools": {}},
              "serverInfo": {"name": name, "version": "0"}}})
    elif method == "tools/list":
        send({"jsonrpc": "2.0", "id": mid, "result": {"tools": [{"name": "ping", "description": "Answers pong.",
              "inputSchema": {"type": "object", "properties": {}}}]}})
    elif method == "tools/call":
        send({"jsonrpc": "2.0", "id": mid, "result": {"content": [{"type": "text", "text": "pong from " + name}]}})
    else:
        send({"jsonrpc": "2.0", "id": mid, "result": {}})
"#;

/// Writes a stdio MCP server script to `dir/mcp_server.py` and returns the `mcpServers` entry
/// that starts it: `/usr/bin/python3 mcp_server.py NAME MARKER INIT_DELAY_MS`. On start it
/// appends a line to `marker` (proof that it was started); it answers `initialize` after
/// `init_delay_ms`, lists one tool `ping`, and answers it with `pong from NAME`.
pub fn write_mcp_server(
    dir: &std::path::Path,
    name: &str,
    marker: &std::path::Path,
    init_delay_ms: u64,
) -> std::io::Result<Value> {
    let script = dir.join("mcp_server.py");
    std::fs::write(&script, MCP_SERVER_PY)?;
    Ok(serde_json::json!({
        "command": "/usr/bin/python3",
        "args": [script.display().to_string(), name, marker.display().to_string(), init_delay_ms.to_string()],
    }))
}
