//! `--trace FILE` and `spine trace show`.

use serde_json::json;

use crate::support::*;

#[test]
fn trace_file_holds_one_entry_per_stage_and_a_decision_record_per_call() {
    let s = Sandbox::new();
    let script = s.script(json!([
        {"tool_calls": [
            {"id": "c1", "name": "calculator", "arguments": {"expression": "6*7"}},
            {"id": "c2", "name": "Write", "arguments": {"file_path": "x.txt", "content": "x"}}
        ]},
        {"text": "42"}
    ]));
    let trace = s.dir.path().join("trace.jsonl");
    let out = s.run(&script, &["--trace", trace.to_str().expect("utf8")]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let entries = spine_testkit::files::read_jsonl(&trace);
    let decisions: Vec<(&str, &str)> = entries
        .iter()
        .filter(|e| e["kind"] == "tool_decision")
        .map(|e| (e["tool_use_id"].as_str().unwrap_or(""), e["outcome"].as_str().unwrap_or("")))
        .collect();
    assert_eq!(decisions, vec![("c1", "executed"), ("c2", "denied")]);
    let c2 = entries.iter().find(|e| e["kind"] == "tool_decision" && e["tool_use_id"] == "c2").expect("c2");
    assert_eq!(c2["permission"]["behavior"], "deny");
    assert_eq!(c2["permission"]["source"]["type"], "approver");
    assert!(entries.iter().all(|e| e["seq"].is_u64() && e["t_us"].is_u64()));

    let shown = s.spine().args(["trace", "show", trace.to_str().expect("utf8")]).output().expect("runs");
    let text = stdout(&shown);
    assert!(text.contains("tool call c2 Write"), "{text}");
    assert!(text.contains("decision: denied [permission_denied]"), "{text}");
    assert!(text.contains("stage prepare_turn"), "{text}");
}

/// A run of `calculator` (allowed) and `Write` (denied) with `--trace`; returns the trace path
/// and the session id.
fn traced_run(s: &Sandbox, prompt: &str) -> (std::path::PathBuf, String) {
    let script = s.script(json!([
        {"tool_calls": [
            {"id": "c1", "name": "calculator", "arguments": {"expression": "6*7"}},
            {"id": "c2", "name": "Write", "arguments": {"file_path": "x.txt", "content": "x"}}
        ]},
        {"text": "42"}
    ]));
    let trace = s.dir.path().join("trace.jsonl");
    let out = s
        .spine()
        .args(["run", "-p", prompt, "--model", &format!("scripted:{}", script.display())])
        .args(["--output-format", "json", "--trace", trace.to_str().expect("utf8")])
        .output()
        .expect("spine runs");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let session = json(&out)["session_id"].as_str().expect("session_id").to_owned();
    (trace, session)
}

fn show(s: &Sandbox, trace: &std::path::Path, args: &[&str]) -> String {
    let out = s.spine().args(["trace", "show", trace.to_str().expect("utf8")]).args(args).output().expect("runs");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    stdout(&out)
}

#[test]
fn a_trace_opens_with_run_start_and_closes_with_run_end() {
    let s = Sandbox::new();
    let (trace, session) = traced_run(&s, "what is 6*7?");
    let entries = spine_testkit::files::read_jsonl(&trace);
    let first = entries.first().expect("entries");
    assert_eq!((first["kind"].as_str(), first["session_id"].as_str()), (Some("run_start"), Some(session.as_str())));
    assert_eq!((first["model"].as_str(), first["prompt"].as_str()), (Some("scripted"), Some("what is 6*7?")));
    assert!(first["started_at"].as_str().is_some_and(|t| t.ends_with('Z')), "{first}");
    let last = entries.last().expect("entries");
    assert_eq!(
        (last["kind"].as_str(), last["subtype"].as_str(), last["num_turns"].as_u64()),
        (Some("run_end"), Some("success"), Some(2))
    );
    let c1 = entries.iter().find(|e| e["kind"] == "tool_decision" && e["tool_use_id"] == "c1").expect("c1");
    assert_eq!(c1["arguments"], json!({"expression": "6*7"}), "the decision record keeps the call's arguments");
}

#[test]
fn every_line_of_a_real_trace_matches_the_committed_trace_schema() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../schemas/trace.schema.json");
    let schema: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).expect("trace.schema.json")).expect("schema JSON");
    let validator = jsonschema::validator_for(&schema).expect("schema compiles");
    let s = Sandbox::new();
    let (trace, _) = traced_run(&s, "go");
    let entries = spine_testkit::files::read_jsonl(&trace);
    let kinds: std::collections::BTreeSet<&str> = entries.iter().filter_map(|e| e["kind"].as_str()).collect();
    assert!(kinds.is_superset(&["run_start", "stage", "model", "tool_decision", "run_usage", "run_end"].into()));
    for entry in &entries {
        let errors: Vec<String> = validator.iter_errors(entry).map(|e| e.to_string()).collect();
        assert!(errors.is_empty(), "{entry}: {errors:?}");
    }
    assert!(!validator.is_valid(&json!({"seq": 0, "t_us": 0, "kind": "no_such_kind"})));
    assert!(
        !validator.is_valid(&json!({"seq": 0, "t_us": 0, "kind": "stage", "hook": "no_such_stage", "duration_us": 1}))
    );
}

#[test]
fn trace_show_opens_with_a_header_of_session_model_prompt_start_totals_and_cost() {
    let s = Sandbox::new();
    let (trace, session) = traced_run(&s, "what is 6*7?");
    let text = show(&s, &trace, &[]);
    let head: Vec<&str> = text.lines().take(4).collect();
    assert_eq!(head[0], format!("session  {session}   model scripted"), "{text}");
    assert_eq!(head[1], "prompt   what is 6*7?", "{text}");
    assert!(head[2].starts_with("started  20") && head[2].ends_with("ended success"), "{text}");
    assert_eq!(
        head[3], "totals   2 request(s), 2 tool call(s), 0 warning(s); no usage reported; cost unknown",
        "{text}"
    );
    assert!(text.contains("model request 1 (scripted) 2 messages -> 2 tool call(s), no usage reported"), "{text}");
    let prepare = text.lines().find(|l| l.contains("stage prepare_turn")).expect("prepare_turn");
    assert!(!prepare.contains("estimator"), "compact without -v: {prepare}");
    assert!(show(&s, &trace, &["-v"]).contains("estimator: "), "-v shows prepare_turn's fields");
}

#[test]
fn trace_show_filters_by_tool_event_and_decisions() {
    let s = Sandbox::new();
    let (trace, _) = traced_run(&s, "go");
    let body = |text: String| text.lines().skip(5).map(str::to_owned).collect::<Vec<_>>();
    let write = body(show(&s, &trace, &["--tool", "Write"]));
    assert_eq!(write[0], "├─ tool call c2 Write", "{write:?}");
    assert!(write.iter().skip(1).all(|l| l.starts_with("│   ├─ ")), "only c2's entries: {write:?}");
    let decisions = body(show(&s, &trace, &["--only-decisions"]));
    assert_eq!(decisions.len(), 4, "{decisions:?}");
    assert!(decisions[1].contains("decision: executed") && decisions[3].contains("decision: denied"), "{decisions:?}");
    let models = body(show(&s, &trace, &["--event", "model"]));
    assert_eq!(models.len(), 2, "{models:?}");
    assert!(models.iter().all(|l| l.starts_with("├─ model request")), "{models:?}");
    let both = body(show(&s, &trace, &["--event", "review_tool_call", "--tool", "calculator"]));
    assert_eq!(both[0], "├─ tool call c1 calculator", "{both:?}");
    assert!(both[1].starts_with("│   ├─ stage review_tool_call"), "{both:?}");
    assert_eq!(both.len(), 2, "{both:?}");
}

#[test]
fn trace_show_follow_prints_entries_as_they_are_written_and_ends_on_the_run_end() {
    use std::io::{BufRead, Write};
    let s = Sandbox::new();
    let (done, _) = traced_run(&s, "go");
    let lines: Vec<String> = std::fs::read_to_string(&done).expect("trace").lines().map(str::to_owned).collect();
    let live = s.dir.path().join("live.jsonl");
    let mut follow = s
        .spine_process()
        .args(["trace", "show", "--follow", live.to_str().expect("utf8")])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("spine trace show --follow");
    let (tx, rx) = std::sync::mpsc::channel();
    let reader = std::io::BufReader::new(follow.stdout.take().expect("stdout"));
    std::thread::spawn(move || {
        for line in reader.lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    // The file does not exist yet; then it gets the first two entries only.
    let mut file = std::fs::File::create(&live).expect("live trace");
    writeln!(file, "{}\n{}", lines[0], lines[1]).expect("write");
    let first =
        rx.recv_timeout(std::time::Duration::from_secs(60)).expect("the first entry is printed before the run ends");
    assert!(first.starts_with("├─ run start: session "), "{first}");
    assert!(follow.try_wait().expect("try_wait").is_none(), "still following");
    for line in &lines[2..] {
        writeln!(file, "{line}").expect("write");
    }
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let status = loop {
        if let Some(status) = follow.try_wait().expect("try_wait") {
            break status;
        }
        assert!(std::time::Instant::now() < deadline, "--follow did not end on run_end");
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    assert_eq!(status.code(), Some(0));
    // The reader ends at the end of spine's output.
    let rest: Vec<String> = std::iter::from_fn(|| rx.recv_timeout(std::time::Duration::from_secs(60)).ok()).collect();
    let text = rest.join("\n");
    assert!(text.contains("├─ tool call c2 Write"), "{text}");
    assert!(text.contains("├─ run end: success after 2 request(s)"), "{text}");
    assert!(text.contains("totals   2 request(s), 2 tool call(s)"), "the header closes the output: {text}");
}
