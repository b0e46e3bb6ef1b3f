//! The shapes of command-run responses and their projection.
//!
//! Every per-run response carries the same state fields ([`state`]): `command_run_id`,
//! `command`, `pty`, `pid`, `started_at`, `status` (`running`, `exited`, `killed`,
//! `terminated`), `exit_status`, `signal`, `session_closed` (ended and output complete),
//! `stdout_tail`, `stderr_tail`, `stdout_bytes`, `stderr_bytes` (every byte, not just the tail)
//! and `truncated` (a tail is shorter than its stream). Tools add their own fields
//! (`output_streamed`, `bytes_written`, `terminated`, …).
//!
//! The projection is a one-line narrative, then the tails (stdout, then stderr under
//! `stderr:`); its metadata holds the machine-readable fields and sizes, never output.

use serde_json::{Map, Value, json};
use spine_core::tool::Projection;

use super::RunEntry;
use crate::live::{Exit, Snapshot};

/// The state fields of a run, with tails of at most `tail_bytes` per stream.
pub(crate) fn state(run: &RunEntry, tail_bytes: usize) -> Map<String, Value> {
    let snap = run.live.snapshot(tail_bytes);
    state_of(run, &snap)
}

fn state_of(run: &RunEntry, snap: &Snapshot) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("command_run_id".into(), json!(run.id));
    m.insert("command".into(), json!(run.command));
    m.insert("pty".into(), json!(run.live.is_pty()));
    m.insert("pid".into(), json!(run.live.pid()));
    m.insert("started_at".into(), json!(run.started_at));
    m.insert("status".into(), json!(Exit::status_word(snap.exit)));
    m.insert("exit_status".into(), json!(snap.exit.and_then(|e| e.code)));
    m.insert("signal".into(), json!(snap.exit.and_then(|e| e.signal)));
    m.insert("session_closed".into(), json!(snap.exit.is_some()));
    m.insert("stdout_tail".into(), json!(snap.stdout.text));
    m.insert("stderr_tail".into(), json!(snap.stderr.text));
    m.insert("stdout_bytes".into(), json!(snap.stdout.total_bytes));
    m.insert("stderr_bytes".into(), json!(snap.stderr.total_bytes));
    m.insert("truncated".into(), json!(snap.stdout.truncated || snap.stderr.truncated));
    m
}

/// A run in a list (and in the operator state): no output, only sizes.
pub(crate) fn summary(run: &RunEntry) -> Value {
    let exit = run.live.exit();
    let (stdout_bytes, stderr_bytes) = run.live.byte_counts();
    json!({
        "command_run_id": run.id,
        "command": run.command,
        "pty": run.live.is_pty(),
        "started_at": run.started_at,
        "status": Exit::status_word(exit),
        "exit_status": exit.and_then(|e| e.code),
        "stdout_bytes": stdout_bytes,
        "stderr_bytes": stderr_bytes,
    })
}

/// "Command exited with status 0 after streaming output." and the like, for a run that ended.
pub(crate) fn ended_headline(response: &Value) -> String {
    let streamed = response.get("output_streamed").and_then(Value::as_bool).unwrap_or(false);
    let printed = bytes(response, "stdout_bytes") + bytes(response, "stderr_bytes") > 0;
    let how = how_ended(response);
    let tail = match (streamed, printed) {
        (true, _) => " after streaming output.",
        (false, true) => ".",
        (false, false) => " with no output.",
    };
    format!("Command {how}{tail}")
}

/// "exited with status 0", "was killed by signal 9", "was terminated (signal 15)".
pub(crate) fn how_ended(response: &Value) -> String {
    match (response.get("exit_status").and_then(Value::as_i64), response.get("signal").and_then(Value::as_i64)) {
        (Some(code), _) => format!("exited with status {code}"),
        (None, Some(signal)) if str_field(response, "status") == "terminated" => {
            format!("was terminated (signal {signal})")
        }
        (None, Some(signal)) => format!("was killed by signal {signal}"),
        (None, None) => "ended without an exit status".to_owned(),
    }
}

/// Whether the response describes a run that ended.
pub(crate) fn ended(response: &Value) -> bool {
    response.get("session_closed").and_then(Value::as_bool).unwrap_or(false)
}

/// The narrative followed by the output tails, with the metadata of a per-run response.
pub(crate) fn render(headline: String, response: &Value) -> Projection {
    let body = output_text(response);
    let content = if body.is_empty() { headline } else { format!("{headline}\n{body}") };
    let mut p = Projection::plain(content);
    for key in
        ["exit_status", "command_run_id", "stdout_bytes", "stderr_bytes", "session_closed", "truncated", "status"]
    {
        p = p.with(key, response.get(key).cloned().unwrap_or(Value::Null));
    }
    p.with("output_streamed", response.get("output_streamed").and_then(Value::as_bool).unwrap_or(false))
}

/// Stdout's tail, then stderr's under `stderr:`; a cut tail says how much it shows.
pub(crate) fn output_text(response: &Value) -> String {
    let mut parts = Vec::new();
    let cut = response.get("truncated").and_then(Value::as_bool).unwrap_or(false);
    for (stream, label) in [("stdout", ""), ("stderr", "stderr:\n")] {
        let raw = str_field(response, &format!("{stream}_tail"));
        let tail = raw.trim_end_matches('\n');
        if tail.is_empty() {
            continue;
        }
        let total = bytes(response, &format!("{stream}_bytes"));
        let note = if cut && (raw.len() as u64) < total {
            format!("[last {} of {total} bytes]\n", raw.len())
        } else {
            String::new()
        };
        parts.push(format!("{label}{note}{tail}"));
    }
    parts.join("\n")
}

fn bytes(response: &Value, key: &str) -> u64 {
    response.get(key).and_then(Value::as_u64).unwrap_or(0)
}

fn str_field<'a>(response: &'a Value, key: &str) -> &'a str {
    response.get(key).and_then(Value::as_str).unwrap_or("")
}
