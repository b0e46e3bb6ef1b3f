//! What a hook receives: the stdin JSON per event, its environment, its working directory, and
//! a transcript that already holds the call.

use std::sync::Arc;

use serde_json::{Value, json};
use spine_core::hooks::SessionInfo;
use spine_core::registry::ToolRegistryBuilder;
use spine_core::tool::ChildEnv;
use spine_hooks::fire::{FireRequest, TranscriptFile, fire};
use spine_protocol::hook::HookEventName;
use spine_protocol::permission::PermissionMode;

use crate::support::*;

fn logger(log: &str) -> Value {
    command(&format!("cat >> {log} && echo >> {log}"))
}

#[tokio::test]
async fn stdin_json_has_exactly_the_common_and_event_fields_of_each_event() {
    let p = Project::new();
    let log = p.path("events.jsonl");
    let allow = command(
        r#"echo '{"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": {"behavior": "allow"}}}'"#,
    );
    let mut events = serde_json::Map::new();
    for e in
        ["SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "PostToolUseFailure", "Stop", "SessionEnd"]
    {
        events.insert(e.into(), json!([{"hooks": [logger(&log)]}]));
    }
    events.insert("PermissionRequest".into(), json!([{"hooks": [logger(&log), allow]}]));
    p.write("notes.txt", "hello\n");
    let setup = Setup {
        layers: vec![json!({"hooks": events})],
        mode: PermissionMode::Default,
        ask: vec!["Read"],
        ..Setup::default()
    };
    let replies = vec![
        calls(&[("c1", "Bash", json!({"command": "/bin/echo hi"})), ("c2", "Bash", json!({"command": "exit 3"}))]),
        calls(&[("c3", "Read", json!({"file_path": "notes.txt"}))]),
        text("done"),
    ];
    let ran = run(&p, setup, replies).await;
    assert_eq!(ran.outcome.result, "done");
    let lines = json_lines(std::path::Path::new(&log));
    let common = ["cwd", "hook_event_name", "permission_mode", "session_id", "transcript_path"];
    let expect = |extra: &[&str], prompt: bool| {
        let mut k: Vec<String> = common.iter().chain(extra).map(|s| (*s).to_owned()).collect();
        if prompt {
            k.push("prompt_id".into());
        }
        k.sort();
        k
    };
    let by_event = |name: &str| -> Vec<&Value> { lines.iter().filter(|l| l["hook_event_name"] == name).collect() };
    let tool = ["tool_input", "tool_name", "tool_use_id"];
    assert_eq!(keys(by_event("SessionStart")[0]), expect(&["model", "source"], false));
    assert_eq!(keys(by_event("UserPromptSubmit")[0]), expect(&["prompt"], true));
    assert_eq!(by_event("PreToolUse").len(), 3);
    assert_eq!(keys(by_event("PreToolUse")[0]), expect(&tool, true));
    let asked = by_event("PermissionRequest");
    assert_eq!(keys(asked[0]), expect(&[&tool[..], &["permission_suggestions", "reason"]].concat(), true));
    assert_eq!(
        asked[0]["permission_suggestions"][0]["rules"],
        json!([{"toolName": "Bash", "ruleContent": "/bin/echo:*"}])
    );
    let post = by_event("PostToolUse");
    assert_eq!(post.len(), 2, "Bash echo and Read succeeded");
    assert_eq!(keys(post[0]), expect(&[&tool[..], &["duration_ms", "tool_response"]].concat(), true));
    assert_eq!(
        keys(&post[0]["tool_response"]),
        ["exit_code", "interrupted", "isImage", "noOutputExpected", "stderr", "stdout"]
    );
    assert_eq!(post[0]["tool_response"]["stdout"], "hi", "no trailing newline, as in Claude Code");
    let failure = by_event("PostToolUseFailure");
    assert_eq!(keys(failure[0]), expect(&[&tool[..], &["duration_ms", "error", "is_interrupt"]].concat(), true));
    assert!(failure[0]["error"].as_str().is_some_and(|e| e.starts_with("Exit code 3")));
    assert_eq!(keys(by_event("Stop")[0]), expect(&["last_assistant_message", "stop_hook_active"], true));
    assert_eq!(by_event("Stop")[0]["last_assistant_message"], "done");
    assert_eq!(keys(by_event("SessionEnd")[0]), expect(&["reason"], true));
    let first = &lines[0];
    assert_eq!(first["session_id"], "s1");
    assert_eq!(first["cwd"], json!(p.root));
    assert_eq!(first["permission_mode"], "default");
    assert_eq!(first["transcript_path"], json!(p.transcript()));
    assert_eq!(by_event("PreToolUse")[2]["tool_input"]["file_path"], json!(p.path("notes.txt")), "made absolute");
}

#[tokio::test]
async fn compaction_and_notification_inputs_have_their_own_fields() {
    let p = Project::new();
    let log = p.path("events.jsonl");
    let mut tools = ToolRegistryBuilder::new();
    spine_tools::register_builtins(&mut tools);
    let tools = Arc::new(tools.build().expect("tools"));
    for (event, extra) in [
        (HookEventName::PreCompact, vec!["trigger"]),
        (HookEventName::PostCompact, vec!["trigger"]),
        (HookEventName::Notification, vec!["message", "notification_type"]),
    ] {
        let config = p.hook_config(&[hooks(event.as_str(), "", vec![logger(&log)])]);
        let session = SessionInfo {
            session_id: "s1".into(),
            transcript_path: p.transcript(),
            cwd: p.root.clone(),
            hook_dir: p.root.clone(),
            project_dir: p.root.clone(),
            permission_mode: PermissionMode::Default,
            effort: None,
            env_file: None,
        };
        let request = FireRequest {
            event,
            tool: None,
            input: None,
            session,
            tools: Arc::clone(&tools),
            transcript: TranscriptFile::Existing,
            models: None,
            agents: None,
            child_env: ChildEnv::default(),
        };
        fire(&config, request).await.expect("fired");
        let lines = json_lines(std::path::Path::new(&log));
        let last = lines.last().expect("a line");
        let mut want: Vec<String> =
            ["cwd", "hook_event_name", "permission_mode", "prompt_id", "session_id", "transcript_path"]
                .iter()
                .chain(&extra)
                .map(|s| (*s).to_owned())
                .collect();
        want.sort();
        assert_eq!(keys(last), want, "{event}");
    }
}

#[tokio::test]
async fn hooks_get_project_dir_variables_and_session_start_gets_the_env_file_whose_exports_reach_bash() {
    let p = Project::new();
    let dump = |name: &str| {
        command(&format!(
            "cat > /dev/null; pwd > {out}; env | grep -E '^(SPINE_PROJECT_DIR|CLAUDE_PROJECT_DIR|CLAUDE_ENV_FILE|SPINE_ENV_FILE)=' | sort >> {out}",
            out = p.path(name)
        ))
    };
    let exporter = command("echo 'export FOO=bar' >> \"$CLAUDE_ENV_FILE\"");
    let layers = vec![json!({"hooks": {
        "SessionStart": [{"hooks": [dump("start.env"), exporter]}],
        "PreToolUse": [{"hooks": [dump("pre.env")]}],
    }})];
    let ran = run(&p, Setup { layers, ..Setup::default() }, vec![bash("c1", "echo \"FOO=$FOO\""), text("ok")]).await;
    assert_eq!(ran.results()[0].content.lines().nth(1), Some("FOO=bar"), "{}", ran.results()[0].content);
    let root = p.root.display();
    let env = p.env_file();
    assert_eq!(
        p.read("start.env"),
        format!(
            "{root}\nCLAUDE_ENV_FILE={e}\nCLAUDE_PROJECT_DIR={root}\nSPINE_ENV_FILE={e}\nSPINE_PROJECT_DIR={root}\n",
            e = env.display()
        )
    );
    assert_eq!(p.read("pre.env"), format!("{root}\nCLAUDE_PROJECT_DIR={root}\nSPINE_PROJECT_DIR={root}\n"));
}

#[tokio::test]
async fn transcript_already_holds_the_call_when_pre_tool_use_fires() {
    let p = Project::new();
    let hook = p.script(
        "transcript.py",
        &format!(
            "import json, sys\nev = json.load(sys.stdin)\ntext = open(ev['transcript_path']).read()\n\
             open('{out}', 'w').write('found' if ev['tool_use_id'] in text and 'echo marker' in text else 'missing')\n",
            out = p.path("seen.txt")
        ),
    );
    let layers = vec![hooks("PreToolUse", "Bash", vec![command(&format!("/usr/bin/python3 {hook}"))])];
    run(&p, Setup { layers, ..Setup::default() }, vec![bash("call_77", "echo marker"), text("ok")]).await;
    assert_eq!(p.read("seen.txt"), "found");
}
