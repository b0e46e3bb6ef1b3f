//! Where a resumed chat was, at a real terminal (`tmux`): `--resume ID` and `--continue` draw
//! the last turns again as the live chat showed them (the prompt, each tool call folded to its
//! line, the answer), at most ten with a line for those left out; `/resume`'s list never
//! offers the session the chat is in.

use serde_json::json;

use crate::support::*;

/// A `spine -p PROMPT` session answering `answer`, after `first` (`--resume`d) if given; its id.
fn turn(s: &Sandbox, prompt: &str, answer: &str, first: Option<&str>) -> String {
    let script = s.script(json!([{"text": answer}]));
    let mut cmd = s.spine();
    cmd.args(["-p", prompt, "--model", &format!("scripted:{}", script.display()), "--output-format", "json"]);
    if let Some(id) = first {
        cmd.args(["--resume", id]);
    }
    let out = cmd.output().expect("runs");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    json(&out)["session_id"].as_str().expect("id").to_owned()
}

#[test]
fn resume_shows_the_earlier_prompt_the_folded_tool_call_and_the_answer() {
    let s = Sandbox::new();
    let script = s.script(json!([
        {"tool_calls": [{"id": "c1", "name": "Bash", "arguments": {"command": "echo redrawn-output"}}]},
        {"text": "the earlier answer"}
    ]));
    let out = s
        .spine()
        .args(["-p", "run the earlier tool", "--model", &format!("scripted:{}", script.display())])
        .args(["--allowedTools", "Bash(echo:*)", "--output-format", "json"])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let id = json(&out)["session_id"].as_str().expect("id").to_owned();

    let next = s.script(json!([{"text": "later"}]));
    let tmux = chat_session(&s, &next, &[], &format!("--resume {id}"));
    let screen = tmux.wait_for("the earlier answer");
    let prompt = screen.find("> run the earlier tool").expect("the prompt as typed");
    let call = screen.find("⏺ Bash(echo redrawn-output) ✓").expect("the call on one line");
    let output = screen.find("⎿ redrawn-output").expect("its output, folded");
    let answer = screen.find("the earlier answer").expect("the answer");
    assert!(prompt < call && call < output && output < answer, "in order: {screen}");
    assert!(!screen.contains("earlier turn"), "nothing left out: {screen}");
    tmux.send_line("/exit");
    tmux.wait_for("EXIT=0");
}

#[test]
fn resume_draws_at_most_the_last_ten_turns_and_says_how_many_were_left_out() {
    let s = Sandbox::new();
    let id = turn(&s, "question 1", "answer 1", None);
    for n in 2..=12 {
        turn(&s, &format!("question {n}"), &format!("answer {n}"), Some(&id));
    }
    let next = s.script(json!([{"text": "later"}]));
    let tmux = chat_session(&s, &next, &[], "--continue");
    let all = tmux.wait_for("answer 12");
    let all = format!("{all}\n{}", tmux.all());
    assert!(all.contains("… 2 earlier turns not shown"), "{all}");
    assert!(all.contains("> question 3\n") && all.contains("> question 12\n"), "{all}");
    assert!(!all.contains("> question 2\n") && !all.contains("> question 1\n"), "{all}");
}

#[test]
fn the_resume_picker_in_a_chat_does_not_offer_the_session_in_use() {
    let s = Sandbox::new();
    let older = turn(&s, "first question", "first answer", None);
    let newer = turn(&s, "second question", "second answer", None);
    let next = s.script(json!([{"text": "later"}]));
    let tmux = chat_session(&s, &next, &[], &format!("--resume {older}"));
    tmux.wait_for("first answer");
    tmux.send_line("/resume");
    let screen = tmux.wait_for("Resume which session? [1-1]");
    let offered: Vec<&str> = screen.lines().filter(|l| l.trim_start().starts_with("1) ")).collect();
    assert_eq!(offered.len(), 1, "{screen}");
    assert!(offered[0].contains("second question"), "the other session: {screen}");
    assert!(!screen.lines().any(|l| l.contains(") ") && l.contains("first question")), "not this one: {screen}");
    tmux.send_line("1");
    tmux.wait_for(&format!("Resumed session {newer}"));
    let screen = tmux.wait_for("second answer");
    assert!(screen.contains("> second question"), "the resumed session's turns: {screen}");
}
