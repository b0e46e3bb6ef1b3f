//! Claude Code 2.1's agent front matter fields beyond narrowing, through the binary: `hooks`
//! (scoped to the subagent; `Stop` fires as `SubagentStop`; an untrusted project's do not run),
//! `skills` (preloaded into the subagent's first request), `effort` (the reasoning effort of its
//! model requests, seen by a local OpenAI-style server) and `mcpServers` (the named server's
//! tools join its `tools`, no other server's; an inline server starts with the subagent, is
//! its alone, stops when it ends, and is not started for an untrusted project).

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::support::*;

/// Writes `.claude/agents/<name>.md` whose model is a script of `turns`.
fn scripted_agent(s: &Sandbox, name: &str, front: &str, turns: Value) {
    let script = s.dir.path().join(format!("child-{name}.json"));
    spine_testkit::script::write_script_file(&script, turns).expect("child script");
    s.write(
        &format!(".claude/agents/{name}.md"),
        &format!(
            "---\nname: {name}\ndescription: the {name} agent\nmodel: scripted:{}\n{front}---\nYou are {name}.\n",
            script.display()
        ),
    );
}

fn agent_call(id: &str, agent_type: &str) -> Value {
    json!({"id": id, "name": "Agent", "arguments": {"description": "a task", "prompt": "do it", "subagent_type": agent_type}})
}

fn bash_call(id: &str, command: &str) -> Value {
    json!({"id": id, "name": "Bash", "arguments": {"command": command}})
}

fn trace_entries(path: &Path) -> Vec<Value> {
    spine_testkit::files::read_jsonl(path)
}

/// The decision entry of the call `id` in the trace.
fn decision(trace: &Path, id: &str) -> Value {
    trace_entries(trace)
        .into_iter()
        .find(|e| e["kind"] == "tool_decision" && e["tool_use_id"] == id)
        .unwrap_or_else(|| panic!("no decision for {id}"))
}

const GUARD: &str = r#"hooks: {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "echo no bash for guarded >&2; exit 2"}]}]}"#;

/// A parent that starts `guarded` (whose child touches `child`), then touches `parent` itself.
fn guarded_run(s: &Sandbox, trace: &Path) -> (std::process::Output, PathBuf, PathBuf) {
    let (child, parent) = (s.dir.path().join("child-marker"), s.dir.path().join("parent-marker"));
    let child_turns =
        json!([{"tool_calls": [bash_call("b1", &format!("touch {}", child.display()))]}, {"text": "tried"}]);
    scripted_agent(s, "guarded", &format!("{GUARD}\n"), child_turns);
    let script = s.script(json!([
        {"tool_calls": [agent_call("t1", "guarded")]},
        {"tool_calls": [bash_call("p1", &format!("touch {}", parent.display()))]},
        {"text": "done"}
    ]));
    let trace = trace.to_str().expect("utf8");
    let out = s.run(&script, &["--permission-mode", "bypassPermissions", "--trace", trace]);
    (out, child, parent)
}

#[test]
fn a_front_matter_pre_tool_use_hook_blocks_bash_only_inside_its_subagent() {
    let s = Sandbox::new();
    s.trust();
    let trace = s.dir.path().join("trace.jsonl");
    let (out, child, parent) = guarded_run(&s, &trace);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(!child.exists(), "the agent's own hook blocked the child's Bash call");
    assert!(parent.exists(), "the parent's Bash call ran: the hook is the subagent's only");
    let blocked = decision(&trace, "b1");
    assert_eq!(blocked["outcome"], "blocked", "{blocked}");
    assert_eq!(blocked["subagent"]["agent_type"], "guarded", "{blocked}");
    assert_eq!(decision(&trace, "p1")["outcome"], "executed");
}

#[test]
fn an_untrusted_projects_agent_hooks_do_not_run_with_a_warning() {
    let s = Sandbox::new();
    let trace = s.dir.path().join("trace.jsonl");
    let (out, child, _) = guarded_run(&s, &trace);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(child.exists(), "an untrusted project's agent hook does not run");
    let err = stderr(&out);
    assert!(err.contains("guarded.md: `hooks` not applied: the project is not trusted"), "{err}");
}

#[test]
fn a_front_matter_stop_hook_fires_as_subagent_stop_for_that_subagent_only() {
    let s = Sandbox::new();
    s.trust();
    let log = s.dir.path().join("stop-inputs.jsonl");
    let front = format!(
        "hooks:\n  Stop:\n    - hooks:\n        - type: command\n          command: \"cat >> {0}; echo >> {0}\"\n",
        log.display()
    );
    scripted_agent(&s, "stopper", &front, json!([{"text": "stopped"}]));
    let script = s.script(json!([{"tool_calls": [agent_call("t1", "stopper")]}, {"text": "done"}]));
    let out = s.run(&script, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = std::fs::read_to_string(&log).expect("the hook ran");
    let inputs: Vec<Value> =
        text.lines().filter(|l| !l.trim().is_empty()).map(|l| serde_json::from_str(l).expect("json")).collect();
    assert_eq!(inputs.len(), 1, "once, for the subagent; the parent's Stop does not run it: {inputs:?}");
    assert_eq!(inputs[0]["hook_event_name"], "SubagentStop");
    assert_eq!(inputs[0]["agent_type"], "stopper");
    assert_eq!(inputs[0]["last_assistant_message"], "stopped");
}

/// An OpenAI chat-completions SSE reply with one text answer.
fn openai_answer(text: &str) -> String {
    let events = [
        json!({"choices": [{"index": 0, "delta": {"role": "assistant", "content": text}, "finish_reason": null}]}),
        json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}),
    ];
    let mut out: String = events.iter().map(|e| format!("data: {e}\n\n")).collect();
    out.push_str("data: [DONE]\n\n");
    out
}

/// Runs a scripted parent that starts `reader`, an agent on `openai:o4-mini` (a local server)
/// with `front`; returns the bodies of the requests the child sent.
fn openai_child_bodies(s: &Sandbox, front: &str) -> Vec<Value> {
    s.write(
        ".claude/agents/reader.md",
        &format!("---\nname: reader\ndescription: reads\nmodel: openai:o4-mini\n{front}---\nYou read.\n"),
    );
    let server = SseServer::start(vec![openai_answer("read it")]);
    let script = s.script(json!([{"tool_calls": [agent_call("t1", "reader")]}, {"text": "done"}]));
    let mut cmd = s.spine();
    cmd.env("OPENAI_BASE_URL", format!("http://{}/v1", server.addr)).env("OPENAI_API_KEY", "sk-test");
    let out = cmd
        .args(["run", "-p", "go", "--model", &format!("scripted:{}", script.display())])
        .output()
        .expect("spine runs");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    server.bodies()
}

#[test]
fn front_matter_skills_are_preloaded_into_the_subagents_first_request() {
    let s = Sandbox::new();
    spine_testkit::files::write_file(&s.home(), "skills/notes/SKILL.md", "NOTES-SKILL: write every note as a haiku.\n");
    let bodies = openai_child_bodies(&s, "skills: [notes]\n");
    assert_eq!(bodies.len(), 1, "{bodies:?}");
    let system = bodies[0]["messages"][0]["content"].as_str().expect("the system prompt");
    assert!(system.contains("Selected Skills:\nSkill notes:\nNOTES-SKILL: write every note as a haiku."), "{system}");
    let user = bodies[0]["messages"][1]["content"].as_str().unwrap_or_default();
    assert!(!user.contains('$'), "preloaded without a reference: {user}");
}

#[test]
fn front_matter_effort_is_the_reasoning_effort_of_the_subagents_requests() {
    let s = Sandbox::new();
    let bodies = openai_child_bodies(&s, "effort: low\n");
    assert_eq!(bodies[0]["reasoning_effort"], "low", "{}", bodies[0]);
    let s = Sandbox::new();
    let bodies = openai_child_bodies(&s, "effort: max\n");
    assert_eq!(bodies[0]["reasoning_effort"], "high", "max is sent as high: {}", bodies[0]);
}

#[test]
fn front_matter_mcp_servers_add_the_named_servers_tools_and_no_others() {
    let s = Sandbox::new();
    let marker = s.dir.path().join("mcp-marker");
    let peer = |name: &str| spine_testkit::write_mcp_server(s.dir.path(), name, &marker, 0).expect("server");
    let settings = json!({"mcpServers": {"alpha": peer("alpha"), "beta": peer("beta")}});
    let calls = json!([{"tool_calls": [
        {"id": "m1", "name": "mcp__alpha__ping", "arguments": {}},
        {"id": "m2", "name": "mcp__beta__ping", "arguments": {}},
        {"id": "m3", "name": "calculator", "arguments": {"expression": "1+1"}}
    ]}, {"text": "pinged"}]);
    scripted_agent(&s, "pinger", "tools: calculator\nmcpServers: [alpha]\n", calls.clone());
    let plain = calls.to_string().replace("\"m1\"", "\"n1\"").replace("\"m2\"", "\"n2\"").replace("\"m3\"", "\"n3\"");
    scripted_agent(&s, "plain", "tools: calculator\n", serde_json::from_str(&plain).expect("json"));
    let script = s.script(json!([
        {"tool_calls": [agent_call("t1", "pinger")]},
        {"tool_calls": [agent_call("t2", "plain")]},
        {"text": "done"}
    ]));
    let trace = s.dir.path().join("trace.jsonl");
    let args = ["--settings", &settings.to_string(), "--permission-mode", "bypassPermissions", "--trace"];
    let out = s.run(&script, &[&args[..], &[trace.to_str().expect("utf8")]].concat());
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let outcome = |id: &str| decision(&trace, id)["outcome"].as_str().unwrap_or_default().to_owned();
    assert_eq!(outcome("m1"), "executed", "its mcpServers' tools join `tools: calculator`");
    assert_ne!(outcome("m2"), "executed", "a server it does not name stays out");
    assert_eq!(outcome("m3"), "executed");
    assert_ne!(outcome("n1"), "executed", "without mcpServers, `tools` alone decides");
    assert_eq!(outcome("n3"), "executed");
    let text = std::fs::read_to_string(trace).expect("trace");
    assert!(text.contains("pong from alpha"), "the named server answered");
}

/// A Bash command saying whether the inline server `inlinepeer` is running.
const PEER_RUNNING: &str =
    "if pgrep -f 'mcp_server.py [i]nlinepeer' > /dev/null; then echo peer-running; else echo peer-stopped; fi";

/// A parent starting `owner` (whose inline server is `inlinepeer`), then calling the server's
/// tool and checking the server itself; returns the run's output and trace.
fn inline_server_run(s: &Sandbox) -> (std::process::Output, PathBuf) {
    let marker = s.dir.path().join("inline-marker");
    let peer = spine_testkit::write_mcp_server(s.dir.path(), "inlinepeer", &marker, 0).expect("server");
    let child = json!([{"tool_calls": [
        {"id": "m1", "name": "mcp__inlinepeer__ping", "arguments": {}},
        bash_call("c1", PEER_RUNNING)
    ]}, {"text": "pinged"}]);
    scripted_agent(
        s,
        "owner",
        &format!(
            "tools: Bash
mcpServers:
  - inlinepeer: {peer}
"
        ),
        child,
    );
    let script = s.script(json!([
        {"tool_calls": [agent_call("t1", "owner")]},
        {"tool_calls": [{"id": "p1", "name": "mcp__inlinepeer__ping", "arguments": {}}, bash_call("p2", PEER_RUNNING)]},
        {"text": "done"}
    ]));
    let trace = s.dir.path().join("trace.jsonl");
    let args = ["--permission-mode", "bypassPermissions", "--output-format", "json", "--trace"];
    let out = s.run(&script, &[&args[..], &[trace.to_str().expect("utf8")]].concat());
    (out, trace)
}

#[test]
fn an_inline_mcp_server_starts_with_its_subagent_only_it_sees_its_tools_and_it_stops_when_the_subagent_ends() {
    let s = Sandbox::new();
    s.trust();
    let (out, trace) = inline_server_run(&s);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let outcome = |id: &str| decision(&trace, id)["outcome"].as_str().unwrap_or_default().to_owned();
    assert_eq!(outcome("m1"), "executed", "its own server's tool joins `tools: Bash`");
    assert_ne!(outcome("p1"), "executed", "the parent does not see it");
    let text = std::fs::read_to_string(&trace).expect("trace");
    assert!(text.contains("pong from inlinepeer"), "the inline server answered the subagent");
    let session = s.session_files().into_iter().find(|p| p.extension().is_some_and(|e| e == "jsonl")).expect("s");
    let parent = std::fs::read_to_string(&session).expect("parent transcript");
    assert!(parent.contains("peer-stopped"), "stopped when the subagent ended: {parent}");
    let child = std::fs::read_dir(session.with_extension("").join("subagents")).expect("subagents");
    let child =
        child.filter_map(Result::ok).map(|e| std::fs::read_to_string(e.path()).unwrap_or_default()).collect::<String>();
    assert!(child.contains("peer-running"), "running while the subagent ran: {child}");
}

#[test]
fn an_untrusted_projects_inline_mcp_server_is_not_started_with_a_warning() {
    let s = Sandbox::new();
    let (out, trace) = inline_server_run(&s);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("owner.md: `mcpServers`: inline server `inlinepeer` not started: the project is not trusted"),
        "{err}"
    );
    assert!(!s.dir.path().join("inline-marker").exists(), "the server never started");
    assert_ne!(decision(&trace, "m1")["outcome"], "executed");
}

#[test]
fn agents_flag_hooks_run_without_project_trust_and_a_bad_one_is_exit_2_naming_the_json_path() {
    let s = Sandbox::new();
    let child = s.dir.path().join("child-marker");
    let child_script = s.dir.path().join("flagged.json");
    let touch = json!([{"tool_calls": [bash_call("b1", &format!("touch {}", child.display()))]}, {"text": "tried"}]);
    spine_testkit::script::write_script_file(&child_script, touch).expect("child script");
    let guard = json!({"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "exit 2"}]}]});
    let entry = |hooks: Value| {
        json!({"guarded": {"description": "d", "prompt": "p", "model": format!("scripted:{}", child_script.display()),
            "hooks": hooks}})
        .to_string()
    };
    let script = s.script(json!([{"tool_calls": [agent_call("t1", "guarded")]}, {"text": "done"}]));
    let out = s.run(&script, &["--agents", &entry(guard), "--permission-mode", "bypassPermissions"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(!child.exists(), "the entry's hook blocked the child's Bash call in an untrusted project");
    let bad = json!({"PreToolUse": [{"hooks": [{"type": "command", "command": "true", "timeout": "soon"}]}]});
    let out = s.run(&script, &["--agents", &entry(bad)]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("--agents: guarded.hooks.PreToolUse[0].hooks[0].timeout: "), "{err}");
}

#[test]
fn an_agent_file_with_an_invalid_hook_is_skipped_with_a_warning_naming_the_file_and_the_json_path() {
    let s = Sandbox::new();
    let front = "hooks: {\"PreToolUse\": [{\"hooks\": [{\"type\": \"nope\"}]}]}\n";
    scripted_agent(&s, "broken", front, json!([{"text": "unused"}]));
    let script = s.script(json!([{"tool_calls": [agent_call("t1", "broken")]}, {"text": "done"}]));
    let out = s.run(&script, &["--output-format", "json", "--include-messages"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("broken.md skipped: hooks.PreToolUse[0].hooks[0].type: "), "{err}");
    assert!(stdout(&out).contains("unknown subagent_type `broken`"), "{}", stdout(&out));
}

#[test]
fn run_as_the_main_session_an_agents_hooks_run_after_the_sessions_and_stop_stays_stop() {
    let s = Sandbox::new();
    s.trust();
    let (marker, log) = (s.dir.path().join("marker"), s.dir.path().join("stop-inputs.jsonl"));
    let hooks = json!({
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "exit 2"}]}],
        "Stop": [{"hooks": [{"type": "command", "command": format!("cat >> {0}; echo >> {0}", log.display())}]}]
    });
    let turns = json!([{"tool_calls": [bash_call("b1", &format!("touch {}", marker.display()))]}, {"text": "done"}]);
    scripted_agent(&s, "guarded", &format!("hooks: {hooks}\n"), turns);
    // The configured model is replaced by the agent's (its script answers the session).
    let unused = s.script(json!([{"text": "the configured model"}]));
    let settings = json!({"model": format!("scripted:{}", unused.display())}).to_string();
    let out = s
        .spine()
        .args(["run", "-p", "go", "--agent", "guarded", "--settings", &settings])
        .args(["--permission-mode", "bypassPermissions"])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(!marker.exists(), "the agent's PreToolUse hook blocked the main session's Bash call");
    let text = std::fs::read_to_string(&log).expect("the Stop hook ran");
    let input: Value = serde_json::from_str(text.trim()).expect("one input");
    assert_eq!(input["hook_event_name"], "Stop");
}
