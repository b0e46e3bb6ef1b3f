//! Subagents through the binary: agent definitions in `.claude/agents/`, each naming its own
//! scripted model (`model: scripted:FILE`), started by the parent's `Agent` calls (a `Task`
//! call, the tool's former name, is in `agent_tool.rs`).

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::support::*;

/// Writes `.claude/agents/<name>.md` whose model is a script of `turns`; returns the script.
fn agent(s: &Sandbox, name: &str, front: &str, turns: Value) -> PathBuf {
    let script = s.dir.path().join(format!("child-{name}.json"));
    spine_testkit::script::write_script_file(&script, turns).expect("child script");
    s.write(
        &format!(".claude/agents/{name}.md"),
        &format!(
            "---\nname: {name}\ndescription: the {name} agent\nmodel: scripted:{}\n{front}---\nYou are {name}.\n",
            script.display()
        ),
    );
    script
}

fn agent_call(id: &str, agent_type: &str, prompt: &str) -> Value {
    json!({"id": id, "name": "Agent", "arguments": {"description": "a task", "prompt": prompt, "subagent_type": agent_type}})
}

/// Every file under `dir`, recursively.
fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else { return out };
    for entry in entries.filter_map(Result::ok) {
        let path = entry.path();
        if path.is_dir() {
            out.extend(files_under(&path));
        } else {
            out.push(path);
        }
    }
    out
}

fn subagent_transcripts(s: &Sandbox) -> Vec<PathBuf> {
    files_under(&s.home().join("projects"))
        .into_iter()
        .filter(|p| p.parent().is_some_and(|d| d.ends_with("subagents")))
        .collect()
}

fn trace_entries(path: &Path) -> Vec<Value> {
    spine_testkit::files::read_jsonl(path)
}

#[test]
fn an_agent_call_delegates_to_a_project_agent_and_its_answer_comes_back() {
    let s = Sandbox::new();
    agent(
        &s,
        "helper",
        "",
        json!([{"tool_calls": [{"id": "k1", "name": "calculator", "arguments": {"expression": "6*7"}}]}, {"text": "it is 42"}]),
    );
    let script =
        s.script(json!([{"tool_calls": [agent_call("t1", "helper", "compute 6*7")]}, {"text": "the helper said so"}]));
    let trace = s.dir.path().join("trace.jsonl");
    let out = s.run(&script, &["--output-format", "json", "--trace", trace.to_str().expect("utf8")]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v = json(&out);
    assert_eq!(v["result"], "the helper said so");
    assert_eq!(v["requests_without_usage"], 4, "two requests each, the child's counted: {v}");
    let decision = trace_entries(&trace)
        .into_iter()
        .find(|e| e["kind"] == "tool_decision" && e["tool_use_id"] == "t1")
        .expect("the Agent call's decision");
    assert_eq!(decision["outcome"], "executed", "{decision}");
    let transcripts = subagent_transcripts(&s);
    assert_eq!(transcripts.len(), 1, "{transcripts:?}");
    let name = transcripts[0].file_name().and_then(|n| n.to_str()).unwrap_or_default().to_owned();
    assert!(name.starts_with("agent-") && name.ends_with(".jsonl"), "{name}");
    let lines = spine_testkit::files::read_jsonl(&transcripts[0]);
    assert!(lines.iter().all(|l| l["isSidechain"] == true && l["agentId"].is_string()), "{lines:?}");
    assert!(lines.iter().any(|l| l["message"]["content"][0]["text"] == "it is 42"), "{lines:?}");
    let session = s.session_files().into_iter().find(|p| p.extension().is_some_and(|e| e == "jsonl")).expect("session");
    let parent = std::fs::read_to_string(&session).expect("parent transcript");
    assert!(parent.contains("it is 42"), "the child's answer is the Agent result in the parent");
    assert!(transcripts[0].starts_with(session.with_extension("")), "beside <session>.jsonl: {transcripts:?}");
}

#[test]
fn two_agent_calls_of_one_turn_run_concurrently() {
    // Each child's Bash call waits (at most 30 s) for the other's file: one after the other,
    // the first would give up and answer "alone".
    let s = Sandbox::new();
    let dir = s.dir.path().display().to_string();
    let meet = |me: &str, other: &str| {
        format!(
            "touch {dir}/{me}; for i in $(seq 600); do [ -e {dir}/{other} ] && echo met && exit 0; sleep 0.05; done; echo alone"
        )
    };
    let child = |me: &str, other: &str| json!([{"tool_calls": [{"id": "b1", "name": "Bash", "arguments": {"command": meet(me, other)}}]}, {"text": format!("{me} done")}]);
    agent(&s, "left", "", child("a", "b"));
    agent(&s, "right", "", child("b", "a"));
    let script = s.script(
        json!([{"tool_calls": [agent_call("t1", "left", "x"), agent_call("t2", "right", "y")]}, {"text": "both"}]),
    );
    let trace = s.dir.path().join("trace.jsonl");
    let out = s.run(&script, &["--permission-mode", "bypassPermissions", "--trace", trace.to_str().expect("utf8")]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let nested = trace_entries(&trace).into_iter().filter(|e| e["subagent"].is_object()).count();
    assert!(nested > 0, "the children's entries are in the trace");
    let session = s.session_files().into_iter().find(|p| p.extension().is_some_and(|e| e == "jsonl")).expect("session");
    for transcript in subagent_transcripts(&s) {
        let lines = spine_testkit::files::read_jsonl(&transcript);
        let result = lines
            .iter()
            .find_map(|l| l["message"]["content"][0]["content"].as_str().map(str::to_owned))
            .expect("the Bash result");
        assert!(result.ends_with("\nmet"), "both children ran at once: {result}");
    }
    assert_eq!(subagent_transcripts(&s).len(), 2);
    assert!(std::fs::read_to_string(session).expect("parent").contains("a done"));
}

#[test]
fn a_deny_rule_stops_a_childs_bash_call() {
    let s = Sandbox::new();
    let marker = s.project().join("marker");
    agent(
        &s,
        "toucher",
        "",
        json!([{"tool_calls": [{"id": "b1", "name": "Bash", "arguments": {"command": format!("touch {}", marker.display())}}]}, {"text": "tried"}]),
    );
    let script = s.script(json!([{"tool_calls": [agent_call("t1", "toucher", "touch it")]}, {"text": "ok"}]));
    let trace = s.dir.path().join("trace.jsonl");
    let out = s.run(
        &script,
        &[
            "--permission-mode",
            "bypassPermissions",
            "--disallowedTools",
            "Bash",
            "--trace",
            trace.to_str().expect("utf8"),
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(!marker.exists(), "the child's Bash call did not run");
    let denied = trace_entries(&trace)
        .into_iter()
        .find(|e| e["kind"] == "tool_decision" && e["tool_use_id"] == "b1")
        .expect("the child's decision is in the trace");
    assert_eq!(denied["outcome"], "denied", "{denied}");
    assert_eq!(denied["subagent"]["agent_type"], "toucher", "{denied}");
    assert_eq!(denied["subagent"]["parent_tool_use_id"], "t1", "{denied}");
}

#[test]
fn a_subagent_stop_hook_forces_one_more_child_turn() {
    let s = Sandbox::new();
    agent(&s, "worker", "", json!([{"text": "first try"}, {"text": "second try"}]));
    let script = s.script(json!([{"tool_calls": [agent_call("t1", "worker", "work")]}, {"text": "done"}]));
    let hook = r#"if grep -q '"stop_hook_active":false'; then echo '{"decision":"block","reason":"look again"}'; fi"#;
    let settings =
        json!({"hooks": {"SubagentStop": [{"matcher": "worker", "hooks": [{"type": "command", "command": hook}]}]}});
    let out = s.run(&script, &["--settings", &settings.to_string()]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let transcripts = subagent_transcripts(&s);
    let text = std::fs::read_to_string(&transcripts[0]).expect("child transcript");
    assert!(text.contains("look again") && text.contains("second try"), "{text}");
    let session = s.session_files().into_iter().find(|p| p.extension().is_some_and(|e| e == "jsonl")).expect("session");
    let parent = std::fs::read_to_string(session).expect("parent");
    assert!(parent.contains("second try") && !parent.contains("look again"), "the parent got the last answer only");
}

#[test]
fn trace_show_draws_the_childs_entries_under_the_agent_call() {
    let s = Sandbox::new();
    agent(
        &s,
        "helper",
        "",
        json!([{"tool_calls": [{"id": "k1", "name": "calculator", "arguments": {"expression": "1+1"}}]}, {"text": "2"}]),
    );
    let script = s.script(json!([{"tool_calls": [agent_call("t1", "helper", "add")]}, {"text": "ok"}]));
    let trace = s.dir.path().join("trace.jsonl");
    let out = s.run(&script, &["--trace", trace.to_str().expect("utf8")]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let shown = s.spine().args(["trace", "show", trace.to_str().expect("utf8")]).output().expect("runs");
    let text = stdout(&shown);
    let call_line = text.lines().position(|l| l.starts_with("├─ tool call t1 Agent")).expect("the Agent call");
    let agent_line =
        text.lines().position(|l| l.starts_with("│   └─ subagent helper ")).expect("the subagent under it");
    let child_call = text.lines().position(|l| l.starts_with("│       ├─ tool call k1 calculator")).expect("its call");
    assert!(call_line < agent_line && agent_line < child_call, "{text}");
    assert!(text.contains("│       │   ├─ decision: executed"), "{text}");
}

#[test]
fn ctrl_c_kills_a_childs_running_sleep() {
    let s = Sandbox::new();
    let pidfile = s.project().join("sleep.pid");
    agent(
        &s,
        "sleeper",
        "",
        json!([{"tool_calls": [{"id": "b1", "name": "Bash", "arguments": {"command": format!("sleep 30 & echo $! > {}; wait", pidfile.display())}}]}, {"text": "never"}]),
    );
    let script = s.script(json!([{"tool_calls": [agent_call("t1", "sleeper", "sleep")]}, {"text": "never"}]));
    sigint_kills_the_recorded_process(&s, &script, &pidfile, "the child");
}

#[test]
fn the_result_usage_includes_the_childrens() {
    let s = Sandbox::new();
    let usage = |i: u64, o: u64| json!({"input_tokens": i, "output_tokens": o});
    agent(&s, "helper", "", json!([{"text": "child", "usage": usage(7, 3)}]));
    let script = s.script(json!([
        {"tool_calls": [agent_call("t1", "helper", "x")], "usage": usage(100, 10)},
        {"text": "done", "usage": usage(100, 10)}
    ]));
    let out = s.run(&script, &["--output-format", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v = json(&out);
    assert_eq!(v["usage"]["input_tokens"], 207, "{v}");
    assert_eq!(v["usage"]["output_tokens"], 23, "{v}");
    assert_eq!(v["modelUsage"]["scripted"]["inputTokens"], 207, "{v}");
}

#[test]
fn an_unknown_subagent_type_is_a_tool_error_listing_the_known_types() {
    let s = Sandbox::new();
    agent(&s, "helper", "", json!([{"text": "unused"}]));
    let script = s.script(json!([{"tool_calls": [agent_call("t1", "nobody", "x")]}, {"text": "ok"}]));
    let out = s.run(&script, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let session = s.session_files().into_iter().find(|p| p.extension().is_some_and(|e| e == "jsonl")).expect("session");
    let text = std::fs::read_to_string(session).expect("parent");
    assert!(
        text.contains("unknown subagent_type `nobody`; the known agent types are: helper, general-purpose"),
        "{text}"
    );
}

#[test]
fn a_malformed_agent_file_is_skipped_with_a_warning_naming_the_file_and_field() {
    let s = Sandbox::new();
    s.write(".claude/agents/broken.md", "---\nname: broken\n---\nno description\n");
    let out = s.run(&s.script(json!([{"text": "hi"}])), &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("broken.md") && err.contains("field `description` is missing"), "{err}");
}

#[test]
fn hooks_test_fires_subagent_stop_with_the_agent_fields_and_reads_a_block_as_force_continue() {
    let s = Sandbox::new();
    s.trust();
    s.write(
        ".spine/settings.json",
        r#"{"hooks": {"SubagentStop": [{"matcher": "reviewer", "hooks": [
            {"type": "command", "command": "cat > input.json; echo '{\"decision\": \"block\", \"reason\": \"again\"}'"}]}]}}"#,
    );
    let out = s
        .spine()
        .args(["hooks", "test", "SubagentStop", "--input", r#"{"agent_type": "reviewer"}"#])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("force_continue") && text.contains("again"), "{text}");
    let input: Value =
        serde_json::from_str(&std::fs::read_to_string(s.project().join("input.json")).expect("input")).expect("json");
    assert_eq!(input["hook_event_name"], "SubagentStop");
    assert_eq!(input["agent_type"], "reviewer");
    assert!(input["agent_id"].is_string() && input["agent_transcript_path"].is_string(), "{input}");
    assert_eq!(input["last_assistant_message"], "Done.");
}

#[test]
fn sessions_rm_removes_the_subagent_transcripts_too() {
    let s = Sandbox::new();
    agent(&s, "helper", "", json!([{"text": "child"}]));
    let script = s.script(json!([{"tool_calls": [agent_call("t1", "helper", "x")]}, {"text": "done"}]));
    let out = s.run(&script, &["--output-format", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let id = json(&out)["session_id"].as_str().expect("id").to_owned();
    let transcripts = subagent_transcripts(&s);
    assert_eq!(transcripts.len(), 1);
    let out = s.spine().args(["sessions", "rm", &id]).output().expect("runs");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stdout(&out).contains("subagents"), "{}", stdout(&out));
    assert!(!transcripts[0].exists() && subagent_transcripts(&s).is_empty());
    let folder = transcripts[0].parent().and_then(Path::parent).expect("session folder");
    assert!(!folder.exists(), "the emptied <id>/ folder goes too");
}
