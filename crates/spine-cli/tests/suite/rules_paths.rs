//! Conditional rule files (`.claude/rules/*.md` with `paths:` front matter) through the
//! binary: shown to the model after the first tool that touches a matching file, once per
//! session (again in a subagent), with InstructionsLoaded `path_glob_match` in Claude Code's
//! shape (`tests/fixtures/claude-code-2.1.328/rules-paths.json`).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::support::*;

/// A command hook that appends its stdin to `log`.
fn logging(log: &Path) -> Value {
    json!({"hooks": {"InstructionsLoaded": [{"hooks": [
        {"type": "command", "command": format!("cat >> {0}; echo >> {0}", log.display())}]}]}})
}

fn glob_matches(events: &[Value]) -> Vec<&Value> {
    events.iter().filter(|e| e["load_reason"] == "path_glob_match").collect()
}

fn root(s: &Sandbox) -> PathBuf {
    s.project().canonicalize().expect("project")
}

/// The texts of the conversation's context messages, each with the index of its message.
fn contexts(out: &Value) -> Vec<(usize, String)> {
    let messages = out["messages"].as_array().cloned().unwrap_or_default();
    messages
        .iter()
        .enumerate()
        .filter(|(_, m)| m["role"] == "context")
        .map(|(i, m)| (i, m["content"].as_str().unwrap_or_default().to_owned()))
        .collect()
}

/// The keys of an InstructionsLoaded input beyond those every hook input has.
fn own_keys(event: &Value) -> BTreeSet<String> {
    let common = ["session_id", "transcript_path", "cwd", "permission_mode", "hook_event_name", "prompt_id", "effort"];
    let common = common.iter().chain(&["agent_id", "agent_type"]).copied().collect::<BTreeSet<_>>();
    event.as_object().map(|o| o.keys().filter(|k| !common.contains(k.as_str())).cloned().collect()).unwrap_or_default()
}

fn reference_glob_match() -> Value {
    let path = format!("{}/tests/fixtures/claude-code-2.1.328/rules-paths.json", env!("CARGO_MANIFEST_DIR"));
    let recorded: Value = serde_json::from_str(&std::fs::read_to_string(path).expect("recording")).expect("JSON");
    recorded["instructions_loaded"]
        .as_array()
        .and_then(|events| events.iter().find(|e| e["load_reason"] == "path_glob_match"))
        .cloned()
        .expect("a recorded path_glob_match")
}

fn read(id: &str, file: &str) -> Value {
    json!({"id": id, "name": "Read", "arguments": {"file_path": file}})
}

#[test]
fn a_paths_rule_is_shown_after_the_first_tool_touching_a_matching_file_and_only_once() {
    let s = Sandbox::new();
    s.write(".claude/rules/ts.md", "---\npaths: src/**/*.ts\n---\nUse strict mode.\n");
    s.write("src/a.ts", "let a = 1;\n");
    s.write("src/b.ts", "let b = 2;\n");
    s.write("lib/c.js", "var c;\n");
    let log = s.dir.path().join("loaded.jsonl");
    let script = s.script(json!([
        {"tool_calls": [read("c1", "lib/c.js")]},
        {"tool_calls": [read("c2", "src/a.ts")]},
        {"tool_calls": [read("c3", "src/b.ts")]},
        {"text": "done"}
    ]));
    let settings = logging(&log).to_string();
    let out = s.run(&script, &["--settings", &settings, "--output-format", "json", "--include-messages"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v = json(&out);
    let rule = root(&s).join(".claude/rules/ts.md");
    let shown: Vec<(usize, String)> = contexts(&v).into_iter().filter(|(_, c)| c.contains("strict mode")).collect();
    assert_eq!(shown.len(), 1, "once: {shown:?}");
    assert_eq!(shown[0].1, format!("Contents of {}:\n\nUse strict mode.\n", rule.display()));
    let messages = v["messages"].as_array().expect("messages");
    let before = &messages[shown[0].0 - 1];
    assert_eq!((before["role"].as_str(), before["tool_call_id"].as_str()), (Some("tool"), Some("c2")), "after a.ts");
    assert!(!messages[0]["content"].as_str().unwrap_or_default().contains("strict mode"), "not in the system prompt");

    let fired = logged(&log);
    let matched = glob_matches(&fired);
    assert_eq!(matched.len(), 1, "{fired:?}");
    let event = matched[0];
    assert_eq!(event["file_path"], json!(rule));
    assert_eq!(event["memory_type"], "Project");
    assert_eq!(event["globs"], json!(["src/**/*.ts"]));
    assert_eq!(event["trigger_file_path"], json!(root(&s).join("src/a.ts")));
    assert_eq!(own_keys(event), own_keys(&reference_glob_match()), "Claude Code's fields");
}

#[test]
fn write_bash_cat_and_a_failed_read_bring_rules_in_but_glob_and_grep_do_not() {
    let s = Sandbox::new();
    s.write(".claude/rules/gen.md", "---\npaths: gen/*.py\n---\nGenerated code rule.\n");
    s.write(".claude/rules/docs.md", "---\npaths:\n  - \"docs/**\"\n  - lib/{a,b}/*.py\n---\nDocs rule.\n");
    s.write(".claude/rules/grep.md", "---\npaths: g/**\n---\nGrep rule.\n");
    s.write(".claude/rules/always.md", "Always rule.\n");
    s.write(".claude/rules/star.md", "---\npaths: \"**\"\n---\nStar rule.\n");
    s.write(".claude/rules/comma.md", "---\npaths: \"a/*.go, b/*.go\"\n---\nComma rule.\n");
    s.write("docs/x.md", "doc x\n");
    s.write("g/y.txt", "hello\n");
    // Sandbox's HOME is its directory: the user's rules match from the working directory.
    let home_rule = s.dir.path().join(".claude/rules/user.md");
    std::fs::create_dir_all(home_rule.parent().expect("dir")).expect("mkdir");
    std::fs::write(&home_rule, "---\npaths: \"*.txt\"\n---\nUser text rule.\n").expect("write");
    let log = s.dir.path().join("loaded.jsonl");
    let script = s.script(json!([
        {"tool_calls": [{"id": "c1", "name": "Grep", "arguments": {"pattern": "hello", "path": "g"}}]},
        {"tool_calls": [{"id": "c2", "name": "Glob", "arguments": {"pattern": "g/*"}}]},
        {"tool_calls": [{"id": "c3", "name": "Write", "arguments": {"file_path": "gen/new.py", "content": "x = 1\n"}}]},
        {"tool_calls": [{"id": "c4", "name": "Bash", "arguments": {"command": "cat docs/x.md"}}]},
        {"tool_calls": [read("c5", "NOTES.TXT")]},
        {"tool_calls": [read("c6", "b/x.go")]},
        {"text": "done"}
    ]));
    let mut settings = logging(&log);
    settings["permissions"] = json!({"allow": ["Write", "Bash(cat *)"]});
    let out = s.run(&script, &["--settings", &settings.to_string(), "--output-format", "json", "--include-messages"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let fired = logged(&log);
    let started: Vec<&str> = fired
        .iter()
        .filter(|e| e["load_reason"] == "session_start")
        .filter_map(|e| e["file_path"].as_str()?.rsplit('/').next())
        .collect();
    assert_eq!(started, ["always.md", "star.md"], "`**` is no condition");
    let matched: Vec<(String, Value, String)> = glob_matches(&fired)
        .iter()
        .map(|e| {
            let name = e["file_path"].as_str().and_then(|p| p.rsplit('/').next()).unwrap_or_default().to_owned();
            let trigger = e["trigger_file_path"].as_str().unwrap_or_default().to_owned();
            (name, e["globs"].clone(), trigger)
        })
        .collect();
    let r = root(&s);
    let at = |rel: &str| r.join(rel).display().to_string();
    assert_eq!(
        matched,
        [
            ("gen.md".to_owned(), json!(["gen/*.py"]), at("gen/new.py")),
            ("docs.md".to_owned(), json!(["docs", "lib/a/*.py", "lib/b/*.py"]), at("docs/x.md")),
            ("user.md".to_owned(), json!(["*.txt"]), at("NOTES.TXT")),
            ("comma.md".to_owned(), json!(["a/*.go", "b/*.go"]), at("b/x.go")),
        ],
        "Grep and Glob touch no rule; a failed Read does; globs match case-insensitively"
    );
    assert_eq!(
        glob_matches(&fired).iter().find(|e| e["memory_type"] == "User").map(|e| e["file_path"].clone()),
        Some(json!(home_rule))
    );
    let shown = contexts(&json(&out));
    assert!(shown.iter().any(|(_, c)| c.ends_with("User text rule.\n")), "{shown:?}");
    assert!(!shown.iter().any(|(_, c)| c.contains("Grep rule.")), "{shown:?}");
}

#[test]
fn a_subagent_is_shown_a_paths_rule_again_when_its_own_tools_touch_a_matching_file() {
    let s = Sandbox::new();
    s.write(".claude/rules/ts.md", "---\npaths: src/*.ts\n---\nUse strict mode.\n");
    s.write("src/a.ts", "a\n");
    s.write("src/c.ts", "c\n");
    let child = s.dir.path().join("child.json");
    spine_testkit::script::write_script_file(
        &child,
        json!([{"tool_calls": [read("k1", "src/c.ts")]}, {"text": "child done"}]),
    )
    .expect("child script");
    s.write(
        ".claude/agents/helper.md",
        &format!(
            "---\nname: helper\ndescription: the helper agent\nmodel: scripted:{}\n---\nYou help.\n",
            child.display()
        ),
    );
    let log = s.dir.path().join("loaded.jsonl");
    let delegate = json!({"id": "c2", "name": "Agent", "arguments": {"description": "d", "prompt": "read c", "subagent_type": "helper"}});
    let script =
        s.script(json!([{"tool_calls": [read("c1", "src/a.ts")]}, {"tool_calls": [delegate]}, {"text": "done"}]));
    let out = s.run(&script, &["--settings", &logging(&log).to_string()]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let fired = logged(&log);
    let matched = glob_matches(&fired);
    assert_eq!(matched.len(), 2, "{fired:?}");
    assert_eq!(matched[0]["trigger_file_path"], json!(root(&s).join("src/a.ts")));
    assert!(matched[0].get("agent_id").is_none(), "{}", matched[0]);
    assert_eq!(matched[1]["trigger_file_path"], json!(root(&s).join("src/c.ts")));
    assert_eq!(matched[1]["agent_type"], "helper", "{}", matched[1]);
}

#[test]
fn a_resumed_session_does_not_show_a_paths_rule_its_history_shows_already() {
    let s = Sandbox::new();
    s.write(".claude/rules/ts.md", "---\npaths: src/*.ts\n---\nUse strict mode.\n");
    s.write("src/a.ts", "a\n");
    s.write("src/b.ts", "b\n");
    let log = s.dir.path().join("loaded.jsonl");
    let first = s.script(json!([{"tool_calls": [read("c1", "src/a.ts")]}, {"text": "one"}]));
    let out = s.run(&first, &["--settings", &logging(&log).to_string(), "--output-format", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let id = json(&out)["session_id"].as_str().expect("session id").to_owned();
    assert_eq!(glob_matches(&logged(&log)).len(), 1);
    let second = s.script(json!([{"tool_calls": [read("c2", "src/b.ts")]}, {"text": "two"}]));
    let settings = logging(&log).to_string();
    let out = s
        .spine()
        .args(["run", "-p", "again", "--resume", &id, "--model", &format!("scripted:{}", second.display())])
        .args(["--settings", &settings, "--output-format", "json", "--include-messages"])
        .output()
        .expect("spine runs");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(glob_matches(&logged(&log)).len(), 1, "not again: {:?}", logged(&log));
    let shown = contexts(&json(&out)).into_iter().filter(|(_, c)| c.contains("strict mode")).count();
    assert_eq!(shown, 1, "the history's copy only");
}
