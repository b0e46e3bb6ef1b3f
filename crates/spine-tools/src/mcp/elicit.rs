//! The client side of MCP elicitation: spine's rmcp client handler ([`SpineClient`])
//! advertises the `elicitation` capability — form mode (spine checks answers against the
//! schema: `schemaValidation`) and URL mode — and answers each `elicitation/create` a server
//! sends through the elicitor of the tool call running on that server.
//!
//! # Contract
//!
//! - Routing: each call of an [`McpTool`](super::McpTool) enters its
//!   [`ToolContext::elicitor`](spine_core::tool::ToolContext::elicitor) into its server's
//!   [`Routes`] for as long as the call runs. MCP does not say which request an elicitation
//!   belongs to, so it goes to the most recent call still running on that server. No call
//!   running, or that call has no elicitor (a direct call, an `mcp_tool` hook): declined.
//! - What the elicitor decides (hooks, the user, the schema check, the trace) is
//!   [`spine_core::elicitation`]'s contract; this module only translates: the server's
//!   requested schema is handed over as JSON, the answer goes back as MCP's `ElicitResult`
//!   (`content` only with `accept`).
//! - A server that cancels its request stops the wait (the answer is then a decline nobody
//!   reads). No process-wide state: the routes belong to one connection.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use rmcp::model::{
    ClientCapabilities, ClientConfig, ElicitRequestParams, ElicitResult, ElicitationCapability,
    FormElicitationCapability, Implementation, UrlElicitationCapability,
};
use rmcp::service::{RequestContext, RoleClient};
use rmcp::{ClientHandler, ErrorData};
use serde_json::Value;
use spine_core::elicitation::{ElicitAction, ElicitationAnswer, ElicitationMode, ElicitationRequest, Elicitor};

/// One running call: its number and its elicitor, if it has one.
type Running = (u64, Option<Arc<dyn Elicitor>>);

/// The elicitors of the calls running on one server, most recent last.
#[derive(Default)]
pub(crate) struct Routes {
    next: AtomicU64,
    running: Mutex<Vec<Running>>,
}

impl Routes {
    /// Enters a call's elicitor until the returned guard drops.
    pub(crate) fn enter(self: &Arc<Self>, elicitor: Option<Arc<dyn Elicitor>>) -> Route {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        self.running.lock().unwrap_or_else(PoisonError::into_inner).push((id, elicitor));
        Route { routes: Arc::clone(self), id }
    }

    /// The elicitor of the most recent call still running, if it has one.
    fn current(&self) -> Option<Arc<dyn Elicitor>> {
        self.running.lock().unwrap_or_else(PoisonError::into_inner).last().and_then(|(_, e)| e.clone())
    }
}

/// One call's place in its server's [`Routes`]; leaves it when dropped.
pub(crate) struct Route {
    routes: Arc<Routes>,
    id: u64,
}

impl Drop for Route {
    fn drop(&mut self) {
        self.routes.running.lock().unwrap_or_else(PoisonError::into_inner).retain(|(id, _)| *id != self.id);
    }
}

/// spine's MCP client for one server: its identity and capabilities, and its elicitation routes.
pub(crate) struct SpineClient {
    server: String,
    routes: Arc<Routes>,
}

impl SpineClient {
    /// The client of the server configured as `server`.
    pub(crate) fn new(server: &str, routes: Arc<Routes>) -> Self {
        SpineClient { server: server.to_owned(), routes }
    }
}

impl ClientHandler for SpineClient {
    fn get_info(&self) -> ClientConfig {
        let mut capabilities = ClientCapabilities::default();
        capabilities.elicitation = Some(
            ElicitationCapability::new()
                .with_form(FormElicitationCapability::new().with_schema_validation(true))
                .with_url(UrlElicitationCapability::new()),
        );
        ClientConfig::new(capabilities, Implementation::new("spine", env!("CARGO_PKG_VERSION")))
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        let Some(request) = spine_request(&self.server, request) else {
            return Ok(ElicitResult::new(rmcp::model::ElicitationAction::Decline));
        };
        let Some(elicitor) = self.routes.current() else {
            return Ok(ElicitResult::new(rmcp::model::ElicitationAction::Decline));
        };
        let answer = tokio::select! {
            answer = elicitor.elicit(&request) => answer,
            () = context.ct.cancelled() => ElicitationAnswer::decline(),
        };
        Ok(mcp_result(answer))
    }
}

/// The server's request as spine's; `None` for a mode this rmcp knows and spine does not.
fn spine_request(server: &str, request: ElicitRequestParams) -> Option<ElicitationRequest> {
    let (message, mode) = match request {
        ElicitRequestParams::FormElicitationParams { message, requested_schema, .. } => {
            let requested_schema = serde_json::to_value(&requested_schema).unwrap_or(Value::Null);
            (message, ElicitationMode::Form { requested_schema })
        }
        ElicitRequestParams::UrlElicitationParams { message, url, elicitation_id, .. } => {
            (message, ElicitationMode::Url { url, elicitation_id })
        }
        _ => return None,
    };
    Some(ElicitationRequest { server: server.to_owned(), message, mode })
}

/// spine's answer as MCP's result.
fn mcp_result(answer: ElicitationAnswer) -> ElicitResult {
    let action = match answer.action {
        ElicitAction::Accept => rmcp::model::ElicitationAction::Accept,
        ElicitAction::Decline => rmcp::model::ElicitationAction::Decline,
        ElicitAction::Cancel => rmcp::model::ElicitationAction::Cancel,
    };
    match (answer.action, answer.content) {
        (ElicitAction::Accept, Some(content)) => ElicitResult::new(action).with_content(Value::Object(content)),
        _ => ElicitResult::new(action),
    }
}

#[cfg(test)]
mod tests {
    use async_trait::async_trait;
    use serde_json::json;

    use super::*;

    struct Named(&'static str);

    #[async_trait]
    impl Elicitor for Named {
        async fn elicit(&self, _request: &ElicitationRequest) -> ElicitationAnswer {
            let mut content = serde_json::Map::new();
            content.insert("by".into(), json!(self.0));
            ElicitationAnswer::accept(content)
        }
    }

    #[tokio::test]
    async fn an_elicitation_goes_to_the_most_recent_call_still_running_on_the_server() {
        let routes = Arc::new(Routes::default());
        assert!(routes.current().is_none(), "no call: nobody to ask");
        let first = routes.enter(Some(Arc::new(Named("first"))));
        let second = routes.enter(Some(Arc::new(Named("second"))));
        let request = ElicitationRequest {
            server: "s".into(),
            message: "m".into(),
            mode: ElicitationMode::Form { requested_schema: json!({"type": "object"}) },
        };
        let by = |answer: ElicitationAnswer| answer.content.and_then(|c| c.get("by").cloned());
        assert_eq!(by(routes.current().expect("routed").elicit(&request).await), Some(json!("second")));
        drop(second);
        assert_eq!(by(routes.current().expect("routed").elicit(&request).await), Some(json!("first")));
        let direct = routes.enter(None);
        assert!(routes.current().is_none(), "the latest call has no elicitor: declined");
        drop(direct);
        drop(first);
        assert!(routes.current().is_none());
    }

    #[test]
    fn only_an_accept_carries_content_back_to_the_server() {
        let mut content = serde_json::Map::new();
        content.insert("name".into(), json!("Ada"));
        let accepted = mcp_result(ElicitationAnswer::accept(content));
        assert_eq!(serde_json::to_value(&accepted).ok(), Some(json!({"action": "accept", "content": {"name": "Ada"}})));
        let declined =
            mcp_result(ElicitationAnswer { action: ElicitAction::Decline, content: Some(Default::default()) });
        assert_eq!(serde_json::to_value(&declined).ok(), Some(json!({"action": "decline"})));
    }

    #[test]
    fn the_client_advertises_form_and_url_elicitation() {
        let info = SpineClient::new("s", Arc::default()).get_info();
        let caps = serde_json::to_value(&info.capabilities).unwrap_or_default();
        assert_eq!(caps["elicitation"], json!({"form": {"schemaValidation": true}, "url": {}}));
    }
}
