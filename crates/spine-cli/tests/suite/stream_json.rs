//! `--output-format stream-json` as Claude Code 2.1.328 writes it: a subagent's lines carry
//! the `Agent` call's id, `init` lists what the run offers, and `permission_denials` lists every
//! refused call — compared by field set and sequence with the recordings in
//! `tests/fixtures/claude-code-2.1.328/stream-json-*.jsonl` (`record_stream_json.py`).

use std::collections::BTreeSet;
use std::path::PathBuf;

use serde_json::{Value, json};

use crate::support::*;

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/claude-code-2.1.328");

/// The lines of a recorded stream.
pub fn recorded(name: &str) -> Vec<Value> {
    let text = std::fs::read_to_string(format!("{FIXTURES}/{name}")).expect("fixture");
    text.lines().map(|l| serde_json::from_str(l).expect("fixture line")).collect()
}

/// The lines spine printed.
pub fn lines(out: &std::process::Output) -> Vec<Value> {
    stdout(out).lines().map(|l| serde_json::from_str(l).expect("one JSON object per line")).collect()
}

pub fn keys(v: &Value) -> BTreeSet<String> {
    v.as_object().map(|o| o.keys().cloned().collect()).unwrap_or_default()
}

/// `type:first block type` of a message line (`assistant:tool_use`, `user:text`).
fn gist(line: &Value) -> String {
    format!("{}:{}", line["type"].as_str().unwrap_or(""), line["message"]["content"][0]["type"].as_str().unwrap_or(""))
}

/// Writes `.claude/agents/<name>.md` whose model is a script of `turns`.
fn agent(s: &Sandbox, name: &str, turns: Value) -> PathBuf {
    let script = s.dir.path().join(format!("child-{name}.json"));
    spine_testkit::script::write_script_file(&script, turns).expect("child script");
    s.write(
        &format!(".claude/agents/{name}.md"),
        &format!(
            "---\nname: {name}\ndescription: the {name} agent\nmodel: scripted:{}\n---\nYou are {name}.\n",
            script.display()
        ),
    )
}

/// The recorded subagent run's lines of `kind` (`assistant`, `user`) inside the subagent.
fn recorded_subagent_lines(kind: &str) -> Vec<Value> {
    recorded("stream-json-subagent.jsonl")
        .into_iter()
        .filter(|l| l["type"] == kind && l["parent_tool_use_id"].is_string())
        .collect()
}

#[test]
fn a_subagents_lines_and_hook_lines_carry_the_agent_calls_id_as_parent_tool_use_id() {
    let s = Sandbox::new();
    let denied = s.project().join("denied.txt");
    agent(
        &s,
        "helper",
        json!([
            {"tool_calls": [{"id": "k1", "name": "Bash", "arguments": {"command": "echo sub", "description": "Print sub"}}]},
            {"tool_calls": [{"id": "k2", "name": "Write", "arguments": {"file_path": denied, "content": "x\n"}}]},
            {"text": "sub done"}
        ]),
    );
    let call = json!({"id": "t1", "name": "Agent", "arguments": {"description": "sub", "prompt": "SUBTASK: echo and write", "subagent_type": "helper"}});
    let script = s.script(json!([{"tool_calls": [call]}, {"text": "Done."}]));
    let settings = json!({
        "permissions": {"allow": ["Bash", "Agent"]},
        "hooks": {"PreToolUse": [{"matcher": "*", "hooks": [{"type": "command", "command": "echo pre-hook"}]}]}
    });
    let out = s.run(
        &script,
        &["--settings", &settings.to_string(), "--output-format", "stream-json", "--include-hook-events"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let lines = lines(&out);

    // The subagent's turns, as Claude Code printed them (it left out the final answer's line).
    let inside: Vec<&Value> = lines
        .iter()
        .filter(|l| matches!(l["type"].as_str(), Some("assistant" | "user")) && l["parent_tool_use_id"] == "t1")
        .collect();
    let want: Vec<String> = recorded("stream-json-subagent.jsonl")
        .iter()
        .filter(|l| l["parent_tool_use_id"].is_string())
        .map(gist)
        .collect();
    let got: Vec<String> = inside.iter().map(|l| gist(l)).collect();
    assert_eq!(got[..want.len()], want[..], "{got:?}");
    assert_eq!(got[want.len()..], ["assistant:text"], "then the subagent's answer: {got:?}");
    assert_eq!(inside[0]["message"]["content"][0]["text"], "SUBTASK: echo and write");
    for line in &inside {
        assert_eq!(
            (line["agent_id"].is_string(), &line["subagent_type"], &line["task_description"]),
            (true, &json!("helper"), &json!("sub")),
            "{line}"
        );
    }
    // The same fields as Claude Code's lines (but `tool_use_result` and `tool_result_meta`).
    for kind in ["assistant", "user"] {
        let mut want = keys(&recorded_subagent_lines(kind)[1]);
        want.remove("tool_use_result");
        want.remove("tool_result_meta");
        for line in inside.iter().filter(|l| l["type"] == kind) {
            assert_eq!(keys(line), want, "{line}");
        }
    }
    // The main agent's lines say null.
    let main: Vec<&Value> = lines
        .iter()
        .filter(|l| matches!(l["type"].as_str(), Some("assistant" | "user")) && l["parent_tool_use_id"].is_null())
        .collect();
    assert_eq!(
        main.iter().map(|l| gist(l)).collect::<Vec<_>>(),
        ["assistant:tool_use", "user:tool_result", "assistant:text"]
    );
    assert!(main.iter().all(|l| l.get("agent_id").is_none()));

    // Hook lines: the subagent's carry its call; the main agent's are Claude Code's shape.
    let hooks: Vec<&Value> = lines.iter().filter(|l| l["subtype"] == "hook_started").collect();
    let named = |h: &Value| (h["hook_name"].as_str().unwrap_or("").to_owned(), h.get("parent_tool_use_id").cloned());
    assert_eq!(
        hooks.iter().map(|h| named(h)).collect::<Vec<_>>(),
        [
            ("PreToolUse:Agent".to_owned(), None),
            ("PreToolUse:Bash".to_owned(), Some(json!("t1"))),
            ("PreToolUse:Write".to_owned(), Some(json!("t1")))
        ]
    );
}

#[test]
fn a_call_denied_inside_a_subagent_is_in_permission_denials_with_its_input() {
    let s = Sandbox::new();
    let denied = s.project().join("denied.txt");
    let input = json!({"file_path": denied, "content": "x\n"});
    agent(
        &s,
        "helper",
        json!([{"tool_calls": [{"id": "k2", "name": "Write", "arguments": input}]}, {"text": "sub done"}]),
    );
    let call = json!({"id": "t1", "name": "Agent", "arguments": {"description": "sub", "prompt": "write", "subagent_type": "helper"}});
    let script = s.script(json!([{"tool_calls": [call]}, {"text": "Done."}]));
    let out =
        s.run(&script, &["--settings", r#"{"permissions": {"allow": ["Agent"]}}"#, "--output-format", "stream-json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let result = lines(&out).pop().expect("result line");
    assert_eq!(result["type"], "result");
    assert_eq!(result["permission_denials"], json!([{"tool_name": "Write", "tool_use_id": "k2", "tool_input": input}]));
    let recorded = recorded("stream-json-subagent.jsonl");
    let recorded = recorded.iter().find(|l| l["type"] == "result").expect("recorded result");
    assert_eq!(keys(&recorded["permission_denials"][0]), keys(&result["permission_denials"][0]));
}

#[test]
fn permission_denials_list_hook_blocks_hook_denials_and_policy_denials_in_order() {
    let s = Sandbox::new();
    let deny = json!({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny", "permissionDecisionReason": "no curl"}});
    // The recording's hooks (record_stream_json.py's DENIAL_SETTINGS) and calls.
    let settings = json!({
        "permissions": {"allow": ["Bash"]},
        "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
            {"type": "command", "command": "grep -q 'rm ' && { echo 'no rm' >&2; exit 2; } || true"},
            {"type": "command", "command": format!("grep -q curl && echo '{deny}' || true")}]}]}
    });
    let reference = recorded("stream-json-denials.jsonl");
    let want = reference.iter().find(|l| l["type"] == "result").expect("recorded result")["permission_denials"].clone();
    let project = s.project().display().to_string();
    let here =
        |v: &Value| -> Value { serde_json::from_str(&v.to_string().replace("/PROJECT", &project)).expect("json") };
    let calls: Vec<Value> = reference
        .iter()
        .filter(|l| l["type"] == "assistant")
        .filter_map(|l| l["message"]["content"].as_array()?.iter().find(|b| b["type"] == "tool_use").cloned())
        .map(|b| json!({"tool_calls": [{"id": b["id"], "name": b["name"], "arguments": here(&b["input"])}]}))
        .collect();
    assert_eq!(calls.len(), 4);
    let mut turns = calls;
    turns.push(json!({"text": "Done."}));
    let out = s.run(&s.script(json!(turns)), &["--settings", &settings.to_string(), "--output-format", "stream-json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let result = lines(&out).pop().expect("result line");
    assert_eq!(result["permission_denials"], here(&want), "{}", stderr(&out));
    assert!(
        !stderr(&out).contains("2 tool calls were refused") && stderr(&out).contains("1 tool call was refused"),
        "the note counts the policy's refusal only: {}",
        stderr(&out)
    );
}

// The fields of Claude Code 2.1.328's `init` that spine leaves out (docs/stream-json.md): the
// list spine's own unit tests and the SDK conformance test read.
use crate::sdk_conformance::left_out::INIT as INIT_LEFT_OUT;

#[test]
fn init_lists_the_offered_tools_every_mcp_server_with_its_status_and_the_commands_agents_skills_and_plugins() {
    let s = Sandbox::new();
    let good = spine_testkit::mcp::write_mcp_server(s.dir.path(), "good", &s.dir.path().join("good.started"), 0)
        .expect("mcp server");
    s.write(
        ".mcp.json",
        &json!({"mcpServers": {"good": good, "bad": {"command": "/nonexistent/mcp-server"}}}).to_string(),
    );
    s.write(".claude/commands/hello.md", "---\ndescription: Say hello\n---\nSay hello to $ARGUMENTS\n");
    s.write(".claude/skills/notes/SKILL.md", "---\nname: notes\ndescription: Write notes\n---\nWrite notes.\n");
    s.write(
        ".claude/agents/reviewer.md",
        "---\nname: reviewer\ndescription: Reviews code\ntools: Read\n---\nYou review code.\n",
    );
    let kit = s.dir.path().join("plugins/kit");
    spine_testkit::files::write_file(&kit, ".claude-plugin/plugin.json", r#"{"name": "kit", "version": "1.0.0"}"#);
    spine_testkit::files::write_file(&kit, "commands/review.md", "---\ndescription: Review\n---\nReview it.\n");
    s.trust();
    let server = SseServer::start(vec![anthropic_text("Done.")]);
    let out = s
        .spine()
        .env("ANTHROPIC_BASE_URL", format!("http://{}", server.addr))
        .env("ANTHROPIC_API_KEY", "sk-test")
        .args(["run", "-p", "hi", "--model", "anthropic:claude-opus-5-5", "--output-format", "stream-json"])
        .args(["--plugin-dir", kit.to_str().expect("utf8")])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let init = lines(&out).into_iter().next().expect("init line");
    assert_eq!((&init["type"], &init["subtype"]), (&json!("system"), &json!("init")));

    let reference = recorded("stream-json-init.jsonl").into_iter().next().expect("recorded init");
    let mut want = keys(&reference);
    for left_out in INIT_LEFT_OUT {
        assert!(want.remove(left_out), "{left_out} is in the recording");
    }
    want.insert("spine_version".into());
    assert_eq!(keys(&init), want);

    // Exactly the tools of the model's first request.
    let offered: Vec<Value> =
        server.bodies()[0]["tools"].as_array().expect("tools").iter().map(|t| t["name"].clone()).collect();
    assert_eq!(init["tools"], json!(offered));
    assert!(offered.contains(&json!("mcp__good__ping")) && offered.contains(&json!("Skill")), "{offered:?}");
    assert_eq!(
        init["mcp_servers"],
        json!([{"name": "good", "status": "connected"}, {"name": "bad", "status": "failed"}])
    );
    assert_eq!(
        keys(&init["mcp_servers"][0]),
        keys(&reference["mcp_servers"][0]).into_iter().filter(|k| k != "source").collect()
    );
    let has = |field: &str, name: &str| init[field].as_array().is_some_and(|a| a.contains(&json!(name)));
    assert!(
        has("slash_commands", "hello") && has("slash_commands", "notes") && has("slash_commands", "kit:review"),
        "{init}"
    );
    assert!(has("agents", "general-purpose") && has("agents", "reviewer"), "{init}");
    assert!(has("skills", "notes"), "{init}");
    let kit = kit.canonicalize().expect("kit").display().to_string();
    let plugin = init["plugins"].as_array().and_then(|p| p.iter().find(|p| p["name"] == "kit")).expect("kit listed");
    assert_eq!((&plugin["source"], &plugin["version"]), (&json!("kit@inline"), &json!("1.0.0")), "{plugin}");
    assert!(plugin["path"].as_str().is_some_and(|p| p == kit || p.ends_with("kit")), "{plugin}");
    assert_eq!(keys(plugin), keys(&reference["plugins"][0]));
    assert_eq!((&init["apiKeySource"], &init["output_style"]), (&json!("ANTHROPIC_API_KEY"), &json!("default")));
    assert_eq!(init["permissionMode"], "default");
}

#[test]
fn init_says_no_api_key_source_for_the_scripted_model_and_lists_added_directories() {
    let s = Sandbox::new();
    let extra = s.dir.path().join("extra");
    std::fs::create_dir_all(&extra).expect("extra dir");
    let out = s.run(
        &s.script(json!([{"text": "Done."}])),
        &["--output-format", "stream-json", "--add-dir", extra.to_str().expect("utf8")],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let init = lines(&out).into_iter().next().expect("init line");
    assert_eq!(init["apiKeySource"], "none");
    let dirs = init["additional_directories"].as_array().expect("list");
    assert!(dirs.iter().any(|d| d.as_str().is_some_and(|d| d.ends_with("extra"))), "{init}");
    assert_eq!(init["mcp_servers"], json!([]));
}
