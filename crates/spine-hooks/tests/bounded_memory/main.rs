//! A command hook's output is read in bounded memory, measured as the growth of this
//! process's peak resident size — alone in its own test binary, so that no other test's
//! allocations running at the same time count (in the suite's process they did).

// A test, bench or example target links every dependency of its package; the lint checks
// the library's and the binary's own lists (see the workspace Cargo.toml).
#![allow(unused_crate_dependencies)]

#[allow(unused_imports)]
#[path = "../suite/support.rs"]
mod support;

use support::*;

fn pre(handlers: Vec<serde_json::Value>) -> Setup {
    Setup { layers: vec![hooks("PreToolUse", "Bash", handlers)], ..Setup::default() }
}

#[tokio::test]
async fn fifty_megabytes_of_stdout_is_a_failure_in_bounded_memory_and_the_run_goes_on() {
    let p = Project::new();
    let before = spine_testkit::procs::peak_rss_kib().unwrap_or(0);
    let flood = command("cat > /dev/null; head -c 50000000 /dev/zero | tr '\\0' '{'");
    let ran = run(&p, pre(vec![flood]), vec![bash("c1", "echo ran"), text("ok")]).await;
    let grown_mb = spine_testkit::procs::peak_rss_kib().unwrap_or(0).saturating_sub(before) / 1024;
    assert!(ran.results()[0].content.contains("ran"));
    assert!(ran.warnings().iter().any(|w| w.contains("failing open")), "{:?}", ran.warnings());
    assert!(grown_mb < 40, "peak memory grew by {grown_mb} MB");
    assert_eq!(ran.outcome.result, "ok");
}
