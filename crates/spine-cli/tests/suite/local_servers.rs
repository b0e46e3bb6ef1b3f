//! `spine run` against what real servers need: a llama.cpp-style
//! server (strict chat template, no usage, tool calls only with `tool_choice` and never
//! streamed) through a whole tool loop and a compaction, cost from settings prices in the result
//! and the trace, and the output limit from settings or `CLAUDE_CODE_MAX_OUTPUT_TOKENS`.

use std::path::Path;

use serde_json::{Value, json};
use spine_testkit::http::server_runtime;
use spine_testkit::llama::{Answer, LlamaServer};

use crate::support::*;

fn trace_entries(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .expect("trace")
        .lines()
        .map(|l| serde_json::from_str(l).expect("trace line"))
        .collect()
}

fn of_kind<'a>(entries: &'a [Value], kind: &str) -> Vec<&'a Value> {
    entries.iter().filter(|e| e["kind"] == kind).collect()
}

fn calculator(expression: &str) -> Answer {
    Answer::Call { name: "calculator".into(), arguments: json!({"expression": expression}) }
}

#[test]
fn spine_run_completes_a_tool_loop_against_a_llama_cpp_style_server() {
    let runtime = server_runtime();
    let server = runtime.block_on(LlamaServer::start(vec![calculator("17*23"), Answer::Text("It is 391.".into())]));
    let s = Sandbox::new();
    let settings = json!({
        "permissions": {"allow": ["calculator"]},
        "model_options": {"tool_choice": "auto", "max_tokens": 400, "temperature": 0.1}
    })
    .to_string();
    let trace = s.dir.path().join("trace.jsonl");
    let out = s
        .spine()
        .env("OPENAI_BASE_URL", server.base_url())
        .env_remove("CLAUDE_CODE_MAX_OUTPUT_TOKENS")
        .args(["run", "-p", "Use the calculator tool to compute 17*23.", "--model", "openai:smollm2", "-v"])
        .args(["--output-format", "json", "--settings", &settings, "--trace", trace.to_str().expect("utf8")])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let result = json(&out);
    assert_eq!(result["result"], "It is 391.");
    assert_eq!(result["requests_without_usage"], 2, "the server sent no usage: {result}");
    assert_eq!(result["total_cost_usd"], 0.0);

    let requests = server.requests();
    let rejected: Vec<&Option<String>> = requests.iter().map(|r| &r.rejected).filter(|r| r.is_some()).collect();
    assert!(rejected.is_empty(), "{rejected:?}");
    let bodies: Vec<&Value> = requests.iter().map(|r| &r.body).collect();
    assert_eq!(bodies.len(), 3, "a streamed attempt, its whole retry, then the answer");
    let streams: Vec<&Value> = bodies.iter().map(|b| &b["stream"]).collect();
    assert_eq!(streams, [&json!(true), &json!(false), &json!(true)]);
    for body in &bodies {
        assert_eq!(
            (&body["tool_choice"], &body["max_tokens"], &body["temperature"]),
            (&json!("auto"), &json!(400), &json!(0.1))
        );
    }
    let roles: Vec<&str> =
        bodies[2]["messages"].as_array().expect("messages").iter().map(|m| m["role"].as_str().unwrap_or("")).collect();
    assert_eq!(roles, ["system", "user", "assistant", "tool"]);
    assert_eq!(bodies[2]["messages"][2]["content"], "");

    let entries = trace_entries(&trace);
    let models = of_kind(&entries, "model");
    assert_eq!(models.len(), 2);
    assert!(models.iter().all(|m| m.get("usage").is_none() && m.get("cost_usd").is_none()), "{models:?}");
    let attempts = of_kind(&entries, "model_attempt");
    let retry = attempts.iter().find(|a| a["outcome"] == "retry").expect("the fallback is an attempt entry");
    assert_eq!((retry["turn"].clone(), retry["attempt"].clone()), (json!(1), json!(1)));
    assert!(retry["error"].as_str().unwrap_or("").contains("the next attempt does not stream"), "{retry}");
    let run_usage = of_kind(&entries, "run_usage");
    assert_eq!(run_usage.len(), 1);
    let smollm2 = &run_usage[0]["models"]["smollm2"];
    assert_eq!((smollm2["requests"].clone(), smollm2["requests_without_usage"].clone()), (json!(2), json!(2)));
    assert!(smollm2.get("usage").is_none(), "absent, not 0/0: {smollm2}");
    let err = stderr(&out);
    assert!(err.lines().any(|l| l.contains("the next attempt does not stream")), "one -v line per retry: {err}");
}

#[test]
fn after_compaction_a_strict_chat_template_still_accepts_the_request() {
    let runtime = server_runtime();
    let server = runtime.block_on(LlamaServer::start(vec![
        calculator("1+1"),
        calculator("2+2"),
        calculator("3+3"),
        Answer::Text("Done.".into()),
    ]));
    let s = Sandbox::new();
    let settings = json!({
        "permissions": {"allow": ["calculator"]},
        "context": {"compaction_threshold_tokens": 50},
        "model_options": {"tool_choice": "required", "stream": false}
    })
    .to_string();
    let trace = s.dir.path().join("trace.jsonl");
    let out = s
        .spine()
        .env("OPENAI_BASE_URL", server.base_url())
        .args(["run", "-p", "Add up some numbers.", "--model", "openai:smollm2", "--output-format", "json"])
        .args(["--settings", &settings, "--trace", trace.to_str().expect("utf8")])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let compactions: Vec<Value> = of_kind(&trace_entries(&trace), "stage")
        .into_iter()
        .filter(|e| e["hook"] == "compact_context" && e["compacted"] == true)
        .cloned()
        .collect();
    assert!(!compactions.is_empty(), "the run compacted");
    let requests = server.requests();
    let rejected: Vec<&Option<String>> = requests.iter().map(|r| &r.rejected).filter(|r| r.is_some()).collect();
    assert!(rejected.is_empty(), "{rejected:?}");
    let last = &requests.last().expect("requests").body;
    let roles: Vec<&str> =
        last["messages"].as_array().expect("messages").iter().map(|m| m["role"].as_str().unwrap_or("")).collect();
    assert_eq!(roles.iter().filter(|r| **r == "system").count(), 1, "{roles:?}");
    assert_eq!(roles[1], "user", "{roles:?}");
    assert!(last["messages"][1]["content"].as_str().unwrap_or("").starts_with("Earlier context compacted for"));
}

fn openai_reply(text: &str, prompt: u64, completion: u64) -> String {
    let events = [
        json!({"choices": [{"index": 0, "delta": {"content": text}, "finish_reason": null}]}),
        json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}),
        json!({"choices": [], "usage": {"prompt_tokens": prompt, "completion_tokens": completion}}),
    ];
    let mut out: String = events.iter().map(|e| format!("data: {e}\n\n")).collect();
    out.push_str("data: [DONE]\n\n");
    out
}

#[test]
fn cost_from_settings_prices_appears_in_the_result_and_the_trace() {
    let server = SseServer::start(vec![openai_reply("hi", 1000, 500)]);
    let s = Sandbox::new();
    let settings = json!({"model_options": {"prices": {"smollm2": {"input": 2, "output": 4}}}}).to_string();
    let trace = s.dir.path().join("trace.jsonl");
    let out = s
        .spine()
        .env("OPENAI_BASE_URL", format!("http://{}/v1", server.addr))
        .args(["run", "-p", "hi", "--model", "openai:smollm2", "--output-format", "json", "--settings", &settings])
        .args(["--trace", trace.to_str().expect("utf8")])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // 1000 input tokens at $2/M and 500 output tokens at $4/M.
    let expected = 0.004;
    let result = json(&out);
    let close = |v: &Value| (v.as_f64().unwrap_or(-1.0) - expected).abs() < 1e-12;
    assert!(close(&result["total_cost_usd"]), "{result}");
    assert!(close(&result["modelUsage"]["smollm2"]["costUSD"]), "{result}");
    assert!(result.get("requests_without_usage").is_none());
    let entries = trace_entries(&trace);
    let model = of_kind(&entries, "model")[0];
    assert!(close(&model["cost_usd"]), "{model}");
    assert_eq!(model["usage"]["input_tokens"], 1000);
    let run_usage = of_kind(&entries, "run_usage")[0];
    assert!(close(&run_usage["total_cost_usd"]), "{run_usage}");
    assert_eq!(run_usage["models"]["smollm2"]["usage"]["output_tokens"], 500);
    let shown = s.spine().args(["trace", "show", trace.to_str().expect("utf8")]).output().expect("runs");
    let text = stdout(&shown);
    assert!(text.contains("in 1000 (cache write 0, read 0), out 500, $0.004000"), "{text}");
    assert!(text.contains("run usage: smollm2: 1 request(s), in 1000 (cache write 0, read 0), out 500, $0.004000; total cost $0.004000"), "{text}");
}

fn anthropic_reply() -> String {
    let events = [
        json!({"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant", "content": [], "model": "claude-sonnet-4-5", "stop_reason": null, "usage": {"input_tokens": 5, "output_tokens": 1}}}),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "ok"}}),
        json!({"type": "content_block_stop", "index": 0}),
        json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 2}}),
        json!({"type": "message_stop"}),
    ];
    events.iter().map(|e| format!("event: {}\ndata: {e}\n\n", e["type"].as_str().unwrap_or(""))).collect()
}

#[test]
fn max_tokens_setting_wins_over_claude_code_max_output_tokens_which_wins_over_8192() {
    let cases: [(Option<&str>, &str, u64); 3] = [
        (None, "{}", 8192),
        (Some("2048"), "{}", 2048),
        (Some("2048"), r#"{"model_options": {"max_tokens": 1000}}"#, 1000),
    ];
    for (var, settings, expected) in cases {
        let server = SseServer::start(vec![anthropic_reply()]);
        let s = Sandbox::new();
        let mut cmd = s.spine();
        cmd.env("ANTHROPIC_BASE_URL", format!("http://{}", server.addr)).env("ANTHROPIC_API_KEY", "sk-test");
        match var {
            Some(v) => cmd.env("CLAUDE_CODE_MAX_OUTPUT_TOKENS", v),
            None => cmd.env_remove("CLAUDE_CODE_MAX_OUTPUT_TOKENS"),
        };
        let out = cmd
            .args(["run", "-p", "hi", "--model", "anthropic:claude-sonnet-4-5", "--settings", settings])
            .output()
            .expect("runs");
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        assert_eq!(server.only().1["max_tokens"], expected, "{var:?} {settings}");
    }
}

#[test]
fn usage_sent_with_a_length_stop_reaches_the_result_of_the_failed_run() {
    let events = [
        json!({"choices": [{"index": 0, "delta": {"content": "on and on"}, "finish_reason": null}]}),
        json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "length"}]}),
        json!({"choices": [], "usage": {"prompt_tokens": 7514, "completion_tokens": 400}}),
    ];
    let mut body: String = events.iter().map(|e| format!("data: {e}\n\n")).collect();
    body.push_str("data: [DONE]\n\n");
    let server = SseServer::start(vec![body]);
    let s = Sandbox::new();
    let out = s
        .spine()
        .env("OPENAI_BASE_URL", format!("http://{}/v1", server.addr))
        .args(["run", "-p", "ramble", "--model", "openai:smollm2", "--output-format", "json"])
        .output()
        .expect("runs");
    let result = json(&out);
    assert_eq!(result["subtype"], "error_during_execution", "{result}");
    assert_eq!(
        (result["usage"]["input_tokens"].clone(), result["usage"]["output_tokens"].clone()),
        (json!(7514), json!(400))
    );
    assert!(result.get("requests_without_usage").is_none(), "{result}");
}
