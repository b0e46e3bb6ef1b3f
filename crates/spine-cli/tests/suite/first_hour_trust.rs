//! Trust in the first hour: an interactive session in an untrusted project that brings a hook
//! asks the trust question ("trust" / "this session only" / "no") and loads what was withheld
//! once trusted; `-p` never asks; `spine hooks list`, `spine doctor`, `spine mcp list` and
//! `/hooks` count what an untrusted project withholds in one sentence. Every hook's effect is
//! proven with a marker file.

use std::path::{Path, PathBuf};

use serde_json::json;

use crate::support::*;

/// The question's first line.
const QUESTION: &str = "Do you trust the files in";

/// A project whose `.spine/settings.json` has one UserPromptSubmit hook that touches
/// `hook-ran` in the sandbox; and a script answering `hello` to two prompts.
fn project_with_a_hook(s: &Sandbox) -> PathBuf {
    let marker = s.dir.path().join("hook-ran");
    let hook = json!({"type": "command", "command": format!("touch {}", shell_quote(&marker.to_string_lossy()))});
    s.write(".spine/settings.json", &json!({"hooks": {"UserPromptSubmit": [{"hooks": [hook]}]}}).to_string());
    s.script(json!([{"text": "hello"}, {"text": "hello again"}]))
}

fn hook_ran(s: &Sandbox) -> bool {
    s.dir.path().join("hook-ran").exists()
}

/// A terminal running the interactive session `spine --model scripted:SCRIPT`, not waiting for
/// its banner (the trust question comes first).
fn terminal(s: &Sandbox, script: &Path) -> Tmux {
    let args = format!("--model scripted:{}", shell_quote(&script.to_string_lossy()));
    Tmux::start(&s.project(), &terminal_command(s, " -u OPENAI_API_KEY -u ANTHROPIC_API_KEY", &args))
}

/// Answers the question with `answer`, waits for the banner, sends one prompt and waits for
/// its answer.
fn answer_then_prompt(tmux: &Tmux, answer: &str) -> String {
    tmux.wait_for(QUESTION);
    tmux.send_line(answer);
    tmux.wait_for("/help lists the commands");
    tmux.send_line("hi");
    tmux.wait_for("hello")
}

/// `spine hooks list`'s stdout.
fn hooks_list(s: &Sandbox) -> String {
    let out = s.spine().args(["hooks", "list"]).output().expect("runs");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    stdout(&out)
}

fn canonical_project(s: &Sandbox) -> String {
    s.project().canonicalize().expect("canon").display().to_string()
}

/// The sentence of a project withholding `what`.
fn withheld(s: &Sandbox, what: &str) -> String {
    format!("{what} withheld: project not trusted — run `spine trust {}`", canonical_project(s))
}

#[test]
fn the_trust_question_is_asked_in_an_untrusted_project_whose_settings_have_a_hook() {
    let s = Sandbox::new();
    let script = project_with_a_hook(&s);
    let tmux = terminal(&s, &script);
    let screen = tmux.wait_for("[t]rust (remembered, as `spine trust`) / this [s]ession only / [n]o:");
    assert!(screen.contains(&format!("{QUESTION} {}?", canonical_project(&s))), "{screen}");
    assert!(screen.contains("They bring 1 hook (.spine/settings.json)"), "{screen}");
    assert!(!screen.contains("/help lists the commands"), "the session waits for the answer: {screen}");
}

#[test]
fn the_trust_question_is_asked_for_an_mcp_json_server_alone() {
    let s = Sandbox::new();
    s.write(".mcp.json", &json!({"mcpServers": {"proj": {"command": "true"}}}).to_string());
    let script = s.script(json!([{"text": "hello"}]));
    let tmux = terminal(&s, &script);
    let screen = tmux.wait_for(QUESTION);
    assert!(screen.contains("They bring 1 MCP server (.mcp.json)"), "{screen}");
}

#[test]
fn no_trust_question_in_a_trusted_project_or_one_with_nothing_to_withhold() {
    let trusted = Sandbox::new();
    let script = project_with_a_hook(&trusted);
    trusted.trust();
    let tmux = chat_session(&trusted, &script, &[], "");
    tmux.send_line("hi");
    let screen = tmux.wait_for("hello");
    assert!(!tmux.all().contains(QUESTION), "{screen}");
    assert!(hook_ran(&trusted), "a trusted project's hook runs without a question");

    let plain = Sandbox::new();
    plain.write(".spine/settings.json", &json!({"model": "sonnet", "permissions": {"deny": ["WebFetch"]}}).to_string());
    let script = plain.script(json!([{"text": "hello"}]));
    let tmux = chat_session(&plain, &script, &[], "");
    assert!(!tmux.all().contains(QUESTION), "{}", tmux.all());
}

#[test]
fn answering_trust_remembers_it_as_spine_trust_does_and_the_hook_runs() {
    let s = Sandbox::new();
    let script = project_with_a_hook(&s);
    let mcp_marker = s.dir.path().join("mcp-started");
    let server = spine_testkit::write_mcp_server(s.dir.path(), "proj", &mcp_marker, 0).expect("server");
    s.write(".mcp.json", &json!({"mcpServers": {"proj": server}}).to_string());
    assert!(hooks_list(&s).contains(&withheld(&s, "1 hook and 1 MCP server")));
    let tmux = terminal(&s, &script);
    let screen = answer_then_prompt(&tmux, "t");
    assert!(screen.contains(&format!("trusted: {}", canonical_project(&s))), "{screen}");
    assert!(!screen.contains("spine: untrusted project"), "{screen}");
    assert!(hook_ran(&s), "the hook withheld at start runs in the same session once trusted");
    assert!(mcp_marker.exists(), "the project's MCP server started");

    let list = hooks_list(&s);
    assert!(list.starts_with("EVENT"), "the hook is active: {list}");
    assert!(!list.contains("withheld"), "{list}");
    let trusted = s.spine().args(["trust", "--list"]).output().expect("runs");
    assert_eq!(stdout(&trusted).trim(), canonical_project(&s), "recorded in the store `spine trust` keeps");
}

#[test]
fn this_session_only_runs_the_hook_but_a_later_hooks_list_shows_it_withheld() {
    let s = Sandbox::new();
    let script = project_with_a_hook(&s);
    let tmux = terminal(&s, &script);
    let screen = answer_then_prompt(&tmux, "s");
    assert!(screen.contains("trusted for this session only"), "{screen}");
    assert!(hook_ran(&s), "the hook runs in this session");
    tmux.send_line("/hooks");
    let screen = tmux.wait_for("UserPromptSubmit");
    assert!(!screen.contains("withheld:"), "active in this session: {screen}");

    let list = hooks_list(&s);
    assert!(list.contains(&withheld(&s, "1 hook")), "not recorded: {list}");
    let trusted = s.spine().args(["trust", "--list"]).output().expect("runs");
    assert_eq!(stdout(&trusted).trim(), "no trusted projects");
}

#[test]
fn answering_no_keeps_the_hook_withheld_and_slash_hooks_says_why() {
    let s = Sandbox::new();
    let script = project_with_a_hook(&s);
    let tmux = terminal(&s, &script);
    let screen = answer_then_prompt(&tmux, "n");
    assert!(screen.contains("spine: untrusted project"), "today's one-line notice: {screen}");
    assert!(!hook_ran(&s), "the hook stays withheld");
    tmux.send_line("/hooks");
    let screen = tmux.wait_for("withheld: project not trusted");
    assert!(screen.contains(&withheld(&s, "1 hook")), "{screen}");
    assert!(!screen.contains("no hooks configured"), "{screen}");
    assert!(hooks_list(&s).contains(&withheld(&s, "1 hook")));
}

#[test]
fn print_mode_never_asks_even_on_a_terminal() {
    let s = Sandbox::new();
    let script = project_with_a_hook(&s);
    let out = s.run(&script, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(!stderr(&out).contains(QUESTION), "{}", stderr(&out));
    assert!(stderr(&out).contains("spine: untrusted project"), "{}", stderr(&out));

    let args = format!("-p hi --model scripted:{}", shell_quote(&script.to_string_lossy()));
    let tmux = Tmux::start(&s.project(), &terminal_command(&s, " -u OPENAI_API_KEY -u ANTHROPIC_API_KEY", &args));
    let screen = tmux.wait_for("EXIT=0");
    assert!(!screen.contains(QUESTION), "{screen}");
    assert!(screen.contains("hello"), "{screen}");
    assert!(!hook_ran(&s));
}

#[test]
fn hooks_list_doctor_and_mcp_list_count_what_an_untrusted_project_withholds() {
    let s = Sandbox::new();
    let hook = json!({"type": "command", "command": "true"});
    s.write(
        ".spine/settings.json",
        &json!({
            "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [hook]}], "Stop": [{"hooks": [hook]}]},
            "permissions": {"allow": ["Bash(ls)"]}
        })
        .to_string(),
    );
    s.write(".mcp.json", &json!({"mcpServers": {"proj": {"command": "true"}}}).to_string());
    let sentence = withheld(&s, "2 hooks, 1 allow rule and 1 MCP server");

    let list = hooks_list(&s);
    assert!(list.contains(&sentence), "{list}");
    assert!(!list.contains("no hooks configured"), "{list}");
    let doctor = s.spine().args(["doctor", "--model", "scripted:/dev/null"]).output().expect("runs");
    assert!(stdout(&doctor).contains(&sentence), "{}", stdout(&doctor));
    assert!(stdout(&doctor).contains("none active; 2 hooks withheld"), "{}", stdout(&doctor));
    let mcp = s.spine().args(["mcp", "list"]).output().expect("runs");
    assert_eq!(mcp.status.code(), Some(0), "{}", stderr(&mcp));
    assert!(stdout(&mcp).contains(&sentence), "{}", stdout(&mcp));

    s.trust();
    for out in [
        s.spine().args(["hooks", "list"]).output().expect("runs"),
        s.spine().args(["mcp", "list"]).output().expect("runs"),
        s.spine().args(["doctor", "--model", "scripted:/dev/null"]).output().expect("runs"),
    ] {
        assert!(!stdout(&out).contains("withheld"), "trusted: {}", stdout(&out));
    }
}
