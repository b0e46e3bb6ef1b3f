//! Background subagents through the binary (Claude Code 2.1's `run_in_background` and front
//! matter `background: true`): the `Agent` call answers at once with the agent's id, the child
//! runs on, and its `<task-notification>` reaches the parent; a run about to end waits for it;
//! Ctrl-C kills it; an interactive session at its prompt is woken by it. Children wait for
//! sentinel files the test (or a parent's hook) creates, never for time to pass.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::support::*;

/// Writes `.claude/agents/<name>.md` whose model is a script of `turns`.
fn agent(s: &Sandbox, name: &str, front: &str, turns: Value) {
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

fn agent_call(id: &str, agent_type: &str, extra: Value) -> Value {
    let mut args = json!({"description": "slow work", "prompt": "work", "subagent_type": agent_type});
    if let (Some(args), Some(extra)) = (args.as_object_mut(), extra.as_object()) {
        args.extend(extra.clone());
    }
    json!({"id": id, "name": "Agent", "arguments": args})
}

/// A bash loop waiting (at most 30 s, a liveness bound) for `file`, then saying whether it came.
fn gated(file: &Path) -> String {
    format!(
        "for i in $(seq 1 1500); do [ -f {0} ] && break; sleep 0.02; done; [ -f {0} ] && echo gate-opened || echo gave-up",
        file.display()
    )
}

/// The child of the tests: a Bash call gated by `gate`, then its answer.
fn gated_child(gate: &Path) -> Value {
    json!([{"tool_calls": [{"id": "b1", "name": "Bash", "arguments": {"command": gated(gate)}}]}, {"text": "gated work done"}])
}

fn messages(result: &Value) -> Vec<Value> {
    result["messages"].as_array().cloned().unwrap_or_default()
}

#[test]
fn a_background_agent_call_answers_at_once_and_the_run_waits_to_read_its_notification() {
    let s = Sandbox::new();
    let gate = s.dir.path().join("gate");
    agent(&s, "slow", "background: true\n", gated_child(&gate));
    let log = s.dir.path().join("events.jsonl");
    let logs = json!([{"hooks": [logging(&log, &json!({}))]}]);
    // The gate opens only when the parent's Stop fires: the launch must have answered first.
    let settings = json!({"hooks": {
        "Stop": [{"hooks": [{"type": "command", "command": format!("cat > /dev/null; touch {}", gate.display())}]}],
        "SubagentStart": logs,
        "SubagentStop": logs,
    }});
    let script = s.script(json!([
        {"tool_calls": [agent_call("t1", "slow", json!({}))]},
        {"text": "waiting"},
        {"text": "done"}
    ]));
    let args = ["--settings", &settings.to_string(), "--permission-mode", "bypassPermissions"];
    let out = s.run(&script, &[&args[..], &["--output-format", "json", "--include-messages"]].concat());
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let result = json(&out);
    assert_eq!((result["result"].as_str(), result["num_turns"].as_u64()), (Some("done"), Some(3)), "{result}");
    let messages = messages(&result);
    let launched = messages.iter().find(|m| m["role"] == "tool").expect("the Agent call's result");
    let launched = launched["content"].as_str().unwrap_or_default();
    assert!(launched.starts_with("Async agent launched successfully."), "{launched}");
    let waiting = messages.iter().position(|m| m["content"] == "waiting").expect("the parent's first answer");
    let notice = messages
        .iter()
        .position(|m| {
            m["role"] == "user" && m["content"].as_str().is_some_and(|c| c.starts_with("<task-notification>"))
        })
        .expect("the notification");
    let done = messages.iter().position(|m| m["content"] == "done").expect("the parent's last answer");
    assert!(waiting < notice && notice < done, "read at the request after `waiting`: {messages:?}");
    let text = messages[notice]["content"].as_str().unwrap_or_default();
    assert!(text.contains("<tool-use-id>t1</tool-use-id>\n<status>completed</status>"), "{text}");
    assert!(
        text.contains("<summary>Agent \"slow work\" finished</summary>\n<result>gated work done</result>"),
        "{text}"
    );
    let session = s.session_files().into_iter().find(|p| p.extension().is_some_and(|e| e == "jsonl")).expect("session");
    let mut children = session.with_extension("").join("subagents").read_dir().expect("subagents");
    let child = children.next().and_then(Result::ok).expect("the child's transcript").path();
    let child = std::fs::read_to_string(child).expect("read");
    assert!(child.contains("gate-opened"), "the child ran on after the launch answered: {child}");
    let events: Vec<String> =
        logged(&log).iter().map(|e| e["hook_event_name"].as_str().unwrap_or_default().to_owned()).collect();
    assert_eq!(events, ["SubagentStart", "SubagentStop"], "they fire for a background subagent too");
}

#[test]
fn ctrl_c_kills_a_background_agents_running_command() {
    let s = Sandbox::new();
    let pidfile = s.project().join("sleep.pid");
    let sleep = format!("sleep 30 & echo $! > {}; wait", pidfile.display());
    agent(
        &s,
        "sleeper",
        "",
        json!([{"tool_calls": [{"id": "b1", "name": "Bash", "arguments": {"command": sleep}}]}, {"text": "never"}]),
    );
    let script = s.script(json!([
        {"tool_calls": [agent_call("t1", "sleeper", json!({"run_in_background": true}))]},
        {"text": "waiting"},
        {"text": "never"}
    ]));
    sigint_kills_the_recorded_process(&s, &script, &pidfile, "the background child");
}

fn write_script(s: &Sandbox, name: &str, turns: Value) -> PathBuf {
    let path = s.dir.path().join(name);
    spine_testkit::script::write_script_file(&path, turns).expect("script");
    path
}

#[test]
fn a_background_agent_that_ends_while_the_session_waits_at_its_prompt_starts_a_turn() {
    let s = Sandbox::new();
    let gate = s.dir.path().join("release");
    agent(&s, "slow", "background: true\n", gated_child(&gate));
    s.write(".claude/settings.json", &json!({"permissions": {"allow": ["Bash"]}}).to_string());
    s.trust();
    let script = write_script(
        &s,
        "chat.json",
        json!([
            {"tool_calls": [agent_call("t1", "slow", json!({}))]},
            {"text": "launched it"},
            {"text": "the agent reported back"}
        ]),
    );
    let tmux = chat_session(&s, &script, &[], "");
    tmux.send_line("start the slow work");
    tmux.wait_for("launched it");
    // The prompt is back (the turn ended, the agent still waits); releasing it then wakes the
    // session.
    let typed = tmux.cmd().args(["send-keys", "-t", "t", "-l", "half-typed"]).status().expect("send-keys");
    assert!(typed.success());
    tmux.wait_for("> half-typed");
    std::fs::write(&gate, "").expect("release");
    let screen = tmux.wait_for("the agent reported back");
    assert!(screen.contains("a background agent woke the session"), "{screen}");
    assert!(screen.contains("Agent \"slow work\" finished"), "the summary: {screen}");
    // The prompt comes back with the text typed before the wake; Ctrl-C clears it (keys typed
    // in the same read as that Ctrl-C would be dropped by the line editor: wait for the prompt).
    tmux.wait_for_last_line("> half-typed");
    tmux.send_key("C-c");
    tmux.wait_for_last_line(">");
    tmux.send_line("/exit");
    tmux.wait_for("EXIT=0");
    let files: Vec<_> = s.session_files().into_iter().filter(|p| p.extension().is_some_and(|e| e == "jsonl")).collect();
    let transcript = files.first().map(|p| std::fs::read_to_string(p).unwrap_or_default()).unwrap_or_default();
    assert!(transcript.contains("gated work done"), "the model read the notification: {transcript}");
}
