//! The Agent SDK protocol at the wire (`--input-format stream-json`), driven by a host written
//! here line by line: turns, spine's requests (`can_use_tool`, `hook_callback`) and their
//! answers, the host's requests, malformed lines, a host that goes away. The official SDKs
//! drive the same binary in `sdk_hosts`.

use std::io::Write;
use std::path::Path;
use std::process::{Child, ChildStdin, ExitStatus, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::{Value, json};

use crate::support::Sandbox;

/// How long a test waits for one line before it fails with what it saw.
const LINE_WAIT: Duration = Duration::from_secs(60);

/// A host speaking the protocol by hand.
struct RawHost {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<Value>,
    seen: Vec<Value>,
}

impl RawHost {
    fn start(s: &Sandbox, script: &Path, extra: &[&str]) -> RawHost {
        let mut cmd = s.spine_process();
        cmd.args(["--output-format", "stream-json", "--verbose", "--input-format", "stream-json"])
            .arg("--model")
            .arg(format!("scripted:{}", script.display()))
            .args(extra)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        let mut child = cmd.spawn().expect("spine starts");
        let lines = crate::support::json_lines(child.stdout.take().expect("stdout"));
        let stdin = child.stdin.take();
        RawHost { child, stdin, lines, seen: Vec::new() }
    }

    fn send(&mut self, value: &Value) {
        self.send_raw(&value.to_string());
    }

    fn send_raw(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        writeln!(stdin, "{line}").expect("write to spine");
        stdin.flush().expect("flush");
    }

    fn user(&mut self, text: &str) {
        self.send(&json!({"type": "user", "message": {"role": "user", "content": text}, "parent_tool_use_id": null, "session_id": ""}));
    }

    fn request(&mut self, id: &str, body: Value) {
        self.send(&json!({"type": "control_request", "request_id": id, "request": body}));
    }

    fn answer(&mut self, request_id: &str, response: Value) {
        self.send(&json!({"type": "control_response", "response": {"subtype": "success", "request_id": request_id, "response": response}}));
    }

    fn answer_error(&mut self, request_id: &str, error: &str) {
        self.send(&json!({"type": "control_response", "response": {"subtype": "error", "request_id": request_id, "error": error}}));
    }

    /// Reads lines until one matches; every line read is kept in `seen`.
    fn until(&mut self, what: &str, matches: impl Fn(&Value) -> bool) -> Value {
        loop {
            match self.lines.recv_timeout(LINE_WAIT) {
                Ok(line) => {
                    self.seen.push(line.clone());
                    if matches(&line) {
                        return line;
                    }
                }
                Err(_) => panic!("no {what} line; saw:\n{}", lines_text(&self.seen)),
            }
        }
    }

    fn result(&mut self) -> Value {
        self.until("result", |l| l["type"] == "result")
    }

    /// spine's next request of the host with this subtype.
    fn spine_request(&mut self, subtype: &str) -> Value {
        self.until(subtype, |l| l["type"] == "control_request" && l["request"]["subtype"] == subtype)
    }

    /// The answer to the host's request `id`.
    fn response(&mut self, id: &str) -> Value {
        self.until("control_response", |l| l["type"] == "control_response" && l["response"]["request_id"] == id)
    }

    /// Closes stdin, reads what remains, and waits for the exit.
    fn close(mut self) -> (ExitStatus, Vec<Value>) {
        drop(self.stdin.take());
        while let Ok(line) = self.lines.recv_timeout(LINE_WAIT) {
            self.seen.push(line);
        }
        let status = self.child.wait().expect("spine exits");
        (status, self.seen)
    }
}

fn lines_text(lines: &[Value]) -> String {
    lines.iter().map(Value::to_string).collect::<Vec<_>>().join("\n")
}

fn bash(id: &str, command: &str) -> Value {
    json!({"tool_calls": [{"id": id, "name": "Bash", "arguments": {"command": command}}]})
}

#[test]
fn each_user_message_is_a_turn_of_one_session_with_its_own_result() {
    let s = Sandbox::new();
    let script = s.script(json!([{"text": "first answer"}, {"text": "second answer"}]));
    let mut host = RawHost::start(&s, &script, &[]);
    host.user("one");
    let first = host.result();
    assert_eq!(first["result"], "first answer");
    host.user("two");
    let second = host.result();
    assert_eq!(second["result"], "second answer");
    assert_eq!(first["session_id"], second["session_id"], "one session");
    let (status, seen) = host.close();
    assert_eq!(status.code(), Some(0));
    let inits = seen.iter().filter(|l| l["type"] == "system" && l["subtype"] == "init").count();
    assert_eq!(inits, 2, "each turn starts with init:\n{}", lines_text(&seen));
    // The second turn continued the conversation: the transcript holds both prompts.
    let id = first["session_id"].as_str().expect("session id");
    let transcript = std::fs::read_to_string(s.session_file(id, "jsonl").expect("transcript")).expect("read");
    assert!(transcript.contains("\"one\"") && transcript.contains("\"two\""), "{transcript}");
}

#[test]
fn messages_sent_during_a_turn_wait_for_it_in_order() {
    let s = Sandbox::new();
    let script = s.script(json!([bash("c1", "sleep 1"), {"text": "a"}, {"text": "b"}, {"text": "c"}]));
    let mut host = RawHost::start(&s, &script, &["--allowedTools", "Bash(sleep:*)"]);
    host.user("one");
    host.until("tool call", |l| l["type"] == "assistant");
    host.user("two");
    host.user("three");
    let results: Vec<String> =
        (0..3).map(|_| host.result()["result"].as_str().unwrap_or_default().to_owned()).collect();
    assert_eq!(results, ["a", "b", "c"]);
    let (status, _) = host.close();
    assert_eq!(status.code(), Some(0));
}

#[test]
fn replayed_user_messages_come_back_before_their_turn() {
    let s = Sandbox::new();
    let script = s.script(json!([{"text": "ok"}]));
    let mut host = RawHost::start(&s, &script, &["--replay-user-messages"]);
    host.user("echo me");
    let replay = host.until("replay", |l| l["type"] == "user");
    assert_eq!(replay["message"]["content"], "echo me");
    assert_eq!(replay["isReplay"], true);
    host.result();
    let (status, seen) = host.close();
    assert_eq!(status.code(), Some(0));
    let replay_at = seen.iter().position(|l| l["type"] == "user").expect("replay");
    let init_at = seen.iter().position(|l| l["subtype"] == "init").expect("init");
    assert!(replay_at < init_at, "{}", lines_text(&seen));
}

#[test]
fn can_use_tool_rewrites_are_checked_against_the_deny_rules_again() {
    let s = Sandbox::new();
    std::fs::create_dir_all(s.project().join("important")).expect("dir");
    let script = s.script(json!([bash("c1", "touch asked"), bash("c2", "touch asked"), {"text": "done"}]));
    let mut host =
        RawHost::start(&s, &script, &["--permission-prompt-tool", "stdio", "--disallowedTools", "Bash(rm:*)"]);
    host.user("go");
    // The first ask: rewritten into a command a deny rule refuses.
    let ask = host.spine_request("can_use_tool");
    assert_eq!(ask["request"]["tool_name"], "Bash");
    assert_eq!(ask["request"]["input"]["command"], "touch asked");
    assert_eq!(ask["request"]["tool_use_id"], "c1");
    let id = ask["request_id"].as_str().expect("id").to_owned();
    host.answer(&id, json!({"behavior": "allow", "updatedInput": {"command": "rm -rf important"}}));
    // The second: rewritten into a harmless command, which runs instead of the one asked.
    let ask = host.spine_request("can_use_tool");
    let id = ask["request_id"].as_str().expect("id").to_owned();
    host.answer(&id, json!({"behavior": "allow", "updatedInput": {"command": "touch rewritten"}}));
    let result = host.result();
    let (status, _) = host.close();
    assert_eq!(status.code(), Some(0));
    assert!(s.project().join("important").is_dir(), "the deny rule held against the rewrite");
    assert!(s.project().join("rewritten").exists(), "the allowed rewrite ran");
    assert!(!s.project().join("asked").exists(), "the asked command did not run");
    let denials = result["permission_denials"].as_array().cloned().unwrap_or_default();
    assert_eq!(denials.len(), 1, "{result}");
    assert_eq!(denials[0]["tool_use_id"], "c1");
}

#[test]
fn a_deny_answer_reaches_the_model_and_interrupt_true_ends_the_turn() {
    let s = Sandbox::new();
    let script = s.script(json!([bash("c1", "touch one"), bash("c2", "touch two"), {"text": "never"}]));
    let mut host = RawHost::start(&s, &script, &["--permission-prompt-tool", "stdio"]);
    host.user("go");
    let ask = host.spine_request("can_use_tool");
    let id = ask["request_id"].as_str().expect("id").to_owned();
    host.answer(&id, json!({"behavior": "deny", "message": "not today"}));
    let refused = host.until("tool result", |l| l["type"] == "user");
    assert!(refused.to_string().contains("not today"), "{refused}");
    let ask = host.spine_request("can_use_tool");
    let id = ask["request_id"].as_str().expect("id").to_owned();
    host.answer(&id, json!({"behavior": "deny", "message": "stop", "interrupt": true}));
    let result = host.result();
    assert_eq!(result["subtype"], "error_during_execution", "{result}");
    assert_eq!(result["spine_subtype"], "canceled", "{result}");
    let (_, _) = host.close();
    assert!(!s.project().join("one").exists() && !s.project().join("two").exists());
}

#[test]
fn interrupt_cancels_a_running_command_and_answers_its_call() {
    let s = Sandbox::new();
    let script = s.script(json!([bash("c1", "sleep 300"), {"text": "never"}]));
    let mut host = RawHost::start(&s, &script, &["--allowedTools", "Bash(sleep:*)"]);
    host.user("go");
    host.until("tool call", |l| l["type"] == "assistant");
    host.request("int_1", json!({"subtype": "interrupt"}));
    let answer = host.response("int_1");
    assert_eq!(answer["response"]["subtype"], "success");
    let result = host.result();
    assert_eq!(result["subtype"], "error_during_execution", "{result}");
    assert_eq!(answer["response"]["response"]["still_queued"], json!([]));
    let (_, seen) = host.close();
    let answered = seen.iter().any(|l| l["type"] == "user" && l.to_string().contains("c1"));
    assert!(answered, "the pending call was answered:\n{}", lines_text(&seen));
}

#[test]
fn a_malformed_line_is_answered_and_the_session_goes_on() {
    let s = Sandbox::new();
    let script = s.script(json!([{"text": "still here"}]));
    let mut host = RawHost::start(&s, &script, &[]);
    host.request("init", json!({"subtype": "initialize"}));
    host.response("init");
    host.send_raw("{not json");
    let error = host.until("error line", |l| l["type"] == "system" && l["subtype"] == "error");
    assert!(error["error"].as_str().unwrap_or_default().contains("not JSON"), "{error}");
    host.request("r1", json!({"subtype": "no_such_request"}));
    host.user("hello");
    let answer = host.response("r1");
    assert_eq!(answer["response"]["subtype"], "error");
    assert_eq!(answer["response"]["error"], "Unsupported control request subtype: no_such_request");
    assert_eq!(answer["response"]["error_code"], "unsupported_request");
    assert_eq!(host.result()["result"], "still here");
    let (status, _) = host.close();
    assert_eq!(status.code(), Some(0));
}

#[test]
fn a_host_that_closes_stdin_during_a_permission_question_gets_the_call_denied() {
    let s = Sandbox::new();
    let script = s.script(json!([bash("c1", "touch forbidden"), {"text": "finished"}]));
    let mut host = RawHost::start(&s, &script, &["--permission-prompt-tool", "stdio"]);
    host.user("go");
    host.spine_request("can_use_tool");
    let (status, seen) = host.close();
    assert!(!s.project().join("forbidden").exists(), "an unanswered question never allows");
    let result = seen.iter().find(|l| l["type"] == "result").expect("the turn still ends with a result");
    assert_eq!(result["permission_denials"][0]["tool_use_id"], "c1", "{result}");
    assert_eq!(status.code(), Some(0));
}

#[test]
fn set_permission_mode_applies_to_the_next_decision() {
    let s = Sandbox::new();
    let write = json!({"tool_calls": [{"id": "w1", "name": "Write", "arguments": {"file_path": "notes.txt", "content": "hi"}}]});
    let script = s.script(json!([write, {"text": "written"}]));
    let mut host = RawHost::start(&s, &script, &["--permission-prompt-tool", "stdio"]);
    host.send(
        &json!({"type": "control_request", "request_id": "init", "request": {"subtype": "initialize", "hooks": null}}),
    );
    host.response("init");
    host.request("mode", json!({"subtype": "set_permission_mode", "mode": "acceptEdits"}));
    let answer = host.response("mode");
    assert_eq!(answer["response"]["response"], json!({"mode": "acceptEdits"}));
    let status = host.until("status", |l| l["subtype"] == "status");
    assert_eq!(status["permissionMode"], "acceptEdits");
    host.user("write it");
    let result = host.result();
    let (_, seen) = host.close();
    assert_eq!(result["result"], "written");
    assert!(!seen.iter().any(|l| l["request"]["subtype"] == "can_use_tool"), "acceptEdits allows the write unasked");
    assert_eq!(std::fs::read_to_string(s.project().join("notes.txt")).ok().as_deref(), Some("hi"));
}

#[test]
fn set_permission_mode_refuses_an_unknown_mode_by_name() {
    let s = Sandbox::new();
    let script = s.script(json!([{"text": "ok"}]));
    let mut host = RawHost::start(&s, &script, &[]);
    host.request("init", json!({"subtype": "initialize"}));
    host.response("init");
    host.request("mode", json!({"subtype": "set_permission_mode", "mode": "yolo"}));
    let answer = host.response("mode");
    assert_eq!(answer["response"]["subtype"], "error");
    assert!(answer["response"]["error"].as_str().unwrap_or_default().contains("yolo"), "{answer}");
    drop(host.close());
}

/// `initialize` with one PreToolUse callback group on Bash.
fn initialize_with_bash_callback(host: &mut RawHost, extra: Value) {
    let mut group = json!({"matcher": "Bash", "hookCallbackIds": ["guard"]});
    if let (Some(group), Some(extra)) = (group.as_object_mut(), extra.as_object()) {
        group.extend(extra.clone());
    }
    host.request("init", json!({"subtype": "initialize", "hooks": {"PreToolUse": [group]}}));
    let answer = host.response("init");
    assert_eq!(answer["response"]["subtype"], "success", "{answer}");
    assert_eq!(answer["response"]["response"]["hook_on_failure_supported"], true);
}

#[test]
fn a_hook_callback_from_initialize_denies_a_call_with_the_hooks_input() {
    let s = Sandbox::new();
    let script = s.script(json!([bash("c1", "touch guarded"), {"text": "done"}]));
    let mut host = RawHost::start(&s, &script, &["--allowedTools", "Bash(touch:*)"]);
    initialize_with_bash_callback(&mut host, json!({}));
    host.user("go");
    let call = host.spine_request("hook_callback");
    assert_eq!(call["request"]["callback_id"], "guard");
    assert_eq!(call["request"]["tool_use_id"], "c1");
    let input = &call["request"]["input"];
    assert_eq!(input["hook_event_name"], "PreToolUse");
    assert_eq!(input["tool_name"], "Bash");
    assert_eq!(input["tool_input"]["command"], "touch guarded");
    let id = call["request_id"].as_str().expect("id").to_owned();
    host.answer(&id, json!({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny", "permissionDecisionReason": "not on my watch"}}));
    let result = host.result();
    let (status, seen) = host.close();
    assert_eq!(status.code(), Some(0));
    assert!(!s.project().join("guarded").exists(), "the callback's deny held over the allow rule");
    assert!(lines_text(&seen).contains("not on my watch"), "the model read the reason");
    assert_eq!(result["permission_denials"][0]["tool_use_id"], "c1", "{result}");
}

#[test]
fn a_hook_callback_that_fails_blocks_with_on_failure_block_and_not_without() {
    for (on_failure, runs) in [(json!("block"), false), (json!("continue"), true)] {
        let s = Sandbox::new();
        let script = s.script(json!([bash("c1", "touch ran"), {"text": "done"}]));
        let mut host = RawHost::start(&s, &script, &["--allowedTools", "Bash(touch:*)"]);
        initialize_with_bash_callback(&mut host, json!({"onFailure": on_failure}));
        host.user("go");
        let call = host.spine_request("hook_callback");
        let id = call["request_id"].as_str().expect("id").to_owned();
        host.answer_error(&id, "the callback raised");
        host.result();
        drop(host.close());
        assert_eq!(s.project().join("ran").exists(), runs, "onFailure {on_failure}");
    }
}

#[test]
fn an_unanswered_hook_callback_ends_at_its_timeout_into_its_failure_rule() {
    let s = Sandbox::new();
    let script = s.script(json!([bash("c1", "touch ran"), {"text": "done"}]));
    let mut host = RawHost::start(&s, &script, &["--allowedTools", "Bash(touch:*)"]);
    initialize_with_bash_callback(&mut host, json!({"timeout": 1, "onFailure": "block"}));
    host.user("go");
    host.spine_request("hook_callback");
    // No answer: after a second, spine gives the request up and the guard blocks.
    let cancel = host.until("cancel", |l| l["type"] == "control_cancel_request");
    assert!(cancel["request_id"].as_str().is_some_and(|id| id.starts_with("spine_req_")));
    host.result();
    drop(host.close());
    assert!(!s.project().join("ran").exists());
}

#[test]
fn an_sdk_mcp_server_is_reached_through_mcp_message_requests() {
    let s = Sandbox::new();
    let call = json!({"tool_calls": [{"id": "m1", "name": "mcp__calc__add", "arguments": {"a": 2, "b": 3}}]});
    let script = s.script(json!([call, {"text": "done"}]));
    let config = r#"{"mcpServers": {"calc": {"type": "sdk", "name": "calc"}}}"#;
    let mut host = RawHost::start(&s, &script, &["--mcp-config", config, "--allowedTools", "mcp__calc__add"]);
    host.request("init", json!({"subtype": "initialize"}));
    // Until initialize is answered, spine talks MCP to the host's server.
    let mut methods = Vec::new();
    loop {
        let line = host.until("mcp_message or the initialize answer", |l| {
            l["request"]["subtype"] == "mcp_message" || l["response"]["request_id"] == "init"
        });
        if line["type"] == "control_response" {
            break;
        }
        assert_eq!(line["request"]["server_name"], "calc");
        let message = &line["request"]["message"];
        let method = message["method"].as_str().unwrap_or_default().to_owned();
        let reply = match method.as_str() {
            "initialize" => json!({"jsonrpc": "2.0", "id": message["id"], "result": {
                "protocolVersion": message["params"]["protocolVersion"], "capabilities": {"tools": {}},
                "serverInfo": {"name": "calc", "version": "1.0.0"}}}),
            "tools/list" => json!({"jsonrpc": "2.0", "id": message["id"], "result": {"tools": [{
                "name": "add", "description": "Adds two numbers",
                "inputSchema": {"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}}, "required": ["a", "b"]}}]}}),
            _ => json!({"jsonrpc": "2.0", "result": {}}),
        };
        methods.push(method);
        let id = line["request_id"].as_str().expect("id").to_owned();
        host.answer(&id, json!({"mcp_response": reply}));
    }
    assert!(methods.contains(&"initialize".to_owned()) && methods.contains(&"tools/list".to_owned()), "{methods:?}");
    host.user("add");
    let line = host.until("tools/call", |l| l["request"]["message"]["method"] == "tools/call");
    let message = &line["request"]["message"];
    assert_eq!(message["params"]["name"], "add");
    assert_eq!(message["params"]["arguments"], json!({"a": 2, "b": 3}));
    let id = line["request_id"].as_str().expect("id").to_owned();
    let reply = json!({"jsonrpc": "2.0", "id": message["id"], "result": {"content": [{"type": "text", "text": "5"}]}});
    host.answer(&id, json!({"mcp_response": reply}));
    let tool_result = host.until("tool result", |l| l["type"] == "user");
    assert!(tool_result.to_string().contains('5'), "{tool_result}");
    assert_eq!(host.result()["result"], "done");
    drop(host.close());
}

#[test]
fn a_session_without_initialize_runs_and_a_late_initialize_says_its_hooks_were_not_applied() {
    let s = Sandbox::new();
    let script = s.script(json!([{"text": "first"}, {"text": "second"}]));
    let mut host = RawHost::start(&s, &script, &[]);
    host.user("one");
    assert_eq!(host.result()["result"], "first");
    let hooks = json!({"PreToolUse": [{"matcher": "Bash", "hookCallbackIds": ["late"], "onFailure": "block"}]});
    host.request("init", json!({"subtype": "initialize", "hooks": hooks}));
    let answer = host.response("init");
    assert_eq!(answer["response"]["subtype"], "success");
    assert_eq!(answer["response"]["response"]["hooks_applied"], false, "{answer}");
    host.user("two");
    assert_eq!(host.result()["result"], "second");
    let (status, _) = host.close();
    assert_eq!(status.code(), Some(0));
}
