//! Token estimates through the `spine` binary against a local Messages API server: a Claude
//! model is counted with words (no OpenAI tokenizer table is loaded for it), and from the
//! second request on the estimate is the provider's reported count of the previous request
//! plus the new messages, so compaction sees the real size.

use serde_json::{Value, json};

use crate::support::*;

#[test]
fn a_claude_models_estimate_is_anchored_on_the_reported_input_tokens() {
    let s = Sandbox::new();
    s.write("README.md", "hello\n");
    let reported = 150_000;
    let first = sse_named(&[
        json!({"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant", "content": [], "model": "m", "stop_reason": null, "usage": {"input_tokens": 1000, "cache_read_input_tokens": reported - 1000, "output_tokens": 1}}}),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {}}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": "{\"file_path\": \"README.md\"}"}}),
        json!({"type": "content_block_stop", "index": 0}),
        json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 30}}),
        json!({"type": "message_stop"}),
    ]);
    let server = SseServer::start(vec![first, anthropic_text("It says hello.")]);
    let trace = s.dir.path().join("trace.jsonl");
    let out = s
        .spine()
        .env("ANTHROPIC_BASE_URL", format!("http://{}", server.addr))
        .env("ANTHROPIC_API_KEY", "sk-test")
        .args(["-p", "read it", "--model", "anthropic:claude-sonnet-4-5", "--trace"])
        .arg(&trace)
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let turns: Vec<Value> = spine_testkit::files::read_jsonl(&trace)
        .into_iter()
        .filter(|e| e["kind"] == "stage" && e["hook"] == "prepare_turn")
        .collect();
    assert_eq!(turns.len(), 2, "{turns:?}");
    assert_eq!(turns[0]["estimator"], "words", "no OpenAI table for a Claude model");
    assert_eq!(turns[0]["anchored_on_usage"], false);
    assert!(turns[0]["estimated_token_count"].as_u64().expect("count") < 20_000, "{}", turns[0]);
    assert_eq!(turns[1]["anchored_on_usage"], true);
    let second = turns[1]["estimated_token_count"].as_u64().expect("count");
    assert!(second > reported + 30, "the reported input and output, plus the tool result: {second}");
    assert!(second < reported + 1_000, "only the new messages are estimated: {second}");
}
