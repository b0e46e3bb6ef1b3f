//! Claude Code 2.x's names for subagents through the binary: the `Agent` tool (and its former
//! name `Task`), `disallowedTools` in a definition, and the `--agents` / `--agent` flags.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::support::*;

/// Writes `.claude/agents/<name>.md` whose model is a script of `turns`.
fn agent(s: &Sandbox, name: &str, front: &str, turns: Value) -> PathBuf {
    let script = child_script(s, name, turns);
    s.write(
        &format!(".claude/agents/{name}.md"),
        &format!(
            "---\nname: {name}\ndescription: the {name} agent\nmodel: scripted:{}\n{front}---\nYou are {name}.\n",
            script.display()
        ),
    );
    script
}

fn child_script(s: &Sandbox, name: &str, turns: Value) -> PathBuf {
    let script = s.dir.path().join(format!("child-{name}.json"));
    spine_testkit::script::write_script_file(&script, turns).expect("child script");
    script
}

fn delegate(tool: &str, id: &str, agent_type: &str) -> Value {
    json!({"id": id, "name": tool, "arguments": {"description": "a task", "prompt": "do it", "subagent_type": agent_type}})
}

fn trace_decision(trace: &Path, id: &str) -> Value {
    spine_testkit::files::read_jsonl(trace)
        .into_iter()
        .find(|e| e["kind"] == "tool_decision" && e["tool_use_id"] == id)
        .unwrap_or(Value::Null)
}

#[test]
fn the_model_is_offered_agent_with_claude_codes_schema_and_an_agent_call_runs_the_subagent() {
    let s = Sandbox::new();
    agent(&s, "helper", "", json!([{"text": "helper answer"}]));
    let call = json!({"description": "a task", "prompt": "do it", "subagent_type": "helper"});
    let server = SseServer::start(vec![anthropic_tool_use("t1", "Agent", &call), anthropic_text("done")]);
    let out = s
        .spine()
        .env("ANTHROPIC_BASE_URL", format!("http://{}", server.addr))
        .env("ANTHROPIC_API_KEY", "k")
        .args(["run", "-p", "go", "--model", "anthropic:claude-sonnet-4-5"])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out), "done\n");
    let bodies = server.bodies();
    let tools = bodies[0]["tools"].as_array().cloned().unwrap_or_default();
    let offered = tools.iter().find(|t| t["name"] == "Agent").expect("the Agent tool is offered");
    assert!(!tools.iter().any(|t| t["name"] == "Task"), "Task is an alias, not a second tool");
    assert_eq!(offered["input_schema"]["required"], json!(["description", "prompt"]));
    for field in ["subagent_type", "model", "effort", "run_in_background", "name", "isolation"] {
        assert!(offered["input_schema"]["properties"][field].is_object(), "{field}: {offered}");
    }
    assert!(offered["description"].as_str().unwrap_or_default().contains("- helper: the helper agent"));
    let result = bodies[1]["messages"].to_string();
    assert!(result.contains("helper answer"), "the child's answer is the call's result: {result}");
}

#[test]
fn a_task_call_still_runs_the_subagent() {
    let s = Sandbox::new();
    agent(&s, "helper", "", json!([{"text": "helper answer"}]));
    let script = s.script(json!([{"tool_calls": [delegate("Task", "t1", "helper")]}, {"text": "done"}]));
    let trace = s.dir.path().join("trace.jsonl");
    let out = s.run(&script, &["--output-format", "json", "--include-messages", "--trace", path(&trace)]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(tool_results(&json(&out)), ["helper answer"]);
    assert_eq!(trace_decision(&trace, "t1")["outcome"], "executed");
}

#[test]
fn a_pre_tool_use_hook_with_matcher_task_sees_the_agent_call() {
    let s = Sandbox::new();
    agent(&s, "helper", "", json!([{"text": "helper answer"}]));
    let script = s.script(json!([{"tool_calls": [delegate("Agent", "t1", "helper")]}, {"text": "done"}]));
    let settings = json!({"hooks": {"PreToolUse": [{"matcher": "Task", "hooks": [
        {"type": "command", "command": "cat > seen.json"}]}]}});
    let out = s.run(&script, &["--settings", &settings.to_string()]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let seen: Value =
        serde_json::from_str(&std::fs::read_to_string(s.project().join("seen.json")).expect("the hook ran"))
            .expect("json");
    assert_eq!(seen["tool_name"], "Agent", "{seen}");
    assert_eq!(seen["tool_input"]["subagent_type"], "helper", "{seen}");
}

#[test]
fn a_deny_rule_naming_task_of_an_agent_type_refuses_the_agent_call() {
    let s = Sandbox::new();
    agent(&s, "helper", "", json!([{"text": "never"}]));
    let script = s.script(json!([{"tool_calls": [delegate("Agent", "t1", "helper")]}, {"text": "done"}]));
    let trace = s.dir.path().join("trace.jsonl");
    let out = s.run(&script, &["--trace", path(&trace), "--disallowedTools", "Task(helper)"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(trace_decision(&trace, "t1")["outcome"], "denied");
}

#[test]
fn disallowed_tools_remove_a_tool_from_the_subagent() {
    let s = Sandbox::new();
    let marker = s.project().join("marker");
    let touch = json!({"id": "b1", "name": "Bash", "arguments": {"command": format!("touch {}", marker.display())}});
    agent(&s, "careful", "disallowedTools: Bash, Write\n", json!([{"tool_calls": [touch]}, {"text": "could not"}]));
    let script = s.script(json!([{"tool_calls": [delegate("Agent", "t1", "careful")]}, {"text": "done"}]));
    let trace = s.dir.path().join("trace.jsonl");
    let out = s.run(&script, &["--permission-mode", "bypassPermissions", "--trace", path(&trace)]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(!marker.exists(), "the child's Bash call did not run");
    let refused = trace_decision(&trace, "b1");
    assert_eq!(refused["subagent"]["agent_type"], "careful", "{refused}");
    assert_eq!(refused["error_code"], "tool_not_allowed", "{refused}");
}

#[test]
fn definition_fields_not_applied_unknown_keys_and_a_wider_mode_are_warnings_naming_the_file() {
    let s = Sandbox::new();
    let front = "memory: project\nisolation: worktree\nfutureKey: 1\npermissionMode: bypassPermissions\n";
    agent(&s, "helper", front, json!([{"text": "helper answer"}]));
    let script = s.script(json!([{"tool_calls": [delegate("Agent", "t1", "helper")]}, {"text": "done"}]));
    let out = s.run(&script, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let err = stderr(&out);
    for expected in [
        "helper.md: `memory` is not applied: spine keeps no agent memory directories",
        "helper.md: `isolation` is not applied: spine runs every subagent in the parent's workspace",
        "helper.md: unknown field `futureKey` ignored",
        "helper.md: `permissionMode` bypassPermissions is wider than the parent's default; the parent's applies",
    ] {
        assert!(err.contains(expected), "{expected}: {err}");
    }
}

#[test]
fn the_agents_flag_defines_an_agent_an_agent_call_uses_over_a_file_of_the_same_name() {
    let s = Sandbox::new();
    agent(&s, "helper", "", json!([{"text": "from the file"}]));
    let flagged = child_script(&s, "flagged", json!([{"text": "from the flag"}]));
    let agents = json!({"helper": {"description": "helps", "prompt": "You help.", "tools": ["Read"],
        "model": format!("scripted:{}", flagged.display())}});
    let script = s.script(json!([{"tool_calls": [delegate("Agent", "t1", "helper")]}, {"text": "done"}]));
    let out = s.run(&script, &["--agents", &agents.to_string(), "--output-format", "json", "--include-messages"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(tool_results(&json(&out)), ["from the flag"]);
}

#[test]
fn a_malformed_agents_flag_is_exit_2_naming_the_flag_and_the_json_path() {
    let s = Sandbox::new();
    let script = s.script(json!([{"text": "unused"}]));
    let out = s.run(&script, &["--agents", r#"{"helper": {"description": "d", "prompt": "p", "tools": [1]}}"#]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("--agents: helper.tools[0]: expected a tool name, got a number"), "{}", stderr(&out));
    let out = s.run(&script, &["--agents", "{not json"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("--agents: not valid JSON"), "{}", stderr(&out));
}

#[test]
fn the_agent_flag_runs_the_session_as_the_agent() {
    let s = Sandbox::new();
    let bash = json!({"id": "b1", "name": "Bash", "arguments": {"command": "echo hi"}});
    agent(&s, "reviewer", "tools: Read, Grep\n", json!([{"tool_calls": [bash]}, {"text": "reviewed"}]));
    // The configured model is replaced by the agent's (its script answers the session).
    let unused = s.script(json!([{"text": "the configured model"}]));
    let settings = json!({"model": format!("scripted:{}", unused.display())}).to_string();
    let out = s
        .spine()
        .args(["run", "-p", "go", "--agent", "reviewer", "--settings", &settings])
        .args(["--permission-mode", "bypassPermissions", "--output-format", "json", "--include-messages"])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v = json(&out);
    assert_eq!(v["result"], "reviewed");
    let system = v["messages"][0]["content"].as_str().unwrap_or_default();
    let (built_in, appended) = (system.find("You are spine"), system.find("You are reviewer."));
    assert!(matches!((built_in, appended), (Some(a), Some(b)) if a < b), "{system}");
    assert!(tool_results(&v)[0].contains("tool_not_allowed"), "Bash is not among its tools: {v}");
}

#[test]
fn an_unknown_agent_is_exit_2_listing_the_known_agents() {
    let s = Sandbox::new();
    agent(&s, "helper", "", json!([{"text": "unused"}]));
    let out = s.run(&s.script(json!([{"text": "unused"}])), &["--agent", "nobody"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("--agent nobody: no such agent; the known agents are: helper, general-purpose"), "{err}");
}

#[test]
fn a_deferred_task_call_of_an_old_transcript_runs_the_subagent_on_resume() {
    let s = Sandbox::new();
    agent(&s, "helper", "", json!([{"text": "helper answer"}]));
    // The hook (matcher `Task`) defers until a file named `approved` exists, then allows.
    let hook = s.write(
        "hooks/gate.sh",
        "#!/bin/sh\ncat >/dev/null\nif [ -f approved ]; then d=allow; else d=defer; fi\n\
         printf '{\"hookSpecificOutput\":{\"hookEventName\":\"PreToolUse\",\"permissionDecision\":\"%s\"}}' $d\n",
    );
    let settings = json!({"hooks": {"PreToolUse": [{"matcher": "Task", "hooks": [
        {"type": "command", "command": format!("sh {}", hook.display())}]}]}})
    .to_string();
    let first = s.script(json!([{"tool_calls": [delegate("Task", "t1", "helper")]}]));
    let out = s.run(&first, &["--settings", &settings, "--output-format", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v = json(&out);
    assert_eq!(v["subtype"], "deferred", "{v}");
    let id = v["session_id"].as_str().expect("session").to_owned();
    // As an older spine wrote it: the call named `Task` throughout.
    let transcript = s.session_file(&id, "jsonl").expect("transcript");
    let text = std::fs::read_to_string(&transcript).expect("read").replace("\"Agent\"", "\"Task\"");
    std::fs::write(&transcript, text).expect("write");

    s.write("approved", "");
    let second = s.script(json!([{"text": "finished"}]));
    let out = s
        .spine()
        .args(["run", "--resume", &id, "--model", &format!("scripted:{}", second.display())])
        .args(["--settings", &settings, "--output-format", "json", "--include-messages"])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v = json(&out);
    assert_eq!(v["result"], "finished", "{v}");
    assert_eq!(tool_results(&v), ["helper answer"]);
}

fn path(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}
