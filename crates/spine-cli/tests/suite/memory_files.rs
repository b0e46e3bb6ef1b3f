//! Memory files through `spine run`: `~/.claude/CLAUDE.md`, the project's `CLAUDE.md`,
//! `CLAUDE.local.md`, `.claude/CLAUDE.md`, `AGENTS.md` and their `@path` imports reach the
//! model's system message as the "Memory Files" layer and are listed in the trace.

use serde_json::{Value, json};

use crate::support::*;

fn one_answer() -> Value {
    json!([{"text": "ok"}])
}

#[test]
fn memory_files_and_their_imports_reach_the_system_message_and_the_trace() {
    let s = Sandbox::new();
    let home = s.dir.path().canonicalize().expect("canon");
    let project = s.project().canonicalize().expect("canon");
    std::fs::create_dir_all(project.join(".git")).expect("git");
    spine_testkit::files::write_file(&home, ".claude/CLAUDE.md", "User rule: be brief.\n@~/prefs/extra.md\n");
    spine_testkit::files::write_file(&home, "prefs/extra.md", "User import: no emoji.");
    s.write("CLAUDE.md", "Project rule: run make check.\nStyle: @docs/style.md (not `@docs/code.md`).\n@gone.md\n");
    s.write("docs/style.md", "Imported rule: tabs.");
    s.write("docs/code.md", "never loaded");
    s.write("CLAUDE.local.md", "Local rule: sandbox on :8080.");
    s.write(".claude/CLAUDE.md", "Dot-claude rule.");
    s.write("AGENTS.md", "Agents rule.");
    let trace = s.dir.path().join("trace.jsonl");
    let out = s.run(
        &s.script(one_answer()),
        &["--output-format", "json", "--include-messages", "--trace", trace.to_str().expect("utf8")],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));

    let v = json(&out);
    let system = v["messages"][0]["content"].as_str().expect("system message");
    let layer = system.find("Memory Files:\n").expect("the Memory Files layer");
    assert!(system.find("Soul:\n").expect("soul") < layer && layer < system.find("User:\n").expect("user"));
    let order = [
        format!(
            "Contents of {} (user's private global instructions for all projects)",
            home.join(".claude/CLAUDE.md").display()
        ),
        "User rule: be brief.".to_owned(),
        format!("Contents of {} (user's private global instructions", home.join("prefs/extra.md").display()),
        "User import: no emoji.".to_owned(),
        format!(
            "Contents of {} (project instructions, checked into the codebase)",
            project.join("CLAUDE.md").display()
        ),
        "Project rule: run make check.".to_owned(),
        format!("Contents of {} (project instructions", project.join("docs/style.md").display()),
        "Imported rule: tabs.".to_owned(),
        format!(
            "Contents of {} (user's private project instructions, not checked in)",
            project.join("CLAUDE.local.md").display()
        ),
        "Dot-claude rule.".to_owned(),
        "Agents rule.".to_owned(),
    ];
    let positions: Vec<usize> = order
        .iter()
        .map(|t| system.find(t.as_str()).unwrap_or_else(|| panic!("missing `{t}` in:\n{system}")))
        .collect();
    assert!(positions.windows(2).all(|w| w[0] < w[1]), "out of order {positions:?}:\n{system}");
    assert!(!system.contains("never loaded"), "an @ inside a code span is not an import");

    let entries = spine_testkit::files::read_jsonl(&trace);
    let prepare =
        entries.iter().find(|e| e["kind"] == "stage" && e["hook"] == "prepare_turn").expect("prepare_turn entry");
    let listed: Vec<(&str, &str)> = prepare["memory_files"]
        .as_array()
        .expect("memory_files")
        .iter()
        .map(|f| (f["path"].as_str().unwrap_or(""), f["kind"].as_str().unwrap_or("")))
        .collect();
    let expected = [
        (home.join(".claude/CLAUDE.md"), "user"),
        (home.join("prefs/extra.md"), "user"),
        (project.join("CLAUDE.md"), "project"),
        (project.join("docs/style.md"), "project"),
        (project.join("CLAUDE.local.md"), "local"),
        (project.join(".claude/CLAUDE.md"), "project"),
        (project.join("AGENTS.md"), "project"),
    ];
    let expected: Vec<(String, &str)> = expected.iter().map(|(p, k)| (p.display().to_string(), *k)).collect();
    let expected: Vec<(&str, &str)> = expected.iter().map(|(p, k)| (p.as_str(), *k)).collect();
    assert_eq!(listed, expected);
    assert_eq!(prepare["memory_files"][3]["bytes"], json!(20));
    assert_eq!(prepare["memory_files"][3]["imported_by"], json!(project.join("CLAUDE.md")));
    let warned = entries.iter().any(|e| {
        e["message"].as_str().is_some_and(|m| m.contains("memory import @gone.md") && m.contains("not found"))
    });
    assert!(warned, "a missing import is a trace warning: {entries:?}");
}

#[test]
fn a_project_without_memory_files_has_no_memory_files_layer() {
    let s = Sandbox::new();
    let trace = s.dir.path().join("trace.jsonl");
    let out = s.run(
        &s.script(one_answer()),
        &["--output-format", "json", "--include-messages", "--trace", trace.to_str().expect("utf8")],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let system = json(&out)["messages"][0]["content"].as_str().expect("system").to_owned();
    assert!(!system.contains("Memory Files:"), "{system}");
    let entries = spine_testkit::files::read_jsonl(&trace);
    let prepare = entries.iter().find(|e| e["hook"] == "prepare_turn").expect("prepare_turn entry");
    assert!(prepare.get("memory_files").is_none(), "{prepare}");
}

#[test]
fn memory_files_reach_the_system_prompt_of_the_provider_request() {
    use spine_testkit::http::{End, Reply, TestServer, raw, server_runtime};
    let s = Sandbox::new();
    s.write("CLAUDE.md", "Project rule: answer in haiku.\n@notes/extra.md\n");
    s.write("notes/extra.md", "Imported rule: cite files.");
    let events = [
        json!({"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant", "content": [], "model": "claude-sonnet-4-5", "stop_reason": null, "usage": {"input_tokens": 10, "output_tokens": 1}}}),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "ok"}}),
        json!({"type": "content_block_stop", "index": 0}),
        json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 1}}),
        json!({"type": "message_stop"}),
    ];
    let sse: String =
        events.iter().map(|e| format!("event: {}\ndata: {e}\n\n", e["type"].as_str().unwrap_or(""))).collect();
    let runtime = server_runtime();
    let server = runtime.block_on(TestServer::start(vec![Reply::Sse(vec![raw(&sse)], End::Close)]));
    let out = s
        .spine()
        .env("ANTHROPIC_BASE_URL", format!("http://{}", server.addr()))
        .env("ANTHROPIC_API_KEY", "sk-test-memory-files")
        .args(["run", "-p", "go", "--model", "anthropic:claude-sonnet-4-5"])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let bodies: Vec<Value> = server.requests().into_iter().map(|r| r.body).collect();
    let system: String = bodies[0]["system"]
        .as_array()
        .expect("system blocks")
        .iter()
        .filter_map(|b| b["text"].as_str())
        .collect::<Vec<_>>()
        .join("\n\n");
    assert!(
        bodies[0]["system"][0]["text"].as_str().is_some_and(|t| t.contains("Project rule")),
        "in the cached prefix"
    );
    let project = s.project().canonicalize().expect("canon");
    let first = system.find("Project rule: answer in haiku.").expect("CLAUDE.md in the request");
    let second = system.find("Imported rule: cite files.").expect("its import in the request");
    assert!(first < second, "{system}");
    assert!(
        system.contains(&format!("Contents of {} (project instructions", project.join("notes/extra.md").display()))
    );
}
