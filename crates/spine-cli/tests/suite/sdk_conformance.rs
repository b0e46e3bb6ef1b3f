//! The same SDK session against spine and against Claude Code gives the same messages, modulo
//! ids and timings: each recorded Python SDK session of `tests/fixtures/claude-code-2.1.328/sdk`
//! (`oneshot`, `can_use_tool`, `hooks`, `sdk_mcp`, `modes`, `interrupt_pending`, `partial`) is
//! replayed to the spine binary — the host's recorded lines written at the same points, spine's
//! requests answered as the host answered Claude Code's ([`replay`]), launched with the
//! recording's argv and `CLAUDE_*` environment (`CLAUDE_CODE_SDK_READS_SESSION_STATE=1`), the
//! model a `scripted:` file making the fake model's decisions (`model-requests.json`: the same
//! tool calls, with the same ids and inputs, and the same texts) — and spine's stdout is
//! compared with Claude Code's ([`compare`]): the same sequence of line kinds, Claude Code's keys
//! on every line unless `src/render/stream_json/left_out.rs` lists them, the same non-volatile
//! values, the same exit status. What is normalised away is listed in docs/sdk.md ("What differs
//! from Claude Code").
//!
//! The `subagent` scenarios are left out (Claude Code backgrounds the `Agent` call under the
//! SDKs, spine runs it in the foreground: documented), as are `interrupt` (its timing is a
//! sleeping Bash call) and the raw scenarios (`sdk_protocol` covers them).

mod compare;
#[path = "../../src/render/stream_json/left_out.rs"]
pub(crate) mod left_out;
mod replay;

use std::path::PathBuf;

use serde_json::{Value, json};

use crate::support::Sandbox;
use compare::compare;
use replay::{Recording, replay, text};

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/claude-code-2.1.328/sdk");

fn fixture(name: &str) -> Value {
    let path = format!("{FIXTURES}/{name}");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn recording(scenario: &str) -> Recording {
    Recording::load(&PathBuf::from(format!("{FIXTURES}/{scenario}.jsonl")))
}

/// `value` with `from` replaced by `to` in every string.
fn replaced(value: &Value, from: &str, to: &str) -> Value {
    serde_json::from_str(&value.to_string().replace(from, to)).expect("still JSON")
}

/// The fake model's answer as a scripted-model turn: a tool call keeps its id, name and input
/// (the recording's paths made this project's), a text its text.
fn turn(answer: &Value, project: &str) -> Value {
    let blocks = answer.as_array().cloned().unwrap_or_default();
    let calls: Vec<Value> = blocks
        .iter()
        .filter(|b| b["type"] == "tool_use")
        .map(|b| {
            let arguments = replaced(&b["input"], "/PROJECT", project);
            json!({"id": b["id"], "name": b["name"], "arguments": arguments})
        })
        .collect();
    let text: String = blocks.iter().filter_map(|b| b["text"].as_str()).collect();
    let mut turn = json!({});
    if !calls.is_empty() {
        turn["tool_calls"] = json!(calls);
    }
    if !text.is_empty() {
        turn["text"] = json!(text);
    }
    turn
}

/// The fake model's answers of `scenario` as scripted-model files, one per model it answered
/// as, in order of first use.
fn scripts(s: &Sandbox, scenario: &str, project: &str) -> Vec<PathBuf> {
    let requests = fixture("model-requests.json")[scenario].as_array().cloned().expect("the scenario's requests");
    let mut models: Vec<&str> = Vec::new();
    for request in &requests {
        let model = request["model"].as_str().unwrap_or_default();
        if !models.contains(&model) {
            models.push(model);
        }
    }
    models
        .iter()
        .enumerate()
        .map(|(i, model)| {
            let turns: Vec<Value> =
                requests.iter().filter(|r| r["model"] == *model).map(|r| turn(&r["answer"], project)).collect();
            let path = s.dir.path().join(format!("model-{i}.json"));
            spine_testkit::script::write_script_file(&path, json!(turns)).expect("script");
            path
        })
        .collect()
}

/// Replays `scenario` to spine and compares what it printed with Claude Code's lines.
fn conforms(scenario: &str) {
    let s = Sandbox::new();
    let project = s.project().display().to_string();
    let recording = recording(scenario);
    let models = scripts(&s, scenario, &project);
    let launch = &fixture("launch.json")[scenario];
    let mut spine = s.spine_process();
    spine.env_remove("CLAUDECODE");
    for arg in launch["argv"].as_array().into_iter().flatten() {
        spine.arg(arg.as_str().expect("an argument"));
    }
    spine.arg("--model").arg(format!("scripted:{}", models[0].display()));
    for (name, value) in launch["env"].as_object().into_iter().flatten().filter(|(k, _)| k.starts_with("CLAUDE_")) {
        spine.env(name, value.as_str().expect("a value"));
    }
    assert_eq!(launch["env"]["CLAUDE_CODE_SDK_READS_SESSION_STATE"], "1", "as the SDKs set it");
    // The recording's paths are here; a `set_model` names the next scripted model (model specs
    // are spine's).
    let switches = std::cell::Cell::new(0);
    let adapt = |line: &Value| {
        let mut line = replaced(line, "/PROJECT", &project);
        if line["request"]["subtype"] == "set_model" {
            switches.set(switches.get() + 1);
            let next = models.get(switches.get()).expect("a model for each set_model");
            line["request"]["model"] = json!(format!("scripted:{}", next.display()));
        }
        line
    };
    let run = replay(&recording, spine, &adapt);
    let home = s.dir.path().display().to_string();
    let ours: Vec<Value> =
        run.lines.iter().map(|l| replaced(&replaced(l, &project, "/PROJECT"), &home, "/HOME")).collect();
    if let Err(differences) = compare(&recording.out(), &ours, &recording.host_requests()) {
        panic!(
            "{scenario}: spine's lines differ from Claude Code's:\n{differences}\n\nspine printed:\n{}",
            text(&ours)
        );
    }
    assert_eq!(run.exit, recording.exit(), "{scenario}: the exit status");
}

#[test]
fn a_one_shot_query_prints_claude_codes_lines() {
    conforms("oneshot");
}

#[test]
fn can_use_tool_allow_and_deny_print_claude_codes_lines() {
    conforms("can_use_tool");
}

#[test]
fn hook_callbacks_print_claude_codes_lines() {
    conforms("hooks");
}

#[test]
fn an_sdk_mcp_server_session_prints_claude_codes_lines() {
    conforms("sdk_mcp");
}

#[test]
fn set_permission_mode_and_set_model_between_turns_print_claude_codes_lines() {
    conforms("modes");
}

#[test]
fn an_interrupt_with_a_pending_question_prints_claude_codes_lines() {
    conforms("interrupt_pending");
}

#[test]
fn partial_messages_print_claude_codes_lines() {
    conforms("partial");
}

#[test]
fn the_comparison_names_the_line_and_the_key_that_differ() {
    let recording = recording("can_use_tool");
    let (cc, requests) = (recording.out(), recording.host_requests());
    assert_eq!(compare(&cc, &cc, &requests), Ok(()), "a recording is its own match");
    let at = |kind: &str| cc.iter().position(|l| l["type"] == kind).expect(kind);
    let (result, assistant) = (at("result"), at("assistant"));
    let mut ours = cc.clone();
    ours[result].as_object_mut().expect("result").remove("permission_denials");
    ours[assistant]["message"]["content"][0]["input"]["command"] = json!("rm -rf /");
    let differences = compare(&cc, &ours, &requests).expect_err("a key is missing and a value changed");
    assert!(
        differences.contains(&format!("spine's line {result} (result)"))
            && differences.contains("spine lacks `permission_denials`"),
        "{differences}"
    );
    assert!(
        differences.contains(&format!("spine's line {assistant} (assistant:tool_use)"))
            && differences.contains("`message.content`"),
        "{differences}"
    );
    ours.remove(assistant);
    let differences = compare(&cc, &ours, &requests).expect_err("a line is missing");
    assert!(differences.starts_with("the sequences of lines differ"), "{differences}");
}
