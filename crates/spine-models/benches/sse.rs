//! Streaming parse throughput of a ~10 MB OpenAI SSE reply through the client's own path
//! (`spine_models::openai::stream::read_stream`: SSE framing, chunk JSON, delta assembly), fed
//! from memory in 16 KiB reads (and 256 KiB reads); and the latency the parser adds between the last byte (a final
//! `data: [DONE]` read) and the assembled reply.

// A test, bench or example target links every dependency of its package; the lint checks
// the library's and the binary's own lists (see the workspace Cargo.toml).
#![allow(unused_crate_dependencies)]

use std::cell::Cell;
use std::time::{Duration, Instant};

use bytes::Bytes;
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use futures_util::{StreamExt, stream};
use serde_json::json;
use spine_core::model::{FinishReason, NoStream};
use spine_models::http::BodyError;
use spine_models::openai::stream::read_stream;
use spine_protocol::tool::ToolArguments;

/// A typical network read.
const READ: usize = 16 * 1024;

fn event(delta: serde_json::Value, finish: Option<&str>) -> String {
    let chunk = json!({
        "id": "chatcmpl-B9MBs8CjcvOU2jLn4n570S5qMJKcT",
        "object": "chat.completion.chunk",
        "created": 1_741_570_283,
        "model": "gpt-4.1-2025-04-14",
        "system_fingerprint": "fp_1a2b3c4d5e",
        "choices": [{"index": 0, "delta": delta, "logprobs": null, "finish_reason": finish}]
    });
    format!("data: {chunk}\n\n")
}

/// A reply of about `target` bytes: half text deltas (one word each), half the fragmented
/// arguments of two tool calls (file contents with escapes), then finish, usage, `[DONE]`.
/// Returns the body and where the final `[DONE]` read starts.
fn reply(target: usize) -> (Bytes, usize) {
    let mut body = String::with_capacity(target + 4096);
    body.push_str(&event(json!({"role": "assistant", "content": ""}), None));
    let words = ["Let ", "me ", "look ", "at ", "the ", "file ", "first; ", "ünïcode ", "\"quoted\" ", "then\n"];
    let mut i = 0;
    while body.len() < target / 2 {
        body.push_str(&event(json!({"content": words[i % words.len()]}), None));
        i += 1;
    }
    // Each 12-character fragment costs one whole event: size the arguments by that.
    let per_event = event(json!({"tool_calls": [{"index": 0, "function": {"arguments": "x".repeat(12)}}]}), None).len();
    let per_call_args = (target / 4) / per_event * 12;
    for (index, id) in ["call_1", "call_2"].iter().enumerate() {
        body.push_str(&event(
            json!({"tool_calls": [{"index": index, "id": id, "type": "function", "function": {"name": "Write", "arguments": ""}}]}),
            None,
        ));
        let line = "    let x = \"value\"; // a line of code\n";
        let content = line.repeat(per_call_args / (line.len() + 4));
        let arguments = json!({"file_path": "src/lib.rs", "content": content}).to_string();
        let chars: Vec<char> = arguments.chars().collect();
        for piece in chars.chunks(12) {
            let fragment: String = piece.iter().collect();
            body.push_str(&event(json!({"tool_calls": [{"index": index, "function": {"arguments": fragment}}]}), None));
        }
    }
    body.push_str(&event(json!({}), Some("tool_calls")));
    body.push_str("data: {\"id\":\"chatcmpl-1\",\"choices\":[],\"usage\":{\"prompt_tokens\":1000,\"completion_tokens\":99999,\"total_tokens\":100999}}\n\n");
    let done_at = body.len();
    body.push_str("data: [DONE]\n\n");
    (Bytes::from(body), done_at)
}

/// The body in `size`-byte reads, the `[DONE]` event as its own final read.
fn reads(body: &Bytes, done_at: usize, size: usize) -> Vec<Bytes> {
    let mut out: Vec<Bytes> =
        (0..done_at).step_by(size).map(|start| body.slice(start..(start + size).min(done_at))).collect();
    out.push(body.slice(done_at..));
    out
}

fn check(body: &Bytes, done_at: usize, rt: &tokio::runtime::Runtime) {
    let chunks = reads(body, done_at, READ);
    let reply = rt
        .block_on(read_stream(stream::iter(chunks.into_iter().map(Ok::<_, BodyError>)), &NoStream))
        .expect("bench reply parses");
    assert_eq!(reply.finish_reason, FinishReason::ToolCalls);
    assert_eq!(reply.message.tool_calls.len(), 2);
    for call in &reply.message.tool_calls {
        assert!(matches!(call.arguments, ToolArguments::Json(_)), "arguments parse");
    }
    assert!(reply.message.content.as_deref().is_some_and(|t| t.len() > 100));
}

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread().build().expect("runtime");
    let (large, large_done) = reply(10_000_000);
    let (small, small_done) = reply(20_000);
    check(&large, large_done, &rt);
    check(&small, small_done, &rt);

    let mut group = c.benchmark_group("openai_sse_parse");
    group.throughput(Throughput::BytesDecimal(large.len() as u64));
    group.sample_size(10);
    // 256 KiB reads: what a slow consumer gets from a fast connection.
    for (name, size) in [("10MB_in_16KiB_reads", READ), ("10MB_in_256KiB_reads", 256 * 1024)] {
        let chunks = reads(&large, large_done, size);
        group.bench_function(name, |b| {
            b.iter(|| {
                let body = stream::iter(chunks.clone().into_iter().map(Ok::<_, BodyError>));
                rt.block_on(read_stream(body, &NoStream)).expect("reply")
            });
        });
    }
    group.finish();

    let mut group = c.benchmark_group("last_byte_to_reply");
    group.sample_size(10);
    for (name, body, done_at) in [("20KB_reply", &small, small_done), ("10MB_reply", &large, large_done)] {
        let chunks = reads(body, done_at, READ);
        let last = chunks.len() - 1;
        group.bench_function(name, |b| {
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    let last_read = Cell::new(None);
                    let body = stream::iter(chunks.clone().into_iter().enumerate()).map(|(i, c)| {
                        if i == last {
                            last_read.set(Some(Instant::now()));
                        }
                        Ok::<_, BodyError>(c)
                    });
                    let reply = rt.block_on(read_stream(body, &NoStream)).expect("reply");
                    let done = Instant::now();
                    std::hint::black_box(reply);
                    total += done - last_read.get().expect("last read happened");
                }
                total
            });
        });
    }
    group.finish();
}

/// One `data:` line of `mb` MiB (a JSON string), in 16 KiB reads, then the blank line.
fn long_line(mb: usize) -> Vec<Bytes> {
    let mut body = Vec::with_capacity(mb * 1024 * 1024 + 16);
    body.extend_from_slice(b"data: \"");
    body.resize(mb * 1024 * 1024, b'x');
    body.extend_from_slice(b"\"\n\n");
    let body = Bytes::from(body);
    (0..body.len()).step_by(READ).map(|start| body.slice(start..(start + READ).min(body.len()))).collect()
}

/// Long lines: the framing alone (`spine_models::sse::events`), against `eventsource-stream`
/// (the parser used before, quadratic in the line length; run for 1 and 4 MiB only) and a
/// plain `memchr` scan of the same reads for the line end (the floor).
fn long_lines(c: &mut Criterion) {
    use eventsource_stream::Eventsource;
    let rt = tokio::runtime::Builder::new_current_thread().build().expect("runtime");
    let mut group = c.benchmark_group("sse_long_line");
    group.sample_size(10);
    for mb in [1usize, 4, 16, 64] {
        let chunks = long_line(mb);
        group.throughput(Throughput::Bytes((mb * 1024 * 1024) as u64));
        group.bench_function(format!("{mb}MiB/spine"), |b| {
            b.iter(|| {
                let body = stream::iter(chunks.clone().into_iter().map(Ok::<_, BodyError>));
                // The default cap is 16 MiB; the 64 MiB line is measured under a cap that holds it.
                let events: Vec<_> = rt.block_on(spine_models::sse::events_capped(body, 128 << 20).collect());
                assert!(matches!(events.as_slice(), [Ok(_)]));
            });
        });
        group.bench_function(format!("{mb}MiB/memchr_floor"), |b| {
            b.iter(|| {
                let ends = chunks.iter().filter_map(|c| memchr::memchr(b'\n', c)).count();
                assert_eq!(ends, 1);
            });
        });
        if mb <= 4 {
            group.bench_function(format!("{mb}MiB/eventsource_stream_before"), |b| {
                b.iter(|| {
                    let body = stream::iter(chunks.clone().into_iter().map(Ok::<_, BodyError>));
                    let events: Vec<_> = rt.block_on(body.eventsource().collect());
                    assert_eq!(events.len(), 1);
                });
            });
        }
    }
    group.finish();
}

criterion_group!(benches, bench, long_lines);
criterion_main!(benches);
