//! The embedding example end to end: the example binary against a local server speaking
//! OpenAI's chat-completions wire format (streamed). The rewrite hook turns `rm -rf build`
//! into a move to `.trash/`, the redaction hook keeps the key in `config.txt` from the model,
//! the custom tool answers, and the trace printed at the end names both hooks.

// The package's dependencies serve its binary; this test drives the binary.
#![allow(unused_crate_dependencies)]

use serde_json::{Value, json};
use spine_testkit::http::{End, Reply, TestServer, raw, server_runtime};

fn sse(events: &[Value]) -> Reply {
    let mut body: String = events.iter().map(|e| format!("data: {e}\n\n")).collect();
    body.push_str("data: [DONE]\n\n");
    Reply::Sse(vec![raw(&body)], End::Close)
}

fn calls(calls: &[(&str, &str, Value)]) -> Reply {
    let deltas: Vec<Value> = calls
        .iter()
        .enumerate()
        .map(|(i, (id, name, args))| {
            json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": i, "id": id, "type": "function",
                "function": {"name": name, "arguments": args.to_string()}}]}, "finish_reason": null}]})
        })
        .chain([json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]})])
        .collect();
    sse(&deltas)
}

/// The text the model read for call `id`, in a request's messages.
fn tool_result(body: &Value, id: &str) -> String {
    body["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|m| m["role"] == "tool" && m["tool_call_id"] == id)
        .and_then(|m| m["content"].as_str())
        .unwrap_or_default()
        .to_owned()
}

#[test]
fn the_example_rewrites_the_delete_redacts_the_key_runs_its_tool_and_prints_the_trace() {
    let project = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir_all(project.path().join("build/out")).expect("build");
    std::fs::write(project.path().join("build/out/a.o"), "object").expect("object");
    std::fs::write(project.path().join("config.txt"), "region = eu\napi_key = sk-live-abcdef123456\n").expect("config");
    let runtime = server_runtime();
    let server = runtime.block_on(TestServer::start(vec![
        calls(&[("call_rm", "Bash", json!({"command": "rm -rf build"}))]),
        calls(&[
            ("call_cat", "Bash", json!({"command": "cat config.txt"})),
            ("call_wc", "word_count", json!({"text": "one two three"})),
        ]),
        sse(&[
            json!({"choices": [{"index": 0, "delta": {"role": "assistant", "content": "All clean."}, "finish_reason": null}]}),
            json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}),
        ]),
    ]));
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_spine-embed-example"))
        .arg(project.path())
        .arg("Clean up and show me the config")
        .env("OPENAI_BASE_URL", server.url("/v1"))
        .env("OPENAI_API_KEY", "test-key")
        .env("SPINE_HOME", project.path().join(".spine-home"))
        .env_remove("ANTHROPIC_API_KEY")
        .output()
        .expect("the example runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains("answer (\"success\"): All clean."), "{stdout}");

    assert!(!project.path().join("build").exists(), "the build folder was moved");
    assert!(project.path().join(".trash/build/out/a.o").exists(), "into .trash, not deleted");

    let bodies: Vec<Value> = server.requests().into_iter().map(|r| r.body).collect();
    assert_eq!(bodies.len(), 3);
    let config = tool_result(&bodies[2], "call_cat");
    assert!(config.contains("api_key = [REDACTED]") && config.contains("region = eu"), "{config}");
    for body in &bodies {
        assert!(!body.to_string().contains("sk-live-abcdef123456"), "the key never reaches the model");
    }
    assert_eq!(tool_result(&bodies[2], "call_wc"), "3 words");

    let trace: Vec<Value> = stdout
        .lines()
        .filter_map(|l| l.strip_prefix("trace: "))
        .map(|l| serde_json::from_str(l).expect("json"))
        .collect();
    let answered = |hook: &str, decision: &str| {
        trace.iter().any(|e| e["kind"] == "hook" && e["hook_id"] == hook && e["decision"] == decision)
    };
    assert!(answered("safe-delete", "rewrite"), "{trace:#?}");
    assert!(answered("redact-keys", "rewrite"), "{trace:#?}");
}
