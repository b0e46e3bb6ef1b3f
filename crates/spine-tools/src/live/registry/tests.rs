//! The registry's own rules, with a family of its own and real processes.

use std::path::Path;
use std::sync::LazyLock;
use std::time::Duration;

use spine_process::ChildEnv;
use spine_protocol::tool::{ErrorCode, ToolError};
use tokio_util::sync::CancellationToken;

use super::{Enlist, Family, LiveRegistry};
use crate::live::{SpawnSpec, StdinMode, Terminal, WaitEnd};

struct Probe;

impl Family for Probe {
    type Options = usize;
    type Meta = &'static str;
    const ID_PREFIX: &'static str = "probe";
    const NOUN: &'static str = "probe";

    fn capacity(options: &usize) -> usize {
        *options
    }

    fn full(running: usize) -> String {
        format!("{running} probes run")
    }
}

/// The probes run without settings.
static NO_SETTINGS: LazyLock<ChildEnv> = LazyLock::new(ChildEnv::default);

fn spec(command: &str) -> SpawnSpec<'_> {
    SpawnSpec {
        command,
        cwd: Path::new("/"),
        env_file: None,
        env: &NO_SETTINGS,
        terminal: Terminal::Pipes,
        stdin: StdinMode::Null,
        ring_cap: 1024,
    }
}

/// The error of a call expected to fail.
fn refused<T>(result: Result<T, ToolError>) -> ToolError {
    match result {
        Ok(_) => panic!("expected an error"),
        Err(e) => e,
    }
}

#[tokio::test]
async fn ids_count_up_and_an_unknown_id_is_not_found_naming_the_known_ones() {
    let registry = LiveRegistry::<Probe>::new(4);
    let first = registry.start(spec("sleep 30"), "a", Enlist::Now).expect("start");
    let second = registry.start(spec("sleep 30"), "b", Enlist::Now).expect("start");
    assert_eq!((first.id.as_str(), second.id.as_str()), ("probe-1", "probe-2"));
    assert_eq!(registry.get("probe-2").expect("known").meta, "b");
    let e = refused(registry.get("probe-9"));
    assert_eq!(e.code, ErrorCode::NotFound);
    assert_eq!(e.message, "no probe `probe-9` (known: probe-1, probe-2)");
    registry.shutdown().await;
    assert!(registry.is_empty());
}

#[tokio::test]
async fn a_full_registry_evicts_the_oldest_ended_entry_and_refuses_when_all_still_run() {
    let registry = LiveRegistry::<Probe>::new(2);
    let done = registry.start(spec("true"), "done", Enlist::Now).expect("start");
    let never = CancellationToken::new();
    assert_eq!(done.live.wait_exit(Duration::from_secs(60), &never).await, WaitEnd::Exited);
    registry.start(spec("sleep 30"), "one", Enlist::Now).expect("start");
    registry.start(spec("sleep 30"), "two", Enlist::Now).expect("the ended entry makes room");
    let ids: Vec<String> = registry.entries().into_iter().map(|e| e.id).collect();
    assert_eq!(ids, ["probe-2", "probe-3"]);
    let e = refused(registry.start(spec("sleep 30"), "three", Enlist::Now));
    assert_eq!(e.code, ErrorCode::ValidationError);
    assert_eq!(e.message, "2 probes run");
    assert_eq!(registry.len(), 2);
    registry.shutdown().await;
}

#[tokio::test]
async fn an_entry_started_when_ready_joins_only_once_inserted() {
    let registry = LiveRegistry::<Probe>::new(2);
    let entry = registry.start(spec("sleep 30"), "service", Enlist::WhenReady).expect("start");
    assert!(registry.is_empty());
    assert_eq!(refused(registry.get(&entry.id)).code, ErrorCode::NotFound);
    registry.insert(entry.clone());
    assert_eq!(registry.len(), 1);
    registry.shutdown().await;
    assert!(entry.live.exit().is_some(), "shutdown ended it");
}
