//! SDK MCP servers: servers implemented inside the program driving spine (an Agent SDK's
//! `create_sdk_mcp_server`, configured as `{"type": "sdk", "name": "calc"}`), reached through
//! that program ([`SdkMcpHost`], the `mcp_message` control requests of stream-json).
//!
//! Contract:
//! - The server is connected by the same rmcp client as stdio and HTTP servers, over
//!   `SdkTransport`: each outgoing JSON-RPC message (request, notification or response) is one
//!   [`SdkMcpHost::message`] call for the server's configured name (the entry's key).
//! - A request's reply comes back to the client under the request's id, whatever id the host
//!   wrote: a `result` is the response, an `error` the JSON-RPC error, and anything else — the
//!   host failing, a reply that is neither, a result that is not the request's kind — becomes
//!   a JSON-RPC error for that id, so the client never waits for an answer that cannot come.
//! - What the host answers to a notification or a response (an ack `{"result": {}}`) is
//!   ignored, and so are its failures.
//! - Messages are sent concurrently (a slow `tools/call` holds up nothing else); a host that
//!   never answers costs the start-up time limit at start, then each call's time limit; a
//!   canceled call sends `notifications/cancelled` and stops waiting.

use async_trait::async_trait;
use serde_json::Value;

/// The program driving spine, serving the SDK MCP servers it configured.
#[async_trait]
pub trait SdkMcpHost: Send + Sync {
    /// Sends one JSON-RPC message (request or notification) to the host's server `server` and
    /// returns the host's JSON-RPC reply (for a notification, an ack that is ignored).
    async fn message(&self, server: &str, message: Value) -> Result<Value, String>;
}

#[cfg(feature = "mcp")]
pub(crate) use transport::SdkTransport;

#[cfg(feature = "mcp")]
mod transport {
    use std::convert::Infallible;
    use std::sync::Arc;

    use rmcp::RoleClient;
    use rmcp::model::{ErrorData, JsonRpcMessage, RequestId};
    use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
    use rmcp::transport::Transport;
    use serde_json::{Value, json};
    use tokio::sync::mpsc;

    use super::SdkMcpHost;

    /// The rmcp transport of one SDK server (see the module contract).
    pub(crate) struct SdkTransport {
        server: Arc<str>,
        host: Arc<dyn SdkMcpHost>,
        replies_tx: mpsc::UnboundedSender<RxJsonRpcMessage<RoleClient>>,
        replies_rx: mpsc::UnboundedReceiver<RxJsonRpcMessage<RoleClient>>,
    }

    impl SdkTransport {
        /// The transport to `host`'s server `server`.
        pub(crate) fn new(server: &str, host: Arc<dyn SdkMcpHost>) -> Self {
            let (replies_tx, replies_rx) = mpsc::unbounded_channel();
            SdkTransport { server: Arc::from(server), host, replies_tx, replies_rx }
        }
    }

    impl Transport<RoleClient> for SdkTransport {
        type Error = Infallible;

        fn send(
            &mut self,
            item: TxJsonRpcMessage<RoleClient>,
        ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
            let server = Arc::clone(&self.server);
            let host = Arc::clone(&self.host);
            let replies = self.replies_tx.clone();
            async move {
                let id = match &item {
                    JsonRpcMessage::Request(request) => Some(request.id.clone()),
                    _ => None,
                };
                let outgoing = serde_json::to_value(&item).map_err(|e| format!("cannot encode the message: {e}"));
                let reply = match outgoing {
                    Ok(message) => host.message(&server, message).await,
                    Err(why) => Err(why),
                };
                if let Some(id) = id {
                    // The client is gone when nobody receives: nothing waits for this reply.
                    let _ = replies.send(reply_for(id, reply));
                }
                Ok(())
            }
        }

        fn receive(&mut self) -> impl Future<Output = Option<RxJsonRpcMessage<RoleClient>>> + Send {
            self.replies_rx.recv()
        }

        async fn close(&mut self) -> Result<(), Self::Error> {
            self.replies_rx.close();
            Ok(())
        }
    }

    /// The client's message for the host's reply to request `id`.
    fn reply_for(id: RequestId, reply: Result<Value, String>) -> RxJsonRpcMessage<RoleClient> {
        let failed = |id: RequestId, why: String| {
            JsonRpcMessage::error(ErrorData::internal_error(format!("the SDK MCP server: {why}"), None), Some(id))
        };
        let mut reply = match reply {
            Ok(Value::Object(reply)) => reply,
            Ok(other) => return failed(id, format!("the reply is not a JSON-RPC object: {other}")),
            Err(why) => return failed(id, why),
        };
        if let Some(error) = reply.remove("error") {
            return match serde_json::from_value::<ErrorData>(error.clone()) {
                Ok(data) => JsonRpcMessage::error(data, Some(id)),
                Err(_) => failed(id, format!("error {error}")),
            };
        }
        let Some(result) = reply.remove("result") else {
            return failed(id, "the reply has neither `result` nor `error`".to_owned());
        };
        let response = json!({"jsonrpc": "2.0", "id": id, "result": result});
        serde_json::from_value(response)
            .unwrap_or_else(|e| failed(id, format!("the result does not fit the request: {e}")))
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        fn error_message(message: &RxJsonRpcMessage<RoleClient>) -> Option<(String, String)> {
            match message {
                JsonRpcMessage::Error(e) => Some((e.id.as_ref()?.to_string(), e.error.message.to_string())),
                _ => None,
            }
        }

        #[test]
        fn a_reply_answers_the_request_under_its_own_id_whatever_id_the_host_wrote() {
            let reply = json!({"jsonrpc": "2.0", "id": 99, "result": {"tools": []}});
            let message = reply_for(RequestId::Number(3), Ok(reply));
            let JsonRpcMessage::Response(response) = message else { panic!("a response: {message:?}") };
            assert_eq!(response.id, RequestId::Number(3));
        }

        #[test]
        fn host_failures_and_malformed_replies_are_errors_for_the_request() {
            let cases = [
                (Err("the program is gone".to_owned()), "the SDK MCP server: the program is gone"),
                (Ok(json!("text")), "the SDK MCP server: the reply is not a JSON-RPC object: \"text\""),
                (Ok(json!({"jsonrpc": "2.0"})), "the SDK MCP server: the reply has neither `result` nor `error`"),
            ];
            for (reply, expected) in cases {
                let message = reply_for(RequestId::Number(7), reply);
                assert_eq!(error_message(&message), Some(("7".to_owned(), expected.to_owned())));
            }
            let host_error = json!({"error": {"code": -32601, "message": "Method not found"}});
            let message = reply_for(RequestId::Number(8), Ok(host_error));
            assert_eq!(error_message(&message), Some(("8".to_owned(), "Method not found".to_owned())));
        }
    }
}
