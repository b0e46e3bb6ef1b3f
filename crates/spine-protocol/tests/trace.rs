//! The trace format's wire names: each stage, decision outcome and record kind has one wire
//! name, and trace lines read back and write byte-identical.

// A test target links every dependency of its package; the lint checks the library's own list
// (see the workspace Cargo.toml).
#![allow(unused_crate_dependencies)]

use serde_json::{Value, json};
use spine_protocol::trace::{DecisionOutcome, StageName, TraceEntry, TraceRecord};

#[test]
fn stage_names_and_decision_outcomes_have_one_wire_name_each() {
    for stage in StageName::ALL {
        assert_eq!(serde_json::to_value(stage).ok(), Some(Value::from(stage.as_str())));
        assert_eq!(serde_json::from_value::<StageName>(Value::from(stage.as_str())).ok(), Some(stage));
        assert_eq!(stage.to_string(), stage.as_str());
    }
    for outcome in DecisionOutcome::ALL {
        assert_eq!(serde_json::to_value(outcome).ok(), Some(Value::from(outcome.as_str())));
        assert_eq!(serde_json::from_value::<DecisionOutcome>(Value::from(outcome.as_str())).ok(), Some(outcome));
        assert_eq!(outcome.to_string(), outcome.as_str());
    }
}

#[test]
fn each_record_kind_is_its_wire_tag_and_run_records_round_trip() {
    let lines = [
        r#"{"seq":0,"t_us":0,"kind":"run_start","session_id":"s1","model":"m","prompt":"hi","started_at":"2026-12-01T10:00:00.000Z"}"#,
        r#"{"seq":9,"t_us":900,"kind":"run_end","subtype":"success","num_turns":2}"#,
        r#"{"seq":5,"t_us":150,"kind":"tool_decision","tool_use_id":"c1","tool_name":"Bash","pre_tool_use":[],"post_tool_use":[],"outcome":"executed"}"#,
    ];
    for line in lines {
        let entry: TraceEntry = serde_json::from_str(line).expect(line);
        assert_eq!(serde_json::to_string(&entry).ok().as_deref(), Some(line));
        let value: Value = serde_json::from_str(line).expect(line);
        assert_eq!(value["kind"], entry.record.kind());
    }
}

#[test]
fn trace_lines_written_with_string_names_read_back_and_write_byte_identical() {
    let lines = [
        r#"{"seq":3,"t_us":120,"kind":"stage","hook":"execute","tool_use_id":"c1","duration_us":40,"tool_name":"calculator","ok":true}"#,
        r#"{"seq":4,"t_us":130,"kind":"stage","hook":"compact_context","duration_us":2,"compacted":false}"#,
        r#"{"seq":5,"t_us":140,"kind":"stage","hook":"elicitation","tool_use_id":"c1","duration_us":9,"server":"ev","mode":"form","action":"accept","answered_by":"user","fields":["name"]}"#,
        r#"{"seq":5,"t_us":150,"kind":"tool_decision","tool_use_id":"c1","tool_name":"Bash","pre_tool_use":[{"hook_id":"guard","decision":"block"}],"post_tool_use":[],"outcome":"blocked","error_code":"hook_blocked"}"#,
        r#"{"seq":6,"t_us":160,"kind":"tool_decision","tool_use_id":"c2","tool_name":"Read","pre_tool_use":[],"post_tool_use":[],"outcome":"post_hook_failed"}"#,
    ];
    for line in lines {
        let entry: TraceEntry = serde_json::from_str(line).expect(line);
        assert_eq!(serde_json::to_string(&entry).ok().as_deref(), Some(line));
    }
    let entry: TraceEntry = serde_json::from_str(lines[0]).expect("stage");
    let TraceRecord::Stage(stage) = entry.record else { panic!("a stage entry") };
    assert_eq!(stage.hook, StageName::Execute);
    let unknown = json!({"seq": 0, "t_us": 0, "kind": "stage", "hook": "no_such_stage", "duration_us": 0});
    assert!(serde_json::from_value::<TraceEntry>(unknown).is_err(), "stage names are a closed set");
}
