//! The model's replies in stream-json as Claude Code 2.1.328 writes them: one `assistant` line
//! per content block, and with `--include-partial-messages` the Anthropic streaming events as
//! `stream_event` lines — an Anthropic server replaying the recorded events
//! (`stream-json-partial.jsonl`) must give the recorded sequence back.

use serde_json::{Value, json};

use super::stream_json::{keys, lines, recorded};
use crate::support::*;

/// The Anthropic events of each reply of the recording, in order (the `event` of its
/// `stream_event` lines, split at `message_stop`).
fn recorded_replies() -> Vec<Vec<Value>> {
    let mut replies = vec![Vec::new()];
    for line in recorded("stream-json-partial.jsonl").into_iter().filter(|l| l["type"] == "stream_event") {
        let stop = line["event"]["type"] == "message_stop";
        replies.last_mut().expect("a reply").push(line["event"].clone());
        if stop {
            replies.push(Vec::new());
        }
    }
    replies.pop();
    replies
}

/// An event without what differs between runs: ids, model, usage.
fn shape(event: &Value) -> Value {
    let mut e = event.clone();
    if let Some(message) = e.get_mut("message").and_then(Value::as_object_mut) {
        for key in ["id", "model", "usage"] {
            message.remove(key);
        }
    }
    if let Some(map) = e.as_object_mut() {
        map.remove("usage");
    }
    e
}

/// spine on an Anthropic server that replays the recorded replies, with `args`.
fn replay(s: &Sandbox, args: &[&str]) -> (std::process::Output, SseServer) {
    let server = SseServer::start(recorded_replies().iter().map(|events| sse_named(events)).collect());
    let out = s
        .spine()
        .env("ANTHROPIC_BASE_URL", format!("http://{}", server.addr))
        .env("ANTHROPIC_API_KEY", "sk-test")
        .args(["run", "-p", "Use the tool", "--model", "anthropic:claude-opus-5-5", "--output-format", "stream-json"])
        .args(["--settings", r#"{"permissions": {"allow": ["Bash"]}}"#])
        .args(args)
        .output()
        .expect("runs");
    (out, server)
}

#[test]
fn partial_messages_stream_the_providers_events_in_claude_codes_sequence() {
    let s = Sandbox::new();
    let (out, _server) = replay(&s, &["--include-partial-messages"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let ours = lines(&out);
    let reference = recorded("stream-json-partial.jsonl");
    let events = |lines: &[Value]| -> Vec<Value> {
        lines.iter().filter(|l| l["type"] == "stream_event").map(|l| shape(&l["event"])).collect()
    };
    assert_eq!(events(&ours), events(&reference));
    // The same fields (Claude Code's `thinking_display` aside); `ttft_ms` on `message_start`.
    let want_keys = |l: &Value| {
        let mut k = keys(l);
        k.remove("thinking_display");
        k
    };
    let recorded_lines: Vec<&Value> = reference.iter().filter(|l| l["type"] == "stream_event").collect();
    let our_lines: Vec<&Value> = ours.iter().filter(|l| l["type"] == "stream_event").collect();
    for (line, recorded) in our_lines.iter().zip(&recorded_lines) {
        assert_eq!(keys(line), want_keys(recorded), "{line}");
        assert_eq!(line["parent_tool_use_id"], Value::Null);
    }
    // Every event of one reply names its message, the id its assistant lines carry.
    let first_id = our_lines[0]["api_message_id"].clone();
    let first_turn: Vec<&Value> =
        ours.iter().filter(|l| l["type"] == "assistant" && l["message"]["id"] == first_id).collect();
    assert_eq!(first_turn.len(), 3, "thinking, text, tool_use: {ours:#?}");
    // A `status: requesting` line before each request, as Claude Code prints it.
    let status: Vec<&Value> = ours.iter().filter(|l| l["subtype"] == "status").collect();
    let recorded_status = reference.iter().find(|l| l["subtype"] == "status").expect("recorded status");
    assert_eq!(status.len(), 2);
    assert_eq!(keys(status[0]), keys(recorded_status));
    // The last block's assistant line comes just before its `content_block_stop`.
    let last_stop = ours
        .iter()
        .position(|l| l["event"]["type"] == "content_block_stop" && l["event"]["index"] == 2)
        .expect("the tool_use block stops");
    assert_eq!(ours[last_stop - 1]["message"]["content"][0]["type"], "tool_use");
}

#[test]
fn each_content_block_is_an_assistant_line_of_its_own_as_claude_code_writes_them() {
    let s = Sandbox::new();
    let (out, _server) = replay(&s, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let blocks = |lines: &[Value]| -> Vec<Value> {
        lines.iter().filter(|l| l["type"] == "assistant").map(|l| l["message"]["content"].clone()).collect()
    };
    let reference = recorded("stream-json-blocks.jsonl");
    let ours = lines(&out);
    assert_eq!(blocks(&ours), blocks(&reference));
    assert!(ours.iter().all(|l| l["type"] != "stream_event"), "no stream events without the flag");
    let recorded_text =
        reference.iter().find(|l| l["type"] == "assistant" && l["message"]["content"][0]["type"] == "text");
    let our_text = ours.iter().find(|l| l["type"] == "assistant" && l["message"]["content"][0]["type"] == "text");
    let (recorded_text, our_text) = (recorded_text.expect("recorded"), our_text.expect("ours"));
    assert_eq!(keys(our_text), keys(recorded_text));
    assert_eq!(keys(&our_text["message"]), keys(&recorded_text["message"]));
    assert_eq!(keys(&our_text["message"]["usage"]), keys(&recorded_text["message"]["usage"]));
}

#[test]
fn partial_messages_synthesize_what_the_model_did_not_stream_after_what_it_did() {
    let s = Sandbox::new();
    // The scripted model streams its text; its tool call and thinking are known only whole.
    let script = s.script(json!([
        {"reasoning": [{"type": "thinking", "thinking": "hmm", "signature": "sig"}], "text": "I will run it.",
         "tool_calls": [{"id": "c1", "name": "Bash", "arguments": {"command": "echo hi"}}]},
        {"text": "Done."}
    ]));
    let out = s.run(
        &script,
        &[
            "--settings",
            r#"{"permissions": {"allow": ["Bash"]}}"#,
            "--output-format",
            "stream-json",
            "--include-partial-messages",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let gist: Vec<String> = lines(&out)
        .iter()
        .filter_map(|l| match l["type"].as_str()? {
            "stream_event" => {
                let e = &l["event"];
                Some(match e["type"].as_str()? {
                    "content_block_start" => format!("start:{}:{}", e["index"], e["content_block"]["type"].as_str()?),
                    "content_block_delta" => format!("delta:{}:{}", e["index"], e["delta"]["type"].as_str()?),
                    "content_block_stop" => format!("stop:{}", e["index"]),
                    other => other.to_owned(),
                })
            }
            "assistant" => Some(format!("assistant:{}", l["message"]["content"][0]["type"].as_str()?)),
            _ => None,
        })
        .collect();
    assert_eq!(
        gist[..17],
        [
            "message_start",
            "start:0:text",
            "delta:0:text_delta",
            "stop:0",
            "start:1:thinking",
            "delta:1:thinking_delta",
            "delta:1:signature_delta",
            "assistant:thinking",
            "stop:1",
            "assistant:text",
            "start:2:tool_use",
            "delta:2:input_json_delta",
            "assistant:tool_use",
            "stop:2",
            "message_delta",
            "message_stop",
            "message_start"
        ],
        "{gist:#?}"
    );
    let stop = lines(&out).into_iter().find(|l| l["event"]["type"] == "message_delta").expect("message_delta");
    assert_eq!(stop["event"]["delta"]["stop_reason"], "tool_use");
}
