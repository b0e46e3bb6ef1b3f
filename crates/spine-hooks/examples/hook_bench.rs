//! Measures the cost of external hooks (run it with `bench/hooks.sh`, release build):
//!
//! 1. per-event overhead of a command hook (`bash -c 'cat >/dev/null'`, ~1 KB PreToolUse input)
//!    against spawning the same command bare with `tokio::process` (the same bash) and writing
//!    the same input; and the one-time cost of the first firing, which parses the line with
//!    `bash -n` before running it;
//! 2. ten hooks sleeping 50 ms on one event (one concurrent matcher group): wall time against
//!    the sum of their durations, and the same ten as a `sequential` chain;
//! 3. the round trip of a persistent hook (a bash and a python line-echo of `spine_seq`), in µs.
//!
//! Every number comes from the same run; the bare and hooked spawns are interleaved so that
//! machine noise hits both alike.

// A test, bench or example target links every dependency of its package; the lint checks
// the library's and the binary's own lists (see the workspace Cargo.toml).
#![allow(unused_crate_dependencies)]

use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use spine_core::CancellationToken;
use spine_core::hooks::{HookContext, HookRegistry, HookRegistryBuilder, HookRuntime, SessionInfo};
use spine_core::observer::NullObserver;
use spine_core::trace::Trace;
use spine_hooks::record::{AnswerRecord, AnswerSink};
use spine_hooks::{BuildOptions, HookConfig};
use spine_process::ChildEnv;
use spine_protocol::hook::{HookEventName, PreToolUse, PreToolUseInput};
use spine_protocol::permission::PermissionMode;
use spine_settings::{Origin, Settings, SettingsLayer};
use tokio::io::AsyncWriteExt;

const CAT: &str = "cat >/dev/null";

#[derive(Default)]
struct Durations(Mutex<Vec<Duration>>);

impl AnswerSink for Durations {
    fn record(&self, record: AnswerRecord) {
        if let Ok(mut v) = self.0.lock() {
            v.push(record.duration);
        }
    }
}

fn registry(settings: Value, sink: Option<Arc<dyn AnswerSink>>) -> Result<HookRegistry, String> {
    let value = settings.as_object().cloned().ok_or("settings must be an object")?;
    let layer = SettingsLayer { origin: Origin::Cli { index: 1, path: None }, value };
    let settings = Settings::from_layers(vec![layer]).map_err(|e| e.to_string())?;
    let config = HookConfig::from_settings(&settings).map_err(|e| e.to_string())?;
    let mut builder = HookRegistryBuilder::new();
    spine_hooks::register(
        &config,
        &mut builder,
        &BuildOptions {
            sink,
            ..BuildOptions::new(ChildEnv::new(settings.env.clone(), settings.env_passthrough.clone()))
        },
    )
    .map_err(|e| e.to_string())?;
    Ok(builder.build())
}

fn context(dir: &std::path::Path, event: HookEventName) -> HookContext {
    HookContext {
        session: Arc::new(SessionInfo {
            session_id: "bench".into(),
            transcript_path: dir.join("t.jsonl"),
            cwd: dir.to_path_buf(),
            hook_dir: dir.to_path_buf(),
            project_dir: dir.to_path_buf(),
            permission_mode: PermissionMode::Default,
            effort: None,
            env_file: None,
        }),
        event,
        prompt_id: Some(Arc::from("p")),
        cancel: CancellationToken::new(),
        agent: None,
    }
}

fn input() -> PreToolUseInput {
    // About 1 KB on the wire, like a typical Bash call.
    PreToolUseInput {
        tool_name: "Bash".into(),
        spine_tool_name: None,
        tool_input: json!({"command": format!("echo {}", "x".repeat(700)), "description": "bench"}),
        tool_use_id: "toolu_bench".into(),
    }
}

fn stats(mut v: Vec<Duration>) -> (f64, f64, f64) {
    v.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    let mean = v.iter().map(|d| ms(*d)).sum::<f64>() / v.len().max(1) as f64;
    let pick = |q: f64| v.get(((v.len() as f64 - 1.0) * q).round() as usize).map_or(0.0, |d| ms(*d));
    (mean, pick(0.5), pick(0.95))
}

async fn bare_spawn(shell: &std::path::Path, payload: &[u8]) -> Result<(), String> {
    let mut child = tokio::process::Command::new(shell)
        .arg("-c")
        .arg(CAT)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| e.to_string())?;
    if let Some(mut stdin) = child.stdin.take() {
        let _ = stdin.write_all(payload).await;
    }
    child.wait_with_output().await.map_err(|e| e.to_string())?;
    Ok(())
}

async fn overhead(dir: &std::path::Path) -> Result<(), String> {
    let bash = spine_hooks::shell::Shells::detect().bash.ok_or("no bash on PATH")?;
    let reg = registry(json!({"hooks": {"PreToolUse": [{"hooks": [{"type": "command", "command": CAT}]}]}}), None)?;
    let hook = reg.groups::<PreToolUse>().first().and_then(|g| g.hooks.first()).ok_or("no hook")?.hook.clone();
    let ctx = context(dir, HookEventName::PreToolUse);
    let input = input();
    let payload = spine_hooks::wire::input::encode::<PreToolUse>(&ctx, &input);
    let t = Instant::now();
    hook.call(&ctx, &input).await.map_err(|e| e.to_string())?;
    let first = t.elapsed().as_secs_f64() * 1000.0;
    let n = 400;
    for _ in 0..30 {
        bare_spawn(&bash, &payload).await?;
        hook.call(&ctx, &input).await.map_err(|e| e.to_string())?;
    }
    let (mut bare, mut hooked) = (Vec::with_capacity(n), Vec::with_capacity(n));
    for _ in 0..n {
        let t = Instant::now();
        bare_spawn(&bash, &payload).await?;
        bare.push(t.elapsed());
        let t = Instant::now();
        hook.call(&ctx, &input).await.map_err(|e| e.to_string())?;
        hooked.push(t.elapsed());
    }
    let (b_mean, b_p50, b_p95) = stats(bare);
    let (h_mean, h_p50, h_p95) = stats(hooked);
    println!("1. command hook `bash -c '{CAT}'`, {} B of PreToolUse JSON on stdin, {n} runs each", payload.len());
    println!("   first firing (bash -n parse, then the run): {first:.3} ms");
    println!("   bare tokio::process spawn : mean {b_mean:.3} ms  p50 {b_p50:.3} ms  p95 {b_p95:.3} ms");
    println!("   spine command hook        : mean {h_mean:.3} ms  p50 {h_p50:.3} ms  p95 {h_p95:.3} ms");
    let target = 1.1 * b_mean + 0.3;
    println!(
        "   overhead: {:+.3} ms ({:.2}x); target <= 1.1x + 0.3 ms = {target:.3} ms: {}",
        h_mean - b_mean,
        h_mean / b_mean,
        if h_mean <= target { "met" } else { "NOT met" }
    );
    Ok(())
}

async fn parallel(dir: &std::path::Path) -> Result<(), String> {
    // Distinct commands (the dedup key would otherwise run one of them).
    let handlers: Vec<Value> =
        (0..10).map(|i| json!({"type": "command", "command": format!("cat >/dev/null; sleep 0.05 # {i}")})).collect();
    for sequential in [false, true] {
        let sink = Arc::new(Durations::default());
        let settings = json!({"hooks": {"Stop": [{"sequential": sequential, "hooks": handlers}]}});
        let reg = registry(settings, Some(Arc::clone(&sink) as Arc<dyn AnswerSink>))?;
        let runtime = HookRuntime::new(Arc::new(reg), Trace::default(), Arc::new(NullObserver), dir.to_path_buf());
        let ctx = context(dir, HookEventName::Stop);
        let rounds = 10;
        let mut walls = Vec::new();
        for _ in 0..rounds {
            let t = Instant::now();
            runtime.stop(&ctx, false, "done").await;
            walls.push(t.elapsed());
        }
        let durations = sink.0.lock().map(|v| v.clone()).unwrap_or_default();
        let sum_per_event: f64 = durations.iter().map(|d| d.as_secs_f64() * 1000.0).sum::<f64>() / rounds as f64;
        let slowest: f64 =
            durations.chunks(10).map(|c| c.iter().map(|d| d.as_secs_f64() * 1000.0).fold(0.0, f64::max)).sum::<f64>()
                / rounds as f64;
        let (wall, _, _) = stats(walls);
        let label = if sequential { "sequential chain" } else { "concurrent group" };
        println!(
            "   {label:<17}: event wall time {wall:.1} ms; slowest hook {slowest:.1} ms; sum of the 10 hooks {sum_per_event:.1} ms"
        );
    }
    Ok(())
}

async fn persistent(dir: &std::path::Path, name: &str, command: &str) -> Result<(), String> {
    let settings =
        json!({"hooks": {"PreToolUse": [{"hooks": [{"type": "command", "command": command, "persistent": true}]}]}});
    let reg = registry(settings, None)?;
    let hook = reg.groups::<PreToolUse>().first().and_then(|g| g.hooks.first()).ok_or("no hook")?.hook.clone();
    let ctx = context(dir, HookEventName::PreToolUse);
    let input = input();
    for _ in 0..200 {
        hook.call(&ctx, &input).await.map_err(|e| e.to_string())?;
    }
    let n = 5000;
    let mut times = Vec::with_capacity(n);
    for _ in 0..n {
        let t = Instant::now();
        hook.call(&ctx, &input).await.map_err(|e| e.to_string())?;
        times.push(t.elapsed());
    }
    let (mean, p50, p95) = stats(times);
    println!(
        "   {name:<6}: mean {:.0} us  p50 {:.0} us  p95 {:.0} us  (target <= 200 us: {})",
        mean * 1000.0,
        p50 * 1000.0,
        p95 * 1000.0,
        if mean <= 0.2 { "met" } else { "NOT met" }
    );
    Ok(())
}

#[tokio::main]
async fn main() -> Result<(), String> {
    let dir = std::env::temp_dir().join(format!("spine-hook-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    overhead(&dir).await?;
    println!("2. ten hooks sleeping 50 ms on one event (Stop), mean of 10 events");
    parallel(&dir).await?;
    println!("3. persistent hook round trip (1 KB event line in, `{{\"spine_seq\": N}}` out), 5000 events");
    // spine appends `"spine_seq":N` as the last field of the event line.
    persistent(
        &dir,
        "bash",
        r#"while IFS= read -r line; do s=${line##*\"spine_seq\":}; echo "{\"spine_seq\":${s%\}}}"; done"#,
    )
    .await?;
    persistent(
        &dir,
        "python",
        "/usr/bin/python3 -c 'import json, sys\nfor line in sys.stdin:\n    \
         sys.stdout.write(json.dumps({\"spine_seq\": json.loads(line)[\"spine_seq\"]}) + \"\\n\"); sys.stdout.flush()'",
    )
    .await?;
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}
