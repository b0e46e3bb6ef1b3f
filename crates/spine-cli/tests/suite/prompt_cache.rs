//! Prompt caching through the `spine` binary against a local Messages API server: the three
//! `cache_control` breakpoints (last tool, end of the stable system prefix, last message), a
//! stable prefix byte-identical across turns and across runs of the same project, the cache
//! token counts read back, and `DISABLE_PROMPT_CACHING`.

use serde_json::{Value, json};

use crate::support::*;

fn breakpoints(v: &Value) -> usize {
    match v {
        Value::Object(m) => usize::from(m.contains_key("cache_control")) + m.values().map(breakpoints).sum::<usize>(),
        Value::Array(a) => a.iter().map(breakpoints).sum(),
        _ => 0,
    }
}

fn run(s: &Sandbox, server: &SseServer, prompt: &str, env: &[(&str, &str)]) -> std::process::Output {
    let mut cmd = s.spine();
    cmd.env("ANTHROPIC_BASE_URL", format!("http://{}", server.addr)).env("ANTHROPIC_API_KEY", "sk-test");
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.args(["-p", prompt, "--model", "anthropic:claude-sonnet-4-5", "--output-format", "json"])
        .output()
        .expect("runs")
}

#[test]
fn cache_breakpoints_mark_the_last_tool_the_stable_system_prefix_and_the_last_message() {
    let s = Sandbox::new();
    s.write("README.md", "hello\n");
    s.write("CLAUDE.md", "Use tabs.\n");
    let usage = json!({"input_tokens": 10, "cache_creation_input_tokens": 200, "cache_read_input_tokens": 1000, "output_tokens": 1});
    let server = SseServer::start(vec![
        anthropic_tool_use("toolu_1", "Read", &json!({"file_path": "README.md"})),
        anthropic_text_with_usage("It says hello.", usage),
        anthropic_text("Again."),
    ]);
    let first = run(&s, &server, "read the readme", &[]);
    assert_eq!(first.status.code(), Some(0), "{}", stderr(&first));
    s.write("notes.txt", "a new file changes the workspace snapshot\n");
    let second = run(&s, &server, "and again", &[]);
    assert_eq!(second.status.code(), Some(0), "{}", stderr(&second));

    let bodies = server.bodies();
    assert_eq!(bodies.len(), 3, "two turns, then a second run");
    for body in &bodies {
        assert_eq!(breakpoints(body), 3, "within the API's limit of four: {body}");
        let tools = body["tools"].as_array().expect("tools");
        assert!(tools.last().expect("a tool")["cache_control"].is_object());
        assert!(tools[..tools.len() - 1].iter().all(|t| t.get("cache_control").is_none()));
        assert_eq!(body["system"][0]["cache_control"], json!({"type": "ephemeral"}));
        let stable = body["system"][0]["text"].as_str().expect("stable text");
        assert!(stable.starts_with("Agent Prompt:") && stable.contains("Use tabs."), "{stable}");
        let last = body["messages"].as_array().and_then(|m| m.last()).expect("last message");
        assert!(last["content"].as_array().and_then(|b| b.last()).expect("block")["cache_control"].is_object());
    }
    let stable: Vec<&Value> = bodies.iter().map(|b| &b["system"][0]).collect();
    assert_eq!(stable[0], stable[1], "byte-identical across turns");
    assert_eq!(stable[0], stable[2], "byte-identical across runs of the project");
    let usage = &json(&first)["usage"];
    assert_eq!(usage["cache_read_input_tokens"], 1000, "{usage}");
    assert_eq!(usage["cache_creation_input_tokens"], 200, "{usage}");
}

#[test]
fn disable_prompt_caching_or_the_setting_sends_no_cache_control() {
    let s = Sandbox::new();
    let server = SseServer::start(vec![anthropic_text("ok"), anthropic_text("ok")]);
    let out = run(&s, &server, "hi", &[("DISABLE_PROMPT_CACHING", "1")]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    s.write(".spine/settings.json", r#"{"model_options": {"prompt_caching": false}}"#);
    s.trust();
    let out = run(&s, &server, "hi", &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let bodies = server.bodies();
    assert_eq!(bodies.len(), 2);
    for body in bodies {
        assert_eq!(breakpoints(&body), 0, "{body}");
        assert!(body["system"].as_str().is_some_and(|s| s.starts_with("Agent Prompt:")), "a plain string: {body}");
    }
}
