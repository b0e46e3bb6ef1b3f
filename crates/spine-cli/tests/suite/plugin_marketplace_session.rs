//! Plugin support end to end: a marketplace in a local git repository, written in Claude Code's
//! layout by someone else (`guard`: bash and python PreToolUse hooks, an `if` handler, an
//! `asyncRewake` handler and a Stop hook; `kit`: a command, an agent and a skill; `relay`: an
//! MCP server), added with `spine plugin marketplace add`, installed with `spine plugin
//! install`, and one `spine run` session whose calls are decided as Claude Code 2.1.328 decided
//! the same calls (`tests/fixtures/claude-code-2.1.328/plugins/session/`, recorded by
//! `record_plugin_session.py`; this test never runs Claude Code).
//!
//! The plugins' files are the recording's (`plugins/session/marketplace/`): the test writes
//! them into a new git repository, with the MCP test peer's path in place of `<everything>`.
//!
//! Where spine and Claude Code legitimately differ, the test compares what both give the model
//! and says why (see the fixture README):
//! - a blocked call's text: Claude Code's `PreToolUse:Bash hook error: [COMMAND]: MESSAGE\n\nThis
//!   hook comes from the guard@acme plugin.` is spine's `Error [hook_blocked]: MESSAGE` (the
//!   trace names the plugin and the handler);
//! - the `asyncRewake` hook: Claude Code 2.1.328 in `-p` waits for it before its next request,
//!   spine runs it in the background, so its wake reaches the model after the Stop hook;
//! - `Agent`: Claude Code 2.1.328 started the plugin agent in the background (its answer came
//!   as a task notification), spine runs it in the foreground (its answer is the tool result);
//! - Claude Code runs a directory marketplace's plugins in place, spine from its cached copy.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::support::*;

const MCP_TOOL: &str = "mcp__plugin_relay_everything__echo";

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/claude-code-2.1.328/plugins/session")
}

fn read_json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Every file under `dir`, as paths relative to it, sorted.
fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap_or_else(|e| panic!("{}: {e}", d.display())) {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                stack.push(path);
            } else {
                out.push(path.strip_prefix(dir).expect("under").to_path_buf());
            }
        }
    }
    out.sort();
    out
}

/// The marketplace `acme` in a new git repository at `<sandbox>/acme-market`: the recording's
/// files, the shell scripts executable, `<everything>` replaced by the MCP test peer.
fn acme_marketplace(s: &Sandbox) -> PathBuf {
    let source = fixture().join("marketplace");
    let root = s.dir.path().join("acme-market");
    let everything = spine_testkit::mcp::peer_entry("server-everything");
    for rel in files_under(&source) {
        let text = std::fs::read_to_string(source.join(&rel)).expect("fixture file");
        let rel = rel.to_str().expect("utf8");
        let file = spine_testkit::files::write_file(
            &root,
            rel,
            &text.replace("<everything>", everything.to_str().expect("utf8")),
        );
        if rel.ends_with(".sh") {
            std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        }
    }
    git(&root, &["init", "--quiet"]);
    git(&root, &["add", "-A"]);
    git(&root, &["commit", "--quiet", "-m", "acme plugins"]);
    root
}

/// `spine plugin ARGS…`, which must succeed; its stdout.
fn plugin_ok(s: &Sandbox, args: &[&str]) -> String {
    let out = s.spine().arg("plugin").args(args).output().expect("spine plugin runs");
    assert_eq!(out.status.code(), Some(0), "spine plugin {args:?}: {}{}", stdout(&out), stderr(&out));
    stdout(&out)
}

/// The recorded session: each call's record (`call`, `is_error`, `content`, `followed_by`).
fn recorded_calls() -> Vec<Value> {
    read_json(&fixture().join("decisions.json"))["calls"].as_array().cloned().expect("calls")
}

/// The text of a recorded `tool_result` content (a string or text blocks).
fn content_text(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => blocks.iter().filter_map(|b| b["text"].as_str()).collect::<Vec<_>>().join("\n"),
        _ => String::new(),
    }
}

/// How spine words what the hook said in Claude Code's text for a blocked call. Claude Code
/// writes `PreToolUse:Bash hook error: `, then `[COMMAND]: ` for a handler that exited 2 (spine:
/// `Error [hook_blocked]: `) or nothing for a JSON `permissionDecision: "deny"` (spine: `Error
/// [permission_denied]: `), the message, and for the former a line naming the plugin (spine's
/// trace names it instead).
fn spine_block_text(recorded: &str) -> String {
    let rest = recorded.strip_prefix("PreToolUse:Bash hook error: ").unwrap_or(recorded);
    let rest = rest.strip_suffix("\n\nThis hook comes from the guard@acme plugin.").unwrap_or(rest);
    match rest.strip_prefix('[').and_then(|quoted| quoted.split_once("]: ")) {
        Some((_, message)) => format!("Error [hook_blocked]: {message}"),
        None => format!("Error [permission_denied]: {rest}"),
    }
}

/// The scripted model of the session: the recorded calls in order, the plugin agent's answer
/// right after the `Agent` call (a plugin agent without `model` inherits the parent's script),
/// `Done.`, and the answer to the `asyncRewake` hook's wake.
fn session_script(s: &Sandbox, calls: &[Value], helper_answer: &str) -> PathBuf {
    let mut turns = Vec::new();
    for (i, record) in calls.iter().enumerate() {
        let call = &record["call"];
        turns.push(json!({"tool_calls": [{"id": format!("c{i}"), "name": call["name"], "arguments": call["input"]}]}));
        if call["name"] == "Agent" {
            turns.push(json!({"text": helper_answer}));
        }
    }
    turns.push(json!({"text": "Done."}));
    turns.push(json!({"text": "fixed test_release"}));
    s.script(Value::Array(turns))
}

/// The hook entries of the trace for the call `id`, as `(source's JSON path, decision)`.
fn hook_decisions(trace: &[Value], id: &str, plugin_hooks: &Path) -> Vec<(String, String)> {
    let prefix = format!("{} (plugin guard@acme) ", plugin_hooks.display());
    let mut out: Vec<(String, String)> = trace
        .iter()
        .filter(|e| e["kind"] == "hook" && e["tool_use_id"] == id)
        .map(|e| {
            let source = e["source"].as_str().unwrap_or_default();
            let path = source.strip_prefix(&prefix).unwrap_or_else(|| panic!("`{source}` names {prefix}"));
            (path.to_owned(), e["decision"].as_str().unwrap_or_default().to_owned())
        })
        .collect();
    out.sort();
    out
}

fn pairs(expected: &[(&str, &str)]) -> Vec<(String, String)> {
    expected.iter().map(|(a, b)| ((*a).to_owned(), (*b).to_owned())).collect()
}

#[test]
fn a_marketplaces_plugins_decide_a_session_as_claude_code_decided_the_same_calls() {
    let s = Sandbox::new();
    git(&s.project(), &["init", "--quiet"]);
    let market = acme_marketplace(&s);
    let added = plugin_ok(&s, &["marketplace", "add", market.to_str().expect("utf8")]);
    assert!(added.contains("added marketplace acme (3 plugins)"), "{added}");
    for id in ["guard@acme", "kit@acme", "relay@acme"] {
        plugin_ok(&s, &["install", id]);
    }
    let installed = read_json(&s.home().join("plugins/installed_plugins.json"));
    let guard_root = PathBuf::from(installed["plugins"]["guard@acme"][0]["installPath"].as_str().expect("installPath"));
    assert_eq!(guard_root, s.home().join("plugins/cache/acme/guard/1.2.0"), "{installed}");

    let calls = recorded_calls();
    let recorded_names: Vec<&str> = calls.iter().map(|c| c["call"]["name"].as_str().unwrap_or_default()).collect();
    assert_eq!(recorded_names, ["Bash", "Bash", "Bash", "Bash", "Bash", "Bash", "Skill", "Agent", MCP_TOOL]);
    let helper_answer = "helper report: the build is clean";
    let script = session_script(&s, &calls, helper_answer);
    let trace = s.dir.path().join("trace.jsonl");
    let allowed = format!("Bash,Skill,Agent,{MCP_TOOL}");
    let args = [
        "--output-format",
        "json",
        "--include-messages",
        "--allowedTools",
        &allowed,
        "--trace",
        trace.to_str().expect("utf8"),
    ];
    let out = s.run(&script, &args);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let result = json(&out);
    let results = tool_results(&result);
    assert_eq!(results.len(), calls.len(), "one result per call: {results:?}");

    // Each call: blocked where Claude Code blocked it, with the hook's own message; run where
    // Claude Code ran it, with what the model read.
    for (i, (record, got)) in calls.iter().zip(&results).enumerate() {
        let recorded = content_text(&record["content"]);
        let blocked = got.starts_with("Error [hook_blocked]") || got.starts_with("Error [permission_denied]");
        assert!(blocked || !got.starts_with("Error ["), "call {i}: {got}");
        assert_eq!(
            blocked,
            record["is_error"] == true,
            "call {i} {}: spine gave {got:?}, Claude Code {recorded:?}",
            record["call"]
        );
        if blocked {
            assert_eq!(got, &spine_block_text(&recorded), "call {i}: Claude Code said {recorded:?}");
        }
    }
    let recorded_text = |i: usize| content_text(&calls[i]["content"]);
    // spine's Bash result starts with the exit status line; the output is Claude Code's.
    assert_eq!(results[1], format!("Command exited with status 0.\n{}", recorded_text(1)), "echo allowed");
    assert_eq!(recorded_text(4), "(Bash completed with no output)");
    assert_eq!(results[5], format!("Command exited with status 0.\n{}", recorded_text(5)), "echo run-tests");
    let skill_body = calls[6]["followed_by"][0]["text"].as_str().expect("the skill's body followed");
    let body = skill_body.split_once("\n\n").map(|(_, b)| b).expect("base directory, then the body");
    assert_eq!(body, "Write release notes for v2.0.\n");
    assert!(results[6].contains(body.trim_end()), "the skill's body with its arguments: {}", results[6]);
    let notified = calls[8]["followed_by"].to_string();
    assert!(notified.contains(&format!("<result>{helper_answer}</result>")), "Claude Code: {notified}");
    assert!(results[7].contains(helper_answer), "spine: the agent's answer is the tool result: {}", results[7]);
    assert_eq!(results[8], recorded_text(8), "the plugin's MCP tool");

    // The asyncRewake handler's exit 2 woke the model with its stderr, as in Claude Code.
    let wake = "guard tests: 1 failed (test_release)";
    let recorded_wake = calls[5]["followed_by"].to_string();
    assert!(recorded_wake.contains(wake), "Claude Code's wake follows the call: {recorded_wake}");
    let messages = result["messages"].as_array().expect("messages");
    let woke: Vec<&str> = messages
        .iter()
        .filter(|m| m["role"] == "user")
        .filter_map(|m| m["content"].as_str())
        .filter(|c| c.contains(wake))
        .collect();
    // Both name the handler by its command with `${CLAUDE_PLUGIN_ROOT}` replaced in the text.
    let guard_dir = s.home().join("plugins/cache/acme/guard/1.2.0").canonicalize().expect("installed");
    let wake_message = format!(
        "PostToolUse hook blocking error from command \"\"{}\"/scripts/rewake.sh\": {wake}",
        guard_dir.display()
    );
    assert_eq!(woke, [wake_message.as_str()], "{result}");
    assert_eq!(result["result"], "fixed test_release", "{result}");

    // The trace: which of the guard's handlers decided each Bash call.
    let entries = spine_testkit::files::read_jsonl(&trace);
    let hooks = guard_root.join("hooks/hooks.json");
    let decided = |id: &str| hook_decisions(&entries, id, &hooks);
    for (id, expected) in [
        ("c0", pairs(&[("hooks.PreToolUse[0].hooks[0]", "block"), ("hooks.PreToolUse[0].hooks[1]", "proceed")])),
        (
            "c1",
            pairs(&[
                ("hooks.PostToolUse[0].hooks[0]", "proceed"),
                ("hooks.PreToolUse[0].hooks[0]", "proceed"),
                ("hooks.PreToolUse[0].hooks[1]", "proceed"),
            ]),
        ),
        ("c2", pairs(&[("hooks.PreToolUse[0].hooks[0]", "proceed"), ("hooks.PreToolUse[0].hooks[1]", "deny")])),
        (
            "c3",
            pairs(&[
                ("hooks.PreToolUse[0].hooks[0]", "proceed"),
                ("hooks.PreToolUse[0].hooks[1]", "proceed"),
                ("hooks.PreToolUse[0].hooks[2]", "block"),
            ]),
        ),
        // `git status`: the `if: Bash(git push *)` handler (hooks[2]) did not run.
        (
            "c4",
            pairs(&[
                ("hooks.PostToolUse[0].hooks[0]", "proceed"),
                ("hooks.PreToolUse[0].hooks[0]", "proceed"),
                ("hooks.PreToolUse[0].hooks[1]", "proceed"),
            ]),
        ),
        (
            "c5",
            pairs(&[
                ("hooks.PostToolUse[0].hooks[0]", "wake"),
                ("hooks.PreToolUse[0].hooks[0]", "proceed"),
                ("hooks.PreToolUse[0].hooks[1]", "proceed"),
            ]),
        ),
    ] {
        assert_eq!(decided(id), expected, "call {id}: {entries:?}");
    }
    for id in ["c6", "c7", "c8"] {
        assert_eq!(decided(id), [], "the guard's hooks match Bash only ({id})");
    }
}
