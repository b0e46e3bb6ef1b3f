//! What the host implements for spine through control requests: hook callbacks
//! (`hook_callback`) and in-process MCP servers (`mcp_message`).
//!
//! Contract: each call is one request of [`Control`]; the hook's own time limit and the
//! firing's cancellation bound it (the hook engine applies the matcher's `onFailure` to a
//! failure), and an MCP message waits at most [`MCP_LIMIT`] (the MCP client's own call time
//! limit is shorter). The host gone, an error answer or a canceled wait is an error with the
//! reason — never a silent success.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use serde_json::{Value, json};
use spine_core::CancellationToken;

use super::control::Control;

/// The longest an MCP message waits for the host's reply.
pub(crate) const MCP_LIMIT: Duration = Duration::from_secs(600);

/// The host's hook callbacks.
pub(crate) struct HostCallbacks {
    pub control: Arc<Control>,
}

#[async_trait]
impl spine_hooks::callback::HookCallbacks for HostCallbacks {
    async fn call(
        &self,
        callback_id: &str,
        input: Value,
        tool_use_id: Option<String>,
        cancel: CancellationToken,
    ) -> Result<Value, String> {
        let body = json!({
            "subtype": "hook_callback",
            "callback_id": callback_id,
            "input": input,
            "tool_use_id": tool_use_id,
        });
        self.control.request(body, &cancel, None).await.map_err(|e| e.to_string())
    }
}

/// The host's in-process MCP servers.
pub(crate) struct HostMcp {
    pub control: Arc<Control>,
}

#[async_trait]
impl spine_agent::SdkMcpHost for HostMcp {
    async fn message(&self, server: &str, message: Value) -> Result<Value, String> {
        let body = json!({"subtype": "mcp_message", "server_name": server, "message": message});
        let answer = self.control.request(body, &CancellationToken::new(), Some(MCP_LIMIT)).await;
        match answer.map_err(|e| e.to_string())? {
            Value::Object(mut map) => {
                map.remove("mcp_response").ok_or_else(|| "the host's answer has no `mcp_response`".to_owned())
            }
            _ => Err("the host's answer to mcp_message is not an object".to_owned()),
        }
    }
}
