//! Skills as Claude Code and Codex lay them out, end to end: the listing the model receives,
//! the `Skill` tool (Claude Code 2.1.328's name and schema; its result the skill's body), the
//! narrowing of an active skill's `allowed-tools` (never past a deny rule), a plugin's
//! namespaced skill, `disable-model-invocation`, a skill's `model`, `/skill` in a chat, and an
//! output style in the system prompt. The shapes come from
//! `tests/fixtures/claude-code-2.1.328/skill-tool.json`, `skill-slash.json` and
//! `output-style.json` (written into the assertions, not read).

use std::path::Path;

use serde_json::{Value, json};

use crate::support::*;

fn skill_call(id: &str, skill: &str, args: Option<&str>) -> Value {
    let mut arguments = json!({"skill": skill});
    if let Some(args) = args {
        arguments["args"] = json!(args);
    }
    json!({"id": id, "name": "Skill", "arguments": arguments})
}

fn path(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}

/// The system message of a `--include-messages` JSON result.
fn system_of(out: &std::process::Output) -> String {
    json(out)["messages"][0]["content"].as_str().expect("the system message").to_owned()
}

const DEPLOY: &str = "---\nname: deploy-notes\ndescription: Write deployment notes for a release.\n\
argument-hint: \"[version] [env]\"\n---\nWrite deployment notes for $ARGUMENTS (first: $0, second: $1).\n\
Read ${CLAUDE_SKILL_DIR}/template.md first.\n";

#[test]
fn the_model_gets_the_listing_and_the_skill_tool_and_a_skill_call_returns_the_body() {
    let s = Sandbox::new();
    s.write(".claude/skills/deploy-notes/SKILL.md", DEPLOY);
    s.write(".claude/skills/deploy-notes/template.md", "# Template\n");
    s.write(
        ".claude/skills/manual-only/SKILL.md",
        "---\ndescription: Only you.\ndisable-model-invocation: true\n---\nM\n",
    );
    s.write(".agents/skills/codex-one/SKILL.md", "---\nname: codex-one\ndescription: From .agents.\n---\nC\n");
    spine_testkit::files::write_file(
        s.dir.path(),
        ".claude/skills/twin/SKILL.md",
        "---\ndescription: User twin.\n---\nUSER TWIN\n",
    );
    s.write(".claude/skills/twin/SKILL.md", "---\ndescription: Project twin.\n---\nPROJECT TWIN\n");
    let call = json!({"skill": "deploy-notes", "args": "v1.2 staging"});
    let server = SseServer::start(vec![
        anthropic_tool_use("t1", "Skill", &call),
        anthropic_tool_use("t2", "Skill", &json!({"skill": "twin"})),
        anthropic_text("done"),
    ]);
    let out = s
        .spine()
        .env("ANTHROPIC_BASE_URL", format!("http://{}", server.addr))
        .env("ANTHROPIC_API_KEY", "k")
        .args(["run", "-p", "go", "--model", "anthropic:claude-sonnet-4-5"])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let bodies = server.bodies();
    let tools = bodies[0]["tools"].as_array().cloned().unwrap_or_default();
    let skill = tools.iter().find(|t| t["name"] == "Skill").expect("the Skill tool is offered");
    let schema = &skill["input_schema"];
    assert_eq!(schema["required"], json!(["skill"]));
    assert_eq!(schema["additionalProperties"], json!(false));
    assert_eq!(
        schema["properties"]["skill"]["description"],
        "The name of a skill from the available-skills list. Do not guess names."
    );
    assert_eq!(schema["properties"]["args"]["description"], "Optional arguments for the skill");
    let system = bodies[0]["system"].to_string();
    let listing = "The following skills are available for use with the Skill tool:\\n\\n- twin: User twin.\\n\
                   - deploy-notes: Write deployment notes for a release.\\n- codex-one: From .agents.";
    assert!(system.contains(listing), "the user's twin wins and comes first: {system}");
    assert!(!system.contains("manual-only"), "disable-model-invocation is not listed: {system}");
    let result = bodies[1]["messages"].to_string();
    let dir = s.project().join(".claude/skills/deploy-notes");
    let expected = format!(
        "Launching skill: deploy-notes\\n\\nBase directory for this skill: {d}\\n\\nWrite deployment notes for \
         v1.2 staging (first: v1.2, second: staging).\\nRead {d}/template.md first.",
        d = dir.display()
    );
    assert!(result.contains(&expected), "{result}");
    assert!(bodies[2]["messages"].to_string().contains("USER TWIN"), "the personal skill overrides the project's");
}

#[test]
fn allowed_tools_narrow_later_calls_naming_the_skill_and_never_widen_past_a_deny_rule() {
    let s = Sandbox::new();
    s.write(
        ".claude/skills/reader/SKILL.md",
        "---\ndescription: Reads only.\nallowed-tools: Read, Bash(echo *)\n---\nOnly read.\n",
    );
    s.write("notes.txt", "the notes\n");
    spine_testkit::files::write_file(
        &s.home(),
        "settings.json",
        &json!({"permissions": {"deny": ["Bash(echo secret)"]}}).to_string(),
    );
    let calls = [
        skill_call("c1", "reader", None),
        json!({"id": "c2", "name": "Write", "arguments": {"file_path": "out.txt", "content": "x"}}),
        json!({"id": "c3", "name": "Bash", "arguments": {"command": "echo hi"}}),
        json!({"id": "c4", "name": "Bash", "arguments": {"command": "echo secret"}}),
        json!({"id": "c5", "name": "Read", "arguments": {"file_path": "notes.txt"}}),
    ];
    let script = s.script(json!([{"tool_calls": calls}, {"text": "done"}]));
    let trace = s.dir.path().join("trace.jsonl");
    let out = s.run(
        &script,
        &[
            "--permission-mode",
            "bypassPermissions",
            "--output-format",
            "json",
            "--include-messages",
            "--trace",
            path(&trace),
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let results = tool_results(&json(&out));
    assert!(results[0].starts_with("Launching skill: reader"), "{results:?}");
    assert!(
        results[1].contains("permission_denied")
            && results[1].contains("Write is not allowed while the skill `reader` is active")
            && results[1].contains("allowed-tools are Read, Bash(echo *)"),
        "bypass mode allows it, the skill does not: {results:?}"
    );
    assert!(!s.project().join("out.txt").exists());
    assert!(results[2].contains("hi"), "{results:?}");
    assert!(results[3].contains("denied by rule Bash(echo secret)"), "the list never widens: {results:?}");
    assert!(results[4].contains("the notes"), "{results:?}");
    let decision = spine_testkit::files::read_jsonl(&trace)
        .into_iter()
        .find(|e| e["kind"] == "tool_decision" && e["tool_use_id"] == "c2")
        .expect("c2's decision");
    assert_eq!(decision["permission"]["source"], json!({"type": "skill", "skill": "reader"}), "{decision}");
}

#[test]
fn a_narrowing_skill_applies_to_the_run_that_loaded_it_only() {
    let s = Sandbox::new();
    s.write(".claude/skills/reader/SKILL.md", "---\ndescription: Reads only.\nallowed-tools: Read\n---\nOnly read.\n");
    let first = s.script(json!([{"tool_calls": [skill_call("c1", "reader", None)]}, {"text": "loaded"}]));
    let out = s.run(&first, &["--output-format", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let id = json(&out)["session_id"].as_str().expect("session id").to_owned();
    let second = s.script(json!([
        {"tool_calls": [{"id": "c2", "name": "Bash", "arguments": {"command": "echo next"}}]},
        {"text": "done"}
    ]));
    let out = s
        .spine()
        .args(["run", "-p", "again", "--resume", &id, "--model", &format!("scripted:{}", second.display())])
        .args(["--permission-mode", "bypassPermissions", "--output-format", "json", "--include-messages"])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(tool_results(&json(&out)).last().is_some_and(|r| r.contains("next")), "the next prompt is free again");
}

#[test]
fn a_plugin_skill_is_namespaced_and_its_plugin_root_is_filled_in() {
    let s = Sandbox::new();
    let plugin = s.dir.path().join("tools-plugin");
    spine_testkit::files::write_file(&plugin, ".claude-plugin/plugin.json", r#"{"name": "tools"}"#);
    spine_testkit::files::write_file(
        &plugin,
        "skills/review/SKILL.md",
        "---\ndescription: Review with the plugin's checker.\n---\nRun ${CLAUDE_PLUGIN_ROOT}/bin/check on $ARGUMENTS.\n",
    );
    let script = s.script(json!([{"tool_calls": [skill_call("c1", "tools:review", Some("src"))]}, {"text": "done"}]));
    let out = s.run(&script, &["--plugin-dir", path(&plugin), "--output-format", "json", "--include-messages"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(system_of(&out).contains("- tools:review: Review with the plugin's checker."), "{}", system_of(&out));
    let root = plugin.canonicalize().expect("canonical");
    let result = &tool_results(&json(&out))[0];
    assert!(result.starts_with("Launching skill: tools:review"), "{result}");
    assert!(result.contains(&format!("Run {}/bin/check on src.", root.display())), "{result}");
}

#[test]
fn disable_model_invocation_hides_a_skill_from_the_model_and_the_tool_refuses_it() {
    let s = Sandbox::new();
    s.write(
        ".claude/skills/deploy/SKILL.md",
        "---\ndescription: Deploys.\ndisable-model-invocation: true\n---\nDEPLOY\n",
    );
    s.write(".claude/skills/notes/SKILL.md", "---\ndescription: Notes.\n---\nNOTES\n");
    let script = s.script(
        json!([{"tool_calls": [skill_call("c1", "deploy", None), skill_call("c2", "nope", None)]}, {"text": "done"}]),
    );
    let out = s.run(&script, &["--output-format", "json", "--include-messages"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let system = system_of(&out);
    assert!(system.contains("- notes: Notes.") && !system.contains("deploy"), "{system}");
    let results = tool_results(&json(&out));
    assert!(results[0].contains("tool_not_allowed") && results[0].contains("disable-model-invocation"), "{results:?}");
    assert!(results[0].contains("Ask the user to run /deploy themselves"), "{results:?}");
    assert!(results[1].contains("not_found") && results[1].contains("Unknown skill: nope"), "{results:?}");
}

#[test]
fn skill_calls_go_through_hooks_and_skill_permission_rules() {
    let s = Sandbox::new();
    let log = s.dir.path().join("hooks.jsonl");
    let hook = logging(&log, &json!({}));
    let settings = json!({
        "hooks": {"PreToolUse": [{"matcher": "Skill", "hooks": [hook.clone()]}], "PostToolUse": [{"matcher": "Skill", "hooks": [hook]}]},
        "permissions": {"deny": ["Skill(secret *)"]}
    });
    s.write(".claude/settings.json", &settings.to_string());
    s.trust();
    s.write(".claude/skills/notes/SKILL.md", "---\ndescription: Notes.\nmodel: inherit\n---\nNOTES\n");
    s.write(".claude/skills/secret/SKILL.md", "---\ndescription: Secret.\n---\nSECRET\n");
    let script = s.script(
        json!([{"tool_calls": [skill_call("c1", "/notes", None), skill_call("c2", "secret", None)]}, {"text": "done"}]),
    );
    let out = s.run(&script, &["--output-format", "json", "--include-messages"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let results = tool_results(&json(&out));
    assert!(results[0].contains("NOTES"), "{results:?}");
    assert!(results[1].contains("denied by rule Skill(secret *)") && !results[1].contains("SECRET"), "{results:?}");
    let inputs = logged(&log);
    assert_eq!(inputs[0]["tool_name"], "Skill");
    assert_eq!(inputs[0]["tool_input"], json!({"skill": "notes"}), "the leading slash is dropped");
    let post = inputs.iter().find(|i| i["hook_event_name"] == "PostToolUse").expect("PostToolUse");
    assert_eq!(post["tool_response"]["success"], true);
    assert_eq!(post["tool_response"]["commandName"], "notes");
}

#[test]
fn a_skills_model_serves_the_rest_of_the_run() {
    let s = Sandbox::new();
    let other = s.dir.path().join("other.json");
    spine_testkit::script::write_script_file(&other, json!([{"text": "answered by the skill's model"}]))
        .expect("script");
    spine_testkit::files::write_file(
        &s.home(),
        "skills/fast/SKILL.md",
        &format!("---\ndescription: Fast.\nmodel: scripted:{}\n---\nBe fast.\n", other.display()),
    );
    let script = s
        .script(json!([{"tool_calls": [skill_call("c1", "fast", None)]}, {"text": "answered by the session's model"}]));
    let out = s.run(&script, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out), "answered by the skill's model\n");

    // A project's skill in an untrusted project keeps the run's model, and says so in one line.
    let s = Sandbox::new();
    s.write(
        ".claude/skills/fast/SKILL.md",
        &format!("---\ndescription: Fast.\nmodel: scripted:{}\n---\nBe fast.\n", other.display()),
    );
    let script = s
        .script(json!([{"tool_calls": [skill_call("c1", "fast", None)]}, {"text": "answered by the session's model"}]));
    let out = s.run(&script, &[]);
    assert_eq!(stdout(&out), "answered by the session's model\n", "{}", stderr(&out));
    assert!(stderr(&out).contains("skill `fast` asks for the model"), "{}", stderr(&out));
}

#[test]
fn an_output_style_adds_its_layer_and_replaces_the_coding_prompt() {
    let s = Sandbox::new();
    s.write(
        ".claude/output-styles/terse.md",
        "---\nname: Terse\ndescription: Short answers\n---\nTERSE STYLE BODY: answer in one line.\n",
    );
    s.write(".claude/settings.json", r#"{"outputStyle": "Terse"}"#);
    let script = s.script(json!([{"text": "ok"}]));
    let out = s.run(&script, &["--output-format", "json", "--include-messages"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let system = system_of(&out);
    assert!(system.contains("Output Style: Terse:\nTERSE STYLE BODY: answer in one line."), "{system}");
    assert!(
        system.starts_with("Agent Prompt:\nYou are spine, an agent that helps users according to your Output Style"),
        "{system}"
    );

    let s = Sandbox::new();
    s.write(".claude/settings.json", r#"{"outputStyle": "Explanatory"}"#);
    let script = s.script(json!([{"text": "ok"}]));
    let out = s.run(&script, &["--output-format", "json", "--include-messages"]);
    let system = system_of(&out);
    assert!(
        system.contains("Output Style: Explanatory:") && system.contains("Inspect before you change anything"),
        "{system}"
    );
}

#[test]
fn a_slash_skill_in_a_chat_runs_its_body_as_the_prompt_and_narrows_that_turn() {
    let s = Sandbox::new();
    s.write(
        ".claude/skills/deploy-notes/SKILL.md",
        &DEPLOY.replace("argument-hint", "allowed-tools: Read\nargument-hint"),
    );
    let script = s.dir.path().join("chat.json");
    let write = json!({"id": "w1", "name": "Write", "arguments": {"file_path": "x.txt", "content": "x"}});
    spine_testkit::script::write_script_file(&script, json!([{"tool_calls": [write]}, {"text": "notes written"}]))
        .expect("script");
    let tmux = chat_session(&s, &script, &[], "--permission-mode bypassPermissions");
    tmux.send_line("/deploy-notes v9");
    tmux.wait_for("notes written");
    tmux.send_line("/exit");
    tmux.wait_for("EXIT=0");
    assert!(!s.project().join("x.txt").exists(), "the skill's allowed-tools narrow its turn");
    let transcript: String = s
        .session_files()
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .map(|p| std::fs::read_to_string(p).unwrap_or_default())
        .collect();
    let dir = s.project().join(".claude/skills/deploy-notes");
    let prompt = format!(
        "<command-message>deploy-notes</command-message>\\n<command-name>/deploy-notes</command-name>\\n\
         <command-args>v9</command-args>\\n\\nBase directory for this skill: {}\\n\\nWrite deployment notes for v9 \
         (first: v9, second: $1).",
        dir.display()
    );
    assert!(transcript.contains(&prompt), "{transcript}");
    assert!(transcript.contains("the skill `deploy-notes` is active"), "{transcript}");
}
