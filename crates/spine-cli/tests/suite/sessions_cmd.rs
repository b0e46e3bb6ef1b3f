//! `spine sessions list|show|rm|prune` through the binary: sessions made by real runs with the
//! scripted model, and transcripts written by hand where a test needs old or odd files.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use serde_json::{Value, json};

use crate::support::*;

const UNKNOWN_ID: &str = "123e4567-e89b-42d3-a456-426614174000";

/// Runs `prompt` in `cwd` with `script`; returns the session id.
fn session(s: &Sandbox, cwd: &Path, prompt: &str, script: &Path) -> String {
    let out = s
        .spine()
        .args(["run", "-p", prompt, "--output-format", "json", "--dangerously-skip-permissions"])
        .arg("--model")
        .arg(format!("scripted:{}", script.display()))
        .arg("--cwd")
        .arg(cwd)
        .output()
        .expect("spine runs");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    json(&out)["session_id"].as_str().expect("session_id").to_owned()
}

fn sessions(s: &Sandbox, args: &[&str]) -> std::process::Output {
    s.spine().arg("sessions").args(args).output().expect("spine sessions runs")
}

fn list_json(s: &Sandbox, args: &[&str]) -> Vec<Value> {
    let mut all = vec!["list", "--output-format", "json"];
    all.extend_from_slice(args);
    let out = sessions(s, &all);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    json(&out).as_array().expect("an array").clone()
}

/// Three sessions in the project: a tool call then an answer, then two one-turn answers.
fn three_sessions(s: &Sandbox) -> Vec<String> {
    let tool = s.script(bash_then_answer("echo hi"));
    let first = session(s, &s.project(), "first: run echo\nplease", &tool);
    let answer = s.script(json!([{"text": "ok"}]));
    let second = session(s, &s.project(), "second prompt", &answer);
    let third = session(s, &s.project(), &format!("third {}", "x".repeat(100)), &answer);
    vec![first, second, third]
}

/// A hand-written transcript `id` of `cwd` (folder as spine names it), with `lines`.
fn write_transcript(s: &Sandbox, cwd: &Path, id: &str, lines: &[Value]) -> PathBuf {
    let folder =
        cwd.to_string_lossy().chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '-' }).collect::<String>();
    let path = s.home().join("projects").join(folder).join(format!("{id}.jsonl"));
    std::fs::create_dir_all(path.parent().expect("parent")).expect("folder");
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(&path, text).expect("write transcript");
    path
}

fn set_age(path: &Path, age: Duration) {
    let when = SystemTime::now() - age;
    std::fs::File::options().write(true).open(path).and_then(|f| f.set_modified(when)).expect("set mtime");
}

fn canonical_project(s: &Sandbox) -> PathBuf {
    s.project().canonicalize().expect("canonical project")
}

#[test]
fn sessions_list_shows_the_projects_sessions_newest_first_with_model_turns_prompt_and_end() {
    let s = Sandbox::new();
    let ids = three_sessions(&s);
    let listed = list_json(&s, &[]);
    let order: Vec<&str> = listed.iter().map(|l| l["session_id"].as_str().expect("id")).collect();
    assert_eq!(order, [ids[2].as_str(), ids[1].as_str(), ids[0].as_str()], "newest first");
    let first = &listed[2];
    assert_eq!(first["model"], "scripted");
    assert_eq!(first["turns"], 2, "a tool round and the answer");
    assert_eq!(first["first_prompt"], "first: run echo please", "one line");
    assert_eq!(first["ended"], "success");
    assert_eq!(first["cost_usd"], Value::Null, "the scripted model has no price");
    assert_eq!(first["cwd"], canonical_project(&s).to_str().expect("utf-8"));
    assert!(first["started"].as_str().is_some_and(|t| t.ends_with('Z')), "{first}");
    assert_eq!(first["error"], Value::Null);
    assert_eq!(listed[1]["turns"], 1);
    let long = listed[0]["first_prompt"].as_str().expect("prompt");
    assert!(long.starts_with("third xxx") && long.ends_with('…') && long.chars().count() == 60, "{long}");

    let text = stdout(&sessions(&s, &["list"]));
    let positions: Vec<usize> = ids.iter().map(|id| text.find(id.as_str()).expect("listed")).collect();
    assert!(positions[2] < positions[1] && positions[1] < positions[0], "{text}");
    assert!(text.contains("scripted") && text.contains("\"second prompt\""), "{text}");
}

#[test]
fn sessions_list_all_covers_every_project_with_its_directory() {
    let s = Sandbox::new();
    let other = s.dir.path().join("other");
    std::fs::create_dir_all(&other).expect("other project");
    let answer = s.script(json!([{"text": "ok"}]));
    let here = session(&s, &s.project(), "in the project", &answer);
    let there = session(&s, &other, "in the other one", &answer);

    let mine = list_json(&s, &[]);
    assert_eq!(mine.len(), 1, "{mine:?}");
    assert_eq!(mine[0]["session_id"], here.as_str());

    let all = list_json(&s, &["--all"]);
    let by_id = |id: &str| all.iter().find(|l| l["session_id"] == id).cloned().expect("listed");
    assert_eq!(all.len(), 2);
    assert_eq!(by_id(&here)["cwd"], canonical_project(&s).to_str().expect("utf-8"));
    assert_eq!(by_id(&there)["cwd"], other.canonicalize().expect("canonical").to_str().expect("utf-8"));
    let text = stdout(&sessions(&s, &["list", "--all"]));
    assert!(text.contains(other.canonicalize().expect("canonical").to_str().expect("utf-8")), "{text}");
}

#[test]
fn sessions_list_prices_usage_reads_claude_code_transcripts_and_marks_malformed_files() {
    let s = Sandbox::new();
    let project = canonical_project(&s);
    let cwd = project.to_str().expect("utf-8");
    let priced = "123e4567-e89b-42d3-a456-426614174001";
    let usage = json!({"input_tokens": 1_000_000, "output_tokens": 0, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0});
    write_transcript(
        &s,
        &project,
        priced,
        &[
            json!({"type": "user", "timestamp": "2026-01-01T00:00:00.000Z", "cwd": cwd, "sessionId": priced, "message": {"role": "user", "content": "price me"}}),
            json!({"type": "assistant", "timestamp": "2026-01-01T00:00:01.000Z", "cwd": cwd, "sessionId": priced, "message": {"role": "assistant", "model": "claude-sonnet-4-5-20250929", "content": [{"type": "text", "text": "hi"}], "usage": usage}}),
        ],
    );
    let broken = "123e4567-e89b-42d3-a456-426614174002";
    let path = write_transcript(&s, &project, broken, &[json!({"type": "user", "cwd": cwd})]);
    std::fs::write(&path, format!("{{\"type\":\"user\",\"cwd\":\"{cwd}\"}}\nnot json\n")).expect("write");

    let listed = list_json(&s, &[]);
    let by_id = |id: &str| listed.iter().find(|l| l["session_id"] == id).cloned().expect("listed");
    let price = spine_models::pricing::price("claude-sonnet-4-5-20250929").expect("a price").input;
    assert_eq!(by_id(priced)["cost_usd"].as_f64(), Some(price), "one million uncached input tokens");
    assert_eq!(by_id(priced)["model"], "claude-sonnet-4-5-20250929", "the assistant's model without spine lines");
    assert_eq!(by_id(priced)["ended"], Value::Null);
    assert_eq!(by_id(broken)["error"], "line 2 is not a JSON object");
    let text = stdout(&sessions(&s, &["list"]));
    assert!(text.contains("[error: line 2 is not a JSON object]"), "{text}");
}

#[test]
fn sessions_show_prints_the_conversation_with_tool_calls_and_folded_results() {
    let s = Sandbox::new();
    let script = s.script(bash_then_answer("seq 1 10"));
    let id = session(&s, &s.project(), "count to ten", &script);
    let out = sessions(&s, &["show", &id]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("── user"), "{text}");
    assert!(text.contains("count to ten"), "{text}");
    assert!(text.contains("→ Bash(seq 1 10)"), "{text}");
    assert!(text.contains("more lines (--full)") && !text.contains("    10"), "folded: {text}");
    assert!(text.contains("── assistant") && text.contains("done"), "{text}");
    assert!(text.contains("── ended: success"), "{text}");

    let full = stdout(&sessions(&s, &["show", &id, "--full"]));
    assert!(full.contains("    10") && !full.contains("--full"), "{full}");

    let out = sessions(&s, &["show", &id, "--output-format", "json"]);
    let messages = json(&out);
    let roles: Vec<&str> =
        messages.as_array().expect("messages").iter().map(|m| m["role"].as_str().expect("role")).collect();
    assert_eq!(roles, ["user", "assistant", "tool", "assistant"]);
}

#[test]
fn sessions_rm_removes_the_transcript_and_its_env_file() {
    let s = Sandbox::new();
    let answer = s.script(json!([{"text": "ok"}]));
    let keep = session(&s, &s.project(), "keep", &answer);
    let gone = session(&s, &s.project(), "remove", &answer);
    let transcript = s.session_file(&gone, "jsonl").expect("transcript");
    let env = transcript.with_extension("env");
    std::fs::write(&env, "export A=1\n").expect("env file");

    let out = sessions(&s, &["rm", &gone]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stdout(&out).contains(&format!("removed {}", transcript.display())), "{}", stdout(&out));
    assert!(!transcript.exists() && !env.exists());
    assert!(s.session_file(&keep, "jsonl").is_some(), "the other session stays");
    assert_eq!(sessions(&s, &["show", &gone]).status.code(), Some(2));
}

#[test]
fn sessions_prune_removes_sessions_older_than_the_duration_and_dry_run_removes_nothing() {
    let s = Sandbox::new();
    let project = canonical_project(&s);
    let cwd = project.to_str().expect("utf-8");
    let answer = s.script(json!([{"text": "ok"}]));
    let fresh = session(&s, &s.project(), "fresh", &answer);
    // Old by its last timestamp.
    let stamped = "123e4567-e89b-42d3-a456-426614174003";
    let stamped_path = write_transcript(
        &s,
        &project,
        stamped,
        &[
            json!({"type": "user", "timestamp": "2020-01-01T00:00:00.000Z", "cwd": cwd, "message": {"role": "user", "content": "old"}}),
        ],
    );
    // Old by its mtime (no timestamps), with an env file.
    let untimed = "123e4567-e89b-42d3-a456-426614174004";
    let untimed_path = write_transcript(&s, &project, untimed, &[json!({"type": "user", "cwd": cwd})]);
    set_age(&untimed_path, Duration::from_secs(40 * 86_400));
    std::fs::write(untimed_path.with_extension("env"), "").expect("env file");
    // Twelve hours old: kept by 30d, removed by 11h.
    let recent = "123e4567-e89b-42d3-a456-426614174005";
    let recent_path = write_transcript(&s, &project, recent, &[json!({"type": "user", "cwd": cwd})]);
    set_age(&recent_path, Duration::from_secs(12 * 3_600));

    let dry = sessions(&s, &["prune", "--older-than", "30d", "--dry-run"]);
    assert_eq!(dry.status.code(), Some(0), "{}", stderr(&dry));
    assert!(stdout(&dry).contains("would remove") && stdout(&dry).contains(stamped), "{}", stdout(&dry));
    assert!(stamped_path.exists() && untimed_path.exists(), "a dry run removes nothing");

    let out = sessions(&s, &["prune", "--older-than", "30d"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(!stamped_path.exists() && !untimed_path.exists() && !untimed_path.with_extension("env").exists());
    assert!(recent_path.exists() && s.session_file(&fresh, "jsonl").is_some(), "{}", stdout(&out));

    let out = sessions(&s, &["prune", "--older-than", "660m"]);
    assert_eq!(out.status.code(), Some(0));
    assert!(!recent_path.exists() && s.session_file(&fresh, "jsonl").is_some(), "{}", stdout(&out));

    assert_eq!(sessions(&s, &["prune", "--older-than", "30s"]).status.code(), Some(2), "only d, h and m");
}

#[test]
fn an_invalid_or_unknown_session_id_exits_2_and_names_no_file() {
    let s = Sandbox::new();
    // A folder outside the projects folder, reached through a symbolic link, is never used.
    let outside = s.dir.path().join("outside");
    std::fs::create_dir_all(&outside).expect("outside");
    let victim = outside.join(format!("{UNKNOWN_ID}.jsonl"));
    std::fs::write(&victim, "{\"type\":\"user\"}\n").expect("victim");
    std::fs::create_dir_all(s.home().join("projects")).expect("projects");
    std::os::unix::fs::symlink(&outside, s.home().join("projects").join("-linked")).expect("symlink");

    for args in [
        vec!["show", "../../etc/passwd"],
        vec!["rm", "../x"],
        vec!["show", "123E4567-E89B-42D3-A456-426614174000"],
        vec!["show", UNKNOWN_ID],
        vec!["rm", UNKNOWN_ID],
    ] {
        let out = sessions(&s, &args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        assert!(stderr(&out).contains("session"), "{args:?}: {}", stderr(&out));
    }
    let out = sessions(&s, &["prune", "--older-than", "0m", "--all"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(victim.exists(), "nothing behind a symbolic link is removed");
}

#[test]
fn sessions_show_marks_thinking_hook_context_and_compaction_in_a_claude_code_transcript() {
    let s = Sandbox::new();
    let project = canonical_project(&s);
    let cwd = project.to_str().expect("utf-8");
    let id = "123e4567-e89b-42d3-a456-426614174006";
    write_transcript(
        &s,
        &project,
        id,
        &[
            json!({"type": "user", "timestamp": "2026-01-01T00:00:00.000Z", "cwd": cwd, "message": {"role": "user", "content": "fix it"}}),
            json!({"type": "attachment", "cwd": cwd, "attachment": {"type": "hook_additional_context", "hookEvent": "UserPromptSubmit", "content": ["branch is main"]}}),
            json!({"type": "assistant", "cwd": cwd, "message": {"role": "assistant", "model": "claude-opus-4-5", "content": [
                {"type": "thinking", "thinking": "look at the file first", "signature": "s"},
                {"type": "tool_use", "id": "t1", "name": "Read", "input": {"file_path": "/p/src/lib.rs"}}
            ]}}),
            json!({"type": "user", "cwd": cwd, "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "fn main() {}", "is_error": false}]}}),
            json!({"type": "system", "subtype": "compact_boundary", "cwd": cwd, "content": "Conversation compacted"}),
            json!({"type": "some_future_type", "cwd": cwd}),
        ],
    );
    let out = sessions(&s, &["show", id]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("[hook context: UserPromptSubmit] branch is main"), "{text}");
    assert!(text.contains("✻ thinking: look at the file first"), "{text}");
    assert!(!text.contains("\u{1b}[2m"), "no escape codes off a terminal: {text}");
    assert!(text.contains("→ Read(/p/src/lib.rs)") && text.contains("fn main() {}"), "{text}");
    assert!(text.contains("── conversation compacted"), "{text}");
    assert!(text.contains("(claude-opus-4-5)"), "{text}");
}

#[test]
fn a_transcript_of_another_directory_sharing_the_folder_is_neither_listed_nor_pruned() {
    let s = Sandbox::new();
    let project = canonical_project(&s);
    // `/tmp/x-project` and `/tmp/x/project` share a folder name; the transcript's `cwd` decides.
    let look_alike = project.to_str().expect("utf-8").replace("/project", "-project");
    let id = "123e4567-e89b-42d3-a456-426614174007";
    let path = write_transcript(&s, &project, id, &[json!({"type": "user", "cwd": look_alike})]);
    set_age(&path, Duration::from_secs(40 * 86_400));
    assert!(list_json(&s, &[]).is_empty());
    assert_eq!(list_json(&s, &["--all"]).len(), 1, "--all lists it, under its own directory");
    let out = sessions(&s, &["prune", "--older-than", "1d"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(path.exists(), "{}", stdout(&out));
    let out = sessions(&s, &["prune", "--older-than", "1d", "--all"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(!path.exists(), "{}", stdout(&out));
}

/// An old transcript of the project at `path` (outside `SPINE_HOME` in the tests below).
fn write_old_transcript(path: &Path, cwd: &str) {
    std::fs::create_dir_all(path.parent().expect("parent")).expect("folder");
    let line = json!({"type": "user", "timestamp": "2020-01-01T00:00:00.000Z", "cwd": cwd, "message": {"role": "user", "content": "old"}});
    std::fs::write(path, format!("{line}\n")).expect("write transcript");
}

#[test]
fn nothing_prune_removes_is_reached_through_a_symbolic_link() {
    let s = Sandbox::new();
    let project = canonical_project(&s);
    let cwd = project.to_str().expect("utf-8");
    let projects = s.home().join("projects");
    let outside = s.dir.path().join("outside");
    // The project's own folder is a link to a folder outside SPINE_HOME holding old sessions.
    let behind_folder = outside.join("folder").join(format!("{UNKNOWN_ID}.jsonl"));
    write_old_transcript(&behind_folder, cwd);
    std::fs::write(behind_folder.with_extension("env"), "").expect("env file");
    let real = write_transcript(&s, &project, "123e4567-e89b-42d3-a456-426614174010", &[json!({"cwd": cwd})]);
    std::fs::remove_file(&real).expect("only the folder's name was wanted");
    let folder = real.parent().expect("folder").to_path_buf();
    std::fs::remove_dir(&folder).expect("empty folder");
    std::os::unix::fs::symlink(outside.join("folder"), &folder).expect("symlink the folder");
    // Another project's real folder: an old session file that is a link to a file outside,
    // and an old real session whose subagents folder is a link to a folder outside.
    let other = projects.join("-elsewhere");
    std::fs::create_dir_all(&other).expect("other folder");
    let behind_file = outside.join("file.jsonl");
    write_old_transcript(&behind_file, "/elsewhere");
    set_age(&behind_file, Duration::from_secs(40 * 86_400));
    let linked_file = other.join("123e4567-e89b-42d3-a456-426614174011.jsonl");
    std::os::unix::fs::symlink(&behind_file, &linked_file).expect("symlink the file");
    let with_subagents = other.join("123e4567-e89b-42d3-a456-426614174012.jsonl");
    write_old_transcript(&with_subagents, "/elsewhere");
    let behind_subagents = outside.join("subagents").join("agent-a.jsonl");
    write_old_transcript(&behind_subagents, "/elsewhere");
    std::fs::create_dir_all(with_subagents.with_extension("")).expect("session folder");
    let linked_subagents = with_subagents.with_extension("").join("subagents");
    std::os::unix::fs::symlink(outside.join("subagents"), &linked_subagents).expect("symlink subagents");

    for args in [&["prune", "--older-than", "1d"][..], &["prune", "--older-than", "1d", "--all"][..]] {
        let out = sessions(&s, args);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", stderr(&out));
        for kept in [&behind_folder, &behind_folder.with_extension("env"), &behind_file, &behind_subagents] {
            assert!(kept.exists(), "{args:?}: {} was removed through a link: {}", kept.display(), stdout(&out));
        }
        for link in [&folder, &linked_file, &linked_subagents] {
            let meta = std::fs::symlink_metadata(link).expect("the link itself stays");
            assert!(meta.file_type().is_symlink(), "{}", link.display());
        }
        assert!(
            stderr(&out).contains(&format!("{} is a symbolic link", folder.display())),
            "{args:?}: the skipped folder is named: {}",
            stderr(&out)
        );
        if args.contains(&"--all") {
            for link in [&linked_file, &linked_subagents] {
                let warned = stderr(&out);
                assert!(warned.contains(&format!("{} is a symbolic link", link.display())), "{warned}");
            }
        }
    }
    assert!(!with_subagents.exists(), "the real session was pruned; only its linked folder stayed");
}

#[test]
fn list_never_reads_through_a_symbolic_link_and_names_what_it_skipped() {
    let s = Sandbox::new();
    let project = canonical_project(&s);
    let cwd = project.to_str().expect("utf-8");
    let outside = s.dir.path().join("outside");
    write_old_transcript(&outside.join(format!("{UNKNOWN_ID}.jsonl")), cwd);
    let real = write_transcript(&s, &project, "123e4567-e89b-42d3-a456-426614174013", &[json!({"cwd": cwd})]);
    let folder = real.parent().expect("folder").to_path_buf();
    std::fs::remove_file(&real).expect("only the folder's name was wanted");
    std::fs::remove_dir(&folder).expect("empty folder");
    std::os::unix::fs::symlink(&outside, &folder).expect("symlink the folder");

    for args in [&["list", "--output-format", "json"][..], &["list", "--all", "--output-format", "json"][..]] {
        let out = sessions(&s, args);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", stderr(&out));
        assert_eq!(json(&out), json!([]), "{args:?}: nothing behind the link is listed");
        assert!(stderr(&out).contains(&format!("{} is a symbolic link", folder.display())), "{}", stderr(&out));
    }
}
