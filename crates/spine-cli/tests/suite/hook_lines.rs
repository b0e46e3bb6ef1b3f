//! `--include-hook-events` prints Claude Code's hook lines in stream-json (`hook_started`,
//! `hook_response`), compared with what Claude Code 2.1.328 printed for the same hooks
//! (`tests/fixtures/claude-code-2.1.328/stream-json-hook-events.jsonl`), and hook inputs carry
//! the run's `effort`.

use serde_json::{Value, json};

use crate::support::*;

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/claude-code-2.1.328");

fn hook_lines(lines: &[Value]) -> Vec<&Value> {
    lines
        .iter()
        .filter(|l| l["type"] == "system" && l["subtype"].as_str().is_some_and(|s| s.starts_with("hook_")))
        .collect()
}

fn keys(v: &Value) -> Vec<String> {
    let mut k: Vec<String> = v.as_object().map(|o| o.keys().cloned().collect()).unwrap_or_default();
    k.sort();
    k
}

/// What a hook line says, without its ids.
fn gist(l: &Value) -> Value {
    json!([
        l["subtype"],
        l["hook_name"],
        l["hook_event"],
        l["outcome"],
        l["exit_code"],
        l["stdout"],
        l["stderr"],
        l["output"]
    ])
}

#[test]
fn include_hook_events_prints_claude_codes_hook_started_and_hook_response_lines() {
    let text = std::fs::read_to_string(format!("{FIXTURES}/stream-json-hook-events.jsonl")).expect("fixture");
    let reference: Vec<Value> = text.lines().map(|l| serde_json::from_str(l).expect("json")).collect();
    let reference = hook_lines(&reference);
    let s = Sandbox::new();
    // The hooks of the recording (record.py's STREAM_SETTINGS).
    let settings = json!({
        "permissions": {"allow": ["Bash"]},
        "hooks": {
            "PreToolUse": [{"matcher": "Bash", "hooks": [
                {"type": "command", "command": "echo pre-out; echo pre-err >&2"},
                {"type": "command", "command": "echo failing >&2; exit 1"}]}],
            "Stop": [{"hooks": [{"type": "command", "command": "echo '{\"systemMessage\": \"stop says hi\"}'"}]}]
        }
    });
    let script = s.script(json!([
        {"tool_calls": [{"id": "c1", "name": "Bash", "arguments": {"command": "echo hi"}}]},
        {"text": "Done."}
    ]));
    let out = s.run(
        &script,
        &["--settings", &settings.to_string(), "--output-format", "stream-json", "--include-hook-events"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let lines: Vec<Value> = stdout(&out).lines().map(|l| serde_json::from_str(l).expect("json line")).collect();
    assert!(lines.iter().all(|l| l["type"] != "hook"), "spine's old `hook` lines are gone");
    let ours = hook_lines(&lines);
    assert_eq!(ours.len(), reference.len(), "{ours:#?}");
    for (line, recorded) in ours.iter().zip(&reference) {
        let mut expected = keys(recorded);
        expected.push("spine_hook_id".into());
        expected.sort();
        assert_eq!(keys(line), expected, "{line}");
        assert_eq!(line["session_id"], lines[0]["session_id"]);
    }
    // The started lines come in order; the two PreToolUse hooks run concurrently, so their
    // responses may come in either order (as in Claude Code).
    let mut got: Vec<Value> = ours.iter().map(|l| gist(l)).collect();
    let mut want: Vec<Value> = reference.iter().map(|l| gist(l)).collect();
    got[2..4].sort_by_key(|v| v.to_string());
    want[2..4].sort_by_key(|v| v.to_string());
    assert_eq!(got, want);
    // Each response names the firing its started line announced.
    for response in ours.iter().filter(|l| l["subtype"] == "hook_response") {
        let started = ours.iter().filter(|l| l["subtype"] == "hook_started" && l["hook_id"] == response["hook_id"]);
        assert_eq!(started.count(), 1, "{response}");
    }
}

#[test]
fn every_hook_input_carries_the_effort_set_for_the_run_and_none_without_one() {
    for (options, effort) in [(json!({"reasoning_effort": "high"}), json!({"level": "high"})), (json!({}), Value::Null)]
    {
        let s = Sandbox::new();
        let log = s.dir.path().join("inputs.jsonl");
        let record = json!({"type": "command", "command": format!("cat >> {0}; echo >> {0}", log.display())});
        let settings = json!({
            "model_options": options,
            "permissions": {"allow": ["Bash"]},
            "hooks": {
                "UserPromptSubmit": [{"hooks": [record]}],
                "PreToolUse": [{"matcher": "*", "hooks": [record]}],
                "Stop": [{"hooks": [record]}]
            }
        });
        let out = s.run(&s.script(bash_then_answer("echo hi")), &["--settings", &settings.to_string()]);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        let inputs: Vec<Value> = std::fs::read_to_string(&log)
            .expect("log")
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| serde_json::from_str(l).expect("json"))
            .collect();
        assert_eq!(inputs.len(), 3);
        for input in &inputs {
            assert_eq!(input.get("effort").cloned().unwrap_or(Value::Null), effort, "{input}");
        }
    }
}
