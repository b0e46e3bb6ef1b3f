//! The interactive session in a real terminal (`tmux`): a conversation of several prompts
//! with tool calls, approvals that remember, Ctrl-C during a running tool, `/compact`, custom
//! commands, `--continue`, and the sessions it leaves for `spine sessions list`.

use std::path::Path;

use serde_json::{Value, json};

use crate::support::*;

/// A tmux terminal running `spine ARGS` (an interactive session) with the sandbox's
/// environment; `EXIT=<status>` shows when it ends.
fn chat(s: &Sandbox, script: &Path, args: &str) -> Tmux {
    chat_session(s, script, &[], args)
}

/// A scripted-model file named `name` in the sandbox.
fn script(s: &Sandbox, name: &str, turns: Value) -> std::path::PathBuf {
    let path = s.dir.path().join(name);
    spine_testkit::script::write_script_file(&path, turns).expect("script");
    path
}

/// Project settings whose hooks append each event's input (one JSON line) to `hooks.jsonl`
/// in the sandbox; the project is trusted.
fn logging_hooks(s: &Sandbox, events: &[&str], extra: Value) -> std::path::PathBuf {
    let log = s.dir.path().join("hooks.jsonl");
    let command =
        format!("cat >> {}; echo >> {}", shell_quote(&log.to_string_lossy()), shell_quote(&log.to_string_lossy()));
    let mut hooks = serde_json::Map::new();
    for event in events {
        hooks.insert((*event).to_owned(), json!([{"hooks": [{"type": "command", "command": command}]}]));
    }
    let mut settings = json!({"hooks": hooks});
    if let (Some(obj), Some(extra)) = (settings.as_object_mut(), extra.as_object()) {
        obj.extend(extra.clone());
    }
    s.write(".claude/settings.json", &settings.to_string());
    s.trust();
    log
}

fn of_event<'a>(inputs: &'a [Value], event: &str) -> Vec<&'a Value> {
    inputs.iter().filter(|v| v["hook_event_name"] == event).collect()
}

/// The one transcript of the sandbox.
fn only_transcript(s: &Sandbox) -> String {
    let files: Vec<_> = s.session_files().into_iter().filter(|p| p.extension().is_some_and(|e| e == "jsonl")).collect();
    assert_eq!(files.len(), 1, "{files:?}");
    std::fs::read_to_string(&files[0]).expect("transcript")
}

#[test]
fn a_conversation_of_two_prompts_with_a_tool_call_fires_session_start_and_end_once() {
    let s = Sandbox::new();
    let log = logging_hooks(
        &s,
        &["SessionStart", "SessionEnd", "UserPromptSubmit"],
        json!({"permissions": {"allow": ["Bash(echo:*)"]}}),
    );
    let script = script(
        &s,
        "two.json",
        json!([
            {"tool_calls": [{"id": "c1", "name": "Bash", "arguments": {"command": "echo chat-tool-output"}}]},
            {"text": "first answer"},
            {"text": "second answer"}
        ]),
    );
    let tmux = chat(&s, &script, "");
    tmux.send_line("run the tool");
    let screen = tmux.wait_for("first answer");
    assert!(screen.contains("⏺ Bash(echo chat-tool-output) ✓"), "{screen}");
    assert!(screen.contains("⎿ chat-tool-output"), "the output, folded: {screen}");
    tmux.send_line("and again");
    tmux.wait_for("second answer");
    tmux.send_line("/exit");
    tmux.wait_for("EXIT=0");

    let inputs = logged(&log);
    let starts = of_event(&inputs, "SessionStart");
    assert_eq!(starts.len(), 1, "SessionStart once for the session: {inputs:?}");
    assert_eq!(starts[0]["source"], "startup");
    let prompts: Vec<&Value> = of_event(&inputs, "UserPromptSubmit").into_iter().map(|v| &v["prompt"]).collect();
    assert_eq!(prompts, vec!["run the tool", "and again"]);
    let ends = of_event(&inputs, "SessionEnd");
    assert_eq!(ends.len(), 1, "SessionEnd once, at the end: {inputs:?}");
    assert_eq!(ends[0]["reason"], "prompt_input_exit");

    let transcript = only_transcript(&s);
    for text in ["run the tool", "chat-tool-output", "first answer", "and again", "second answer"] {
        assert!(transcript.contains(text), "the transcript holds `{text}`");
    }
}

#[test]
fn always_for_this_project_in_a_session_writes_the_rule_and_nothing_asks_again() {
    let s = Sandbox::new();
    s.trust();
    let first = script(
        &s,
        "first.json",
        json!([
            {"tool_calls": [{"id": "c1", "name": "Bash", "arguments": {"command": "/bin/echo one"}}]},
            {"text": "answered one"},
            {"tool_calls": [{"id": "c2", "name": "Bash", "arguments": {"command": "/bin/echo two"}}]},
            {"text": "answered two"}
        ]),
    );
    let tmux = chat(&s, &first, "");
    tmux.send_line("first");
    let screen = tmux.wait_for("always for this [p]roject");
    assert!(screen.contains("Allow Bash"), "{screen}");
    assert!(screen.contains("asked by the permission mode's default"), "who asked: {screen}");
    tmux.send_line("p");
    let screen = tmux.wait_for("answered one");
    assert!(screen.contains("Added Bash(/bin/echo:*) to"), "{screen}");
    tmux.send_line("second");
    let all = tmux.wait_for("answered two");
    assert_eq!(tmux.all().matches("Allow Bash").count(), 1, "the session remembers: {all}");
    tmux.send_line("/permissions");
    let screen = tmux.wait_for("mode: default");
    assert!(screen.contains("Bash(/bin/echo:*)"), "{screen}");
    tmux.send_line("/exit");
    tmux.wait_for("EXIT=0");
    drop(tmux);

    let written: Value = serde_json::from_str(
        &std::fs::read_to_string(s.project().join(".spine/settings.local.json")).expect("written"),
    )
    .expect("json");
    assert_eq!(written["permissions"]["allow"], json!(["Bash(/bin/echo:*)"]));
    let next = script(
        &s,
        "next.json",
        json!([{"tool_calls": [{"id": "c1", "name": "Bash", "arguments": {"command": "/bin/echo three"}}]}, {"text": "answered three"}]),
    );
    let tmux = chat(&s, &next, "");
    tmux.send_line("third");
    let screen = tmux.wait_for("answered three");
    assert!(!screen.contains("Allow Bash"), "the next session does not ask: {screen}");
    assert!(screen.contains("⏺ Bash(/bin/echo three) ✓"), "{screen}");
}

/// Whether a process with exactly this command line (`sleep 37.25`) runs.
fn sleeping(arg: &str) -> bool {
    let Ok(procs) = std::fs::read_dir("/proc") else { return false };
    procs
        .filter_map(Result::ok)
        .any(|p| std::fs::read(p.path().join("cmdline")).is_ok_and(|c| c == format!("sleep\0{arg}\0").as_bytes()))
}

#[test]
fn ctrl_c_during_a_running_tool_kills_it_and_the_session_goes_on() {
    let s = Sandbox::new();
    let script = script(
        &s,
        "sleep.json",
        json!([
            {"tool_calls": [{"id": "c1", "name": "Bash", "arguments": {"command": "sleep 37.25"}}]},
            {"text": "after the cancel"}
        ]),
    );
    let tmux = chat(&s, &script, "--dangerously-skip-permissions");
    tmux.send_line("sleep");
    tmux.wait_for("Bash: sleep 37.25");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while !sleeping("37.25") {
        assert!(std::time::Instant::now() < deadline, "the tool never started");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    tmux.send_key("C-c");
    let screen = tmux.wait_for("⏹ canceled");
    assert!(screen.contains("⏺ Bash(sleep 37.25) ✗ canceled"), "{screen}");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while sleeping("37.25") {
        assert!(std::time::Instant::now() < deadline, "the tool's process outlived the cancel");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    tmux.send_line("go on");
    tmux.wait_for("after the cancel");
    tmux.wait_for_last_line(">");
    tmux.send_key("C-c");
    tmux.wait_for("Ctrl-C again to exit");
    tmux.send_key("C-c");
    tmux.wait_for("EXIT=0");
    let transcript = only_transcript(&s);
    assert!(transcript.contains("Error [canceled]"), "the canceled call is answered in the transcript");
    assert!(transcript.contains("after the cancel"));
}

#[test]
fn compact_summarises_with_the_instructions_and_fires_the_manual_compaction_hooks() {
    let s = Sandbox::new();
    let log = logging_hooks(&s, &["PreCompact", "PostCompact"], json!({}));
    let script = script(
        &s,
        "compact.json",
        json!([{"text": "one"}, {"text": "two"}, {"text": "SUMMARY: the decisions so far"}, {"text": "three"}]),
    );
    let tmux = chat(&s, &script, "");
    tmux.send_line("first");
    tmux.wait_for("one");
    tmux.send_line("second");
    tmux.wait_for("two");
    tmux.send_line("/compact keep the decisions");
    let screen = tmux.wait_for("Compacted:");
    assert!(screen.contains("Compacted: 4 messages →"), "{screen}");
    tmux.send_line("third");
    tmux.wait_for("three");
    tmux.send_line("/exit");
    tmux.wait_for("EXIT=0");
    let inputs = logged(&log);
    let pre = of_event(&inputs, "PreCompact");
    assert_eq!(pre.len(), 1, "{inputs:?}");
    assert_eq!(pre[0]["trigger"], "manual");
    assert_eq!(pre[0]["custom_instructions"], "keep the decisions");
    assert_eq!(of_event(&inputs, "PostCompact")[0]["trigger"], "manual");
    let transcript = only_transcript(&s);
    assert!(transcript.contains("compact_boundary"), "the transcript records the compaction");
    assert!(transcript.contains("SUMMARY: the decisions so far"));
}

#[test]
fn a_custom_command_expands_arguments_and_file_references_before_user_prompt_submit() {
    let s = Sandbox::new();
    let log = logging_hooks(&s, &["UserPromptSubmit"], json!({}));
    s.write(
        ".claude/commands/greet.md",
        "---\ndescription: Greet someone\nargument-hint: NAME\n---\nSay hello to $ARGUMENTS ($1) and read @notes.txt\n",
    );
    s.write("notes.txt", "the notes body\n");
    let script = script(&s, "greet.json", json!([{"text": "hello given"}]));
    let tmux = chat(&s, &script, "");
    tmux.send_line("/help");
    let screen = tmux.wait_for("Custom commands:");
    assert!(screen.contains("/greet NAME") && screen.contains("Greet someone (project)"), "{screen}");
    tmux.send_line("/greet Ada Lovelace");
    tmux.wait_for("hello given");
    tmux.send_line("/nosuch");
    tmux.wait_for("unknown command /nosuch");
    tmux.send_line("/exit");
    tmux.wait_for("EXIT=0");
    let inputs = logged(&log);
    let prompts = of_event(&inputs, "UserPromptSubmit");
    assert_eq!(prompts.len(), 1);
    assert_eq!(
        prompts[0]["prompt"],
        "Say hello to Ada Lovelace (Ada) and read @notes.txt\n\nContents of notes.txt:\n```\nthe notes body\n```"
    );
}

#[test]
fn continue_reopens_the_last_session_of_the_project() {
    let s = Sandbox::new();
    let first = script(&s, "a.json", json!([{"text": "noted 42"}]));
    let tmux = chat(&s, &first, "");
    tmux.send_line("remember 42");
    tmux.wait_for("noted 42");
    tmux.send_key("C-d");
    let screen = tmux.wait_for("EXIT=0");
    assert!(screen.contains("spine --resume"), "{screen}");
    drop(tmux);

    let second = script(&s, "b.json", json!([{"text": "it was 42"}]));
    let tmux = chat(&s, &second, "--continue");
    let screen = tmux.wait_for("> remember 42");
    assert!(screen.contains("session "), "{screen}");
    tmux.send_line("what was it?");
    tmux.wait_for("it was 42");
    tmux.send_line("/exit");
    tmux.wait_for("EXIT=0");
    let transcript = only_transcript(&s);
    for text in ["remember 42", "noted 42", "what was it?", "it was 42"] {
        assert!(transcript.contains(text), "one transcript holds `{text}`");
    }
}

#[test]
fn clear_starts_a_new_session_and_sessions_list_shows_all_three() {
    let s = Sandbox::new();
    let script = script(&s, "three.json", json!([{"text": "a1"}, {"text": "a2"}, {"text": "a3"}]));
    let tmux = chat(&s, &script, "");
    for (n, prompt) in ["alpha prompt", "beta prompt", "gamma prompt"].iter().enumerate() {
        tmux.send_line(prompt);
        tmux.wait_for(&format!("a{}", n + 1));
        if n < 2 {
            tmux.send_line("/clear");
            tmux.wait_for_count("New session", n + 1);
        }
    }
    tmux.send_line("/exit");
    tmux.wait_for("EXIT=0");
    let out = s.spine().args(["sessions", "list"]).output().expect("runs");
    let list = stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    for prompt in ["alpha prompt", "beta prompt", "gamma prompt"] {
        assert!(list.contains(prompt), "{list}");
    }
    let rows = list.lines().filter(|l| l.contains(" prompt")).count();
    assert_eq!(rows, 3, "{list}");
}

#[test]
fn a_hook_that_blocks_a_call_shows_as_one_line_beside_the_calls_line() {
    let s = Sandbox::new();
    let guard = s.write(
        "hooks/no-rm.sh",
        "#!/bin/sh\ncase \"$(cat)\" in *'rm -rf'*) echo 'no deleting here' >&2; exit 2;; esac\nexit 0\n",
    );
    let settings = json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
        {"type": "command", "command": format!("sh {}", guard.display())}]}]}});
    s.write(".claude/settings.json", &settings.to_string());
    s.trust();
    let script = script(
        &s,
        "blocked.json",
        json!([
            {"tool_calls": [{"id": "c1", "name": "Bash", "arguments": {"command": "rm -rf build"}}]},
            {"text": "it was blocked"}
        ]),
    );
    let tmux = chat(&s, &script, "");
    tmux.send_line("clean up");
    let screen = tmux.wait_for("it was blocked");
    let hook_line = screen.lines().find(|l| l.contains("↳ PreToolUse hook")).unwrap_or_default();
    assert!(hook_line.ends_with(": blocked"), "{screen}");
    assert!(screen.contains("⏺ Bash(rm -rf build) ✗ hook_blocked"), "{screen}");
    assert!(screen.contains("no deleting here"), "the reason, folded under the call: {screen}");
    tmux.send_line("/exit");
    tmux.wait_for("EXIT=0");
}
