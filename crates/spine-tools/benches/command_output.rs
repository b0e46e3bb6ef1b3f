//! Command-run output throughput: bytes per second from a child's stdout through the pump,
//! the output ring and the exit bookkeeping, measured end to end through `exec_command`'s
//! `Tool::execute` (the call waits for the command to end).
//!
//! - `zeros_*`: `head -c 200000000 /dev/zero` (the generator costs almost nothing);
//! - `base64_*`: `head -c 100000000 /dev/zero | base64` (~135 MB of text in 76-byte lines);
//! - `*_dev_null`: the same command with its output sent to `/dev/null` by the shell — the
//!   generator's own speed, the ceiling;
//! - `*_streamed`: with a progress sink attached, so every chunk is also decoded as UTF-8 and
//!   emitted (what a run with reports does).
//!
//! Run: `cargo bench -p spine-llm-tools --bench command_output`.

// A test, bench or example target links every dependency of its package; the lint checks
// the library's and the binary's own lists (see the workspace Cargo.toml).
#![allow(unused_crate_dependencies)]

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use serde_json::{Map, Value, json};
use spine_core::tool::{ChildEnv, OutputStream, ProgressSink, Tool, ToolContext};
use spine_core::workspace::Workspace;
use spine_tools::command_runs::{CommandRunOptions, CommandRuns, ExecCommandTool};

/// Counts what it is given.
#[derive(Default)]
struct Counting(AtomicU64);

impl ProgressSink for Counting {
    fn output(&self, _call_id: &str, _tool_name: &str, _stream: OutputStream, text: &str) {
        self.0.fetch_add(text.len() as u64, Ordering::Relaxed);
    }
}

fn args(command: &str) -> Map<String, Value> {
    json!({"command": command, "yield_ms": 600_000}).as_object().cloned().expect("object")
}

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("runtime");
    let dir = tempfile::tempdir().expect("tmp");
    let workspace = Arc::new(Workspace::new(dir.path()).expect("workspace"));
    let plain = ToolContext::new(Arc::clone(&workspace), "bench", "exec_command", ChildEnv::default());
    let mut streamed = plain.clone();
    streamed.progress = Some(Arc::new(Counting::default()));

    let mut group = c.benchmark_group("command_output");
    group.sample_size(10).measurement_time(Duration::from_secs(15));
    for (name, command) in
        [("zeros", "head -c 200000000 /dev/zero"), ("base64", "head -c 100000000 /dev/zero | base64")]
    {
        // A fresh registry per iteration keeps one run in it; the measured bytes come from a
        // first run.
        let runs = CommandRuns::new(CommandRunOptions::default());
        let tool = ExecCommandTool::new(Arc::clone(&runs));
        let first = rt.block_on(tool.execute(&args(command), &plain)).expect("run");
        let bytes = first["stdout_bytes"].as_u64().expect("bytes");
        assert_eq!(first["exit_status"], json!(0));
        group.throughput(Throughput::Bytes(bytes));
        let dev_null = args(&format!("{command} > /dev/null"));
        group.bench_function(format!("{name}_dev_null"), |b| {
            b.to_async(&rt).iter(|| async {
                let runs = CommandRuns::new(CommandRunOptions::default());
                ExecCommandTool::new(runs).execute(&dev_null, &plain).await.expect("run")
            })
        });
        let through = args(command);
        group.bench_function(format!("{name}_ring"), |b| {
            b.to_async(&rt).iter(|| async {
                let runs = CommandRuns::new(CommandRunOptions::default());
                let r = ExecCommandTool::new(runs).execute(&through, &plain).await.expect("run");
                assert_eq!(r["stdout_bytes"].as_u64(), Some(bytes));
                r
            })
        });
        group.bench_function(format!("{name}_streamed"), |b| {
            b.to_async(&rt).iter(|| async {
                let runs = CommandRuns::new(CommandRunOptions::default());
                ExecCommandTool::new(runs).execute(&through, &streamed).await.expect("run")
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
