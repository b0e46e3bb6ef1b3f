//! SDK MCP servers (`"type": "sdk"`): a server implemented inside the program driving spine,
//! reached through [`SdkMcpHost`]. The host here implements a tiny calculator server by hand,
//! as an Agent SDK's `create_sdk_mcp_server` does: `initialize`, `notifications/initialized`,
//! `tools/list` with an `add` tool, `tools/call`.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use serde_json::{Value, json};
use spine_core::tool::{ChildEnv, Tool};
use spine_protocol::run::RunSubtype;
use spine_protocol::tool::ErrorCode;
use spine_tools::mcp::{McpIssueKind, McpOptions, McpServerStatus, SdkMcpHost, connect_mcp_servers};

use crate::agent::{AgentHarness, calls, results, text};

/// How the calculator answers `tools/call`.
#[derive(Clone, Copy, PartialEq)]
enum Calls {
    Answer,
    Fail,
    Never,
}

/// The program driving spine, with its one server `calc`.
struct Calculator {
    calls: Calls,
    /// Whether it answers at all.
    silent: bool,
    /// (server, method) of every message received.
    seen: Mutex<Vec<(String, String)>>,
}

impl Calculator {
    fn new(calls: Calls) -> Arc<Calculator> {
        Arc::new(Calculator { calls, silent: false, seen: Mutex::default() })
    }

    fn methods(&self) -> Vec<String> {
        self.seen.lock().expect("seen").iter().map(|(_, m)| m.clone()).collect()
    }
}

#[async_trait]
impl SdkMcpHost for Calculator {
    async fn message(&self, server: &str, message: Value) -> Result<Value, String> {
        let method = message["method"].as_str().unwrap_or("(reply)").to_owned();
        self.seen.lock().expect("seen").push((server.to_owned(), method.clone()));
        if self.silent {
            std::future::pending::<()>().await;
        }
        let id = message.get("id").cloned().unwrap_or(Value::Null);
        let result = match method.as_str() {
            "initialize" => json!({
                "protocolVersion": "2025-06-18",
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "calc", "version": "1.0.0"}
            }),
            "tools/list" => json!({"tools": [{
                "name": "add",
                "description": "Adds two numbers.",
                "inputSchema": {"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
                    "required": ["a", "b"]}
            }]}),
            "tools/call" => match self.calls {
                Calls::Fail => return Err("the calculator crashed".to_owned()),
                Calls::Never => std::future::pending().await,
                Calls::Answer => {
                    let args = &message["params"]["arguments"];
                    let sum = args["a"].as_f64().unwrap_or(0.0) + args["b"].as_f64().unwrap_or(0.0);
                    json!({"content": [{"type": "text", "text": format!("{sum}")}]})
                }
            },
            // Notifications get the ack an SDK answers them with.
            _ if id.is_null() => json!({}),
            other => {
                return Ok(json!({"jsonrpc": "2.0", "id": id,
                    "error": {"code": -32601, "message": format!("Method '{other}' not found")}}));
            }
        };
        Ok(json!({"jsonrpc": "2.0", "id": id, "result": result}))
    }
}

fn options(host: Option<Arc<Calculator>>) -> McpOptions {
    let mut options = McpOptions::new(std::env::temp_dir(), ChildEnv::default());
    options.sdk_host = host.map(|h| h as Arc<dyn SdkMcpHost>);
    options
}

fn calc_config() -> Value {
    json!({"calc": {"type": "sdk", "name": "calc"}})
}

async fn call(tool: &Arc<dyn Tool>, args: Value) -> Result<Value, spine_protocol::tool::ToolError> {
    let dir = tempfile::tempdir().expect("tmp");
    let ws = Arc::new(spine_core::workspace::Workspace::new(dir.path()).expect("ws"));
    let ctx = spine_core::tool::ToolContext::new(ws, "c", tool.spec().name, ChildEnv::default());
    // A call that never ends fails the test instead of hanging it.
    tokio::time::timeout(Duration::from_secs(20), tool.execute(args.as_object().expect("object"), &ctx))
        .await
        .expect("the call ends")
}

#[tokio::test]
async fn an_sdk_servers_tools_are_served_by_the_host_under_the_servers_key() {
    let host = Calculator::new(Calls::Answer);
    let (mcp, issues) = connect_mcp_servers(&calc_config(), &options(Some(Arc::clone(&host)))).await;
    assert!(issues.is_empty(), "{issues:?}");
    assert_eq!(mcp.tool_names(), vec!["mcp__calc__add"]);
    assert_eq!(mcp.statuses(), [("calc".to_owned(), McpServerStatus::Connected)]);

    let mut h = AgentHarness::new();
    mcp.register(&mut h.tools);
    let run = h.run("add", vec![calls(&[("c1", "mcp__calc__add", json!({"a": 2, "b": 3}))]), text("5")]).await;
    assert_eq!(run.outcome.subtype, RunSubtype::Success);
    assert_eq!(results(&run.outcome.messages)[0].content, "5");

    let seen = host.seen.lock().expect("seen").clone();
    assert!(seen.iter().all(|(server, _)| server == "calc"), "{seen:?}");
    let methods = host.methods();
    for method in ["initialize", "notifications/initialized", "tools/list", "tools/call"] {
        assert!(methods.iter().any(|m| m == method), "{method} reached the host: {methods:?}");
    }
    assert_eq!(methods[0], "initialize");
    mcp.shutdown().await;
}

#[tokio::test]
async fn a_host_error_for_a_tool_call_is_a_runtime_error_not_a_hang() {
    let host = Calculator::new(Calls::Fail);
    let (mcp, issues) = connect_mcp_servers(&calc_config(), &options(Some(host))).await;
    assert!(issues.is_empty(), "{issues:?}");
    let add = mcp.tools().into_iter().next().expect("the add tool");
    let error = call(&add, json!({"a": 1, "b": 2})).await.expect_err("the host failed");
    assert_eq!(error.code, ErrorCode::RuntimeError);
    assert!(error.message.contains("the calculator crashed"), "{}", error.message);
    mcp.shutdown().await;
}

#[tokio::test]
async fn a_call_the_host_never_answers_times_out_and_is_canceled_on_the_host() {
    let host = Calculator::new(Calls::Never);
    let mut opts = options(Some(Arc::clone(&host)));
    opts.call_timeout = Duration::from_millis(300);
    let (mcp, issues) = connect_mcp_servers(&calc_config(), &opts).await;
    assert!(issues.is_empty(), "{issues:?}");
    let add = mcp.tools().into_iter().next().expect("the add tool");
    let error = call(&add, json!({"a": 1, "b": 2})).await.expect_err("no answer");
    assert_eq!(error.code, ErrorCode::Timeout, "{}", error.message);
    let deadline = Instant::now() + Duration::from_secs(5);
    while !host.methods().iter().any(|m| m == "notifications/cancelled") {
        assert!(Instant::now() < deadline, "the host was told the call is canceled: {:?}", host.methods());
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    mcp.shutdown().await;
}

#[tokio::test]
async fn a_host_that_never_answers_is_a_startup_timeout_issue() {
    let host = Arc::new(Calculator { calls: Calls::Answer, silent: true, seen: Mutex::default() });
    let mut opts = options(Some(host));
    opts.startup_timeout = Duration::from_millis(300);
    let started = Instant::now();
    let (mcp, issues) = connect_mcp_servers(&calc_config(), &opts).await;
    assert!(started.elapsed() < Duration::from_secs(5), "{:?}", started.elapsed());
    assert_eq!(issues.len(), 1, "{issues:?}");
    assert_eq!(issues[0].kind, McpIssueKind::Start);
    assert!(issues[0].message.contains("did not initialize within 0.3 s"), "{}", issues[0].message);
    assert!(mcp.tool_names().is_empty());
    assert_eq!(mcp.statuses(), [("calc".to_owned(), McpServerStatus::Failed)]);
}

#[tokio::test]
async fn without_a_host_an_sdk_server_is_an_issue_and_every_server_has_a_status() {
    let config = json!({
        "calc": {"type": "sdk", "name": "calc"},
        "missing": {"command": "spine-no-such-mcp-server-xyz"},
        "bad": {"type": "sdk", "name": 7}
    });
    let (mcp, issues) = connect_mcp_servers(&config, &options(None)).await;
    let calc = issues.iter().find(|i| i.server == "calc").expect("an issue for calc");
    assert_eq!(calc.kind, McpIssueKind::Start);
    assert!(calc.to_string().contains("needs a program driving spine over --input-format stream-json"), "{calc}");
    let statuses: Vec<(&str, &str)> = mcp.statuses().iter().map(|(n, s)| (n.as_str(), s.as_str())).collect();
    assert_eq!(statuses, [("calc", "failed"), ("missing", "failed"), ("bad", "failed")]);
}
