use super::follow::Stream;
use super::*;

fn entries(lines: &[&str]) -> Vec<TraceEntry> {
    lines.iter().map(|l| serde_json::from_str(l).expect(l)).collect()
}

fn sample() -> Vec<TraceEntry> {
    entries(&[
        r#"{"seq":0,"t_us":1,"kind":"stage","hook":"prepare_turn","duration_us":30,"message_count":3,"estimated_token_count":900,"tool_tokens":200,"estimator":"bpe","allowed_tool_names":["Bash","Read"],"profile":"default"}"#,
        r#"{"seq":1,"t_us":2,"kind":"model","turn":1,"model":"m","message_count":3,"tool_calls":2,"duration_us":9,"usage":{"input_tokens":900,"output_tokens":12}}"#,
        r#"{"seq":2,"t_us":3,"kind":"stage","hook":"review_tool_call","tool_use_id":"c1","duration_us":1,"tool_name":"Bash"}"#,
        r#"{"seq":2,"t_us":3,"kind":"hook","event":"PreToolUse","hook_id":"guard","source":"settings","tool_use_id":"c1","decision":"proceed","applied":true,"duration_us":4,"detail":{"reason":"ok"}}"#,
        r#"{"seq":3,"t_us":4,"kind":"stage","hook":"execute","tool_use_id":"c1","duration_us":40,"tool_name":"Bash","ok":true}"#,
        r#"{"seq":4,"t_us":5,"kind":"tool_decision","tool_use_id":"c1","tool_name":"Bash","arguments":{"command":"ls"},"pre_tool_use":[{"hook_id":"guard","decision":"proceed"}],"post_tool_use":[],"outcome":"executed"}"#,
        r#"{"seq":5,"t_us":6,"kind":"stage","hook":"execute","tool_use_id":"c2","duration_us":40,"tool_name":"Read","ok":true}"#,
        r#"{"seq":6,"t_us":7,"kind":"tool_decision","tool_use_id":"c2","tool_name":"Read","pre_tool_use":[],"post_tool_use":[],"outcome":"executed"}"#,
    ])
}

#[test]
fn prepare_turn_is_one_compact_line_and_its_fields_come_under_verbose() {
    let compact = render(&sample(), &Filter::default(), Detail::Compact);
    let first = compact.lines().next().unwrap_or_default();
    assert_eq!(first, "├─ stage prepare_turn (30 µs) 3 messages, ~900 tokens (tools 200), 2 tools, profile default");
    assert!(!compact.contains("estimator"), "{compact}");
    let verbose = render(&sample(), &Filter::default(), Detail::Verbose);
    assert!(verbose.contains("│     estimator: bpe"), "{verbose}");
    assert!(verbose.contains("│   │     answer: {\"reason\":\"ok\"}"), "{verbose}");
    assert!(verbose.contains("│   │     arguments: {\"command\":\"ls\"}"), "{verbose}");
}

#[test]
fn model_lines_carry_the_usage_of_their_request() {
    let text = render(&sample(), &Filter::default(), Detail::Compact);
    assert!(text.contains("model request 1 (m) 3 messages -> 2 tool call(s), in 900 (cache write 0, read 0), out 12"));
}

#[test]
fn the_tool_filter_keeps_only_that_tools_calls() {
    let filter = Filter { tools: vec!["Read".into()], ..Filter::default() };
    let text = render(&sample(), &filter, Detail::Compact);
    assert!(text.contains("tool call c2 Read"), "{text}");
    assert!(!text.contains("c1") && !text.contains("model request"), "{text}");
}

#[test]
fn the_event_filter_matches_hook_events_stages_and_kinds_in_any_case() {
    let hooks = render(&sample(), &Filter { events: vec!["pretooluse".into()], ..Filter::default() }, Detail::Compact);
    assert_eq!(hooks.lines().count(), 2, "{hooks}");
    assert!(hooks.contains("hook PreToolUse `guard`"), "{hooks}");
    let models = render(&sample(), &Filter { events: vec!["model".into()], ..Filter::default() }, Detail::Compact);
    assert_eq!(models.lines().count(), 1, "{models}");
    let stages = render(&sample(), &Filter { events: vec!["execute".into()], ..Filter::default() }, Detail::Compact);
    assert_eq!(stages.matches("stage execute").count(), 2, "{stages}");
    assert!(!stages.contains("review_tool_call"), "{stages}");
}

#[test]
fn only_decisions_keeps_the_decision_records_under_their_calls() {
    let text = render(&sample(), &Filter { only_decisions: true, ..Filter::default() }, Detail::Compact);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 4, "{text}");
    assert!(lines.iter().skip(1).step_by(2).all(|l| l.contains("decision: executed")), "{text}");
}

#[test]
fn follow_ends_on_the_outermost_runs_end_not_a_nested_ones() {
    let mut stream = Stream::new(Filter::default(), Detail::Compact);
    let start =
        r#"{"seq":0,"t_us":0,"kind":"run_start","session_id":"s","model":"m","started_at":"2026-12-01T10:00:00.000Z"}"#;
    let end = r#"{"seq":1,"t_us":1,"kind":"run_end","subtype":"success","num_turns":1}"#;
    let ends: Vec<bool> = entries(&[start, start, end, end]).iter().map(|e| stream.ends_run(e)).collect();
    assert_eq!(ends, [false, false, false, true]);
    let mut old = Stream::new(Filter::default(), Detail::Compact);
    assert!(old.ends_run(&entries(&[end])[0]), "a run_end with no start seen ends it too");
}

#[test]
fn a_stream_prints_each_entry_once_with_a_call_line_when_the_call_changes() {
    let mut stream = Stream::new(Filter::default(), Detail::Compact);
    let text: String = sample().into_iter().map(|e| stream.push(e)).collect();
    assert_eq!(text.matches("tool call c1 Bash").count(), 1, "{text}");
    assert_eq!(text.matches("tool call c2 Read").count(), 1, "{text}");
    assert_eq!(text.lines().count(), 10, "{text}");
}
