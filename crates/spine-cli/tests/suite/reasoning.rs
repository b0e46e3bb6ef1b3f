//! Reasoning end to end through `spine run`: Anthropic extended thinking from settings
//! (`model_options.thinking_budget_tokens`) shown with `-v` and recorded in the trace but never
//! the answer (the Stop hook's `last_assistant_message`, the JSON `result`), and a full tool loop
//! over the OpenAI Responses API (`openai-responses:MODEL`) with its reasoning items sent back.

use serde_json::{Value, json};

use crate::support::*;

const KEY: &str = "sk-test-secret-key-0123456789";
const THOUGHT: &str = "SECRET-THOUGHT: the user wants 2 + 2";

fn sse_named(events: &[Value]) -> String {
    events.iter().map(|e| format!("event: {}\ndata: {e}\n\n", e["type"].as_str().unwrap_or(""))).collect()
}

fn anthropic_turn(blocks: &[Value], stop_reason: &str) -> String {
    let mut events = vec![
        json!({"type": "message_start", "message": {"id": "msg", "type": "message", "role": "assistant", "content": [], "model": "claude-sonnet-4-5", "stop_reason": null, "usage": {"input_tokens": 30, "output_tokens": 1}}}),
    ];
    for (index, block) in blocks.iter().enumerate() {
        let (start, deltas) = match block["type"].as_str() {
            Some("thinking") => (
                json!({"type": "thinking", "thinking": ""}),
                vec![
                    json!({"type": "thinking_delta", "thinking": block["thinking"]}),
                    json!({"type": "signature_delta", "signature": block["signature"]}),
                ],
            ),
            Some("text") => {
                (json!({"type": "text", "text": ""}), vec![json!({"type": "text_delta", "text": block["text"]})])
            }
            _ => (block.clone(), vec![]),
        };
        events.push(json!({"type": "content_block_start", "index": index, "content_block": start}));
        events.extend(deltas.into_iter().map(|d| json!({"type": "content_block_delta", "index": index, "delta": d})));
        events.push(json!({"type": "content_block_stop", "index": index}));
    }
    events.push(json!({"type": "message_delta", "delta": {"stop_reason": stop_reason}, "usage": {"output_tokens": 9}}));
    events.push(json!({"type": "message_stop"}));
    sse_named(&events)
}

#[test]
fn thinking_is_shown_with_v_and_traced_but_never_the_stop_hooks_answer() {
    let s = Sandbox::new();
    let first = anthropic_turn(
        &[
            json!({"type": "thinking", "thinking": THOUGHT, "signature": "sig-1=="}),
            json!({"type": "tool_use", "id": "toolu_1", "name": "calculator", "input": {"expression": "2 + 2"}}),
        ],
        "tool_use",
    );
    let second = anthropic_turn(
        &[
            json!({"type": "thinking", "thinking": "SECRET-THOUGHT: the calculator said 4", "signature": "sig-2=="}),
            json!({"type": "text", "text": "2 + 2 = 4."}),
        ],
        "end_turn",
    );
    let server = SseServer::start(vec![first, second]);
    let stop_input = s.dir.path().join("stop-input.json");
    let settings = json!({
        "permissions": {"allow": ["calculator"]},
        "model_options": {"thinking_budget_tokens": 2048},
        "hooks": {"Stop": [{"hooks": [{"type": "command", "command": format!("cat > {}", stop_input.display())}]}]}
    });
    let trace = s.dir.path().join("trace.jsonl");
    let out = s
        .spine()
        .env("ANTHROPIC_BASE_URL", format!("http://{}", server.addr))
        .env("ANTHROPIC_API_KEY", KEY)
        .args(["run", "-v", "-p", "what is 2 + 2?", "--model", "sonnet", "--output-format", "json"])
        .args(["--settings", &settings.to_string(), "--trace", trace.to_str().expect("utf8")])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));

    let result = json(&out);
    assert_eq!(result["result"], "2 + 2 = 4.");
    let hook: Value = serde_json::from_str(&std::fs::read_to_string(&stop_input).expect("the Stop hook ran"))
        .expect("Stop input is JSON");
    assert_eq!(hook["last_assistant_message"], "2 + 2 = 4.");
    assert!(!hook.to_string().contains("SECRET-THOUGHT"), "thinking reached the Stop hook: {hook}");

    let err = stderr(&out);
    assert!(err.contains(&format!("[Thinking] {THOUGHT}")), "{err}");
    assert!(err.contains("[Thinking] SECRET-THOUGHT: the calculator said 4"), "{err}");

    let entries: Vec<Value> = std::fs::read_to_string(&trace)
        .expect("trace")
        .lines()
        .map(|l| serde_json::from_str(l).expect("trace line"))
        .collect();
    let models: Vec<&Value> = entries.iter().filter(|e| e["kind"] == "model").collect();
    assert_eq!(models.len(), 2);
    assert_eq!(models[0]["reasoning"], json!([THOUGHT]));

    let bodies = server.bodies();
    assert_eq!(bodies[0]["thinking"], json!({"type": "enabled", "budget_tokens": 2048}));
    let assistant = &bodies[1]["messages"][1];
    assert_eq!(assistant["role"], "assistant");
    assert_eq!(assistant["content"][0], json!({"type": "thinking", "thinking": THOUGHT, "signature": "sig-1=="}));
    assert_eq!(assistant["content"][1]["type"], "tool_use");
}

#[test]
fn a_responses_api_tool_loop_runs_through_the_binary() {
    let s = Sandbox::new();
    let first = sse_named(&[
        json!({"type": "response.created", "response": {"id": "resp_1", "status": "in_progress", "output": []}}),
        json!({"type": "response.output_item.added", "output_index": 0, "item": {"type": "reasoning", "id": "rs_1", "summary": []}}),
        json!({"type": "response.reasoning_summary_text.delta", "output_index": 0, "summary_index": 0, "delta": "Use the calculator."}),
        json!({"type": "response.output_item.done", "output_index": 0, "item": {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "Use the calculator."}], "encrypted_content": "gAAAA-opaque"}}),
        json!({"type": "response.output_item.added", "output_index": 1, "item": {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "calculator", "arguments": ""}}),
        json!({"type": "response.function_call_arguments.delta", "output_index": 1, "delta": "{\"expression\": \"6 * 7\"}"}),
        json!({"type": "response.output_item.done", "output_index": 1, "item": {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "calculator", "arguments": "{\"expression\": \"6 * 7\"}"}}),
        json!({"type": "response.completed", "response": {"id": "resp_1", "status": "completed", "usage": {"input_tokens": 80, "output_tokens": 20}}}),
    ]);
    let second = sse_named(&[
        json!({"type": "response.output_item.added", "output_index": 0, "item": {"type": "message", "role": "assistant", "content": []}}),
        json!({"type": "response.output_text.delta", "output_index": 0, "content_index": 0, "delta": "6 * 7 = 42."}),
        json!({"type": "response.output_item.done", "output_index": 0, "item": {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "6 * 7 = 42."}]}}),
        json!({"type": "response.completed", "response": {"id": "resp_2", "status": "completed", "usage": {"input_tokens": 120, "output_tokens": 8}}}),
    ]);
    let server = SseServer::start(vec![first, second]);
    let settings = json!({"permissions": {"allow": ["calculator"]}, "model_options": {"reasoning_effort": "low"}});
    let out = s
        .spine()
        .env("OPENAI_BASE_URL", format!("http://{}/v1", server.addr))
        .env("OPENAI_API_KEY", KEY)
        .args(["run", "-p", "what is 6 * 7?", "--model", "openai-responses:o4-mini", "--output-format", "json"])
        .args(["--settings", &settings.to_string()])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let result = json(&out);
    assert_eq!(result["result"], "6 * 7 = 42.");
    assert_eq!(result["usage"]["input_tokens"], 200);

    let bodies = server.bodies();
    assert_eq!(bodies.len(), 2);
    assert_eq!(bodies[0]["model"], "o4-mini");
    assert_eq!(bodies[0]["reasoning"], json!({"effort": "low", "summary": "auto"}));
    assert!(bodies[0]["instructions"].as_str().is_some_and(|i| !i.is_empty()), "the system prompt is the instructions");
    let input = bodies[1]["input"].as_array().expect("input");
    let kinds: Vec<&str> = input.iter().filter_map(|i| i["type"].as_str()).collect();
    let at = kinds.iter().position(|k| *k == "reasoning").expect("the reasoning item is sent back");
    assert_eq!(&kinds[at..], ["reasoning", "function_call", "function_call_output"]);
    assert_eq!(input[at]["encrypted_content"], "gAAAA-opaque");
    assert_eq!(
        input[at + 2],
        json!({"type": "function_call_output", "call_id": "call_1", "output": "The calculator returned 42."})
    );
    assert!(!stdout(&out).contains(KEY) && !stderr(&out).contains(KEY));
}

#[test]
fn stream_json_prints_thinking_blocks_as_claude_code_does_and_the_result_is_the_text() {
    let s = Sandbox::new();
    let reply = anthropic_turn(
        &[
            json!({"type": "thinking", "thinking": THOUGHT, "signature": "sig-1=="}),
            json!({"type": "redacted_thinking", "data": "opaque-data"}),
            json!({"type": "text", "text": "4."}),
        ],
        "end_turn",
    );
    let server = SseServer::start(vec![reply]);
    let out = s
        .spine()
        .env("ANTHROPIC_BASE_URL", format!("http://{}", server.addr))
        .env("ANTHROPIC_API_KEY", KEY)
        .args(["run", "-p", "what is 2 + 2?", "--model", "sonnet", "--output-format", "stream-json"])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let lines: Vec<Value> =
        stdout(&out).lines().map(|l| serde_json::from_str(l).expect("one JSON object per line")).collect();
    // One line per content block, as Claude Code writes them, all of one message.
    let assistant: Vec<&Value> = lines.iter().filter(|l| l["type"] == "assistant").collect();
    assert!(assistant.iter().all(|l| l["message"]["id"] == assistant[0]["message"]["id"]));
    let content: Vec<Value> = assistant.iter().map(|l| l["message"]["content"][0].clone()).collect();
    assert_eq!(
        json!(content),
        json!([
            {"type": "thinking", "thinking": THOUGHT, "signature": "sig-1=="},
            {"type": "redacted_thinking", "data": "opaque-data"},
            {"type": "text", "text": "4."}
        ])
    );
    let result = lines.last().expect("result line");
    assert_eq!(result["result"], "4.");
}
