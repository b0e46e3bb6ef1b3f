//! Peak memory and time of `prepare_turn` on one huge unbroken text (no spaces, no newlines) in
//! an assignment's `context_messages`: `cargo run --release -p spine-llm-core --example
//! unbroken_text -- [MEGABYTES] [o200k|cl100k]` prints the input size, the growth of the
//! process's peak RSS (`VmHWM` of `/proc/self/status`, the input included) and the wall time of
//! `normalize_transcript` + `prepare_turn`.

// A test, bench or example target links every dependency of its package; the lint checks
// the library's and the binary's own lists (see the workspace Cargo.toml).
#![allow(unused_crate_dependencies)]

use std::time::Instant;

use serde_json::json;
use spine_core::skills::SkillCatalog;
use spine_core::stages::prepare_turn::{TurnInputs, TurnSettings, normalize_transcript, prepare_turn};
use spine_core::tokens::{BpeEstimator, Encoding, TokenEstimator};
use spine_core::trace::Trace;
use spine_core::workspace::Workspace;

/// `VmHWM` in KiB, 0 when unreadable.
fn peak_rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        })
        .unwrap_or(0)
}

/// Pseudo-random lowercase letters: one regex pre-token for the whole text.
fn unbroken(bytes: usize) -> String {
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    (0..bytes)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            char::from(b'a' + (x % 26) as u8)
        })
        .collect()
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let mb: usize = args.next().map_or(Ok(10), |a| a.parse())?;
    let encoding = match args.next().as_deref() {
        Some("o200k") => Encoding::O200kBase,
        _ => Encoding::Cl100kBase,
    };
    let estimator = BpeEstimator::new(encoding);
    estimator.count_text("warm up the tokenizer");
    let dir = std::env::temp_dir();
    let ws = Workspace::new(&dir)?;
    let skills = SkillCatalog::default();
    let settings = TurnSettings { profile: "bench".into(), ..Default::default() };
    let base = peak_rss_kib();
    let values = vec![json!({"role": "user", "content": unbroken(mb << 20)})];
    let started = Instant::now();
    let transcript = normalize_transcript(&values)?;
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
    let elapsed = started.elapsed();
    let grown = peak_rss_kib().saturating_sub(base);
    println!(
        "{} MiB unbroken text, {}: {} tokens, peak RSS +{:.1} MiB ({:.2}x the input), {:.2} s",
        mb,
        estimator.name(),
        prepared.estimated_token_count,
        grown as f64 / 1024.0,
        grown as f64 / 1024.0 / mb as f64,
        elapsed.as_secs_f64()
    );
    Ok(())
}
