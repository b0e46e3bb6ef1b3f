//! `spine run` end to end against local servers speaking the OpenAI and Anthropic wire formats
//! (SSE streaming), with a PreToolUse command hook blocking one call: the next request must
//! carry `Error [hook_blocked]: …` as that call's result, and the API key must appear nowhere.

use serde_json::{Value, json};

use crate::support::*;

const KEY: &str = "sk-test-secret-key-0123456789";

fn sse_data(events: &[Value]) -> String {
    let mut out: String = events.iter().map(|e| format!("data: {e}\n\n")).collect();
    out.push_str("data: [DONE]\n\n");
    out
}

/// A settings file whose PreToolUse hook blocks `rm` commands (exit 2, reason on stderr).
fn block_rm_settings(s: &Sandbox) -> String {
    let hook = s.write(
        "hooks/block-rm.sh",
        "#!/bin/sh\ninput=$(cat)\ncase \"$input\" in *'rm -rf'*) echo 'rm is not allowed here' >&2; exit 2;; esac\nexit 0\n",
    );
    json!({
        "permissions": {"allow": ["calculator", "Bash"]},
        "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": format!("sh {}", hook.display())}]}]}
    })
    .to_string()
}

fn assert_key_nowhere(s: &Sandbox, trace: &std::path::Path, stdout: &str, stderr: &str) {
    assert!(!stdout.contains(KEY) && !stderr.contains(KEY));
    assert!(!std::fs::read_to_string(trace).expect("trace").contains(KEY));
    let files = s.session_files();
    assert!(!files.is_empty(), "the run wrote its transcript");
    for file in files {
        let text = std::fs::read_to_string(file).expect("session file");
        assert!(!text.contains(KEY), "the key leaked into the session files");
    }
}

#[test]
fn openai_run_with_a_blocking_hook_sends_hook_blocked_as_the_tool_result() {
    let s = Sandbox::new();
    let first = sse_data(&[
        json!({"choices": [{"index": 0, "delta": {"role": "assistant", "content": "Cleaning up. "}, "finish_reason": null}]}),
        json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "id": "call_rm", "type": "function", "function": {"name": "Bash", "arguments": ""}}]}, "finish_reason": null}]}),
        json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "function": {"arguments": "{\"command\": \"rm -rf"}}]}, "finish_reason": null}]}),
        json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "function": {"arguments": " build\"}"}}]}, "finish_reason": null}]}),
        json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 1, "id": "call_calc", "type": "function", "function": {"name": "calculator", "arguments": "{\"expression\": \"2 + 2\"}"}}]}, "finish_reason": null}]}),
        json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}], "usage": {"prompt_tokens": 50, "completion_tokens": 20}}),
    ]);
    let second = sse_data(&[
        json!({"choices": [{"index": 0, "delta": {"content": "rm was blocked; 2 + 2 = 4."}, "finish_reason": null}]}),
        json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}),
    ]);
    let server = SseServer::start(vec![first, second]);
    let trace = s.dir.path().join("trace.jsonl");
    let out = s
        .spine()
        .env("OPENAI_BASE_URL", format!("http://{}/v1", server.addr))
        .env("OPENAI_API_KEY", KEY)
        .args([
            "run",
            "-p",
            "clean the build",
            "--model",
            "openai:gpt-4.1-mini",
            "--output-format",
            "json",
            "--include-messages",
        ])
        .args(["--settings", &block_rm_settings(&s), "--trace", trace.to_str().expect("utf8")])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let result = json(&out);
    assert_eq!(result["result"], "rm was blocked; 2 + 2 = 4.");
    assert_eq!(result["usage"]["input_tokens"], 50);

    let bodies = server.bodies();
    assert_eq!(bodies.len(), 2);
    assert_eq!(bodies[0]["model"], "gpt-4.1-mini");
    assert_eq!(bodies[0]["stream"], true);
    assert_eq!(bodies[0]["messages"][0]["role"], "system");
    let tool_names: Vec<&str> = bodies[0]["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap_or(""))
        .collect();
    assert!(tool_names.contains(&"Bash") && tool_names.contains(&"calculator"), "{tool_names:?}");
    let messages = bodies[1]["messages"].as_array().expect("messages");
    let tool_msgs: Vec<&Value> = messages.iter().filter(|m| m["role"] == "tool").collect();
    assert_eq!(tool_msgs.len(), 2);
    assert_eq!(tool_msgs[0]["tool_call_id"], "call_rm");
    assert_eq!(tool_msgs[0]["content"], "Error [hook_blocked]: rm is not allowed here");
    assert_eq!(tool_msgs[1]["tool_call_id"], "call_calc");
    assert_eq!(tool_msgs[1]["content"], "The calculator returned 4.");
    let assistant = messages.iter().find(|m| m["role"] == "assistant").expect("assistant turn");
    assert_eq!(assistant["tool_calls"][0]["function"]["arguments"], "{\"command\":\"rm -rf build\"}");
    assert_eq!(
        server.headers()[0].get("authorization").and_then(|v| v.to_str().ok()),
        Some(format!("Bearer {KEY}").as_str())
    );
    assert_key_nowhere(&s, &trace, &stdout(&out), &stderr(&out));
}

#[test]
fn anthropic_run_with_a_blocking_hook_sends_hook_blocked_as_an_error_tool_result() {
    let s = Sandbox::new();
    let first = sse_named(&[
        json!({"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant", "content": [], "model": "claude-sonnet-4-5", "stop_reason": null, "usage": {"input_tokens": 40, "output_tokens": 1}}}),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "tool_use", "id": "toolu_rm", "name": "Bash", "input": {}}}),
        json!({"type": "ping"}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": "{\"command\": "}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": "\"rm -rf build\"}"}}),
        json!({"type": "content_block_stop", "index": 0}),
        json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 12}}),
        json!({"type": "message_stop"}),
    ]);
    let second = sse_named(&[
        json!({"type": "message_start", "message": {"id": "msg_2", "type": "message", "role": "assistant", "content": [], "model": "claude-sonnet-4-5", "stop_reason": null, "usage": {"input_tokens": 60, "output_tokens": 1}}}),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "The hook refused rm."}}),
        json!({"type": "content_block_stop", "index": 0}),
        json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 6}}),
        json!({"type": "message_stop"}),
    ]);
    let server = SseServer::start(vec![first, second]);
    let trace = s.dir.path().join("trace.jsonl");
    let out = s
        .spine()
        .env("ANTHROPIC_BASE_URL", format!("http://{}", server.addr))
        .env("ANTHROPIC_API_KEY", KEY)
        .args([
            "run",
            "-p",
            "clean the build",
            "--model",
            "anthropic:claude-sonnet-4-5",
            "--output-format",
            "json",
            "--include-messages",
        ])
        .args(["--settings", &block_rm_settings(&s), "--trace", trace.to_str().expect("utf8")])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(json(&out)["result"], "The hook refused rm.");
    let bodies = server.bodies();
    assert_eq!(bodies.len(), 2);
    assert!(
        bodies[0]["system"][0]["text"].as_str().is_some_and(|s| s.contains("Agent Prompt:")),
        "system prompt at top level"
    );
    assert!(bodies[0]["messages"].as_array().expect("m").iter().all(|m| m["role"] != "system"));
    let last = bodies[1]["messages"].as_array().expect("messages").last().expect("last turn").clone();
    assert_eq!(last["role"], "user");
    let block = &last["content"][0];
    assert_eq!(block["type"], "tool_result");
    assert_eq!(block["tool_use_id"], "toolu_rm");
    assert_eq!(block["is_error"], true);
    assert_eq!(block["content"], "Error [hook_blocked]: rm is not allowed here");
    assert_eq!(server.headers()[0].get("x-api-key").and_then(|v| v.to_str().ok()), Some(KEY));
    assert_key_nowhere(&s, &trace, &stdout(&out), &stderr(&out));
}

#[test]
fn without_a_model_the_provider_is_chosen_from_the_api_key_in_the_environment() {
    let s = Sandbox::new();
    let reply = sse_data(&[
        json!({"choices": [{"index": 0, "delta": {"content": "hello"}, "finish_reason": null}]}),
        json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}),
    ]);
    let server = SseServer::start(vec![reply]);
    let out = s
        .spine()
        .env("OPENAI_BASE_URL", format!("http://{}/v1", server.addr))
        .env("OPENAI_API_KEY", KEY)
        .args(["run", "-p", "hi"])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out), "hello\n");
    assert_eq!(server.bodies()[0]["model"], spine_models::DEFAULT_OPENAI_MODEL);
}

#[test]
fn a_server_error_fails_the_run_with_a_message_naming_the_status_and_no_secret() {
    let s = Sandbox::new();
    let server = SseServer::start(vec![]);
    let out = s
        .spine()
        .env("OPENAI_BASE_URL", format!("http://{}/v1", server.addr))
        .env("OPENAI_API_KEY", KEY)
        .args(["run", "-p", "hi", "--model", "openai:gpt-4.1-mini"])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(err.contains("500") && err.contains("script exhausted"), "{err}");
    assert!(!err.contains(KEY));
}

/// The first reply calls Bash `env`; the second ends the run.
fn env_then_done() -> Vec<String> {
    let call = sse_data(&[
        json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "id": "call_env", "type": "function", "function": {"name": "Bash", "arguments": "{\"command\": \"env\"}"}}]}, "finish_reason": null}]}),
        json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}),
    ]);
    let done = sse_data(&[
        json!({"choices": [{"index": 0, "delta": {"content": "done"}, "finish_reason": null}]}),
        json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}),
    ]);
    vec![call, done]
}

/// Settings allowing Bash, with a PreToolUse command hook that dumps its environment to
/// `hook_env`, plus `extra` top-level keys.
fn env_dump_settings(hook_env: &std::path::Path, extra: Value) -> String {
    let mut settings = json!({
        "permissions": {"allow": ["Bash"]},
        "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
            {"type": "command", "command": format!("env > '{}'", hook_env.display())}
        ]}]}
    });
    if let (Some(s), Some(e)) = (settings.as_object_mut(), extra.as_object()) {
        s.extend(e.clone());
    }
    settings.to_string()
}

#[test]
fn provider_keys_reach_neither_bash_nor_hooks_nor_the_transcript() {
    let s = Sandbox::new();
    let server = SseServer::start(env_then_done());
    let trace = s.dir.path().join("trace.jsonl");
    let hook_env = s.dir.path().join("hook-env.txt");
    let out = s
        .spine()
        .env("OPENAI_BASE_URL", format!("http://{}/v1", server.addr))
        .env("OPENAI_API_KEY", KEY)
        .env("ANTHROPIC_API_KEY", KEY)
        .args([
            "run",
            "-p",
            "show the environment",
            "--model",
            "openai:gpt-4.1-mini",
            "--output-format",
            "json",
            "--include-messages",
        ])
        .args(["--settings", &env_dump_settings(&hook_env, json!({}))])
        .args(["--trace", trace.to_str().expect("utf8")])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(json(&out)["result"], "done");
    assert_key_nowhere(&s, &trace, &String::from_utf8_lossy(&out.stdout), &stderr(&out));

    let bodies = server.bodies();
    assert_eq!(bodies.len(), 2);
    let next = bodies[1].to_string();
    // Bash did run `env` (its output is in the next request), without the keys.
    assert!(next.contains("OPENAI_BASE_URL="), "{next}");
    assert!(!next.contains(KEY), "the key reached the provider through Bash output");
    assert!(!next.contains("OPENAI_API_KEY") && !next.contains("ANTHROPIC_API_KEY"), "{next}");
    let hook = std::fs::read_to_string(&hook_env).expect("the hook dumped its environment");
    assert!(hook.contains("SPINE_PROJECT_DIR="), "{hook}");
    assert!(!hook.contains(KEY), "the key reached the hook");
}

#[test]
fn telemetry_credentials_reach_neither_bash_nor_hooks() {
    let s = Sandbox::new();
    let server = SseServer::start(env_then_done());
    let hook_env = s.dir.path().join("hook-env.txt");
    let token = "authorization=Bearer collector-token-0123456789";
    let out = s
        .spine()
        .env("OPENAI_BASE_URL", format!("http://{}/v1", server.addr))
        .env("OPENAI_API_KEY", KEY)
        .env("OTEL_EXPORTER_OTLP_HEADERS", token)
        .env("OTEL_EXPORTER_OTLP_TRACES_HEADERS", token)
        .args(["run", "-p", "show the environment", "--model", "openai:gpt-4.1-mini", "--output-format", "json"])
        .args(["--settings", &env_dump_settings(&hook_env, json!({"env_passthrough": ["OPENAI_API_KEY"]}))])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let next = server.bodies()[1].to_string();
    assert!(next.contains("OPENAI_BASE_URL="), "Bash ran `env`: {next}");
    assert!(!next.contains("collector-token"), "the collector's token reached the model through Bash: {next}");
    let hook = std::fs::read_to_string(&hook_env).expect("the hook dumped its environment");
    assert!(hook.contains("SPINE_PROJECT_DIR=") && !hook.contains("collector-token"), "{hook}");
}

#[test]
fn env_passthrough_hands_the_named_key_to_bash() {
    let s = Sandbox::new();
    let server = SseServer::start(env_then_done());
    let hook_env = s.dir.path().join("hook-env.txt");
    let settings = env_dump_settings(&hook_env, json!({"env_passthrough": ["OPENAI_API_KEY"]}));
    let out = s
        .spine()
        .env("OPENAI_BASE_URL", format!("http://{}/v1", server.addr))
        .env("OPENAI_API_KEY", KEY)
        .env("ANTHROPIC_API_KEY", "sk-ant-other-secret-0123456789")
        .args([
            "run",
            "-p",
            "show the environment",
            "--model",
            "openai:gpt-4.1-mini",
            "--output-format",
            "json",
            "--include-messages",
        ])
        .args(["--settings", &settings])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let next = server.bodies()[1].to_string();
    assert!(next.contains(&format!("OPENAI_API_KEY={KEY}")), "{next}");
    assert!(!next.contains("sk-ant-other-secret-0123456789"), "only the named key passes");
    assert!(std::fs::read_to_string(&hook_env).expect("hook env").contains(KEY));
}

/// Runs `spine run` against an OpenAI endpoint that accepts connections and never answers,
/// with `settings` (inline JSON) and `-v`, ending within a minute or failing the test.
fn run_against_a_silent_endpoint(s: &Sandbox, settings: &str, trace: &std::path::Path) -> std::process::Output {
    // Connections complete in the kernel's backlog; nothing ever reads or answers them.
    let silent = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = silent.local_addr().expect("addr");
    let out = s
        .spine()
        .timeout(std::time::Duration::from_secs(60))
        .env("OPENAI_BASE_URL", format!("http://{addr}/v1"))
        .args(["run", "-p", "hi", "-v", "--model", "openai:m", "--settings", settings])
        .arg("--trace")
        .arg(trace)
        .output()
        .expect("runs");
    drop(silent);
    out
}

#[test]
fn a_silent_endpoint_fails_with_a_timeout_after_the_configured_first_byte_timeout() {
    let s = Sandbox::new();
    let trace = s.dir.path().join("trace.jsonl");
    let settings = r#"{"model_options": {"timeouts": {"first_byte_ms": 200}}}"#;
    let out = run_against_a_silent_endpoint(&s, settings, &trace);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("no response within 0.2 s (first-byte timeout)"), "{err}");
    assert!(err.contains("(gave up after 3 retries)"), "{err}");
    // One `-v` line per attempt: three retries, then the final failure.
    let lines: Vec<&str> = err.lines().filter(|l| l.starts_with("[Model] request 1 attempt")).collect();
    assert_eq!(lines.len(), 4, "{err}");
    assert!(lines[0].starts_with("[Model] request 1 attempt 1 failed after"), "{}", lines[0]);
    assert!(lines[0].contains("(timeout): ") && lines[0].contains("; retrying in "), "{}", lines[0]);
    assert!(lines[3].starts_with("[Model] request 1 attempt 4 failed after") && lines[3].ends_with("; giving up"));
    // A trace record per attempt.
    let attempts: Vec<Value> =
        spine_testkit::files::read_jsonl(&trace).into_iter().filter(|e| e["kind"] == "model_attempt").collect();
    let outcomes: Vec<(u64, &str, &str)> = attempts
        .iter()
        .map(|a| {
            (
                a["attempt"].as_u64().unwrap_or(0),
                a["outcome"].as_str().unwrap_or(""),
                a["error_kind"].as_str().unwrap_or(""),
            )
        })
        .collect();
    assert_eq!(
        outcomes,
        vec![(1, "retry", "timeout"), (2, "retry", "timeout"), (3, "retry", "timeout"), (4, "failed", "timeout")]
    );
    assert!(attempts[..3].iter().all(|a| a["wait_ms"].is_u64()));
}

#[test]
fn a_total_deadline_setting_bounds_the_whole_request_across_retries() {
    let s = Sandbox::new();
    let trace = s.dir.path().join("trace.jsonl");
    let settings = r#"{"model_options": {"timeouts": {"first_byte_ms": 30000, "total_ms": 300}}}"#;
    let out = run_against_a_silent_endpoint(&s, settings, &trace);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("no complete reply within 0.3 s (total deadline)"), "{err}");
}

#[test]
fn bad_model_timeouts_exit_2_naming_the_source_and_json_path() {
    let s = Sandbox::new();
    let out = s
        .spine()
        .args(["run", "-p", "hi", "--model", "openai:m", "--settings"])
        .arg(r#"{"model_options": {"timeouts": {"idle_ms": 0}}}"#)
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(err.contains("--settings #1") && err.contains("model_options.timeouts.idle_ms"), "{err}");
}
