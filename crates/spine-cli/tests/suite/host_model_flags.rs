//! The Agent SDK flags that shape the model's requests, through the binary against the local
//! fake Anthropic and OpenAI servers: `--effort` / `--thinking` / `--max-thinking-tokens` in the
//! request bodies, `--fallback-model` taking over from an overloaded model, and
//! `--max-budget-usd` ending the run.

use serde_json::{Value, json};
use spine_testkit::http::{End, Reply, TestServer, raw, server_runtime};

use crate::support::*;

const KEY: &str = "sk-test-secret-key-0123456789";

/// A fake provider playing `replies` in order, on a runtime of its own.
struct Fake {
    server: TestServer,
    _runtime: tokio::runtime::Runtime,
}

impl Fake {
    fn start(replies: Vec<Reply>) -> Fake {
        let runtime = server_runtime();
        let server = runtime.block_on(TestServer::start(replies));
        Fake { server, _runtime: runtime }
    }

    fn bodies(&self) -> Vec<Value> {
        self.server.requests().into_iter().map(|r| r.body).collect()
    }

    fn url(&self) -> String {
        format!("http://{}", self.server.addr())
    }
}

fn sse(body: String) -> Reply {
    Reply::Sse(vec![raw(&body)], End::Close)
}

fn overloaded() -> Reply {
    Reply::Status {
        status: 529,
        headers: vec![("content-type", "application/json".to_owned()), ("retry-after-ms", "0".to_owned())],
        body: json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}).to_string(),
    }
}

fn openai_text(text: &str) -> Reply {
    let chunk = json!({"choices": [{"index": 0, "delta": {"content": text}, "finish_reason": "stop"}]});
    sse(format!("data: {chunk}\n\ndata: [DONE]\n\n"))
}

/// `spine run -p PROMPT ARGS…` against the fake Anthropic server.
fn anthropic_run(s: &Sandbox, fake: &Fake, args: &[&str]) -> std::process::Output {
    s.spine()
        .env("ANTHROPIC_BASE_URL", fake.url())
        .env("ANTHROPIC_API_KEY", KEY)
        .args(["run", "-p", "go"])
        .args(args)
        .output()
        .expect("runs")
}

#[test]
fn effort_and_thinking_flags_reach_the_anthropic_request_as_each_model_takes_them() {
    let s = Sandbox::new();
    let fake = Fake::start((0..4).map(|_| sse(anthropic_text("ok"))).collect());
    let settings = json!({"model_options": {"thinking_budget_tokens": 2048}}).to_string();
    let runs: [&[&str]; 4] = [
        &["--model", "anthropic:claude-sonnet-4-5", "--thinking", "enabled", "--max-thinking-tokens", "3000"],
        &["--model", "anthropic:claude-opus-4-7", "--effort", "max", "--thinking", "adaptive"],
        &["--model", "anthropic:claude-sonnet-4-5", "--max-thinking-tokens", "0", "--effort", "high"],
        &["--model", "anthropic:claude-sonnet-4-5", "--thinking", "adaptive", "--settings", &settings],
    ];
    for args in runs {
        let out = anthropic_run(&s, &fake, args);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", stderr(&out));
    }
    let bodies = fake.bodies();
    assert_eq!(bodies[0]["thinking"], json!({"type": "enabled", "budget_tokens": 3000}));
    assert!(bodies[0].get("output_config").is_none(), "Sonnet 4.5 takes no effort");
    assert_eq!(bodies[1]["thinking"], json!({"type": "adaptive"}));
    assert_eq!(bodies[1]["output_config"], json!({"effort": "max"}));
    assert_eq!(bodies[2]["thinking"], json!({"type": "disabled"}));
    assert!(bodies[2].get("output_config").is_none());
    assert_eq!(
        bodies[3]["thinking"],
        json!({"type": "enabled", "budget_tokens": 2048}),
        "adaptive on a model that takes only a budget: the settings' budget"
    );
}

#[test]
fn effort_reaches_openai_as_its_reasoning_effort_and_thinking_does_not() {
    let s = Sandbox::new();
    let fake = Fake::start(vec![openai_text("ok"), openai_text("ok")]);
    for effort in ["xhigh", "medium"] {
        let out = s
            .spine()
            .env("OPENAI_BASE_URL", format!("{}/v1", fake.url()))
            .env("OPENAI_API_KEY", KEY)
            .args(["run", "-p", "go", "--model", "openai:o4-mini", "--effort", effort, "--thinking", "disabled"])
            .output()
            .expect("runs");
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    }
    let bodies = fake.bodies();
    assert_eq!(bodies[0]["reasoning_effort"], "high");
    assert_eq!(bodies[1]["reasoning_effort"], "medium");
    assert!(bodies[0].get("thinking").is_none());
}

#[test]
fn an_overloaded_model_hands_the_rest_of_the_run_to_the_fallback_model() {
    let s = Sandbox::new();
    s.write("notes.txt", "hello");
    // The client's own attempts (1 + 3 retries) all overloaded, then the fallback's two replies.
    let mut replies: Vec<Reply> = (0..4).map(|_| overloaded()).collect();
    replies.push(sse(anthropic_tool_use("toolu_1", "Read", &json!({"file_path": "notes.txt"}))));
    replies.push(sse(anthropic_text("done")));
    let fake = Fake::start(replies);
    let trace = s.dir.path().join("trace.jsonl");
    let args = [
        "--model",
        "anthropic:claude-opus-4-7",
        "--fallback-model",
        "anthropic:claude-opus-4-8",
        "--effort",
        "low",
        "--output-format",
        "json",
        "--trace",
        trace.to_str().expect("utf8"),
    ];
    let out = anthropic_run(&s, &fake, &args);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let result = json(&out);
    assert_eq!(result["result"], "done");
    let bodies = fake.bodies();
    let models: Vec<&str> = bodies.iter().map(|b| b["model"].as_str().unwrap_or("")).collect();
    let (main, backup) = ("claude-opus-4-7", "claude-opus-4-8");
    assert_eq!(models, [main, main, main, main, backup, backup]);
    assert_eq!(bodies[4]["output_config"], json!({"effort": "low"}), "the fallback gets the same flags");
    let err = stderr(&out);
    assert!(
        err.contains("warning: the model claude-opus-4-7 is unavailable (http 529")
            && err.contains("claude-opus-4-8 serves the rest of the run (--fallback-model)"),
        "{err}"
    );
    assert!(result["modelUsage"].get("claude-opus-4-8").is_some(), "{result}");
    let traced = std::fs::read_to_string(&trace).expect("trace");
    assert!(traced.contains("serves the rest of the run"), "the trace has the warning");
}

#[test]
fn a_fallback_model_that_is_the_main_model_is_a_usage_error() {
    let s = Sandbox::new();
    let fake = Fake::start(Vec::new());
    let out = anthropic_run(&s, &fake, &["--model", "sonnet", "--fallback-model", "haiku,claude-sonnet-5"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("--fallback-model: `claude-sonnet-5` is the main model"), "{}", stderr(&out));
    assert!(fake.bodies().is_empty(), "no request");
}

/// Settings pricing `claude-budget-test` at $1000 per million tokens: a reply of 40 input and
/// 12 output tokens costs $0.052.
fn priced() -> String {
    json!({"model_options": {"prices": {"claude-budget-test": {"input": 1000.0, "output": 1000.0}}}}).to_string()
}

#[test]
fn reaching_the_budget_ends_the_run_with_error_max_budget_usd_and_answers_the_pending_call() {
    let s = Sandbox::new();
    s.write("notes.txt", "hello");
    let fake = Fake::start(vec![
        sse(anthropic_tool_use("toolu_1", "Read", &json!({"file_path": "notes.txt"}))),
        sse(anthropic_text("never asked")),
    ]);
    let settings = priced();
    let args = ["--model", "anthropic:claude-budget-test", "--settings", &settings, "--max-budget-usd", "0.05"];
    let out = anthropic_run(&s, &fake, &[&args[..], &["--output-format", "json", "--include-messages"]].concat());
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let result = json(&out);
    assert_eq!(result["subtype"], "error_max_budget_usd");
    assert_eq!(result["is_error"], true);
    assert_eq!(result["result"], "Reached maximum budget ($0.05)");
    assert!(result["total_cost_usd"].as_f64().is_some_and(|c| c >= 0.05), "{result}");
    assert_eq!(fake.bodies().len(), 1, "no request after the budget is reached");
    let tool = result["messages"].as_array().expect("messages").iter().find(|m| m["role"] == "tool").cloned();
    let tool = tool.expect("the pending call is answered");
    assert!(
        tool["content"]
            .as_str()
            .is_some_and(|c| c == "Error [canceled]: Skipped: the run reached its budget (--max-budget-usd 0.05)"),
        "{tool}"
    );

    // Text output: the error on stderr.
    let fake = Fake::start(vec![sse(anthropic_tool_use("toolu_1", "Read", &json!({"file_path": "notes.txt"})))]);
    let out = anthropic_run(&s, &fake, &args);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("error (error_max_budget_usd): Reached maximum budget ($0.05)"), "{}", stderr(&out));
}

#[test]
fn a_run_under_its_budget_finishes() {
    let s = Sandbox::new();
    s.write("notes.txt", "hello");
    let fake = Fake::start(vec![
        sse(anthropic_tool_use("toolu_1", "Read", &json!({"file_path": "notes.txt"}))),
        sse(anthropic_text("done")),
    ]);
    let settings = priced();
    let args = ["--model", "anthropic:claude-budget-test", "--settings", &settings, "--max-budget-usd", "1"];
    let out = anthropic_run(&s, &fake, &args);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out).trim(), "done");
}

#[test]
fn the_budget_of_a_driven_session_counts_every_turn() {
    let s = Sandbox::new();
    // Each reply: 40 input and 2 output tokens, $0.042 at the settings' price.
    let reply = || sse(anthropic_text_with_usage("ok", json!({"input_tokens": 40, "output_tokens": 1})));
    let fake = Fake::start(vec![reply(), reply(), reply()]);
    let settings = priced();
    let mut cmd = s.spine_process();
    cmd.env("ANTHROPIC_BASE_URL", fake.url())
        .env("ANTHROPIC_API_KEY", KEY)
        .args(["--output-format", "stream-json", "--verbose", "--input-format", "stream-json"])
        .args(["--model", "anthropic:claude-budget-test", "--settings", &settings, "--max-budget-usd", "0.08"]);
    let out = crate::support::drive_stream_json(&mut cmd, &["one", "two"]);
    let results = crate::support::result_lines(&out);
    assert_eq!(results.len(), 2, "{}\n{}", stdout(&out), stderr(&out));
    assert_eq!(results[0]["subtype"], "success");
    assert_eq!(results[1]["subtype"], "error_max_budget_usd", "$0.042 + $0.042 is over $0.08");
    assert_eq!(fake.bodies().len(), 2);
}
