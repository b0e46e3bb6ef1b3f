//! Session transcripts in Claude Code's JSONL, through the `spine` binary: the line shapes
//! (anchored to Claude Code 2.1.197's own transcript in `fixtures/`), one folder per project,
//! a Stop hook written for Claude Code reading the last assistant message from
//! `transcript_path`, `--resume` of a transcript Claude Code wrote, and `spine hooks test`
//! giving hooks a real transcript.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::support::*;

/// The kind of Stop hook Claude Code users write: find the last assistant line in
/// `transcript_path`, join its text blocks, and (here) save them and the tool names it saw.
const LAST_MESSAGE_HOOK: &str = r#"import json, sys
event = json.load(sys.stdin)
last, tools = None, []
with open(event["transcript_path"]) as f:
    for line in f:
        entry = json.loads(line)
        if entry.get("type") != "assistant":
            continue
        content = entry["message"]["content"]
        texts = [b["text"] for b in content if b.get("type") == "text"]
        tools += [b["name"] for b in content if b.get("type") == "tool_use"]
        if texts:
            last = "\n".join(texts)
with open(sys.argv[1], "w") as out:
    json.dump({"last": last, "tools": tools}, out)
"#;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/claude-code-2.1.197").join(name)
}

fn read_lines(path: &Path) -> Vec<Value> {
    spine_testkit::files::read_jsonl(path)
}

/// Settings with the last-message hook on `event`, writing to `out`.
fn hook_settings(s: &Sandbox, event: &str, out: &Path) -> String {
    let hook = s.write("hooks/last_message.py", LAST_MESSAGE_HOOK);
    let command = format!("/usr/bin/python3 {} {}", hook.display(), out.display());
    json!({"hooks": {event: [{"hooks": [{"type": "command", "command": command}]}]}}).to_string()
}

fn read_then_answer(s: &Sandbox) -> PathBuf {
    s.write("README.md", "hello\n");
    s.script(json!([
        {"text": "Let me look.", "tool_calls": [{"id": "c1", "name": "Read", "arguments": {"file_path": "README.md"}}]},
        {"text": "The README says hello."}
    ]))
}

#[test]
fn a_stop_hook_reads_the_last_assistant_message_from_transcript_path() {
    let s = Sandbox::new();
    let out_file = s.dir.path().join("stop.json");
    let settings = hook_settings(&s, "Stop", &out_file);
    let out = s.run(&read_then_answer(&s), &["--settings", &settings]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let seen: Value = serde_json::from_str(&std::fs::read_to_string(&out_file).expect("the hook ran")).expect("json");
    assert_eq!(seen, json!({"last": "The README says hello.", "tools": ["Read"]}));
}

#[test]
fn transcript_lines_have_claude_codes_fields_in_one_folder_per_project() {
    let s = Sandbox::new();
    let out = s.run(&read_then_answer(&s), &["--output-format", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let id = json(&out)["session_id"].as_str().expect("id").to_owned();

    let project = s.project().canonicalize().expect("project");
    let folder: String =
        project.to_string_lossy().chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '-' }).collect();
    let path = s.home().join("projects").join(folder).join(format!("{id}.jsonl"));
    assert!(path.is_file(), "transcript at {}: {:?}", path.display(), s.session_files());

    let reference = read_lines(&fixture("transcript.jsonl"));
    let keys =
        |v: &Value| -> BTreeSet<String> { v.as_object().map(|o| o.keys().cloned().collect()).unwrap_or_default() };
    let lines = read_lines(&path);
    let envelope: BTreeSet<String> =
        ["parentUuid", "isSidechain", "type", "uuid", "timestamp", "userType", "cwd", "sessionId", "version"]
            .map(String::from)
            .into();
    for kind in ["user", "assistant"] {
        let theirs = reference.iter().find(|l| l["type"] == kind).expect("reference line");
        assert!(envelope.is_subset(&keys(theirs)), "the envelope is Claude Code's");
        let ours = lines.iter().find(|l| l["type"] == kind).expect("our line");
        assert!(envelope.is_subset(&keys(ours)), "{kind}: {ours}");
        assert!(keys(&theirs["message"]).is_subset(&keys(&ours["message"])), "{kind} message: {ours}");
    }
    let result_theirs =
        reference.iter().find(|l| l["type"] == "user" && l["message"]["content"].is_array()).expect("tool result");
    let result_ours =
        lines.iter().find(|l| l["type"] == "user" && l["message"]["content"].is_array()).expect("tool result");
    assert_eq!(keys(&result_theirs["message"]["content"][0]), keys(&result_ours["message"]["content"][0]));
    assert!(result_ours["sourceToolAssistantUUID"].is_string());

    let mut parent = Value::Null;
    for line in &lines {
        assert_eq!(line["sessionId"], id.as_str());
        assert_eq!(line["cwd"], project.to_string_lossy().as_ref());
        assert_eq!(line["parentUuid"], parent);
        parent = line["uuid"].clone();
    }
    let texts: Vec<&str> = lines
        .iter()
        .filter(|l| l["type"] == "assistant")
        .flat_map(|l| l["message"]["content"].as_array().into_iter().flatten())
        .filter_map(|b| b["text"].as_str())
        .collect();
    assert_eq!(texts, ["Let me look.", "The README says hello."]);
}

#[test]
fn continue_finds_the_projects_latest_session_in_its_folder() {
    let s = Sandbox::new();
    let script = s.script(json!([{"text": "one"}, {"text": "two"}]));
    let first = s.run(&script, &["--output-format", "json"]);
    let id = json(&first)["session_id"].as_str().expect("id").to_owned();
    let again = s
        .spine()
        .args(["-p", "more", "-c", "--model", &format!("scripted:{}", script.display())])
        .args(["--output-format", "json", "--include-messages"])
        .output()
        .expect("runs");
    assert_eq!(again.status.code(), Some(0), "{}", stderr(&again));
    let v = json(&again);
    assert_eq!(v["session_id"], id.as_str());
    let users: Vec<&str> = v["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .filter(|m| m["role"] == "user")
        .filter_map(|m| m["content"].as_str())
        .collect();
    assert_eq!(users, ["go", "more"]);
    assert_eq!(s.session_files().len(), 1, "one transcript, continued: {:?}", s.session_files());
}

#[test]
fn a_transcript_claude_code_wrote_can_be_resumed() {
    let s = Sandbox::new();
    let id = "28c780ba-b567-4169-93b9-a99433b19c2f";
    let project = s.project().canonicalize().expect("project");
    let folder: String =
        project.to_string_lossy().chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '-' }).collect();
    let dir = s.home().join("projects").join(folder);
    std::fs::create_dir_all(&dir).expect("dir");
    // Recorded in another directory: the session is this project's.
    let text = std::fs::read_to_string(fixture("transcript.jsonl")).expect("fixture");
    let text = text.replace("/tmp/ccrec/proj", &project.to_string_lossy());
    std::fs::write(dir.join(format!("{id}.jsonl")), text).expect("write");
    let script = s.script(json!([{"text": "Continuing."}]));
    let out = s
        .spine()
        .args(["-p", "and now?", "--resume", id, "--model", &format!("scripted:{}", script.display())])
        .args(["--output-format", "json", "--include-messages"])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v = json(&out);
    let roles: Vec<&str> =
        v["messages"].as_array().expect("messages").iter().map(|m| m["role"].as_str().unwrap_or("")).collect();
    assert_eq!(roles, ["system", "user", "assistant", "tool", "assistant", "user", "assistant"]);
    assert_eq!(v["messages"][1]["content"], "Say hi with a command");
    assert_eq!(v["messages"][3]["content"], "hi");
    assert_eq!(v["result"], "Continuing.");
}

#[test]
fn hooks_test_gives_hooks_a_transcript_with_the_turn_the_event_follows() {
    let s = Sandbox::new();
    let out_file = s.dir.path().join("seen.json");
    let settings = hook_settings(&s, "Stop", &out_file);
    let out = s
        .spine()
        .args([
            "hooks",
            "test",
            "Stop",
            "--settings",
            &settings,
            "--input",
            r#"{"last_assistant_message": "All green."}"#,
        ])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let seen: Value = serde_json::from_str(&std::fs::read_to_string(&out_file).expect("the hook ran")).expect("json");
    assert_eq!(seen, json!({"last": "All green.", "tools": []}));

    let settings = hook_settings(&s, "PreToolUse", &out_file);
    let out = s
        .spine()
        .args(["hooks", "test", "PreToolUse", "--tool", "Bash", "--settings", &settings])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let seen: Value = serde_json::from_str(&std::fs::read_to_string(&out_file).expect("the hook ran")).expect("json");
    assert_eq!(seen, json!({"last": null, "tools": ["Bash"]}), "the model turn that made the call");
}

#[test]
fn hooks_test_transcript_passes_a_real_sessions_file() {
    let s = Sandbox::new();
    let out_file = s.dir.path().join("seen.json");
    let settings = hook_settings(&s, "Stop", &out_file);
    let run = s.run(&read_then_answer(&s), &["--output-format", "json"]);
    let id = json(&run)["session_id"].as_str().expect("id").to_owned();
    let transcript = s.session_file(&id, "jsonl").expect("transcript");
    let out = s
        .spine()
        .args(["hooks", "test", "Stop", "--settings", &settings, "--transcript"])
        .arg(&transcript)
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let seen: Value = serde_json::from_str(&std::fs::read_to_string(&out_file).expect("the hook ran")).expect("json");
    assert_eq!(seen, json!({"last": "The README says hello.", "tools": ["Read"]}));

    let missing = s.spine().args(["hooks", "test", "Stop", "--transcript", "nope.jsonl"]).output().expect("runs");
    assert_eq!(missing.status.code(), Some(2));
    assert!(stderr(&missing).contains("--transcript nope.jsonl: no such file"), "{}", stderr(&missing));
}
