//! [`McpTool`]: one tool of a connected MCP server, as a spine [`Tool`].
//!
//! - Spec: `mcp__<server>__<tool>`, the server's description (or title), its input schema
//!   (`"type": "object"` added when missing; a schema that does not compile is refused at
//!   construction so the registry never sees it).
//! - Execute: `tools/call` with the frozen arguments, under the call time limit and the run's
//!   cancellation (dropping the request sends `notifications/cancelled`). While it runs, the
//!   call's elicitor answers what the server asks (`mcp::elicit`).
//! - Response: `{content: [...], structuredContent?: ...}` as the server sent them.
//!   `isError: true` becomes a `runtime_error` whose message is the server's text and whose
//!   response is that result.
//! - Projection: text blocks joined with newlines; other blocks as one-line placeholders
//!   (`[image: image/png, 1234 bytes base64]`, `[resource: uri]` followed by an embedded text
//!   resource's text); without content, the structured content as JSON. Capped at the
//!   options' `text_chars`. Metadata: `server`, `tool`, `content_blocks`,
//!   `structured_content`, `truncated`.

use async_trait::async_trait;
use rmcp::RoleClient;
use rmcp::model::CallToolRequestParams;
use rmcp::service::{Peer, ServiceError};
use serde_json::{Map, Value, json};
use spine_core::tool::{Projection, Tool, ToolContext};
use spine_protocol::tool::{Effect, ErrorCode, ToolError, ToolSpec};

use super::connect::McpServer;
use super::elicit::Routes;
use super::{McpIssue, McpIssueKind, McpOptions, tool_name};
use crate::web::cap_chars;

/// A tool of an MCP server.
pub struct McpTool {
    name: String,
    server: String,
    remote: String,
    description: String,
    schema: Value,
    effect: Effect,
    peer: Peer<RoleClient>,
    routes: std::sync::Arc<Routes>,
    call_timeout: std::time::Duration,
    text_chars: usize,
}

impl std::fmt::Debug for McpTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpTool").field("name", &self.name).field("effect", &self.effect).finish()
    }
}

impl McpTool {
    /// The tool for one listed tool of a server; an issue when its schema does not compile.
    pub(crate) fn new(server: &McpServer, listed: rmcp::model::Tool, options: &McpOptions) -> Result<Self, McpIssue> {
        let remote = listed.name.to_string();
        let mut schema = Value::Object((*listed.input_schema).clone());
        if let Value::Object(m) = &mut schema
            && !m.contains_key("type")
        {
            m.insert("type".into(), json!("object"));
        }
        if let Err(e) = jsonschema::validator_for(&schema) {
            return Err(McpIssue {
                server: server.name.clone(),
                tool: Some(remote),
                kind: McpIssueKind::InvalidSchema,
                message: format!("its input schema does not compile ({e}); the tool is skipped"),
            });
        }
        let read_only = listed.annotations.as_ref().and_then(|a| a.read_only_hint).unwrap_or(false);
        let description = listed
            .description
            .as_deref()
            .map(str::to_owned)
            .or(listed.title.clone())
            .filter(|d| !d.trim().is_empty())
            .unwrap_or_else(|| format!("Tool {remote} of MCP server {}.", server.name));
        Ok(McpTool {
            name: tool_name(&server.name, &remote),
            server: server.name.clone(),
            remote,
            description,
            schema,
            effect: if read_only { Effect::Read } else { Effect::Execute },
            peer: server.service.peer().clone(),
            routes: std::sync::Arc::clone(&server.routes),
            call_timeout: options.call_timeout,
            text_chars: options.text_chars,
        })
    }

    /// The spine name, `mcp__<server>__<tool>`.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The tool's name on its server.
    pub fn remote_name(&self) -> &str {
        &self.remote
    }

    /// The server's configured name.
    pub fn server(&self) -> &str {
        &self.server
    }

    /// The rmcp peer the tool calls through (for raw protocol access and benchmarks).
    pub fn peer(&self) -> &Peer<RoleClient> {
        &self.peer
    }

    fn service_error(&self, e: ServiceError) -> ToolError {
        let code = match &e {
            ServiceError::Timeout { .. } => ErrorCode::Timeout,
            ServiceError::Cancelled { .. } => ErrorCode::Canceled,
            _ => ErrorCode::RuntimeError,
        };
        let why = match &e {
            ServiceError::TransportClosed | ServiceError::TransportSend(_) => {
                format!("the connection is closed ({e})")
            }
            _ => e.to_string(),
        };
        ToolError::new(code, format!("MCP server `{}` failed on {}: {why}", self.server, self.remote))
    }
}

#[async_trait]
impl Tool for McpTool {
    fn spec(&self) -> ToolSpec {
        ToolSpec { name: self.name.clone(), description: self.description.clone(), input_schema: self.schema.clone() }
    }

    fn effect(&self) -> Effect {
        self.effect
    }

    async fn execute(&self, args: &Map<String, Value>, ctx: &ToolContext) -> Result<Value, ToolError> {
        let mut params = CallToolRequestParams::new(self.remote.clone());
        params.arguments = Some(args.clone());
        let _route = self.routes.enter(ctx.elicitor.clone());
        let call = tokio::time::timeout(self.call_timeout, self.peer.call_tool(params));
        let result = tokio::select! {
            r = call => match r {
                Ok(Ok(result)) => result,
                Ok(Err(e)) => return Err(self.service_error(e)),
                Err(_) => return Err(ToolError::new(
                    ErrorCode::Timeout,
                    format!("MCP server `{}` did not answer {} within {} s", self.server, self.remote, self.call_timeout.as_secs_f32()),
                )),
            },
            () = ctx.cancel.cancelled() => {
                return Err(ToolError::new(ErrorCode::Canceled, "the run was canceled during the MCP call"));
            }
        };
        let is_error = result.is_error.unwrap_or(false);
        let mut response = Map::new();
        let content = serde_json::to_value(&result.content).unwrap_or(Value::Array(Vec::new()));
        response.insert("content".into(), content);
        if let Some(structured) = result.structured_content {
            response.insert("structuredContent".into(), structured);
        }
        let response = Value::Object(response);
        if is_error {
            let text = render(&response, self.text_chars).0;
            let text = if text.trim().is_empty() { "the tool reported an error".to_owned() } else { text };
            return Err(ToolError::new(ErrorCode::RuntimeError, text).with_response(response));
        }
        Ok(response)
    }

    fn project(&self, response: &Value) -> Projection {
        let (text, truncated) = render(response, self.text_chars);
        let blocks = match response {
            Value::Array(a) => a.len(),
            other => other.get("content").and_then(Value::as_array).map_or(0, Vec::len),
        };
        let structured = response.get("structuredContent").is_some();
        let content =
            if text.trim().is_empty() { format!("The MCP tool {} returned nothing.", self.remote) } else { text };
        Projection::plain(content)
            .with("server", self.server.as_str())
            .with("tool", self.remote.as_str())
            .with("content_blocks", blocks)
            .with("structured_content", structured)
            .with("truncated", truncated)
    }
}

/// The model's text of a result (or of a bare content list, as a hook may supply), capped.
fn render(response: &Value, max: usize) -> (String, bool) {
    let blocks = match response {
        Value::Array(a) => Some(a.as_slice()),
        other => other.get("content").and_then(Value::as_array).map(Vec::as_slice),
    };
    let mut parts: Vec<String> = blocks.unwrap_or(&[]).iter().map(block_text).collect();
    parts.retain(|p| !p.is_empty());
    let mut text = if parts.is_empty() {
        match response.get("structuredContent") {
            Some(s) => serde_json::to_string_pretty(s).unwrap_or_default(),
            None if !response.is_object() && !response.is_array() => match response {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            },
            None => String::new(),
        }
    } else {
        parts.join("\n")
    };
    let cut = cap_chars(&mut text, max);
    if cut {
        text.push_str("\n[output truncated]");
    }
    (text, cut)
}

fn block_text(block: &Value) -> String {
    let field = |k: &str| block.get(k).and_then(Value::as_str).unwrap_or("");
    match field("type") {
        "text" => field("text").to_owned(),
        "image" | "audio" => {
            format!("[{}: {}, {} bytes base64]", field("type"), field("mimeType"), field("data").len())
        }
        "resource_link" if field("name").is_empty() => format!("[resource link: {}]", field("uri")),
        "resource_link" => format!("[resource link: {} ({})]", field("uri"), field("name")),
        "resource" => {
            let resource = block.get("resource").cloned().unwrap_or(Value::Null);
            let uri = resource.get("uri").and_then(Value::as_str).unwrap_or("");
            match resource.get("text").and_then(Value::as_str) {
                Some(text) => format!("[resource: {uri}]\n{text}"),
                None => format!("[resource: {uri}, binary]"),
            }
        }
        _ => block.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_blocks_join_and_other_blocks_are_placeholders() {
        let r = json!({"content": [
            {"type": "text", "text": "a"},
            {"type": "image", "mimeType": "image/png", "data": "AAAA"},
            {"type": "resource", "resource": {"uri": "file:///x", "text": "body"}},
            {"type": "text", "text": "b"}
        ]});
        assert_eq!(
            render(&r, 1000),
            ("a\n[image: image/png, 4 bytes base64]\n[resource: file:///x]\nbody\nb".into(), false)
        );
    }

    #[test]
    fn structured_content_is_shown_when_there_is_no_content() {
        let r = json!({"content": [], "structuredContent": {"sum": 3}});
        assert_eq!(render(&r, 1000).0, "{\n  \"sum\": 3\n}");
    }

    #[test]
    fn long_text_is_capped_with_a_flag() {
        let r = json!({"content": [{"type": "text", "text": "x".repeat(50)}]});
        let (text, cut) = render(&r, 10);
        assert!(cut);
        assert_eq!(text, format!("{}\n[output truncated]", "x".repeat(10)));
    }
}
