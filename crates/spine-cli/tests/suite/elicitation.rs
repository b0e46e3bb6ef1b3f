//! MCP elicitation through the `spine` binary, with a real MCP server from npm
//! (`@modelcontextprotocol/server-everything`, whose `trigger-elicitation-request` tool asks
//! for a form and prints what it got back): Elicitation hooks answer in the user's place,
//! ElicitationResult hooks replace the answer, a non-interactive run declines with a warning,
//! a hook's content that does not match the schema is a contract error, and at a terminal the
//! user fills the form. The trace names the fields, never their values.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::support::*;

const TOOL: &str = "mcp__everything__trigger-elicitation-request";

/// `.mcp.json` with server-everything as `everything`, its tools allowed; the project trusted.
fn with_everything_server(s: &Sandbox) {
    let everything = spine_testkit::mcp::peer_entry("server-everything");
    s.write(
        ".mcp.json",
        &json!({"mcpServers": {"everything": {"command": "node", "args": [everything, "stdio"]}}}).to_string(),
    );
    s.write(".spine/settings.json", &json!({"permissions": {"allow": ["mcp__everything__*"]}}).to_string());
    s.trust();
}

/// The model calls the eliciting tool, then answers.
fn eliciting_script(s: &Sandbox) -> PathBuf {
    calling(s, TOOL, json!({}))
}

/// The model calls `tool` with `arguments`, then answers.
fn calling(s: &Sandbox, tool: &str, arguments: Value) -> PathBuf {
    s.script(json!([{"tool_calls": [{"id": "c1", "name": tool, "arguments": arguments}]}, {"text": "done"}]))
}

/// A command hook that appends its input to `log` and prints `answer` (when not null).
fn hook(s: &Sandbox, name: &str, log: &Path, answer: &Value) -> Value {
    let mut script = format!("#!/bin/sh\ncat >> '{}'\necho >> '{}'\n", log.display(), log.display());
    if !answer.is_null() {
        script.push_str(&format!("cat <<'EOF'\n{answer}\nEOF\n"));
    }
    let path = s.write(&format!("hooks/{name}.sh"), &script);
    json!({"type": "command", "command": format!("sh {}", path.display())})
}

/// `{"hookSpecificOutput": {"hookEventName": EVENT, …fields}}`.
fn answer(event: &str, fields: Value) -> Value {
    let mut specific = json!({"hookEventName": event});
    if let (Some(map), Some(extra)) = (specific.as_object_mut(), fields.as_object()) {
        map.extend(extra.clone());
    }
    json!({"hookSpecificOutput": specific})
}

/// Runs the eliciting script with `settings`; the JSON result, stderr and the trace lines.
fn run(s: &Sandbox, settings: &Value) -> (Value, String, Vec<Value>) {
    run_script(s, &eliciting_script(s), settings)
}

/// Runs `script` with `settings`; the JSON result, stderr and the trace lines.
fn run_script(s: &Sandbox, script: &Path, settings: &Value) -> (Value, String, Vec<Value>) {
    let trace = s.dir.path().join("trace.jsonl");
    let out = s.run(
        script,
        &[
            "--settings",
            &settings.to_string(),
            "--output-format",
            "json",
            "--include-messages",
            "--trace",
            &trace.display().to_string(),
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = std::fs::read_to_string(&trace).expect("trace");
    let lines = text.lines().map(|l| serde_json::from_str(l).expect("trace line")).collect();
    (json(&out), stderr(&out), lines)
}

/// The trace's one `elicitation` stage entry.
fn elicitation_entry(trace: &[Value]) -> Value {
    let entries: Vec<&Value> = trace.iter().filter(|e| e["kind"] == "stage" && e["hook"] == "elicitation").collect();
    assert_eq!(entries.len(), 1, "one elicitation entry: {trace:?}");
    entries[0].clone()
}

fn lines_of(log: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    text.lines().filter(|l| !l.trim().is_empty()).map(|l| serde_json::from_str(l).expect("hook input")).collect()
}

#[test]
fn an_elicitation_hook_that_accepts_answers_the_server_in_the_users_place_and_the_trace_keeps_no_value() {
    let s = Sandbox::new();
    with_everything_server(&s);
    let (elicit_log, result_log) = (s.dir.path().join("elicit.jsonl"), s.dir.path().join("result.jsonl"));
    let accept = answer("Elicitation", json!({"action": "accept", "content": {"name": "Ada Lovelace", "check": true}}));
    let settings = json!({"hooks": {
        "Elicitation": [{"matcher": "everything", "hooks": [hook(&s, "elicit", &elicit_log, &accept)]}],
        "ElicitationResult": [{"hooks": [hook(&s, "result", &result_log, &Value::Null)]}]
    }});
    let (result, _, trace) = run(&s, &settings);
    let text = first_tool_result(&result);
    assert!(text.contains("- Name: Ada Lovelace") && text.contains("- Agreed to terms: true"), "{text}");

    let asked = lines_of(&elicit_log);
    assert_eq!(asked.len(), 1);
    assert_eq!(asked[0]["hook_event_name"], "Elicitation");
    assert_eq!(asked[0]["mcp_server_name"], "everything");
    assert_eq!(asked[0]["mode"], "form");
    assert_eq!(asked[0]["message"], "Please provide inputs for the following fields:");
    assert_eq!(asked[0]["requested_schema"]["properties"]["name"]["type"], "string");
    let seen = lines_of(&result_log);
    assert_eq!(seen.len(), 1, "ElicitationResult sees the hook's answer");
    assert_eq!((&seen[0]["action"], &seen[0]["content"]["name"]), (&json!("accept"), &json!("Ada Lovelace")));

    let entry = elicitation_entry(&trace);
    assert_eq!(entry["tool_use_id"], "c1");
    assert_eq!(
        (&entry["server"], &entry["action"], &entry["answered_by"]),
        (&json!("everything"), &json!("accept"), &json!("hook"))
    );
    assert!(entry["hook_id"].as_str().is_some_and(|id| !id.is_empty()), "{entry}");
    assert_eq!(entry["fields"], json!(["name", "check"]));
    let hook_entries: Vec<&Value> = trace.iter().filter(|e| e["kind"] == "hook").collect();
    assert!(
        hook_entries.iter().any(|e| e["detail"]["action"]["content_fields"] == json!(["name", "check"])),
        "{hook_entries:?}"
    );
    // The server prints what it got in its tool result: that is the tool's output, traced as any.
    let leaks: Vec<&Value> =
        trace.iter().filter(|e| e["hook"] != "project_tool_result" && e.to_string().contains("Ada Lovelace")).collect();
    assert!(leaks.is_empty(), "spine writes no value of the answer to the trace: {leaks:?}");
}

#[test]
fn without_a_hook_a_run_nobody_can_answer_declines_and_warns_naming_the_server() {
    let s = Sandbox::new();
    with_everything_server(&s);
    let (result, stderr, trace) = run(&s, &json!({}));
    let text = first_tool_result(&result);
    assert!(text.contains("User declined to provide the requested information"), "{text}");
    assert!(
        stderr.contains(
            "MCP server `everything` asked for input (elicitation) and nobody can answer in this run; declined"
        ),
        "{stderr}"
    );
    let entry = elicitation_entry(&trace);
    assert_eq!(
        (&entry["action"], &entry["answered_by"], &entry["fields"]),
        (&json!("decline"), &json!("nobody"), &json!([]))
    );
    assert!(trace.iter().any(
        |e| e["kind"] == "warning" && e["message"].as_str().is_some_and(|m| m.contains("MCP server `everything`"))
    ));
}

#[test]
fn an_elicitation_result_hook_replaces_the_answer_before_it_is_sent() {
    let s = Sandbox::new();
    with_everything_server(&s);
    let log = s.dir.path().join("result.jsonl");
    let replace = answer("ElicitationResult", json!({"action": "accept", "content": {"name": "From the result hook"}}));
    let settings = json!({"hooks": {"ElicitationResult": [
        {"matcher": "everything", "hooks": [hook(&s, "result", &log, &replace)]}
    ]}});
    let (result, _, trace) = run(&s, &settings);
    let text = first_tool_result(&result);
    assert!(text.contains("- Name: From the result hook"), "the replaced answer reached the server: {text}");
    let seen = lines_of(&log);
    assert_eq!(seen[0]["action"], "decline", "the hook saw the answer it replaced (nobody could answer)");
    assert_eq!(seen[0]["mcp_server_name"], "everything");
    assert_eq!(seen[0]["mode"], "form");
    let entry = elicitation_entry(&trace);
    assert_eq!((&entry["action"], &entry["answered_by"]), (&json!("accept"), &json!("nobody")));
    assert!(entry["replaced_by"].as_str().is_some_and(|id| !id.is_empty()), "{entry}");
}

#[test]
fn a_hooks_content_that_does_not_match_the_requested_schema_is_a_contract_error_and_declines() {
    let s = Sandbox::new();
    with_everything_server(&s);
    let result_log = s.dir.path().join("result.jsonl");
    let bad = answer("Elicitation", json!({"action": "accept", "content": {"integer": "forty-two"}}));
    let accept = answer("ElicitationResult", json!({"action": "accept", "content": {"name": "sneaked in"}}));
    let settings = json!({"hooks": {
        "Elicitation": [{"hooks": [hook(&s, "bad", &s.dir.path().join("elicit.jsonl"), &bad)]}],
        "ElicitationResult": [{"hooks": [hook(&s, "result", &result_log, &accept)]}]
    }});
    let (result, stderr, trace) = run(&s, &settings);
    let text = first_tool_result(&result);
    assert!(text.contains("User declined to provide the requested information"), "{text}");
    assert!(stderr.contains("Elicitation hook") && stderr.contains("contract_error"), "{stderr}");
    assert!(
        stderr.contains("the required field \"name\" is missing") && stderr.contains("`/integer` fails `type`"),
        "{stderr}"
    );
    assert!(!stderr.contains("forty-two"), "the warning names fields, not values: {stderr}");
    assert!(lines_of(&result_log).is_empty(), "the contract error's decline is final");
    let entry = elicitation_entry(&trace);
    assert_eq!((&entry["action"], &entry["answered_by"]), (&json!("decline"), &json!("hook")));
}

#[test]
fn a_url_elicitation_shows_hooks_its_url_and_id_and_an_accept_carries_no_content() {
    let s = Sandbox::new();
    with_everything_server(&s);
    let (elicit_log, result_log) = (s.dir.path().join("elicit.jsonl"), s.dir.path().join("result.jsonl"));
    let accept = answer("Elicitation", json!({"action": "accept", "content": {"ignored": true}}));
    let settings = json!({"hooks": {
        "Elicitation": [{"hooks": [hook(&s, "elicit", &elicit_log, &accept)]}],
        "ElicitationResult": [{"hooks": [hook(&s, "result", &result_log, &Value::Null)]}]
    }});
    let arguments =
        json!({"url": "https://example.com/sign-in", "message": "Sign in, please", "elicitationId": "e-42"});
    let script = calling(&s, "mcp__everything__trigger-url-elicitation", arguments);
    let (result, _, trace) = run_script(&s, &script, &settings);
    let text = first_tool_result(&result);
    assert!(text.contains("User completed the URL elicitation flow") && !text.contains("ignored"), "{text}");
    let asked = &lines_of(&elicit_log)[0];
    assert_eq!((&asked["mode"], &asked["url"]), (&json!("url"), &json!("https://example.com/sign-in")));
    assert_eq!((&asked["elicitation_id"], &asked["message"]), (&json!("e-42"), &json!("Sign in, please")));
    assert!(asked.get("requested_schema").is_none(), "{asked}");
    let seen = &lines_of(&result_log)[0];
    assert_eq!(
        (&seen["action"], &seen["elicitation_id"], &seen["mode"]),
        (&json!("accept"), &json!("e-42"), &json!("url"))
    );
    assert!(seen.get("content").is_none(), "{seen}");
    let entry = elicitation_entry(&trace);
    assert_eq!((&entry["mode"], &entry["action"], &entry["fields"]), (&json!("url"), &json!("accept"), &json!([])));
}

#[test]
fn at_a_terminal_the_user_fills_the_form_field_by_field_in_a_session() {
    let s = Sandbox::new();
    with_everything_server(&s);
    let script = eliciting_script(&s);
    let tmux = chat_session(&s, &script, &[], "");
    tmux.send_line("ask me");
    let screen = tmux.wait_for("[a]nswer / [d]ecline / [c]ancel");
    assert!(screen.contains("MCP server `everything` asks: Please provide inputs"), "{screen}");
    tmux.send_line("a");
    tmux.wait_for("Your full, legal name");
    tmux.send_line("");
    tmux.wait_for("This field is required.");
    tmux.send_line("Ada Lovelace");
    // Every other field is optional or has a default: Enter takes it.
    for field in [
        "Agree to the terms",
        "Favorite first line",
        "Your email address",
        "Portfolio / personal website",
        "Your date of birth",
        "Your favorite integer",
        "Favorite number",
        "Choose your favorite friend",
        "Choose your favorite instruments",
        "Choose your favorite hero",
        "Choose your favorite types of fish",
        "Choose your favorite type of pet",
    ] {
        tmux.wait_for(field);
        tmux.send_line("");
    }
    tmux.wait_for("done");
    tmux.send_line("/exit");
    tmux.wait_for("EXIT=0");
    let transcript: String = s
        .session_files()
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .map(|p| std::fs::read_to_string(p).unwrap_or_default())
        .collect();
    assert!(transcript.contains("- Name: Ada Lovelace"), "the server got the typed name");
    assert!(transcript.contains("- Favorite Integer: 42"), "Enter took the default");
}

#[test]
fn an_elicitation_hook_answering_continue_false_declines_and_ends_the_run_after_the_tool_call() {
    for event in ["Elicitation", "ElicitationResult"] {
        let s = Sandbox::new();
        with_everything_server(&s);
        let result_log = s.dir.path().join("result.jsonl");
        // Even with an accept beside it: `continue: false` declines.
        let mut stop = answer(event, json!({"action": "accept", "content": {"name": "Ada Lovelace"}}));
        if let Some(map) = stop.as_object_mut() {
            map.extend([("continue".to_owned(), json!(false)), ("stopReason".to_owned(), json!("no forms today"))]);
        }
        let stopping = json!([{"hooks": [hook(&s, "stop", &s.dir.path().join("stop.jsonl"), &stop)]}]);
        let mut hooks = json!({event: stopping});
        if event == "Elicitation"
            && let Some(map) = hooks.as_object_mut()
        {
            let logging = hook(&s, "result", &result_log, &Value::Null);
            map.insert("ElicitationResult".to_owned(), json!([{"hooks": [logging]}]));
        }
        let settings = json!({"permissions": {"allow": ["Bash"]}, "hooks": hooks});
        let script = s.script(json!([
            {"tool_calls": [
                {"id": "c1", "name": TOOL, "arguments": {}},
                {"id": "c2", "name": "Bash", "arguments": {"command": "touch after-the-stop"}}
            ]},
            {"text": "never asked"}
        ]));
        let trace = s.dir.path().join("trace.jsonl");
        let out = s.run(
            &script,
            &[
                "--settings",
                &settings.to_string(),
                "--output-format",
                "json",
                "--include-messages",
                "--trace",
                &trace.display().to_string(),
            ],
        );
        assert_eq!(out.status.code(), Some(1), "a stopped run is blocked ({event}): {}", stderr(&out));
        let result = json(&out);
        assert_eq!((&result["subtype"], &result["hook_stop_reason"]), (&json!("blocked"), &json!("no forms today")));
        assert_eq!(result["num_turns"], 1, "no model request after the call ({event}): {result}");
        let results = tool_results(&result);
        assert!(results[0].contains("User declined to provide the requested information"), "{event}: {results:?}");
        assert!(results[1].starts_with("Error [hook_stopped_continuation]"), "{event}: {results:?}");
        assert!(!s.project().join("after-the-stop").exists(), "the rest of the batch does not run");
        assert!(lines_of(&result_log).is_empty(), "no hook runs after the stop ({event})");
        let lines: Vec<Value> = std::fs::read_to_string(&trace)
            .expect("trace")
            .lines()
            .map(|l| serde_json::from_str(l).expect("trace line"))
            .collect();
        let entry = elicitation_entry(&lines);
        assert_eq!(entry["action"], "decline", "{event}: {entry}");
        assert!(entry["stopped_by"].as_str().is_some_and(|id| id.contains("stop.sh")), "{event}: {entry}");
    }
}

#[test]
fn a_notification_fires_with_elicitation_dialog_before_the_user_is_asked_at_a_terminal() {
    let s = Sandbox::new();
    with_everything_server(&s);
    let log = s.dir.path().join("notification.jsonl");
    let settings = json!({"hooks": {"Notification": [{"hooks": [hook(&s, "notify", &log, &Value::Null)]}]}});
    // Nobody can answer `-p` without a terminal: no dialog, no notification.
    let (result, _, _) = run(&s, &settings);
    assert!(first_tool_result(&result).contains("User declined"), "{result}");
    assert!(lines_of(&log).iter().all(|n| n["notification_type"] != "elicitation_dialog"), "{:?}", lines_of(&log));

    s.write(".spine/settings.local.json", &settings.to_string());
    let tmux = chat_session(&s, &eliciting_script(&s), &[], "");
    tmux.send_line("ask me");
    tmux.wait_for("[a]nswer / [d]ecline / [c]ancel");
    let notes = lines_of(&log);
    let dialog: Vec<&Value> = notes.iter().filter(|n| n["notification_type"] == "elicitation_dialog").collect();
    assert_eq!(dialog.len(), 1, "fired before the question: {notes:?}");
    assert_eq!(
        (&dialog[0]["hook_event_name"], &dialog[0]["message"]),
        (&json!("Notification"), &json!("spine needs your input"))
    );
    tmux.send_line("d");
    tmux.wait_for("done");
    tmux.send_line("/exit");
    tmux.wait_for("EXIT=0");
}
