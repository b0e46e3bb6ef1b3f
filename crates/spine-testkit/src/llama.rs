//! [`LlamaServer`]: an OpenAI-compatible chat-completions server on 127.0.0.1 that behaves the
//! way llama.cpp's servers were measured to behave with a small model
//! (`shared/research/real-model.md`), to test spine against what real local servers need:
//!
//! - a message with `"content": null` is answered with a 500 (llama-cpp-python's template
//!   cannot render it);
//! - the chat template is strict: at most one system message, first; then user and assistant
//!   turns alternate, starting with a user turn; `tool` messages follow an assistant turn with
//!   tool calls (or another tool message). Anything else is a 500 naming the rule, as a Jinja
//!   `raise_exception` does;
//! - without `tool_choice` (or with `"none"`) the tools are ignored: an answer scripted as a tool
//!   call comes back as the text [`TOOLS_IGNORED`];
//! - a tool call cannot be streamed: with `stream: true` the body is a role delta and
//!   `data: [DONE]`, nothing else; with `stream: false` the call comes whole;
//! - no usage is ever sent.
//!
//! Answers are scripted ([`Answer`]) and consumed one per accepted request (a tool call it
//! could not stream stays for the next one); every request body is recorded, rejected ones with
//! the reason.

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode};
use axum::response::Response;
use serde_json::{Value, json};

use crate::http::serve;

/// The text a tool-call answer becomes when the request carries no `tool_choice`.
pub const TOOLS_IGNORED: &str = "I cannot call tools here.";

/// One scripted answer of the model.
#[derive(Debug, Clone)]
pub enum Answer {
    /// A text reply.
    Text(String),
    /// One tool call with JSON arguments.
    Call {
        /// The tool.
        name: String,
        /// Its arguments.
        arguments: Value,
    },
}

/// A request the server received, and why it was rejected (if it was).
#[derive(Debug, Clone)]
pub struct LlamaRequest {
    /// The JSON body.
    pub body: Value,
    /// The reason of the 500, for a rejected request.
    pub rejected: Option<String>,
}

#[derive(Default)]
struct Shared {
    answers: Mutex<VecDeque<Answer>>,
    requests: Mutex<Vec<LlamaRequest>>,
}

/// A running llama.cpp-style server.
pub struct LlamaServer {
    addr: SocketAddr,
    shared: Arc<Shared>,
}

impl LlamaServer {
    /// Starts a server answering with `answers` in order (then a 500 `script exhausted`).
    pub async fn start(answers: Vec<Answer>) -> Self {
        let shared = Arc::new(Shared { answers: Mutex::new(answers.into()), requests: Mutex::new(Vec::new()) });
        let addr = serve(Router::new().fallback(handle).with_state(Arc::clone(&shared))).await;
        LlamaServer { addr, shared }
    }

    /// `http://127.0.0.1:PORT/v1`, the base URL a client is given.
    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// Every request received so far.
    pub fn requests(&self) -> Vec<LlamaRequest> {
        self.shared.requests.lock().expect("lock").clone()
    }
}

/// Why the strict template rejects `messages`, if it does.
pub fn template_violation(messages: &[Value]) -> Option<String> {
    let mut previous: Option<&str> = None;
    for (i, m) in messages.iter().enumerate() {
        if m.get("content").is_some_and(Value::is_null) {
            return Some(format!("messages[{i}]: content is null"));
        }
        let role = m.get("role").and_then(Value::as_str).unwrap_or("");
        let with_calls = |v: &Value| v.get("tool_calls").and_then(Value::as_array).is_some_and(|c| !c.is_empty());
        let fine = match (previous, role) {
            (None, "system" | "user") => true,
            (Some("system"), "user") => true,
            (Some("user"), "assistant") => true,
            (Some("assistant"), "user") => true,
            (Some("assistant"), "tool") => i > 0 && with_calls(&messages[i - 1]),
            (Some("tool"), "tool" | "user" | "assistant") => true,
            _ => false,
        };
        if !fine {
            return Some(format!(
                "Conversation roles must alternate user/assistant/user/assistant/... (messages[{i}] is {role} after {})",
                previous.unwrap_or("nothing")
            ));
        }
        previous = Some(role);
    }
    None
}

async fn handle(State(shared): State<Arc<Shared>>, request: Request) -> Response {
    let bytes = axum::body::to_bytes(request.into_body(), usize::MAX).await.unwrap_or_default();
    let body: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
    let messages = body.get("messages").and_then(Value::as_array).cloned().unwrap_or_default();
    let rejected = template_violation(&messages);
    shared.requests.lock().expect("lock").push(LlamaRequest { body: body.clone(), rejected: rejected.clone() });
    if let Some(reason) = rejected {
        return reply(
            500,
            "application/json",
            json!({"error": {"message": reason, "type": "server_error"}}).to_string(),
        );
    }
    let Some(answer) = shared.answers.lock().expect("lock").pop_front() else {
        return reply(500, "text/plain", "llama test server: script exhausted".to_owned());
    };
    let uses_tools = body.get("tools").and_then(Value::as_array).is_some_and(|t| !t.is_empty())
        && body.get("tool_choice").is_some_and(|c| c != "none");
    let answer = match answer {
        Answer::Call { .. } if !uses_tools => Answer::Text(TOOLS_IGNORED.to_owned()),
        other => other,
    };
    let stream = body.get("stream").and_then(Value::as_bool).unwrap_or(false);
    let chunk = |delta: Value, finish: Value| {
        format!(
            "data: {}\n\n",
            json!({"id": "chatcmpl-llama", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
        )
    };
    match (answer, stream) {
        (Answer::Text(text), true) => {
            let body = [
                chunk(json!({"role": "assistant", "content": null}), Value::Null),
                chunk(json!({"content": text}), Value::Null),
                chunk(json!({}), json!("stop")),
                "data: [DONE]\n\n".to_owned(),
            ]
            .concat();
            reply(200, "text/event-stream", body)
        }
        // It cannot stream a tool call: a role delta, then the end. The answer stays for the
        // next request (the model would answer the same again).
        (answer @ Answer::Call { .. }, true) => {
            shared.answers.lock().expect("lock").push_front(answer);
            let body =
                [chunk(json!({"role": "assistant", "content": null}), Value::Null), "data: [DONE]\n\n".to_owned()]
                    .concat();
            reply(200, "text/event-stream", body)
        }
        (Answer::Text(text), false) => reply(
            200,
            "application/json",
            json!({"id": "chatcmpl-llama", "object": "chat.completion", "choices": [{"index": 0,
                "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}]})
            .to_string(),
        ),
        (Answer::Call { name, arguments }, false) => reply(
            200,
            "application/json",
            json!({"id": "chatcmpl-llama", "object": "chat.completion", "choices": [{"index": 0,
                "message": {"role": "assistant", "content": null, "tool_calls": [{"id": "call__0", "type": "function",
                    "function": {"name": name, "arguments": arguments.to_string()}}]},
                "finish_reason": "tool_calls"}]})
            .to_string(),
        ),
    }
}

fn reply(status: u16, content_type: &'static str, body: String) -> Response {
    let mut response = Response::new(Body::from(body));
    *response.status_mut() = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    response.headers_mut().insert("content-type", HeaderValue::from_static(content_type));
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_strict_template_rejects_null_content_second_system_messages_and_broken_alternation() {
        let ok = [
            json!({"role": "system", "content": "s"}),
            json!({"role": "user", "content": "u"}),
            json!({"role": "assistant", "content": "", "tool_calls": [{"id": "a"}]}),
            json!({"role": "tool", "tool_call_id": "a", "content": "r"}),
            json!({"role": "user", "content": "u"}),
        ];
        assert_eq!(template_violation(&ok), None);
        let null = [json!({"role": "user", "content": "u"}), json!({"role": "assistant", "content": null})];
        assert_eq!(template_violation(&null).as_deref(), Some("messages[1]: content is null"));
        let two_systems = [json!({"role": "system", "content": "a"}), json!({"role": "system", "content": "b"})];
        assert!(template_violation(&two_systems).is_some());
        let assistant_first = [json!({"role": "system", "content": "a"}), json!({"role": "assistant", "content": "b"})];
        assert!(template_violation(&assistant_first).is_some());
        let two_users = [json!({"role": "user", "content": "a"}), json!({"role": "user", "content": "b"})];
        assert!(template_violation(&two_users).is_some());
    }
}
