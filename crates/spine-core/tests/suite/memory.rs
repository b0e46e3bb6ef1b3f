//! Memory in proportion to the input: `prepare_turn` on one huge unbroken text (no spaces, no
//! newlines) in an assignment's `context_messages` peaks at a small multiple of its size.
//!
//! Peak memory is the process's high-water mark (`VmHWM` in `/proc/self/status`), so the
//! measurement runs alone: the test re-runs itself as a child process with only itself
//! selected, and the parent checks the child's verdict.

use std::process::Command;

use serde_json::json;
use spine_core::skills::SkillCatalog;
use spine_core::stages::prepare_turn::{TurnInputs, TurnSettings, normalize_transcript, prepare_turn};
use spine_core::tokens::{BpeEstimator, Encoding, TokenEstimator};
use spine_core::trace::Trace;
use spine_core::workspace::Workspace;

/// Set in the child that measures.
const CHILD: &str = "SPINE_MEMORY_TEST_CHILD";

/// Pseudo-random lowercase letters: the whole text is one pre-token of the BPE's regex.
fn unbroken(bytes: usize) -> String {
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut s = String::with_capacity(bytes);
    for _ in 0..bytes {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        s.push(char::from(b'a' + (x % 26) as u8));
    }
    s
}

#[test]
fn prepare_turn_on_10_mb_of_unbroken_text_peaks_below_4x_its_size() {
    const NAME: &str = "memory::prepare_turn_on_10_mb_of_unbroken_text_peaks_below_4x_its_size";
    if std::env::var_os(CHILD).is_none() {
        let exe = std::env::current_exe().expect("the test binary");
        let out = Command::new(exe)
            .args([NAME, "--exact", "--nocapture", "--test-threads=1"])
            .env(CHILD, "1")
            .output()
            .expect("run the measuring child");
        let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        assert!(out.status.success(), "{text}");
        assert!(text.contains("peak growth"), "the child measured: {text}");
        println!("{text}");
        return;
    }
    const SIZE: usize = 10 << 20;
    let estimator = BpeEstimator::new(Encoding::Cl100kBase);
    estimator.count_text("load the tokenizer before measuring");
    let dir = tempfile::tempdir().expect("tmp");
    let ws = Workspace::new(dir.path()).expect("ws");
    let skills = SkillCatalog::default();
    let settings = TurnSettings { profile: "worker".into(), ..Default::default() };
    let before = spine_testkit::procs::peak_rss_kib().expect("VmHWM");

    let values = vec![json!({"role": "user", "content": unbroken(SIZE)})];
    let transcript = normalize_transcript(&values).expect("transcript");
    drop(values);
    let inputs = TurnInputs {
        settings: &settings,
        workspace: &ws,
        skills: &skills,
        operator_state: None,
        memory: None,
        estimator: &estimator,
        tools: &[],
    };
    let prepared = prepare_turn(&inputs, &transcript, None, &Trace::default());

    let growth = (spine_testkit::procs::peak_rss_kib().expect("VmHWM") - before) * 1024;
    println!("peak growth {} MiB for {} MiB of unbroken text", growth >> 20, SIZE >> 20);
    assert!(prepared.estimated_token_count > (SIZE / 16) as u64, "the text was counted");
    assert!(growth <= 4 * SIZE as u64, "peak RSS grew by {} MiB for {} MiB of input", growth >> 20, SIZE >> 20);
}
