//! The person asked about an unlisted host in an interactive session (a real terminal).

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::*;

/// A tmux terminal running an interactive session (`--dangerously-skip-permissions`: Bash
/// runs without asking) with `settings` and the sandbox's environment, no provider key and no
/// proxy exceptions; returns once the banner shows.
fn chat(s: &Sandbox, script: &Path, settings: &Value) -> Tmux {
    let args = format!(
        "--model scripted:{} --dangerously-skip-permissions --settings {}",
        shell_quote(&script.to_string_lossy()),
        shell_quote(&settings.to_string())
    );
    let command = terminal_command(s, " -u OPENAI_API_KEY -u ANTHROPIC_API_KEY -u NO_PROXY -u no_proxy", &args);
    let tmux = Tmux::start(&s.project(), &command);
    tmux.wait_for("/help lists the commands");
    tmux
}

/// `curl` of `url`, its status after the body.
fn curl(url: &str) -> String {
    format!("curl -sS -w ' status=%{{http_code}}' {url}")
}

/// A script of one Bash call per prompt, each answered with `answer N` after the call.
fn call_per_prompt(s: &Sandbox, commands: &[String]) -> PathBuf {
    let turns: Vec<Value> = commands
        .iter()
        .enumerate()
        .flat_map(|(i, command)| {
            [
                json!({"tool_calls": [{"id": format!("c{i}"), "name": "Bash", "arguments": {"command": command}}]}),
                json!({"text": format!("answer {i}")}),
            ]
        })
        .collect();
    s.script(Value::Array(turns))
}

/// The session's transcript (its one `.jsonl`).
fn transcript(s: &Sandbox) -> String {
    let files: Vec<_> = s.session_files().into_iter().filter(|p| p.extension().is_some_and(|e| e == "jsonl")).collect();
    assert_eq!(files.len(), 1, "{files:?}");
    std::fs::read_to_string(&files[0]).expect("transcript")
}

/// The question the proxy puts to the person about `localhost:PORT`.
fn question(port: u16) -> String {
    format!("Allow WebFetch {{\"url\":\"https://localhost:{port}/\"}}?")
}

#[test]
fn an_unlisted_host_is_asked_once_per_session_and_yes_lets_the_request_through() {
    let s = Sandbox::new();
    let server = Served::start();
    let port = server.port();
    // Two connections at once: one question, whose answer both take.
    let both = format!("curl -sS http://localhost:{port}/first-a & curl -sS http://localhost:{port}/first-b; wait");
    let script = call_per_prompt(&s, &[both, curl(&format!("http://localhost:{port}/second"))]);
    let tmux = chat(&s, &script, &json!({"sandbox": {"enabled": true}, "web": {"allow_private_networks": true}}));
    tmux.send_line("fetch it");
    let screen = tmux.wait_for("[n]o (reason)");
    assert!(screen.contains(&question(port)), "{screen}");
    assert!(screen.contains("a sandboxed command connects to localhost:"), "{screen}");
    assert!(server.seen().is_empty(), "nothing passes while the question waits");
    tmux.send_line("y");
    tmux.wait_for("answer 0");
    let mut seen = server.seen();
    seen.sort();
    assert_eq!(seen, ["/first-a", "/first-b"]);
    tmux.send_line("fetch it again");
    tmux.wait_for("answer 1");
    let all = tmux.all();
    assert_eq!(all.matches("Allow WebFetch").count(), 1, "the session remembers the answer: {all}");
    assert_eq!(server.seen().last().map(String::as_str), Some("/second"));
    tmux.send_line("/exit");
    tmux.wait_for("EXIT=0");
    let transcript = transcript(&s);
    for body in ["served /first-a", "served /first-b", r"served /second\n status=200"] {
        assert!(transcript.contains(body), "{body}: {transcript}");
    }
    assert!(!transcript.contains("spine sandbox: proxy refused"), "{transcript}");
}

#[test]
fn an_unlisted_host_the_person_declines_is_refused_with_their_reason_and_not_asked_again() {
    let s = Sandbox::new();
    let server = Served::start();
    let port = server.port();
    let urls = [format!("http://localhost:{port}/first"), format!("http://localhost:{port}/second")];
    let script = call_per_prompt(&s, &urls.map(|url| curl(&url)));
    let tmux = chat(&s, &script, &json!({"sandbox": {"enabled": true}, "web": {"allow_private_networks": true}}));
    tmux.send_line("fetch it");
    let screen = tmux.wait_for("[n]o (reason)");
    assert!(screen.contains(&question(port)), "{screen}");
    tmux.send_line("n not this host");
    tmux.wait_for("answer 0");
    tmux.send_line("fetch it again");
    tmux.wait_for("answer 1");
    let all = tmux.all();
    assert_eq!(all.matches("Allow WebFetch").count(), 1, "the refusal holds for the session: {all}");
    tmux.send_line("/exit");
    tmux.wait_for("EXIT=0");
    assert!(server.seen().is_empty(), "{:?}", server.seen());
    let transcript = transcript(&s);
    let line = refused("localhost", port, "localhost was not approved: not this host");
    assert_eq!(transcript.matches(&line).count(), 2, "both results end with the refusal: {transcript}");
    let body = r"spine sandbox proxy: localhost was not approved: not this host\n status=403";
    assert!(transcript.contains(body), "{transcript}");
}

/// Answers "always for this project" to the proxy's question in a session of the trusted
/// project, then checks that the rule was saved and that a later run nobody answers reaches
/// the host.
fn always_for_this_project(s: &Sandbox) {
    s.trust();
    let server = Served::start();
    let port = server.port();
    let script = call_per_prompt(s, &[curl(&format!("http://localhost:{port}/asked"))]);
    let private = json!({"sandbox": {"enabled": true}, "web": {"allow_private_networks": true}});
    let tmux = chat(s, &script, &private);
    tmux.send_line("fetch it");
    let screen = tmux.wait_for("[n]o (reason)");
    assert!(screen.contains("\"always\" remembers WebFetch(domain:localhost)"), "{screen}");
    tmux.send_line("p");
    let screen = tmux.wait_for("answer 0");
    assert!(screen.contains("Added WebFetch(domain:localhost) to"), "{screen}");
    tmux.send_line("/exit");
    tmux.wait_for("EXIT=0");
    drop(tmux);
    let transcript = transcript(s);
    assert!(!transcript.contains("spine sandbox: removed"), "the saved rule is not the command's: {transcript}");
    let written = std::fs::read_to_string(s.project().join(".spine/settings.local.json")).expect("written");
    let written: Value = serde_json::from_str(&written).expect("json");
    assert_eq!(written["permissions"]["allow"], json!(["WebFetch(domain:localhost)"]));
    // A run nobody answers: the saved rule is an allowed domain of its proxy.
    let command = format!("curl -sS http://localhost:{port}/next");
    let calls = run(s, &private, &[&command], &[]);
    assert_reached(&calls[0].0, &calls[0].1, "served /next");
    assert_eq!(server.seen(), ["/asked", "/next"]);
}

#[test]
fn always_for_this_project_saves_the_webfetch_domain_rule_which_the_next_sessions_proxy_allows() {
    let s = Sandbox::new();
    std::fs::create_dir_all(s.project().join(".spine")).expect(".spine");
    always_for_this_project(&s);
}

/// The rule is written while the sandboxed command that asked still runs; `.spine` is a
/// protected path, and when it did not exist at the command's start the sandbox removes it
/// after the command as the command's creation, rule included (the model is told
/// `spine sandbox: removed …/.spine (a protected path the command created)`).
#[test]
fn always_for_this_project_saves_the_rule_in_a_project_without_a_spine_folder() {
    always_for_this_project(&Sandbox::new());
}
