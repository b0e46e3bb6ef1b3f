//! The cost spine adds to an MCP tool call.
//!
//! Against `@modelcontextprotocol/server-everything` over stdio (installed by
//! `scripts/mcp-peers.sh` into `SPINE_TEST_MCP_DIR`, default `<workspace>/target/test-peers`),
//! on one connection:
//!
//! - `raw_call_tool`: rmcp's `Peer::call_tool("echo")` — the protocol round trip and the
//!   server's own work;
//! - `tool_execute`: the same call through [`McpTool`]'s `Tool::execute` (arguments cloned,
//!   time limit, cancellation select, result to JSON);
//! - `tool_execute_and_project`: plus the projection the model reads.
//!
//! The difference between the first two is spine's overhead per call, without the server's
//! work. `interleaved_*` alternate the two calls and time only one, so that machine drift
//! between benchmarks does not show up as overhead. Run: `cargo bench -p spine-llm-tools --bench mcp_call`.

// A test, bench or example target links every dependency of its package; the lint checks
// the library's and the binary's own lists (see the workspace Cargo.toml).
#![allow(unused_crate_dependencies)]

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use rmcp::model::CallToolRequestParams;
use serde_json::{Map, Value, json};
use spine_core::tool::{ChildEnv, Tool, ToolContext};
use spine_core::workspace::Workspace;
use spine_tools::mcp::{McpOptions, McpTool, connect_mcp_servers};

fn server_js() -> PathBuf {
    let dir = std::env::var_os("SPINE_TEST_MCP_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/test-peers"));
    let js = dir.join("node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    assert!(js.is_file(), "{} is missing: run scripts/mcp-peers.sh", js.display());
    js
}

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("runtime");
    let dir = tempfile::tempdir().expect("tmp");
    let config = json!({"ev": {"command": "node", "args": [server_js(), "stdio"]}});
    let (mcp, issues) = rt.block_on(connect_mcp_servers(&config, &McpOptions::new(dir.path(), ChildEnv::default())));
    assert!(issues.is_empty(), "{issues:?}");
    let echo = Arc::clone(mcp.mcp_tools().iter().find(|t| t.name() == "mcp__ev__echo").expect("echo"));
    let workspace = Arc::new(Workspace::new(dir.path()).expect("workspace"));
    let ctx = ToolContext::new(workspace, "bench", "mcp__ev__echo", ChildEnv::default());
    let args: Map<String, Value> = json!({"message": "hello"}).as_object().cloned().expect("object");

    let mut group = c.benchmark_group("mcp_echo");
    group.bench_function("raw_call_tool", |b| {
        b.to_async(&rt).iter(|| async {
            let mut params = CallToolRequestParams::new("echo");
            params.arguments = Some(args.clone());
            echo.peer().call_tool(params).await.expect("call")
        })
    });
    group.bench_function("tool_execute", |b| {
        b.to_async(&rt).iter(|| async { echo.execute(&args, &ctx).await.expect("execute") })
    });
    group.bench_function("tool_execute_and_project", |b| {
        b.to_async(&rt).iter(|| async {
            let response = echo.execute(&args, &ctx).await.expect("execute");
            echo.project(&response)
        })
    });
    // The same two calls alternating, only one of them timed: drift of the machine (other
    // processes, frequency) hits both alike, so their difference is the overhead.
    let raw = |echo: Arc<McpTool>, args: Map<String, Value>| async move {
        let mut params = CallToolRequestParams::new("echo");
        params.arguments = Some(args);
        echo.peer().call_tool(params).await.expect("call");
    };
    let wrapped = |echo: Arc<McpTool>, args: Map<String, Value>, ctx: ToolContext| async move {
        echo.execute(&args, &ctx).await.expect("execute");
    };
    group.bench_function("interleaved_raw_call_tool", |b| {
        b.to_async(&rt).iter_custom(|iters| {
            let (echo, args, ctx) = (Arc::clone(&echo), args.clone(), ctx.clone());
            async move {
                let mut timed = Duration::ZERO;
                for _ in 0..iters {
                    let t = Instant::now();
                    raw(Arc::clone(&echo), args.clone()).await;
                    timed += t.elapsed();
                    wrapped(Arc::clone(&echo), args.clone(), ctx.clone()).await;
                }
                timed
            }
        })
    });
    group.bench_function("interleaved_tool_execute", |b| {
        b.to_async(&rt).iter_custom(|iters| {
            let (echo, args, ctx) = (Arc::clone(&echo), args.clone(), ctx.clone());
            async move {
                let mut timed = Duration::ZERO;
                for _ in 0..iters {
                    raw(Arc::clone(&echo), args.clone()).await;
                    let t = Instant::now();
                    wrapped(Arc::clone(&echo), args.clone(), ctx.clone()).await;
                    timed += t.elapsed();
                }
                timed
            }
        })
    });
    group.finish();

    // The CPU-only parts spine adds around the call, without any I/O: building the response
    // from rmcp's result, and the projection the model reads.
    let mut params = CallToolRequestParams::new("echo");
    params.arguments = Some(args.clone());
    let result = rt.block_on(echo.peer().call_tool(params)).expect("call");
    let response = rt.block_on(echo.execute(&args, &ctx)).expect("execute");
    let mut cpu = c.benchmark_group("mcp_echo_cpu");
    cpu.bench_function("result_to_response", |b| {
        b.iter(|| {
            let mut m = Map::new();
            m.insert("content".into(), serde_json::to_value(&result.content).expect("json"));
            (args.clone(), Value::Object(m))
        })
    });
    cpu.bench_function("project", |b| b.iter(|| echo.project(&response)));
    cpu.finish();
    rt.block_on(mcp.shutdown());
}

criterion_group!(benches, bench);
criterion_main!(benches);
