//! What PreToolUse and PostToolUse command hooks receive for the built-in tools, through
//! `spine run`, compared with Claude Code 2.1.328's recordings
//! (`tests/fixtures/claude-code-2.1.328/tool-response-<Tool>.json`): spine's `tool_response`
//! has the recorded keys, recursively, each with the same JSON type (values differ: paths,
//! durations), plus only the fields spine adds on purpose; `tool_input` has the recorded
//! top-level keys. The project and the model's calls are the recording's.

use std::collections::BTreeSet;

use serde_json::{Value, json};

use crate::support::*;

/// The recordings, read at test time.
const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/claude-code-2.1.328");

/// The recording's `/PROJECT` placeholder.
const RECORDED_PROJECT: &str = "/PROJECT";

/// A recording: `{pre, post}`.
fn recording(name: &str) -> Value {
    let path = format!("{FIXTURES}/tool-response-{name}.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The recording's project: the files `record.py` writes.
fn recorded_project(s: &Sandbox) {
    s.write("notes.txt", "hello world\nsecond line\n");
    s.write("edit-me.txt", "alpha beta gamma\n");
    s.write("src/main.rs", "fn main() {\n    println!(\"hi\");\n}\n");
}

/// `value` with the recording's project path replaced by the sandbox's.
fn in_sandbox(s: &Sandbox, value: &Value) -> Value {
    let project = s.project().display().to_string();
    match value {
        Value::String(text) => Value::String(text.replace(RECORDED_PROJECT, &project)),
        Value::Object(map) => Value::Object(map.iter().map(|(k, v)| (k.clone(), in_sandbox(s, v))).collect()),
        other => other.clone(),
    }
}

/// Runs the recorded call (the recording's `tool_input` without the defaults Claude Code
/// filled in, as the model sent it) with PreToolUse and PostToolUse hooks (matcher `*`) that
/// append their stdin to a log; returns the recording and spine's pre and post inputs.
fn run_recorded(name: &str, filled_defaults: &[&str]) -> (Value, Value, Value) {
    let recorded = recording(name);
    let s = Sandbox::new();
    recorded_project(&s);
    let log = s.dir.path().join("hooks.jsonl");
    let record = format!("cat >> {0}; echo >> {0}", shell_quote(&log.to_string_lossy()));
    let group = json!([{"matcher": "*", "hooks": [{"type": "command", "command": record}]}]);
    let settings = json!({
        "permissions": {"allow": ["Bash", "Read", "Write", "Edit", "Glob", "Grep"]},
        "hooks": {"PreToolUse": group, "PostToolUse": group},
    });
    let mut arguments = in_sandbox(&s, &recorded["pre"]["tool_input"]);
    if let Some(map) = arguments.as_object_mut() {
        for key in filled_defaults {
            map.remove(*key);
        }
    }
    let tool = recorded["pre"]["tool_name"].as_str().expect("tool_name").to_owned();
    let script = s.script(json!([
        {"tool_calls": [{"id": "call_1", "name": tool, "arguments": arguments}]},
        {"text": "done"}
    ]));
    let out = s.run(&script, &["--settings", &settings.to_string(), "--output-format", "json", "--include-messages"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(!first_tool_result(&json(&out)).starts_with("Error"), "{}", first_tool_result(&json(&out)));
    let text = std::fs::read_to_string(&log).unwrap_or_else(|e| panic!("no hook log ({e}): {}", stderr(&out)));
    let events = spine_testkit::files::parse_json_lines(&text);
    let event = |name: &str| {
        events
            .iter()
            .find(|e| e["hook_event_name"] == name)
            .cloned()
            .unwrap_or_else(|| panic!("no {name} input in {events:?}"))
    };
    (recorded, event("PreToolUse"), event("PostToolUse"))
}

/// The JSON type of a value.
fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// Where `ours` differs in shape from `theirs`: a key missing or of another JSON type,
/// recursively; an array's items are compared with the recording's first. Keys of ours the
/// recording lacks are listed in `extra` (with their path).
fn shape_differences(at: &str, ours: &Value, theirs: &Value, extra: &mut BTreeSet<String>) -> Vec<String> {
    if kind(ours) != kind(theirs) {
        return vec![format!("{at}: {} where Claude Code has {} ({theirs})", kind(ours), kind(theirs))];
    }
    match (ours, theirs) {
        (Value::Object(o), Value::Object(t)) => {
            let mut differences = Vec::new();
            for (key, their_value) in t {
                let path = format!("{at}.{key}");
                match o.get(key) {
                    Some(our_value) => differences.extend(shape_differences(&path, our_value, their_value, extra)),
                    None => differences.push(format!("{path}: missing")),
                }
            }
            extra.extend(o.keys().filter(|k| !t.contains_key(*k)).map(|k| format!("{at}.{k}")));
            differences
        }
        (Value::Array(o), Value::Array(t)) => match t.first() {
            Some(first) => o
                .iter()
                .enumerate()
                .flat_map(|(i, item)| shape_differences(&format!("{at}[{i}]"), item, first, extra))
                .collect(),
            None => Vec::new(),
        },
        _ => Vec::new(),
    }
}

/// Runs the recorded call and checks spine's inputs against the recording: `tool_response`
/// of the same shape plus exactly `spine_extras` (paths like `.exit_code`), and `tool_input`
/// with the recorded keys.
fn assert_like_claude_code(name: &str, filled_defaults: &[&str], spine_extras: &[&str]) -> Value {
    let (recorded, pre, post) = run_recorded(name, filled_defaults);
    let theirs = &recorded["post"]["tool_response"];
    let ours = &post["tool_response"];
    let mut extra = BTreeSet::new();
    let differences = shape_differences("", ours, theirs, &mut extra);
    assert!(differences.is_empty(), "{name}: {differences:#?}\nspine: {ours:#}\nClaude Code: {theirs:#}");
    let expected: BTreeSet<String> = spine_extras.iter().map(|k| (*k).to_owned()).collect();
    assert_eq!(extra, expected, "{name}: the fields spine adds to Claude Code's\nspine: {ours:#}");

    let keys = |v: &Value| v.as_object().map(|m| m.keys().cloned().collect::<BTreeSet<_>>()).unwrap_or_default();
    for (ours, event) in [(&pre, "pre"), (&post, "post")] {
        assert_eq!(ours["tool_name"], recorded[event]["tool_name"], "{name} {event}");
        assert_eq!(
            keys(&ours["tool_input"]),
            keys(&recorded[event]["tool_input"]),
            "{name} {event}: tool_input {:#}",
            ours["tool_input"]
        );
    }
    post
}

#[test]
fn bash_tool_response_has_claude_codes_fields_plus_the_exit_code() {
    let post = assert_like_claude_code("Bash", &[], &[".exit_code"]);
    assert_eq!(post["tool_response"]["stdout"], "hi");
    assert_eq!(post["tool_response"]["exit_code"], 0);
}

#[test]
fn read_tool_response_has_claude_codes_text_shape() {
    let post = assert_like_claude_code("Read", &[], &[]);
    assert_eq!(post["tool_response"]["type"], "text");
}

#[test]
fn write_tool_response_of_a_new_file_has_claude_codes_shape() {
    let post = assert_like_claude_code("Write", &[], &[]);
    assert_eq!(post["tool_response"]["type"], "create");
    assert_eq!(post["tool_response"]["structuredPatch"], json!([]));
}

#[test]
fn edit_tool_response_has_claude_codes_structured_patch_and_input_defaults() {
    // The model sends no `replace_all`; hooks see it as `false`, as in Claude Code.
    let post = assert_like_claude_code("Edit", &["replace_all"], &[".replacements"]);
    let recorded = recording("Edit");
    assert_eq!(post["tool_input"]["replace_all"], false);
    assert_eq!(
        post["tool_response"]["structuredPatch"], recorded["post"]["tool_response"]["structuredPatch"],
        "a one-line file: the same hunk, value for value"
    );
    assert_eq!(post["tool_response"]["originalFile"], recorded["post"]["tool_response"]["originalFile"]);
}

#[test]
fn glob_tool_response_has_claude_codes_fields_and_relative_names() {
    let post = assert_like_claude_code("Glob", &[], &[".cwd"]);
    let mut names: Vec<&str> =
        post["tool_response"]["filenames"].as_array().expect("filenames").iter().filter_map(Value::as_str).collect();
    names.sort_unstable();
    assert_eq!(names, ["edit-me.txt", "notes.txt"], "relative to the working directory, as recorded");
}

#[test]
fn grep_tool_response_has_claude_codes_files_with_matches_shape() {
    let post = assert_like_claude_code("Grep", &[], &[".cwd"]);
    assert_eq!(post["tool_response"]["filenames"], json!(["notes.txt"]));
}

#[test]
fn grep_content_tool_response_has_claude_codes_content_shape() {
    let post = assert_like_claude_code("Grep-content", &[], &[".cwd"]);
    assert_eq!(post["tool_response"]["mode"], "content");
    assert!(post["tool_response"]["content"].as_str().is_some_and(|c| c.ends_with("notes.txt:1:hello world")));
}
