//! The JSON result object in Claude Code's shape (docs/cli.md, "Output"): the field set of
//! `claude -p --output-format json` (recorded in `tests/fixtures/claude-code-2.1.197/`), the
//! cost of a priced model, the calls the permission step refused, and a configuration error
//! as a result object.

use serde_json::{Value, json};
use spine_testkit::http::{End, Reply, TestServer, raw, server_runtime};

use crate::support::*;

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/claude-code-2.1.197");

/// The fields the drop-in promises: present in Claude Code's result and in spine's.
pub const CLAUDE_FIELDS: [&str; 13] = [
    "type",
    "subtype",
    "is_error",
    "result",
    "session_id",
    "num_turns",
    "duration_ms",
    "duration_api_ms",
    "total_cost_usd",
    "usage",
    "modelUsage",
    "permission_denials",
    "stop_reason",
];

const USAGE_FIELDS: [&str; 4] =
    ["input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens", "output_tokens"];

fn fixture(name: &str) -> Value {
    let text = std::fs::read_to_string(format!("{FIXTURES}/{name}")).expect("fixture");
    serde_json::from_str(&text).expect("fixture JSON")
}

#[test]
fn the_json_result_has_claude_codes_fields_and_no_messages_unless_asked() {
    let reference = fixture("print-json-success.json");
    let s = Sandbox::new();
    let out = s.run(&s.script(json!([{"text": "hi"}])), &["--output-format", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v = json(&out);
    for field in CLAUDE_FIELDS {
        assert!(reference.get(field).is_some(), "the reference lacks `{field}`");
        assert!(v.get(field).is_some(), "spine's result lacks `{field}`: {v}");
    }
    for field in USAGE_FIELDS {
        assert!(reference["usage"].get(field).is_some(), "the reference usage lacks `{field}`");
        assert!(v["usage"][field].is_u64(), "spine's usage lacks `{field}`: {}", v["usage"]);
    }
    assert_eq!(v["stop_reason"], reference["stop_reason"], "a final answer ends with end_turn");
    assert_eq!(v["permission_denials"], json!([]));
    assert!(v.get("messages").is_none(), "messages come only with --include-messages");
    let with = json(&s.run(&s.script(json!([{"text": "hi"}])), &["--output-format", "json", "--include-messages"]));
    assert_eq!(with["messages"].as_array().map(Vec::len), Some(3), "{with}");
}

#[test]
fn permission_denials_list_each_refused_call_and_stderr_names_the_tools() {
    let reference = fixture("print-json-denied.json");
    let s = Sandbox::new();
    let out = s.run(&s.script(bash_then_answer("touch made-by-model.txt")), &["--output-format", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(!s.project().join("made-by-model.txt").exists());
    let v = json(&out);
    let denial = &v["permission_denials"][0];
    let keys = |d: &Value| {
        let mut k: Vec<String> = d.as_object().expect("object").keys().cloned().collect();
        k.sort();
        k
    };
    assert_eq!(keys(denial), keys(&reference["permission_denials"][0]));
    assert_eq!(denial["tool_name"], "Bash");
    assert_eq!(denial["tool_use_id"], "call_1");
    assert_eq!(denial["tool_input"], json!({"command": "touch made-by-model.txt"}));
    let err = stderr(&out);
    assert!(err.contains("1 tool call was refused by the permission policy (Bash)"), "{err}");

    let verbose = s.run(&s.script(bash_then_answer("touch x")), &["--output-format", "json", "-v"]);
    assert!(!stderr(&verbose).contains("refused by the permission policy"), "-v prints each decision instead");
}

#[test]
fn a_configuration_error_is_also_a_json_result_on_stdout() {
    let s = Sandbox::new();
    let out =
        s.spine().args(["run", "-p", "hi", "--model", "nonsense:x", "--output-format", "json"]).output().expect("runs");
    assert_eq!(out.status.code(), Some(2));
    let v = json(&out);
    assert_eq!(v["type"], "result");
    assert_eq!(v["is_error"], true);
    assert!(v["result"].as_str().expect("message").contains("--model"), "{v}");
    assert!(stderr(&out).contains("error:"), "the stderr line stays");
}

#[test]
fn total_cost_prices_the_usage_of_a_model_in_the_price_table() {
    let s = Sandbox::new();
    let runtime = server_runtime();
    let body = [
        json!({"choices": [{"index": 0, "delta": {"role": "assistant", "content": "hi"}, "finish_reason": null}]}),
        json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}], "usage": {"prompt_tokens": 1000, "completion_tokens": 500, "prompt_tokens_details": {"cached_tokens": 400}}}),
    ]
    .iter()
    .map(|e| format!("data: {e}\n\n"))
    .collect::<String>()
        + "data: [DONE]\n\n";
    let server = runtime.block_on(TestServer::start(vec![Reply::Sse(vec![raw(&body)], End::Close)]));
    let out = s
        .spine()
        .env("OPENAI_BASE_URL", format!("http://{}/v1", server.addr()))
        .env("OPENAI_API_KEY", "sk-test")
        .args(["run", "-p", "hi", "--model", "openai:gpt-4o-mini", "--output-format", "json"])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v = json(&out);
    // gpt-4o-mini: 600 uncached × $0.15 + 400 cached × $0.075 + 500 out × $0.60, per million.
    let expected = (600.0 * 0.15 + 400.0 * 0.075 + 500.0 * 0.6) / 1_000_000.0;
    let cost = v["total_cost_usd"].as_f64().expect("cost");
    assert!((cost - expected).abs() < 1e-12, "{cost} != {expected}");
    assert_eq!(v["usage"]["input_tokens"], 600);
    assert_eq!(v["usage"]["cache_read_input_tokens"], 400);
    assert_eq!(v["modelUsage"]["gpt-4o-mini"]["costUSD"], v["total_cost_usd"]);
    assert_eq!(v["modelUsage"]["gpt-4o-mini"]["outputTokens"], 500);
}

fn stream_lines(name: &str) -> Vec<Value> {
    let text = std::fs::read_to_string(format!("{FIXTURES}/{name}")).expect("fixture");
    text.lines().map(|l| serde_json::from_str(l).expect("fixture line")).collect()
}

fn keys(v: &Value) -> Vec<String> {
    let mut k: Vec<String> = v.as_object().map(|o| o.keys().cloned().collect()).unwrap_or_default();
    k.sort();
    k
}

#[test]
fn stream_json_speaks_claude_codes_event_stream_with_one_copy_of_each_tool_result() {
    let reference = stream_lines("stream-json-verbose.jsonl");
    let s = Sandbox::new();
    let script = s.script(json!([
        {"tool_calls": [{"id": "c1", "name": "calculator", "arguments": {"expression": "2 + 2"}}]},
        {"text": "four"}
    ]));
    let out = s.run(&script, &["--output-format", "stream-json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let lines: Vec<Value> = stdout(&out).lines().map(|l| serde_json::from_str(l).expect("json line")).collect();
    let types: Vec<&str> = lines.iter().map(|l| l["type"].as_str().unwrap_or("")).collect();
    let reference_types: Vec<&str> = reference.iter().map(|l| l["type"].as_str().unwrap_or("")).collect();
    assert_eq!(types, reference_types, "system init, assistant, user (tool result), assistant, result");

    let init = &lines[0];
    assert_eq!(init["subtype"], "init");
    for field in ["cwd", "session_id", "tools", "mcp_servers", "model", "permissionMode", "uuid"] {
        assert!(reference[0].get(field).is_some(), "the reference init lacks `{field}`");
        assert!(init.get(field).is_some(), "spine's init lacks `{field}`: {init}");
    }
    assert!(init["tools"].as_array().expect("tools").iter().any(|t| t == "calculator"), "{init}");
    assert_eq!(init["permissionMode"], "default");

    let call = &lines[1];
    // Claude Code 2.1.328 adds `timestamp` (claude-code-2.1.328/stream-json-blocks.jsonl).
    let mut assistant_keys = keys(&reference[1]);
    assistant_keys.push("timestamp".into());
    assistant_keys.sort();
    assert_eq!(keys(call), assistant_keys, "assistant line fields");
    assert_eq!(
        call["message"]["content"][0],
        json!({"type": "tool_use", "id": "c1", "name": "calculator", "input": {"expression": "2 + 2"}})
    );
    let result = &lines[2];
    let reference_result_keys: Vec<String> =
        keys(&reference[2]).into_iter().filter(|k| k != "tool_use_result").collect();
    assert_eq!(keys(result), reference_result_keys, "user line fields (Claude Code adds tool_use_result)");
    let block = &result["message"]["content"][0];
    assert_eq!(keys(block), keys(&reference[2]["message"]["content"][0]));
    assert_eq!(block["tool_use_id"], "c1");
    assert_eq!(block["content"], "The calculator returned 4.");
    assert_eq!(block["is_error"], false);
    assert_eq!(lines[3]["message"]["content"][0], json!({"type": "text", "text": "four"}));
    let session = init["session_id"].clone();
    assert!(lines.iter().all(|l| l["session_id"] == session), "every line names the session");
    assert_eq!(lines[4]["result"], "four");
}
