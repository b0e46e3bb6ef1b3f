//! The shapes of process responses and their projection.
//!
//! Per-process responses share [`state`]: `process_run_id`, `name`, `command`, `port`, `pid`,
//! `started_at`, `status` (`running`, `exited`, `killed`, `terminated`), `exit_status`,
//! `signal`, `stdout_tail`, `stderr_tail`, `stdout_bytes`, `stderr_bytes`, `truncated`.
//! Projections keep sizes, ids and the port in metadata, never output.

use serde_json::{Map, Value, json};
use spine_core::tool::Projection;

use super::ProcessEntry;
use crate::command_runs::project_output;
use crate::live::Exit;

/// The state fields of a process, with tails of at most `tail_bytes` per stream.
pub(crate) fn state(entry: &ProcessEntry, tail_bytes: usize) -> Map<String, Value> {
    let snap = entry.live.snapshot(tail_bytes);
    let mut m = Map::new();
    m.insert("process_run_id".into(), json!(entry.id));
    m.insert("name".into(), json!(entry.meta.name));
    m.insert("command".into(), json!(entry.command));
    m.insert("port".into(), json!(entry.meta.port));
    m.insert("pid".into(), json!(entry.live.pid()));
    m.insert("started_at".into(), json!(entry.started_at));
    m.insert("status".into(), json!(Exit::status_word(snap.exit)));
    m.insert("exit_status".into(), json!(snap.exit.and_then(|e| e.code)));
    m.insert("signal".into(), json!(snap.exit.and_then(|e| e.signal)));
    m.insert("stdout_tail".into(), json!(snap.stdout.text));
    m.insert("stderr_tail".into(), json!(snap.stderr.text));
    m.insert("stdout_bytes".into(), json!(snap.stdout.total_bytes));
    m.insert("stderr_bytes".into(), json!(snap.stderr.total_bytes));
    m.insert("truncated".into(), json!(snap.stdout.truncated || snap.stderr.truncated));
    m
}

/// A process in a list (and in the operator state): no output, only sizes.
pub(crate) fn summary(entry: &ProcessEntry) -> Value {
    let exit = entry.live.exit();
    let (stdout_bytes, stderr_bytes) = entry.live.byte_counts();
    json!({
        "process_run_id": entry.id,
        "name": entry.meta.name,
        "command": entry.command,
        "port": entry.meta.port,
        "pid": entry.live.pid(),
        "started_at": entry.started_at,
        "status": Exit::status_word(exit),
        "exit_status": exit.and_then(|e| e.code),
        "stdout_bytes": stdout_bytes,
        "stderr_bytes": stderr_bytes,
    })
}

/// "exited with status 1" / "was killed by signal 9" for a response that ended.
pub(crate) fn ending(response: &Value) -> String {
    match (response.get("exit_status").and_then(Value::as_i64), response.get("signal").and_then(Value::as_i64)) {
        (Some(code), _) => format!("exited with status {code}"),
        (None, Some(signal)) => format!("was killed by signal {signal}"),
        (None, None) => "ended".to_owned(),
    }
}

/// The narrative, then the output tails, with the machine-readable fields as metadata.
pub(crate) fn render(headline: String, response: &Value) -> Projection {
    let body = project_output(response);
    let content = if body.is_empty() { headline } else { format!("{headline}\n{body}") };
    let mut p = Projection::plain(content);
    for key in
        ["process_run_id", "name", "port", "pid", "status", "exit_status", "stdout_bytes", "stderr_bytes", "truncated"]
    {
        p = p.with(key, response.get(key).cloned().unwrap_or(Value::Null));
    }
    p
}
