//! MCP against real third-party servers from npm (`@modelcontextprotocol/server-filesystem`
//! and `server-everything`, pinned in `tests/mcp-peers/`, installed by `scripts/mcp-peers.sh`
//! into `SPINE_TEST_MCP_DIR`, default `<workspace>/target/test-peers`), plus a small server
//! written against the same SDK for schemas and names the real ones do not exercise.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use spine_core::hooks::{HookContext, hook_fn};
use spine_core::registry::ToolRegistryBuilder;
use spine_core::tool::{ChildEnv, Tool};
use spine_protocol::hook::{HookOutput, PreToolUse, PreToolUseAction, PreToolUseInput};
use spine_protocol::run::RunSubtype;
use spine_protocol::tool::{Effect, ErrorCode};
use spine_tools::mcp::{McpIssueKind, McpOptions, connect_mcp_servers, load_mcp_json};

use crate::agent::{AgentHarness, calls, projected_metadata, results, text};
use crate::direct::{eventually_none_with, free_port};
use crate::support::eventually_dead;

fn server_js(package: &str) -> String {
    spine_testkit::mcp::peer_entry(package).to_string_lossy().into_owned()
}

/// `server-everything` over streamable HTTP, killed when dropped.
struct HttpPeer {
    child: tokio::process::Child,
    url: String,
}

impl HttpPeer {
    async fn start() -> HttpPeer {
        let port = free_port();
        let child = tokio::process::Command::new("node")
            .arg(server_js("server-everything"))
            .arg("streamableHttp")
            .env("PORT", port.to_string())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("node");
        for _ in 0..500 {
            if tokio::net::TcpStream::connect(("127.0.0.1", port)).await.is_ok() {
                return HttpPeer { child, url: format!("http://127.0.0.1:{port}/mcp") };
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        panic!("server-everything did not listen on {port}");
    }
}

impl Drop for HttpPeer {
    fn drop(&mut self) {
        let _ = self.child.start_kill();
    }
}

async fn call(tool: &Arc<dyn Tool>, args: Value) -> Result<Value, spine_protocol::tool::ToolError> {
    let dir = tempfile::tempdir().expect("tmp");
    let ws = Arc::new(spine_core::workspace::Workspace::new(dir.path()).expect("ws"));
    let ctx = spine_core::tool::ToolContext::new(ws, "c", tool.spec().name, ChildEnv::default());
    tool.execute(args.as_object().expect("object"), &ctx).await
}

fn find(tools: &[Arc<dyn Tool>], name: &str) -> Arc<dyn Tool> {
    tools.iter().find(|t| t.spec().name == name).cloned().unwrap_or_else(|| panic!("no tool {name}"))
}

#[tokio::test]
async fn filesystem_server_over_stdio_lists_reads_and_reports_is_error_results_through_the_runner() {
    let mut h = AgentHarness::new();
    let root = h.root();
    std::fs::write(root.join("notes.txt"), "hello from the workspace\n").expect("write");
    let config = json!({"fs": {"command": "node", "args": [server_js("server-filesystem"), root]}});
    let (mcp, issues) = connect_mcp_servers(&config, &McpOptions::new(&root, ChildEnv::default())).await;
    assert!(issues.is_empty(), "{issues:?}");
    let names = mcp.tool_names();
    for expected in ["mcp__fs__read_text_file", "mcp__fs__list_allowed_directories", "mcp__fs__write_file"] {
        assert!(names.contains(&expected), "{names:?}");
    }
    mcp.register(&mut h.tools);
    let mut check = ToolRegistryBuilder::new();
    mcp.register(&mut check);
    let registry = check.build().expect("every listed schema compiles");
    let effect = |name: &str| registry.effect(registry.lookup(name).expect(name));
    assert_eq!(effect("mcp__fs__read_text_file"), Effect::Read, "readOnlyHint: true");
    assert_eq!(effect("mcp__fs__write_file"), Effect::Execute, "readOnlyHint: false");

    let seen: Arc<Mutex<Vec<String>>> = Arc::default();
    {
        let seen = Arc::clone(&seen);
        h.hooks
            .on_matching::<PreToolUse>(
                "mcp__fs__.*",
                "fs-watch",
                hook_fn(move |_c: &HookContext, input: &PreToolUseInput| {
                    seen.lock().expect("seen").push(input.tool_name.clone());
                    Ok(HookOutput::new(PreToolUseAction::default()))
                }),
            )
            .expect("matcher");
    }
    let notes = root.join("notes.txt").to_string_lossy().into_owned();
    let run = h
        .run(
            "read my notes",
            vec![
                calls(&[
                    ("c1", "mcp__fs__read_text_file", json!({"path": notes})),
                    ("c2", "mcp__fs__read_text_file", json!({"path": "/etc/hostname"})),
                ]),
                text("done"),
            ],
        )
        .await;
    assert_eq!(run.outcome.subtype, RunSubtype::Success);
    let r = results(&run.outcome.messages);
    assert_eq!(r[0].content, "hello from the workspace\n");
    let meta = projected_metadata(&run.outcome, "c1");
    assert_eq!(meta["server"], json!("fs"));
    assert_eq!(meta["tool"], json!("read_text_file"));
    assert_eq!(meta["content_blocks"], json!(1));
    assert_eq!(r[1].error_code, Some(ErrorCode::RuntimeError), "isError: true is a tool error");
    assert!(r[1].content.starts_with("Error [runtime_error]: ") && r[1].content.contains("denied"), "{}", r[1].content);
    assert_eq!(*seen.lock().expect("seen"), vec!["mcp__fs__read_text_file", "mcp__fs__read_text_file"]);

    let pids = mcp.server_pids();
    assert_eq!(pids.len(), 1);
    let marker = root.to_string_lossy().into_owned();
    mcp.shutdown().await;
    assert!(eventually_dead(pids[0]).await, "the server process is gone");
    assert_eq!(
        eventually_none_with(&marker).await,
        Vec::<u32>::new(),
        "no process has the workspace in its command line"
    );
}

#[tokio::test]
async fn everything_server_over_stdio_and_http_while_a_missing_server_is_an_issue() {
    let http = HttpPeer::start().await;
    let config = json!({
        "ev": {"command": "node", "args": [server_js("server-everything"), "stdio"]},
        "evh": {"type": "http", "url": http.url},
        "missing": {"command": "spine-no-such-mcp-server-xyz"}
    });
    let dir = tempfile::tempdir().expect("tmp");
    let started = Instant::now();
    let (mcp, issues) = connect_mcp_servers(&config, &McpOptions::new(dir.path(), ChildEnv::default())).await;
    let took = started.elapsed();
    assert!(took < Duration::from_secs(10), "servers connect concurrently: {took:?}");
    assert_eq!(issues.len(), 1, "{issues:?}");
    assert_eq!(issues[0].server, "missing");
    assert_eq!(issues[0].kind, McpIssueKind::Start);
    assert!(issues[0].message.contains("spine-no-such-mcp-server-xyz"), "{}", issues[0].message);
    assert_eq!(mcp.server_names(), vec!["ev", "evh"]);
    let tools = mcp.tools();
    for server in ["ev", "evh"] {
        let echo = find(&tools, &format!("mcp__{server}__echo"));
        let r = call(&echo, json!({"message": "hi"})).await.expect("echo");
        assert_eq!(echo.project(&r).content, "Echo: hi", "{server}");
        let sum = find(&tools, &format!("mcp__{server}__get-sum"));
        let r = call(&sum, json!({"a": 2, "b": 3})).await.expect("sum");
        assert_eq!(sum.project(&r).content, "The sum of 2 and 3 is 5.", "{server}");
    }
    // The server's own validation answers with `isError: true` (the registry would have
    // refused these arguments first; here they go straight to the executor).
    let echo = find(&tools, "mcp__ev__echo");
    let e = call(&echo, json!({"message": 5})).await.expect_err("isError");
    assert_eq!(e.code, ErrorCode::RuntimeError);
    assert!(e.message.contains("Input validation error"), "{}", e.message);
    assert!(e.response.expect("the result")["content"].is_array());

    // Through the runner, over HTTP.
    let mut h = AgentHarness::new();
    mcp.register(&mut h.tools);
    let run = h.run("add", vec![calls(&[("c1", "mcp__evh__get-sum", json!({"a": 20, "b": 22}))]), text("42")]).await;
    assert_eq!(results(&run.outcome.messages)[0].content, "The sum of 20 and 22 is 42.");

    let pids = mcp.server_pids();
    assert_eq!(pids.len(), 1, "one stdio server");
    mcp.shutdown().await;
    assert!(eventually_dead(pids[0]).await);
    let after = call(&echo, json!({"message": "late"})).await.expect_err("closed");
    assert_eq!(after.code, ErrorCode::RuntimeError);
    assert!(after.message.starts_with("MCP server `ev` failed on echo: "), "{}", after.message);
}

#[tokio::test]
async fn dropping_the_handle_kills_stdio_servers() {
    let config = json!({"ev": {"command": "node", "args": [server_js("server-everything"), "stdio"]}});
    let dir = tempfile::tempdir().expect("tmp");
    let (mcp, issues) = connect_mcp_servers(&config, &McpOptions::new(dir.path(), ChildEnv::default())).await;
    assert!(issues.is_empty(), "{issues:?}");
    let pid = mcp.server_pids()[0];
    drop(mcp);
    assert!(eventually_dead(pid).await, "the process group was killed");
}

/// A server written against the npm SDK that lists a tool whose schema does not compile and
/// a tool whose name needs sanitising.
#[tokio::test]
async fn a_tool_whose_schema_does_not_compile_is_skipped_with_an_issue() {
    let dir = tempfile::tempdir().expect("tmp");
    let sdk = spine_testkit::mcp::peers().join("node_modules/@modelcontextprotocol/sdk/dist/cjs");
    let script = dir.path().join("odd.cjs");
    std::fs::write(
        &script,
        format!(
            r#"const {{ Server }} = require("{sdk}/server/index.js");
const {{ StdioServerTransport }} = require("{sdk}/server/stdio.js");
const {{ ListToolsRequestSchema, CallToolRequestSchema }} = require("{sdk}/types.js");
const server = new Server({{ name: "odd", version: "1.0.0" }}, {{ capabilities: {{ tools: {{}} }} }});
server.setRequestHandler(ListToolsRequestSchema, async () => ({{ tools: [
  {{ name: "good", description: "fine", inputSchema: {{ type: "object", properties: {{}} }} }},
  {{ name: "bad", description: "broken", inputSchema: {{ type: "object", properties: {{ x: {{ type: "no-such-type" }} }} }} }},
  {{ name: "dot.ted", inputSchema: {{ type: "object" }}, annotations: {{ readOnlyHint: true }} }},
]}}));
server.setRequestHandler(CallToolRequestSchema, async (req) => ({{ content: [], structuredContent: {{ called: req.params.name }} }}));
server.connect(new StdioServerTransport());
"#,
            sdk = sdk.display()
        ),
    )
    .expect("script");
    let config = json!({"odd": {"command": "node", "args": [script]}});
    let (mcp, issues) = connect_mcp_servers(&config, &McpOptions::new(dir.path(), ChildEnv::default())).await;
    assert_eq!(issues.len(), 1, "{issues:?}");
    assert_eq!(issues[0].kind, McpIssueKind::InvalidSchema);
    assert_eq!(issues[0].tool.as_deref(), Some("bad"));
    assert_eq!(mcp.tool_names(), vec!["mcp__odd__good", "mcp__odd__dot_ted"]);
    let mut builder = ToolRegistryBuilder::new();
    mcp.register(&mut builder);
    builder.build().expect("the registry builds without the broken tool");
    let dotted = find(&mcp.tools(), "mcp__odd__dot_ted");
    assert_eq!(dotted.effect(), Effect::Read);
    let r = call(&dotted, json!({})).await.expect("call");
    assert_eq!(r["structuredContent"], json!({"called": "dot.ted"}), "called by its own name");
    assert_eq!(dotted.project(&r).content, "{\n  \"called\": \"dot.ted\"\n}");
    mcp.shutdown().await;
}

#[tokio::test]
async fn mcp_json_is_loaded_from_the_project_directory() {
    let dir = tempfile::tempdir().expect("tmp");
    assert!(load_mcp_json(dir.path()).expect("no file").is_none());
    std::fs::write(dir.path().join(".mcp.json"), r#"{"mcpServers": {"a": {"command": "x", "args": ["y"]}}}"#)
        .expect("write");
    assert_eq!(load_mcp_json(dir.path()).expect("load"), Some(json!({"a": {"command": "x", "args": ["y"]}})));
    std::fs::write(dir.path().join(".mcp.json"), "{not json").expect("write");
    assert!(load_mcp_json(dir.path()).is_err());
    std::fs::write(dir.path().join(".mcp.json"), r#"{"mcpServers": []}"#).expect("write");
    let e = load_mcp_json(dir.path()).expect_err("shape");
    assert!(e.to_string().contains("`mcpServers` is not an object"), "{e}");
}
