//! OpenTelemetry export through the `spine` binary: an OTLP/HTTP receiver on 127.0.0.1 decodes
//! each `ExportTraceServiceRequest` (protobuf) and the tests read the spans back.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::{AnyValue, KeyValue, any_value};
use opentelemetry_proto::tonic::trace::v1::Span;
use prost::Message as _;
use serde_json::{Value, json};

use crate::support::*;

/// The requests a receiver got: headers and body.
type Requests = Arc<Mutex<Vec<(axum::http::HeaderMap, Vec<u8>)>>>;

/// An OTLP/HTTP receiver: `POST /v1/traces` answers 200 and keeps the body and headers.
pub(crate) struct Receiver {
    addr: std::net::SocketAddr,
    requests: Requests,
    _runtime: tokio::runtime::Runtime,
}

impl Receiver {
    pub(crate) fn start() -> Receiver {
        let runtime = spine_testkit::http::server_runtime();
        let requests: Requests = Arc::default();
        let kept = Arc::clone(&requests);
        let app = axum::Router::new().route(
            "/v1/traces",
            axum::routing::post(move |headers: axum::http::HeaderMap, body: axum::body::Bytes| {
                let kept = Arc::clone(&kept);
                async move {
                    kept.lock().expect("lock").push((headers, body.to_vec()));
                    ([("content-type", "application/x-protobuf")], Vec::<u8>::new())
                }
            }),
        );
        let addr = runtime.block_on(async {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
            let addr = listener.local_addr().expect("addr");
            tokio::spawn(async move {
                let _ = axum::serve(listener, app).await;
            });
            addr
        });
        Receiver { addr, requests, _runtime: runtime }
    }

    pub(crate) fn endpoint(&self) -> String {
        format!("http://{}", self.addr)
    }

    fn bodies(&self) -> Vec<Vec<u8>> {
        self.requests.lock().expect("lock").iter().map(|(_, body)| body.clone()).collect()
    }

    fn headers(&self) -> Vec<axum::http::HeaderMap> {
        self.requests.lock().expect("lock").iter().map(|(headers, _)| headers.clone()).collect()
    }

    /// Every exported span, with its resource's attributes.
    pub(crate) fn spans(&self) -> Vec<(Span, Vec<KeyValue>)> {
        let mut spans = Vec::new();
        for body in self.bodies() {
            let request = ExportTraceServiceRequest::decode(body.as_slice()).expect("an ExportTraceServiceRequest");
            for resource_spans in request.resource_spans {
                let resource = resource_spans.resource.map(|r| r.attributes).unwrap_or_default();
                for scope in resource_spans.scope_spans {
                    spans.extend(scope.spans.into_iter().map(|s| (s, resource.clone())));
                }
            }
        }
        spans
    }

    /// The decoded export, as readable text (every string and attribute of every span).
    fn decoded_text(&self) -> String {
        self.bodies()
            .iter()
            .map(|b| format!("{:?}", ExportTraceServiceRequest::decode(b.as_slice()).expect("decodes")))
            .collect()
    }
}

/// An attribute value as JSON (strings, integers, doubles, booleans, arrays).
fn value(v: &AnyValue) -> Value {
    match &v.value {
        Some(any_value::Value::StringValue(s)) => json!(s),
        Some(any_value::Value::IntValue(i)) => json!(i),
        Some(any_value::Value::DoubleValue(d)) => json!(d),
        Some(any_value::Value::BoolValue(b)) => json!(b),
        Some(any_value::Value::ArrayValue(a)) => Value::Array(a.values.iter().map(value).collect()),
        other => json!(format!("{other:?}")),
    }
}

fn attrs(list: &[KeyValue]) -> HashMap<String, Value> {
    list.iter().map(|kv| (kv.key.clone(), kv.value.as_ref().map(value).unwrap_or(Value::Null))).collect()
}

pub(crate) fn attr(span: &Span, key: &str) -> Value {
    attrs(&span.attributes).remove(key).unwrap_or(Value::Null)
}

pub(crate) fn named<'a>(spans: &'a [(Span, Vec<KeyValue>)], prefix: &str) -> Vec<&'a Span> {
    spans.iter().map(|(s, _)| s).filter(|s| s.name.starts_with(prefix)).collect()
}

/// A session of three model requests and three tool calls (one refused by a PreToolUse hook of
/// the project's settings), with usage reported on every request.
fn three_requests_three_calls(s: &Sandbox, marker: &str) -> std::path::PathBuf {
    s.trust();
    s.write(
        ".spine/settings.json",
        r#"{"permissions": {"allow": ["Bash"]}, "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
            {"type": "command", "command": "grep -q refuse && { echo refused >&2; exit 2; } || exit 0"}]}]}}"#,
    );
    s.script(json!([
        {"tool_calls": [
            {"id": "c1", "name": "calculator", "arguments": {"expression": "6*7"}},
            {"id": "c2", "name": "Bash", "arguments": {"command": format!("echo {marker}-result")}}
        ], "usage": {"input_tokens": 100, "output_tokens": 10, "cache_read_input_tokens": 60}},
        {"tool_calls": [{"id": "c3", "name": "Bash", "arguments": {"command": "echo refuse"}}],
         "usage": {"input_tokens": 150, "output_tokens": 12, "cache_creation_input_tokens": 40}},
        {"text": format!("{marker}-answer"), "usage": {"input_tokens": 200, "output_tokens": 5}}
    ]))
}

fn run_exported(s: &Sandbox, script: &std::path::Path, receiver: &Receiver, env: &[(&str, &str)]) -> String {
    let mut cmd = s.spine();
    cmd.args(["run", "-p", "prompt-PROMPTMARK", "--model", &format!("scripted:{}", script.display())])
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.endpoint())
        .env_remove("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
        .env_remove("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("spine runs");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    stdout(&out)
}

#[test]
fn export_sends_one_invoke_agent_span_with_a_chat_span_per_request_and_an_execute_tool_span_per_call() {
    let s = Sandbox::new();
    let receiver = Receiver::start();
    let script = three_requests_three_calls(&s, "M");
    run_exported(&s, &script, &receiver, &[]);
    let spans = receiver.spans();

    let runs = named(&spans, "invoke_agent");
    assert_eq!(runs.len(), 1, "{:?}", spans.iter().map(|(s, _)| &s.name).collect::<Vec<_>>());
    let run = runs[0];
    assert!(run.parent_span_id.is_empty(), "the run is the root");
    assert!(spans.iter().all(|(s, _)| s.trace_id == run.trace_id), "one trace");
    assert_eq!(attr(run, "gen_ai.operation.name"), "invoke_agent");
    assert_eq!(attr(run, "gen_ai.usage.input_tokens"), 450);
    assert_eq!(attr(run, "gen_ai.usage.output_tokens"), 27);
    assert!(attr(run, "gen_ai.conversation.id").as_str().is_some_and(|id| !id.is_empty()));
    // The resource names the service `spine` (no OTEL_SERVICE_NAME).
    assert_eq!(attrs(&spans[0].1)["service.name"], "spine");

    let chats = named(&spans, "chat ");
    assert_eq!(chats.len(), 3);
    for chat in &chats {
        assert_eq!(chat.parent_span_id, run.span_id, "{} is a child of the run", chat.name);
        assert_eq!(chat.name, "chat scripted");
        assert_eq!(attr(chat, "gen_ai.operation.name"), "chat");
        assert_eq!(attr(chat, "gen_ai.request.model"), "scripted");
        assert_eq!(attr(chat, "gen_ai.provider.name"), "spine");
        assert_eq!(attr(chat, "gen_ai.system"), "spine");
        assert!(chat.end_time_unix_nano >= chat.start_time_unix_nano);
    }
    let by_turn = |turn: i64| *chats.iter().find(|c| attr(c, "spine.turn") == turn).expect("turn");
    let first = by_turn(1);
    assert_eq!(attr(first, "gen_ai.usage.input_tokens"), 100);
    assert_eq!(attr(first, "gen_ai.usage.output_tokens"), 10);
    assert_eq!(attr(first, "gen_ai.usage.cache_read.input_tokens"), 60);
    assert_eq!(attr(first, "gen_ai.response.finish_reasons"), json!(["tool_calls"]));
    assert_eq!(attr(by_turn(2), "gen_ai.usage.cache_creation.input_tokens"), 40);
    assert_eq!(attr(by_turn(3), "gen_ai.response.finish_reasons"), json!(["stop"]));

    let tools = named(&spans, "execute_tool ");
    let names: Vec<(&str, Value, Value)> = tools
        .iter()
        .map(|t| (t.name.as_str(), attr(t, "gen_ai.tool.call.id"), attr(t, "spine.decision.outcome")))
        .collect();
    assert_eq!(names.len(), 3, "{names:?}");
    for (name, id, outcome) in [
        ("execute_tool calculator", "c1", "executed"),
        ("execute_tool Bash", "c2", "executed"),
        ("execute_tool Bash", "c3", "blocked"),
    ] {
        assert!(names.contains(&(name, json!(id), json!(outcome))), "{name} {id} {outcome}: {names:?}");
    }
    let tool = |id: &str| *tools.iter().find(|t| attr(t, "gen_ai.tool.call.id") == id).expect("tool span");
    for t in &tools {
        assert_eq!(t.parent_span_id, run.span_id);
        assert_eq!(attr(t, "gen_ai.operation.name"), "execute_tool");
    }
    assert_eq!(attr(tool("c1"), "gen_ai.tool.name"), "calculator");
    let blocked = tool("c3");
    assert_eq!(attr(blocked, "spine.decision.error_code"), "hook_blocked");
    let pre = attr(blocked, "spine.decision.pre_tool_use");
    assert!(
        pre.as_array().is_some_and(|p| p.len() == 1 && p[0].as_str().is_some_and(|h| h.ends_with(": block"))),
        "{pre}"
    );
    let record: Value =
        serde_json::from_str(attr(blocked, "spine.decision.record").as_str().expect("record")).expect("JSON");
    assert_eq!(record["outcome"], "blocked");
    assert_eq!(attr(tool("c2"), "spine.decision.permission.behavior"), "allow");

    // Hook and stage spans sit under their call's span; the hook names its file and JSON path.
    let hooks: Vec<&Span> = named(&spans, "hook PreToolUse");
    assert_eq!(hooks.len(), 2, "one PreToolUse hook per Bash call");
    for hook in &hooks {
        let call = attr(hook, "gen_ai.tool.call.id");
        let parent = tool(call.as_str().expect("call id"));
        assert_eq!(hook.parent_span_id, parent.span_id);
        assert!(hook.start_time_unix_nano >= parent.start_time_unix_nano);
        assert!(
            attr(hook, "spine.hook.source.file").as_str().is_some_and(|f| f.ends_with(".spine/settings.json")),
            "{:?}",
            attr(hook, "spine.hook.source")
        );
        assert_eq!(attr(hook, "spine.hook.source.path"), "hooks.PreToolUse[0].hooks[0]");
        assert!(attr(hook, "spine.hook.duration_us").is_i64());
    }
    let decisions: Vec<Value> = hooks.iter().map(|h| attr(h, "spine.hook.decision")).collect();
    assert!(decisions.contains(&json!("block")) && decisions.contains(&json!("proceed")), "{decisions:?}");
    let executes = named(&spans, "execute");
    let execute_c1 =
        executes.iter().find(|s| s.name == "execute" && attr(s, "gen_ai.tool.call.id") == "c1").expect("execute stage");
    assert_eq!(execute_c1.parent_span_id, tool("c1").span_id);
    let prepare = named(&spans, "prepare_turn");
    assert_eq!(prepare.len(), 3);
    assert!(prepare.iter().all(|p| p.parent_span_id == run.span_id));
}

#[test]
fn without_the_opt_in_no_message_content_is_exported_and_with_it_prompts_replies_and_results_are() {
    let s = Sandbox::new();
    let receiver = Receiver::start();
    let script = three_requests_three_calls(&s, "CONTENTMARK");
    run_exported(&s, &script, &receiver, &[]);
    let text = receiver.decoded_text();
    assert!(!receiver.bodies().is_empty());
    for marker in ["CONTENTMARK", "PROMPTMARK", "6*7"] {
        assert!(!text.contains(marker), "content `{marker}` exported without the opt-in");
    }

    let receiver = Receiver::start();
    run_exported(&s, &script, &receiver, &[("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "true")]);
    let spans = receiver.spans();
    let run = named(&spans, "invoke_agent")[0];
    assert!(attr(run, "gen_ai.input.messages").as_str().is_some_and(|m| m.contains("PROMPTMARK")));
    let chats = named(&spans, "chat ");
    let last = chats.iter().find(|c| attr(c, "spine.turn") == 3).expect("turn 3");
    assert!(attr(last, "gen_ai.output.messages").as_str().is_some_and(|m| m.contains("CONTENTMARK-answer")));
    assert!(attr(last, "gen_ai.input.messages").as_str().is_some_and(|m| m.contains("CONTENTMARK-result")));
    let c2 = named(&spans, "execute_tool ").into_iter().find(|t| attr(t, "gen_ai.tool.call.id") == "c2").expect("c2");
    assert!(attr(c2, "gen_ai.tool.call.arguments").as_str().is_some_and(|a| a.contains("echo CONTENTMARK-result")));
    assert!(attr(c2, "gen_ai.tool.call.result").as_str().is_some_and(|r| r.contains("CONTENTMARK-result")));
}

#[test]
fn no_api_key_or_exporter_header_value_reaches_the_export_even_with_content_on() {
    let s = Sandbox::new();
    let receiver = Receiver::start();
    let script = three_requests_three_calls(&s, "K");
    run_exported(
        &s,
        &script,
        &receiver,
        &[
            ("ANTHROPIC_API_KEY", "sk-ant-KEYMARK-1"),
            ("OPENAI_API_KEY", "sk-KEYMARK-2"),
            ("OTEL_EXPORTER_OTLP_HEADERS", "x-api-key=KEYMARK-3"),
            ("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "true"),
        ],
    );
    // The header reached the receiver as a header (OTEL_EXPORTER_OTLP_HEADERS is honoured)…
    assert!(receiver.headers().iter().all(|h| h.get("x-api-key").is_some_and(|v| v == "KEYMARK-3")));
    // …and no key is anywhere in what was exported, decoded or raw.
    assert!(!receiver.decoded_text().contains("KEYMARK"));
    assert!(receiver.bodies().iter().all(|b| !String::from_utf8_lossy(b).contains("KEYMARK")));
}

#[test]
fn service_name_and_resource_attributes_come_from_the_standard_variables() {
    let s = Sandbox::new();
    let receiver = Receiver::start();
    let script = s.script(json!([{"text": "hi"}]));
    run_exported(
        &s,
        &script,
        &receiver,
        &[("OTEL_SERVICE_NAME", "my-agent"), ("OTEL_RESOURCE_ATTRIBUTES", "deployment.environment=test,team=a")],
    );
    let spans = receiver.spans();
    let resource = attrs(&spans[0].1);
    assert_eq!(resource["service.name"], "my-agent");
    assert_eq!(resource["deployment.environment"], "test");
    assert_eq!(resource["team"], "a");
}

#[test]
fn the_telemetry_setting_turns_export_on_without_any_variable() {
    let s = Sandbox::new();
    let receiver = Receiver::start();
    let script = s.script(json!([{"text": "hi"}]));
    let settings = json!({"telemetry": {"otlp": {"endpoint": receiver.endpoint(), "protocol": "http/protobuf"}}});
    let out = s
        .spine()
        .args(["run", "-p", "go", "--model", &format!("scripted:{}", script.display())])
        .args(["--settings", &settings.to_string()])
        .env_remove("OTEL_EXPORTER_OTLP_ENDPOINT")
        .env_remove("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(named(&receiver.spans(), "invoke_agent").len(), 1);
}

#[test]
fn an_unreachable_endpoint_neither_fails_the_run_nor_changes_its_output() {
    let s = Sandbox::new();
    let script = s.script(json!([
        {"tool_calls": [{"id": "c1", "name": "calculator", "arguments": {"expression": "6*7"}}]},
        {"text": "42"}
    ]));
    let closed = format!("http://127.0.0.1:{}", spine_testkit::http::free_port());
    let started = std::time::Instant::now();
    let out = s
        .spine()
        .args(["run", "-p", "go", "--model", &format!("scripted:{}", script.display())])
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", &closed)
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out), "42\n");
    assert!(started.elapsed() < std::time::Duration::from_secs(60), "liveness");
}

#[test]
fn a_worker_assignment_with_a_traceparent_is_exported_as_a_child_of_the_submitters_span() {
    let s = Sandbox::new();
    let receiver = Receiver::start();
    let url = format!("sqlite:{}?lease_ms=5000", s.dir.path().join("mailbox.db").display());
    let mut item = spine_protocol::assignment::example_item("traced-1");
    item["traceparent"] = json!("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01");
    let path = s.dir.path().join("item.json");
    std::fs::write(&path, item.to_string()).expect("item file");
    let out = s.spine().args(["submit", "--mailbox", &url]).arg(&path).output().expect("submit");
    assert!(out.status.success(), "{}", stderr(&out));
    let untraced = s.dir.path().join("untraced.json");
    std::fs::write(&untraced, spine_protocol::assignment::example_item("plain-2").to_string()).expect("item file");
    let out = s.spine().args(["submit", "--mailbox", &url]).arg(&untraced).output().expect("submit");
    assert!(out.status.success(), "{}", stderr(&out));

    let out = s
        .spine()
        .args(["worker", "--mailbox", &url, "--once"])
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.endpoint())
        .output()
        .expect("worker");
    assert!(out.status.success(), "{}", stderr(&out));
    let spans = receiver.spans();
    let runs = named(&spans, "invoke_agent");
    assert_eq!(runs.len(), 2, "one trace per assignment");
    let traced = runs.iter().find(|r| attr(r, "spine.mailbox_item_id") == "traced-1").expect("traced item");
    assert_eq!(hex(&traced.trace_id), "4bf92f3577b34da6a3ce929d0e0e4736");
    assert_eq!(hex(&traced.parent_span_id), "00f067aa0ba902b7");
    let plain = runs.iter().find(|r| attr(r, "spine.mailbox_item_id") == "plain-2").expect("plain item");
    assert_ne!(plain.trace_id, traced.trace_id);
    assert!(plain.parent_span_id.is_empty());
    // The item's stages are in its trace, under its run.
    let execute = spans
        .iter()
        .map(|(s, _)| s)
        .find(|s| s.name == "execute" && s.trace_id == traced.trace_id)
        .expect("the calculator's execute stage");
    let parent = spans.iter().map(|(s, _)| s).find(|s| s.span_id == execute.parent_span_id).expect("a parent");
    assert!(
        parent.span_id == traced.span_id || parent.parent_span_id == traced.span_id,
        "under the item's run (or its tool call): {}",
        parent.name
    );
    assert_eq!(attrs(&spans[0].1)["service.name"], "spine-worker");
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[test]
fn a_run_of_more_spans_than_the_export_queue_holds_exports_every_span() {
    let s = Sandbox::new();
    let receiver = Receiver::start();
    let calls: Vec<Value> = (0..1100)
        .map(|i| json!({"id": format!("c{i}"), "name": "calculator", "arguments": {"expression": format!("{i}+1")}}))
        .collect();
    let script = s.script(json!([{"tool_calls": calls}, {"text": "done"}]));
    run_exported(&s, &script, &receiver, &[]);
    let spans = receiver.spans();
    assert!(spans.len() > 4096, "more spans ({}) than the queue holds", spans.len());
    assert_eq!(named(&spans, "execute_tool ").len(), 1100);
    assert_eq!(named(&spans, "invoke_agent").len(), 1);
}

#[test]
fn a_runs_spans_are_exported_as_its_steps_complete_not_only_at_exit() {
    let s = Sandbox::new();
    let receiver = Receiver::start();
    // The second request waits 60 s: the first request's and the call's spans must reach the
    // receiver while the run still waits.
    let script = s.script(json!([
        {"tool_calls": [{"id": "c1", "name": "calculator", "arguments": {"expression": "6*7"}}]},
        {"delay_ms": 60000, "text": "late"}
    ]));
    let mut child = s
        .spine_process()
        .args(["run", "-p", "go", "--model", &format!("scripted:{}", script.display())])
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.endpoint())
        .env("OTEL_BSP_SCHEDULE_DELAY", "50")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("spine starts");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    let mut spans = Vec::new();
    while std::time::Instant::now() < deadline {
        spans = receiver.spans();
        if !named(&spans, "execute_tool calculator").is_empty() && !named(&spans, "chat ").is_empty() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let still_running = child.try_wait().expect("wait").is_none();
    let _ = child.kill();
    let _ = child.wait();
    assert!(still_running, "the run ended before its spans were seen");
    let tools = named(&spans, "execute_tool calculator");
    assert_eq!(tools.len(), 1, "the call's span arrived during the run: {:?}", spans.len());
    assert_eq!(named(&spans, "chat ").len(), 1, "only the finished request's span");
    assert!(named(&spans, "invoke_agent").is_empty(), "the run's own span waits for its end");
    // The call's span is a child of the run's span, which is still open: same trace, its parent
    // is the run's span id (shared by the other spans of the run).
    let chat = named(&spans, "chat ")[0];
    assert_eq!(tools[0].trace_id, chat.trace_id);
    assert_eq!(tools[0].parent_span_id, chat.parent_span_id);
    assert!(!tools[0].parent_span_id.is_empty());
}

#[test]
fn an_interactive_session_exports_one_trace_per_prompt_sharing_the_session_id() {
    let s = Sandbox::new();
    let receiver = Receiver::start();
    let script = s.script(json!([
        {"tool_calls": [{"id": "c1", "name": "calculator", "arguments": {"expression": "6*7"}}]},
        {"text": "first answer"},
        {"text": "second answer"}
    ]));
    let tmux = chat_session(&s, &script, &[("OTEL_EXPORTER_OTLP_ENDPOINT", &receiver.endpoint())], "");
    tmux.send_line("compute it");
    tmux.wait_for("first answer");
    tmux.send_line("and again");
    tmux.wait_for("second answer");
    tmux.send_line("/exit");
    tmux.wait_for("EXIT=0");

    let spans = receiver.spans();
    let runs = named(&spans, "invoke_agent");
    assert_eq!(runs.len(), 2, "one run span per prompt");
    assert_ne!(runs[0].trace_id, runs[1].trace_id, "each prompt is a trace of its own");
    let sessions: Vec<Value> = runs.iter().map(|r| attr(r, "gen_ai.conversation.id")).collect();
    assert!(sessions[0].as_str().is_some_and(|id| !id.is_empty()), "{sessions:?}");
    assert_eq!(sessions[0], sessions[1], "both runs carry the session's id");
    let chats = named(&spans, "chat ");
    assert_eq!(chats.len(), 3, "two requests for the first prompt, one for the second");
    let tools = named(&spans, "execute_tool calculator");
    assert_eq!(tools.len(), 1);
    let first = runs.iter().find(|r| r.trace_id == tools[0].trace_id).expect("the call belongs to a prompt's trace");
    assert_eq!(tools[0].parent_span_id, first.span_id, "the call is under its prompt's run");
}
