//! What an approval remembers, in a chat at a real terminal (`tmux`): the question shows the
//! rule each "always" keeps and where before the answer; `p` stores exactly that rule in the
//! project's local settings file; `/permissions` lists what this session and this project
//! remember, numbered; `/permissions forget N` (or `remove RULE`) forgets one — from the file
//! too, its other keys kept — and the next identical call asks again.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::support::*;

/// A scripted model that calls `/bin/echo <word>` (not a harmless bare `echo`) for each word, answering `answered <word>` after.
fn echo_script(s: &Sandbox, words: &[&str]) -> PathBuf {
    let turns: Vec<Value> = words
        .iter()
        .enumerate()
        .flat_map(|(i, w)| {
            [
                json!({"tool_calls": [{"id": format!("c{i}"), "name": "Bash", "arguments": {"command": format!("/bin/echo {w}")}}]}),
                json!({"text": format!("answered {w}")}),
            ]
        })
        .collect();
    s.script(Value::Array(turns))
}

fn local_settings(s: &Sandbox) -> PathBuf {
    s.project().join(".spine/settings.local.json")
}

fn read(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).expect("the settings file")).expect("json")
}

/// Runs one prompt and waits until its call's question is on screen (the `n`-th question).
fn ask(tmux: &Tmux, prompt: &str, n: usize) -> String {
    tmux.send_line(prompt);
    tmux.wait_for_count("always for this [p]roject", n)
}

#[test]
fn the_question_shows_the_rule_and_where_each_always_keeps_it_before_the_answer() {
    let s = Sandbox::new();
    s.trust();
    let tmux = chat_session(&s, &echo_script(&s, &["one"]), &[], "");
    let screen = ask(&tmux, "first", 1);
    let rule_at = screen.find("\"always\" remembers Bash(/bin/echo:*)").expect("the rule is shown");
    let session_at = screen.find("a → for this session").expect("where a keeps it");
    let project_at = screen
        .find("p → adds Bash(/bin/echo:*) to this project's .spine/settings.local.json")
        .expect("where p keeps it");
    let choices_at = screen.find("always for this [p]roject:").expect("the choices");
    assert!(rule_at < session_at && session_at < project_at && project_at < choices_at, "{screen}");
    tmux.send_line("n");
    tmux.wait_for("Reason for the model");
    tmux.send_key("Enter");
    tmux.wait_for("answered one");
    assert!(!local_settings(&s).exists(), "nothing stored before an always answer");
}

#[test]
fn always_for_this_project_stores_exactly_the_shown_rule_and_forget_removes_it_from_the_file() {
    let s = Sandbox::new();
    s.write(".spine/settings.local.json", r#"{"env": {"KEPT_KEY": "1"}, "permissions": {"deny": ["Bash(rm:*)"]}}"#);
    s.trust();
    let tmux = chat_session(&s, &echo_script(&s, &["one", "two", "three"]), &[], "");
    let screen = ask(&tmux, "first", 1);
    assert!(screen.contains("p → adds Bash(/bin/echo:*) to this project's .spine/settings.local.json"), "{screen}");
    tmux.send_line("p");
    tmux.wait_for("answered one");
    let written = read(&local_settings(&s));
    assert_eq!(written["permissions"]["allow"], json!(["Bash(/bin/echo:*)"]), "exactly the rule shown");

    tmux.send_line("/permissions");
    let screen = tmux.wait_for("this project (");
    let heading = screen.find("this project (").expect("heading");
    let listed = screen.find("1. Bash(/bin/echo:*)").expect("the stored rule is numbered");
    assert!(heading < listed, "listed under the project's remembered rules: {screen}");
    assert!(screen.contains("this session: nothing"), "{screen}");

    tmux.send_line("/permissions forget 1");
    tmux.wait_for("Removed Bash(/bin/echo:*) from");
    let written = read(&local_settings(&s));
    assert_eq!(written["permissions"]["allow"], json!([]), "gone from the file");
    assert_eq!(written["permissions"]["deny"], json!(["Bash(rm:*)"]), "the other rules stay");
    assert_eq!(written["env"]["KEPT_KEY"], "1", "the other keys stay");

    ask(&tmux, "second", 2);
    tmux.send_line("y");
    tmux.wait_for("answered two");
    tmux.send_line("/exit");
    tmux.wait_for("EXIT=0");
}

#[test]
fn a_rule_an_earlier_session_stored_is_forgotten_from_the_policy_in_force_at_once() {
    let s = Sandbox::new();
    s.write(".spine/settings.local.json", r#"{"permissions": {"allow": ["Bash(/bin/echo:*)"]}}"#);
    s.trust();
    let tmux = chat_session(&s, &echo_script(&s, &["one", "two"]), &[], "");
    tmux.send_line("first");
    let screen = tmux.wait_for("answered one");
    assert!(!screen.contains("Allow Bash"), "the stored rule allows: {screen}");
    tmux.send_line("/permissions");
    let screen = tmux.wait_for("this project (");
    assert!(screen.contains("allow Bash(/bin/echo:*)"), "in force, with its source: {screen}");
    assert!(screen.contains("1. Bash(/bin/echo:*)"), "{screen}");

    tmux.send_line("/permissions remove Bash(/bin/echo:*)");
    tmux.wait_for("The next call it covered asks again.");
    assert_eq!(read(&local_settings(&s))["permissions"]["allow"], json!([]));
    ask(&tmux, "second", 1);
    tmux.send_line("y");
    tmux.wait_for("answered two");
}

#[test]
fn a_session_only_approval_is_listed_as_session_remembered_and_forgotten_likewise() {
    let s = Sandbox::new();
    s.trust();
    let tmux = chat_session(&s, &echo_script(&s, &["one", "two", "three"]), &[], "");
    ask(&tmux, "first", 1);
    tmux.send_line("a");
    tmux.wait_for("answered one");
    tmux.send_line("second");
    tmux.wait_for("answered two");
    assert_eq!(tmux.all().matches("Allow Bash").count(), 1, "remembered for the session");
    assert!(!local_settings(&s).exists(), "nothing stored");

    tmux.send_line("/permissions");
    let screen = tmux.wait_for("this project (");
    let session = screen.find("this session:").expect("heading");
    let listed = screen.find("1. Bash(/bin/echo:*)").expect("numbered");
    let project = screen.find("this project (").expect("heading");
    assert!(session < listed && listed < project, "under the session's remembered rules: {screen}");

    tmux.send_line("/permissions forget 1");
    tmux.wait_for("Forgot Bash(/bin/echo:*) for this session.");
    ask(&tmux, "third", 2);
    tmux.send_line("y");
    tmux.wait_for("answered three");
    assert!(!local_settings(&s).exists(), "still nothing stored");
}
