//! Read and Write throughput: the race-free open beneath the workspace root against the
//! path-based open it replaced, over 1,000 small files (100 bytes each, 10 directories).
//!
//! Every variant first checks the path with `Workspace::resolve` (the boundary check both
//! have). Then:
//! - `path_std`: today's former path — `std::fs::metadata` and `std::fs::read` /
//!   `create_dir_all` + `std::fs::write` by name (the baseline; racy);
//! - `beneath_held_root`: `Workspace::read_file` / `write_file` — `openat2(RESOLVE_BENEATH)`
//!   from the root descriptor the workspace holds, `fstat`, I/O through the descriptor;
//! - `beneath_root_per_call`: the same `openat2` after opening the root directory afresh for
//!   each file (what not holding the root descriptor would cost);
//! - `beneath_added_root_of_5`: `Workspace::read_file` on the same files reached as the last
//!   of five roots (`--add-dir`): what choosing the root that holds a path costs;
//! - `tool_read` / `tool_write`: the `Read` and `Write` tools end to end (`Tool::execute`,
//!   blocking pool hop included).
//!
//! One iteration touches all 1,000 files, so the time per iteration divided by 1,000 is the
//! time per operation. Run: `cargo bench -p spine-llm-tools --bench file_access`.

// A test, bench or example target links every dependency of its package; the lint checks
// the library's and the binary's own lists (see the workspace Cargo.toml).
#![allow(unused_crate_dependencies)]

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use rustix::fs::{Mode, OFlags, ResolveFlags};
use serde_json::{Map, Value, json};
use spine_core::tool::{ChildEnv, Tool, ToolContext};
use spine_core::workspace::Workspace;
use spine_tools::{ReadTool, WriteTool};

const FILES: usize = 1000;
const CONTENT: &[u8] =
    b"0123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789";

fn names() -> Vec<String> {
    (0..FILES).map(|i| format!("d{}/f{i}.txt", i % 10)).collect()
}

fn bench(c: &mut Criterion) {
    let dir = tempfile::tempdir().expect("tmp");
    let ws = Arc::new(Workspace::new(dir.path()).expect("workspace"));
    let root = ws.root().to_path_buf();
    let names = names();
    for name in &names {
        ws.write_file(std::path::Path::new(name), CONTENT).expect("seed");
    }
    let resolve = |name: &str| -> PathBuf { ws.resolve(name, &root).expect("inside") };

    let mut read = c.benchmark_group("read_1000_files");
    read.throughput(Throughput::Elements(FILES as u64)).measurement_time(Duration::from_secs(5));
    read.bench_function("path_std", |b| {
        b.iter(|| {
            for name in &names {
                let path = resolve(name);
                let meta = std::fs::metadata(&path).expect("meta");
                assert!(!meta.is_dir());
                let bytes = std::fs::read(&path).expect("read");
                assert_eq!(bytes.len(), CONTENT.len());
            }
        })
    });
    read.bench_function("beneath_held_root", |b| {
        b.iter(|| {
            for name in &names {
                let bytes = ws.read_file(&resolve(name)).expect("read");
                assert_eq!(bytes.len(), CONTENT.len());
            }
        })
    });
    read.bench_function("beneath_root_per_call", |b| {
        b.iter(|| {
            for name in &names {
                let path = resolve(name);
                let rel = path.strip_prefix(&root).expect("under root");
                let root_fd =
                    rustix::fs::open(&root, OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC, Mode::empty())
                        .expect("root");
                let fd = rustix::fs::openat2(
                    &root_fd,
                    rel,
                    OFlags::RDONLY | OFlags::NONBLOCK | OFlags::CLOEXEC,
                    Mode::empty(),
                    ResolveFlags::BENEATH | ResolveFlags::NO_MAGICLINKS,
                )
                .expect("open");
                let _ = rustix::fs::fstat(&fd).expect("fstat");
                let mut bytes = Vec::new();
                std::io::Read::read_to_end(&mut std::fs::File::from(fd), &mut bytes).expect("read");
                assert_eq!(bytes.len(), CONTENT.len());
            }
        })
    });
    let others: Vec<tempfile::TempDir> = (0..4).map(|_| tempfile::tempdir().expect("tmp")).collect();
    let multi = Workspace::with_roots(others[0].path(), others[1..].iter().map(|d| d.path()).chain([root.as_path()]))
        .expect("workspace");
    let absolute: Vec<String> = names.iter().map(|n| root.join(n).to_string_lossy().into_owned()).collect();
    read.bench_function("beneath_added_root_of_5", |b| {
        b.iter(|| {
            for name in &absolute {
                let path = multi.resolve(name, multi.root()).expect("inside");
                let bytes = multi.read_file(&path).expect("read");
                assert_eq!(bytes.len(), CONTENT.len());
            }
        })
    });
    read.finish();

    let mut write = c.benchmark_group("write_1000_files");
    write.throughput(Throughput::Elements(FILES as u64)).measurement_time(Duration::from_secs(5));
    write.bench_function("path_std", |b| {
        b.iter(|| {
            for name in &names {
                let path = resolve(name);
                let _existed = std::fs::metadata(&path).is_ok();
                if let Some(parent) = path.parent() {
                    std::fs::create_dir_all(parent).expect("mkdir");
                }
                std::fs::write(&path, CONTENT).expect("write");
            }
        })
    });
    write.bench_function("beneath_held_root", |b| {
        b.iter(|| {
            for name in &names {
                ws.write_file(&resolve(name), CONTENT).expect("write");
            }
        })
    });
    write.finish();

    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("runtime");
    let ctx = ToolContext::new(Arc::clone(&ws), "bench", "tool", ChildEnv::default());
    let read_args: Vec<Map<String, Value>> = names
        .iter()
        .map(|n| json!({"file_path": root.join(n).to_string_lossy()}).as_object().cloned().expect("object"))
        .collect();
    let write_args: Vec<Map<String, Value>> = names
        .iter()
        .map(|n| {
            json!({"file_path": root.join(n).to_string_lossy(), "content": "0123456789".repeat(10)})
                .as_object()
                .cloned()
                .expect("object")
        })
        .collect();
    let mut tools = c.benchmark_group("tools_1000_files");
    tools.throughput(Throughput::Elements(FILES as u64)).measurement_time(Duration::from_secs(5));
    tools.bench_function("tool_read", |b| {
        b.iter(|| {
            rt.block_on(async {
                for args in &read_args {
                    ReadTool.execute(args, &ctx).await.expect("read");
                }
            })
        })
    });
    tools.bench_function("tool_write", |b| {
        b.iter(|| {
            rt.block_on(async {
                for args in &write_args {
                    WriteTool.execute(args, &ctx).await.expect("write");
                }
            })
        })
    });
    tools.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(10);
    targets = bench
}
criterion_main!(benches);
