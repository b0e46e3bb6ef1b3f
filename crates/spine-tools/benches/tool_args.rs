//! The cost of typed tool arguments: deriving the model-facing schemas, and reading a call's
//! arguments.
//!
//! - `specs_all_tools`: `Tool::spec()` of the 7 built-in and 17 family tools (the schemas are
//!   derived from the argument structs; the registry does this once per tool at registration);
//! - `calculator_execute`: `calculator` end to end through `Tool::execute` (arguments read into
//!   their struct, then a small expression evaluated), CPU only;
//! - `grep_args_invalid_regex`: `Grep` with ten arguments and a pattern that does not compile,
//!   so the call ends right after its arguments are read and the regex is built (no file walk).
//!
//! Run: `cargo bench -p spine-llm-tools --bench tool_args`.

// A test, bench or example target links every dependency of its package; the lint checks
// the library's and the binary's own lists (see the workspace Cargo.toml).
#![allow(unused_crate_dependencies)]

use std::sync::Arc;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::{Map, Value, json};
use spine_core::tool::{ChildEnv, Tool, ToolContext};
use spine_core::workspace::Workspace;
use spine_tools::families::family_tools;
use spine_tools::{CalculatorTool, FamilyConfig, GrepTool};

fn object(value: Value) -> Map<String, Value> {
    value.as_object().cloned().expect("object")
}

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
    let dir = tempfile::tempdir().expect("tmp");
    let ctx = ToolContext::new(
        Arc::new(Workspace::new(dir.path()).expect("workspace")),
        "call-1",
        "bench",
        ChildEnv::default(),
    );
    let (family, _handles) = rt.block_on(async { family_tools(FamilyConfig::default()) });
    let mut tools = spine_tools::builtin_tools();
    tools.extend(family);

    let mut group = c.benchmark_group("tool_args");
    group.measurement_time(Duration::from_secs(5));
    group.bench_function("specs_all_tools", |b| {
        b.iter(|| tools.iter().map(|t| t.spec().input_schema.as_object().map_or(0, Map::len)).sum::<usize>())
    });
    let calc = object(json!({"expression": "(2 + 3) * 4 ^ 2 / 8"}));
    group.bench_function("calculator_execute", |b| {
        b.iter(|| rt.block_on(CalculatorTool.execute(&calc, &ctx)).expect("result"))
    });
    let grep = object(json!({
        "pattern": "(", "path": ".", "glob": "*.rs", "output_mode": "content", "-i": true, "-n": true,
        "-A": 1, "-B": 2, "-C": 3, "head_limit": 10
    }));
    group.bench_function("grep_args_invalid_regex", |b| {
        b.iter(|| rt.block_on(GrepTool.execute(&grep, &ctx)).expect_err("invalid regex"))
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
