//! Streaming parse throughput of a ~10 MB OpenAI Responses API reply through the client's own
//! path (`spine_models::responses::stream::read_stream`: SSE framing, event JSON, item
//! assembly), fed from memory in 16 KiB reads: a reasoning item with a summary, half the
//! bytes as text deltas, half as the fragmented arguments of two function calls, each item
//! closed by its `output_item.done`, then `response.completed`. Compare with `openai_sse_parse`
//! in `benches/sse.rs` (the same shape over chat completions).

// A test, bench or example target links every dependency of its package; the lint checks
// the library's and the binary's own lists (see the workspace Cargo.toml).
#![allow(unused_crate_dependencies)]

use bytes::Bytes;
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use futures_util::stream;
use serde_json::{Value, json};
use spine_core::model::{FinishReason, NoStream};
use spine_models::http::BodyError;
use spine_models::responses::stream::read_stream;
use spine_protocol::tool::ToolArguments;

/// A typical network read.
const READ: usize = 16 * 1024;

fn event(value: Value) -> String {
    format!("event: {}\ndata: {value}\n\n", value["type"].as_str().unwrap_or(""))
}

/// A reply of about `target` bytes.
fn reply(target: usize) -> Bytes {
    let mut body = String::with_capacity(target + 8192);
    body.push_str(&event(json!({"type": "response.created", "sequence_number": 0, "response": {"id": "resp_1", "status": "in_progress"}})));
    body.push_str(&event(json!({"type": "response.output_item.added", "output_index": 0, "item": {"type": "reasoning", "id": "rs_1", "summary": []}})));
    body.push_str(&event(json!({"type": "response.reasoning_summary_text.delta", "item_id": "rs_1", "output_index": 0, "summary_index": 0, "delta": "Reading the file first."})));
    body.push_str(&event(json!({"type": "response.output_item.done", "output_index": 0, "item": {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "Reading the file first."}], "encrypted_content": "gAAAA".repeat(200)}})));
    body.push_str(&event(json!({"type": "response.output_item.added", "output_index": 1, "item": {"type": "message", "id": "msg_1", "role": "assistant", "content": []}})));
    let words = ["Let ", "me ", "look ", "at ", "the ", "file ", "first; ", "ünïcode ", "\"quoted\" ", "then\n"];
    let mut text = String::new();
    let mut seq = 1u64;
    while body.len() < target / 2 {
        let word = words[(seq as usize) % words.len()];
        text.push_str(word);
        body.push_str(&event(json!({"type": "response.output_text.delta", "sequence_number": seq, "item_id": "msg_1", "output_index": 1, "content_index": 0, "delta": word})));
        seq += 1;
    }
    body.push_str(&event(json!({"type": "response.output_item.done", "output_index": 1, "item": {"type": "message", "id": "msg_1", "role": "assistant", "content": [{"type": "output_text", "text": text, "annotations": []}]}})));
    let per_event = event(json!({"type": "response.function_call_arguments.delta", "sequence_number": 1, "item_id": "fc_1", "output_index": 2, "delta": "x".repeat(12)})).len();
    let per_call_args = (target / 4) / per_event * 12;
    for (n, call_id) in ["call_1", "call_2"].iter().enumerate() {
        let index = n + 2;
        body.push_str(&event(json!({"type": "response.output_item.added", "output_index": index, "item": {"type": "function_call", "id": "fc", "call_id": call_id, "name": "Write", "arguments": ""}})));
        let line = "    let x = \"value\"; // a line of code\n";
        let content = line.repeat(per_call_args / (line.len() + 4));
        let arguments = json!({"file_path": "src/lib.rs", "content": content}).to_string();
        let chars: Vec<char> = arguments.chars().collect();
        for piece in chars.chunks(12) {
            let fragment: String = piece.iter().collect();
            body.push_str(&event(json!({"type": "response.function_call_arguments.delta", "sequence_number": seq, "item_id": "fc", "output_index": index, "delta": fragment})));
            seq += 1;
        }
        body.push_str(&event(json!({"type": "response.output_item.done", "output_index": index, "item": {"type": "function_call", "id": "fc", "call_id": call_id, "name": "Write", "arguments": arguments}})));
    }
    body.push_str(&event(json!({"type": "response.completed", "response": {"id": "resp_1", "status": "completed", "usage": {"input_tokens": 1000, "output_tokens": 99999}}})));
    Bytes::from(body)
}

fn reads(body: &Bytes, size: usize) -> Vec<Bytes> {
    (0..body.len()).step_by(size).map(|start| body.slice(start..(start + size).min(body.len()))).collect()
}

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread().build().expect("runtime");
    let large = reply(10_000_000);
    let chunks = reads(&large, READ);
    let check = rt
        .block_on(read_stream(stream::iter(chunks.clone().into_iter().map(Ok::<_, BodyError>)), &NoStream))
        .expect("bench reply parses");
    assert_eq!(check.finish_reason, FinishReason::ToolCalls);
    assert_eq!(check.message.tool_calls.len(), 2);
    assert_eq!(check.message.reasoning.len(), 1);
    assert!(check.message.tool_calls.iter().all(|c| matches!(c.arguments, ToolArguments::Json(_))));

    let mut group = c.benchmark_group("responses_sse_parse");
    group.throughput(Throughput::BytesDecimal(large.len() as u64));
    group.sample_size(10);
    group.bench_function("10MB_in_16KiB_reads", |b| {
        b.iter(|| {
            let body = stream::iter(chunks.clone().into_iter().map(Ok::<_, BodyError>));
            rt.block_on(read_stream(body, &NoStream)).expect("reply")
        });
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
