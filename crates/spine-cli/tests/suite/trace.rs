//! `--trace FILE` and `spine trace show`.

use serde_json::json;

use crate::support::*;

#[test]
fn trace_file_holds_one_entry_per_stage_and_a_decision_record_per_call() {
    let s = Sandbox::new();
    let script = s.script(json!([
        {"tool_calls": [
            {"id": "c1", "name": "calculator", "arguments": {"expression": "6*7"}},
            {"id": "c2", "name": "Write", "arguments": {"file_path": "x.txt", "content": "x"}}
        ]},
        {"text": "42"}
    ]));
    let trace = s.dir.path().join("trace.jsonl");
    let out = s.run(&script, &["--trace", trace.to_str().expect("utf8")]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let entries = spine_testkit::files::read_jsonl(&trace);
    let decisions: Vec<(&str, &str)> = entries
        .iter()
        .filter(|e| e["kind"] == "tool_decision")
        .map(|e| (e["tool_use_id"].as_str().unwrap_or(""), e["outcome"].as_str().unwrap_or("")))
        .collect();
    assert_eq!(decisions, vec![("c1", "executed"), ("c2", "denied")]);
    let c2 = entries.iter().find(|e| e["kind"] == "tool_decision" && e["tool_use_id"] == "c2").expect("c2");
    assert_eq!(c2["permission"]["behavior"], "deny");
    assert_eq!(c2["permission"]["source"]["type"], "approver");
    assert!(entries.iter().all(|e| e["seq"].is_u64() && e["t_us"].is_u64()));

    let shown = s.spine().args(["trace", "show", trace.to_str().expect("utf8")]).output().expect("runs");
    let text = stdout(&shown);
    assert!(text.contains("tool call c2 Write"), "{text}");
    assert!(text.contains("decision: denied [permission_denied]"), "{text}");
    assert!(text.contains("stage prepare_turn"), "{text}");
}
