//! The official Agent SDKs drive `spine` as they drive Claude Code: the host programs of
//! `tests/sdk` (`py_host.py` on the Python `claude-agent-sdk`, `ts_host.mjs` on the TypeScript
//! `@anthropic-ai/claude-agent-sdk`) are given the spine binary as their CLI path
//! (`cli_path` / `pathToClaudeCodeExecutable`) and `--model scripted:FILE`, run one scenario, and
//! print a summary line of what they saw: the messages, the callbacks the SDK invoked and their
//! inputs, the results, and the scenario's marker files. The expectations are Claude Code
//! 2.1.328's, recorded through the same SDKs in `tests/fixtures/claude-code-2.1.328/sdk`
//! (`host-summaries.json` holds the same host programs' summaries against Claude Code).
//!
//! The SDKs are installed by `scripts/sdk-peers.sh` into `SPINE_TEST_SDK_DIR` (default
//! `<workspace>/target/test-peers`); a missing install fails the test with that fix.
//!
//! To check these tests against Claude Code itself, give them its shim in spine's place:
//! `SPINE_SDK_HOSTS_CLI=<fixtures>/sdk/claude_shim.py CLAUDE_BIN=/path/to/claude` (the shim
//! answers from the same scripted-model files; see its docstring).

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::*;

#[derive(Clone, Copy, Debug)]
enum Sdk {
    Python,
    TypeScript,
}

/// The workspace root.
fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Where `scripts/sdk-peers.sh` installed the SDKs; panics with the fix when one is missing.
fn peers(sdk: Sdk) -> PathBuf {
    let dir = std::env::var_os("SPINE_TEST_SDK_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace().join("target/test-peers"));
    let needed = match sdk {
        Sdk::Python => dir.join("sdk-py/bin/python"),
        Sdk::TypeScript => dir.join("sdk-ts/node_modules/@anthropic-ai/claude-agent-sdk/sdk.mjs"),
    };
    assert!(
        needed.exists(),
        "the Agent SDKs are not installed in {} (missing {}): run scripts/sdk-peers.sh (it installs \
         them there; set SPINE_TEST_SDK_DIR to use another directory)",
        dir.display(),
        needed.display()
    );
    dir
}

/// The CLI the SDKs start: the spine binary, or `SPINE_SDK_HOSTS_CLI` (Claude Code's shim).
fn cli() -> PathBuf {
    std::env::var_os("SPINE_SDK_HOSTS_CLI").map(PathBuf::from).unwrap_or_else(|| assert_cmd::cargo::cargo_bin("spine"))
}

/// One host program run: the scenario's options and, once run, its summary.
struct Host<'a> {
    s: &'a Sandbox,
    sdk: Sdk,
    scenario: &'a str,
    args: Vec<String>,
}

impl<'a> Host<'a> {
    /// The host for `scenario`, its model the script `turns`.
    fn new(s: &'a Sandbox, sdk: Sdk, scenario: &'a str, turns: Value) -> Self {
        let script = s.script(turns);
        Host { s, sdk, scenario, args: vec!["--model".into(), format!("scripted:{}", script.display())] }
    }

    /// Another option of the host program (`--model2`, `--agent-model`), a script of `turns`.
    fn model_option(mut self, flag: &str, name: &str, turns: Value) -> Self {
        let path = self.s.dir.path().join(format!("{name}.json"));
        spine_testkit::script::write_script_file(&path, turns).expect("script");
        self.args.push(flag.into());
        self.args.push(format!("scripted:{}", path.display()));
        self
    }

    /// Runs the host program (two minutes at most) and returns its summary; panics, with its
    /// stderr, when it failed or printed no summary.
    fn run(self) -> Value {
        let dir = peers(self.sdk);
        let hosts = workspace().join("tests/sdk");
        let mut cmd = match self.sdk {
            Sdk::Python => {
                let mut c = Command::new(dir.join("sdk-py/bin/python"));
                c.arg(hosts.join("py_host.py"));
                c
            }
            Sdk::TypeScript => {
                let mut c = Command::new("node");
                c.arg(hosts.join("ts_host.mjs")).env("SPINE_SDK_TS_DIR", dir.join("sdk-ts"));
                c
            }
        };
        cmd.arg(self.scenario)
            .arg(cli())
            .args(&self.args)
            .arg("--cwd")
            .arg(self.s.project())
            .current_dir(self.s.project())
            .env("SPINE_HOME", self.s.home())
            .env("HOME", self.s.dir.path())
            .env_remove("OPENAI_API_KEY")
            .env_remove("ANTHROPIC_API_KEY")
            .env_remove("ANTHROPIC_AUTH_TOKEN")
            .env_remove("ANTHROPIC_MODEL")
            .env_remove("ANTHROPIC_BASE_URL")
            .env_remove("CLAUDECODE")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = cmd.spawn().unwrap_or_else(|e| panic!("{:?} host does not start: {e}", self.sdk));
        let mut out = child.stdout.take().expect("stdout");
        let mut err = child.stderr.take().expect("stderr");
        let out = std::thread::spawn(move || {
            let mut s = String::new();
            out.read_to_string(&mut s).ok();
            s
        });
        let err = std::thread::spawn(move || {
            let mut s = String::new();
            err.read_to_string(&mut s).ok();
            s
        });
        let started = Instant::now();
        let status = loop {
            if let Some(status) = child.try_wait().expect("wait") {
                break Some(status);
            }
            if started.elapsed() > Duration::from_secs(120) {
                child.kill().ok();
                child.wait().ok();
                break None;
            }
            std::thread::sleep(Duration::from_millis(50));
        };
        let (out, err) = (out.join().unwrap_or_default(), err.join().unwrap_or_default());
        let what = format!("{:?} host, scenario {}", self.sdk, self.scenario);
        let Some(status) = status else { panic!("{what}: still running after 120 s\nstdout: {out}\nstderr: {err}") };
        let summary: Value = out
            .lines()
            .rev()
            .find_map(|l| serde_json::from_str(l).ok())
            .unwrap_or_else(|| panic!("{what}: no summary line ({status})\nstdout: {out}\nstderr: {err}"));
        assert!(
            status.success() && summary["error"].is_null(),
            "{what}: the SDK failed ({status}): {}\nstderr: {err}\nsummary: {summary}",
            summary["error"]
        );
        summary
    }
}

fn call(id: &str, name: &str, arguments: Value) -> Value {
    json!({"id": id, "name": name, "arguments": arguments})
}

fn bash(id: &str, command: &str) -> Value {
    call(id, "Bash", json!({"command": command, "description": "Run a command"}))
}

fn messages<'v>(summary: &'v Value, kind: &str) -> Vec<&'v Value> {
    summary["messages"].as_array().into_iter().flatten().filter(|m| m["type"] == kind).collect()
}

fn results(summary: &Value) -> &Vec<Value> {
    summary["results"].as_array().expect("results")
}

/// The tool results the host saw, by tool_use_id.
fn tool_result<'v>(summary: &'v Value, id: &str) -> &'v Value {
    messages(summary, "user")
        .into_iter()
        .flat_map(|m| m["tool_results"].as_array().into_iter().flatten())
        .find(|r| r["tool_use_id"] == id)
        .unwrap_or_else(|| panic!("no tool result for {id}: {summary}"))
}

fn callbacks<'v>(summary: &'v Value, kind: &str) -> Vec<&'v Value> {
    summary["callbacks"].as_array().into_iter().flatten().filter(|c| c["kind"] == kind).collect()
}

/// Whether any file of spine's session folders (the transcripts) holds `text`: what the model
/// was sent.
fn transcripts_hold(s: &Sandbox, text: &str) -> bool {
    s.session_files().iter().any(|p| std::fs::read_to_string(p).is_ok_and(|t| t.contains(text)))
}

fn assert_success(result: &Value, text: &str) {
    assert_eq!(result["subtype"], "success", "{result}");
    assert_eq!(result["is_error"], false, "{result}");
    assert_eq!(result["result"], text, "{result}");
}

// --- the scenarios, each for either SDK -------------------------------------------------------

fn one_shot_query_gets_the_answer_as_its_result(sdk: Sdk) {
    let s = Sandbox::new();
    let summary = Host::new(&s, sdk, "oneshot", json!([{"text": "Hello from the scripted model."}])).run();
    let types: Vec<&Value> = summary["messages"].as_array().expect("messages").iter().map(|m| &m["type"]).collect();
    assert_eq!(types.first().copied(), Some(&json!("system")), "system/init comes first: {summary}");
    assert_eq!(summary["messages"][0]["subtype"], "init");
    assert_eq!(types.last().copied(), Some(&json!("result")), "{summary}");
    let assistant = messages(&summary, "assistant");
    assert_eq!(assistant.len(), 1, "{summary}");
    assert_eq!(assistant[0]["text"], "Hello from the scripted model.");
    assert_eq!(results(&summary).len(), 1);
    assert_success(&results(&summary)[0], "Hello from the scripted model.");
    assert_eq!(results(&summary)[0]["num_turns"], 1);
    let init_session = &summary["messages"][0]["session_id"];
    assert!(init_session.as_str().is_some_and(|id| !id.is_empty()), "{summary}");
    assert_eq!(&results(&summary)[0]["session_id"], init_session, "one session id throughout");
}

fn can_use_tool_runs_the_updated_input_and_never_the_denied_call(sdk: Sdk) {
    let s = Sandbox::new();
    let turns = json!([
        {"tool_calls": [bash("call_1", "echo original > approved.txt")]},
        {"tool_calls": [bash("call_2", "touch denied.txt")]},
        {"text": "Done."}
    ]);
    let summary = Host::new(&s, sdk, "can_use_tool", turns).run();
    let asked = callbacks(&summary, "can_use_tool");
    assert_eq!(asked.len(), 2, "each Bash call is asked once: {summary}");
    assert_eq!(asked[0]["tool"], "Bash");
    assert_eq!(asked[0]["input"]["command"], "echo original > approved.txt");
    assert_eq!(asked[0]["tool_use_id"], "call_1");
    assert_eq!(asked[1]["input"]["command"], "touch denied.txt");
    assert_eq!(summary["files"]["approved.txt"], "updated\n", "updatedInput replaced the command");
    assert_eq!(summary["files"]["denied.txt"], Value::Null, "the denied call did not run");
    let denied = tool_result(&summary, "call_2");
    assert_eq!(denied["is_error"], true, "{denied}");
    assert!(denied["content"].as_str().is_some_and(|c| c.contains("denied by the host: no touching")), "{denied}");
    assert_eq!(tool_result(&summary, "call_1")["is_error"], false);
    let result = &results(&summary)[0];
    assert_success(result, "Done.");
    let denials = result["permission_denials"].as_array().expect("permission_denials");
    assert_eq!(denials.len(), 1, "{result}");
    assert_eq!(denials[0]["tool_use_id"], "call_2");
    assert_eq!(denials[0]["tool_name"], "Bash");
}

fn hook_callback_denies_a_bash_call_and_post_tool_use_adds_context(sdk: Sdk) {
    let s = Sandbox::new();
    let turns = json!([
        {"tool_calls": [bash("call_1", "touch hooked.txt")]},
        {"tool_calls": [bash("call_2", "echo fine")]},
        {"text": "Done."}
    ]);
    let summary = Host::new(&s, sdk, "hooks", turns).run();
    assert_eq!(summary["files"]["hooked.txt"], Value::Null, "the denied call did not run");
    let pre = callbacks(&summary, "PreToolUse");
    assert_eq!(pre.len(), 2, "{summary}");
    assert_eq!(pre[0]["tool_use_id"], "call_1");
    let input = &pre[0]["input"];
    assert_eq!(input["hook_event_name"], "PreToolUse");
    assert_eq!(input["tool_name"], "Bash");
    assert_eq!(input["tool_input"]["command"], "touch hooked.txt");
    assert_eq!(input["tool_use_id"], "call_1");
    for field in ["session_id", "transcript_path", "cwd", "permission_mode"] {
        assert!(input.get(field).is_some(), "PreToolUse input has {field}: {input}");
    }
    let post = callbacks(&summary, "PostToolUse");
    assert_eq!(post.len(), 1, "only the call that ran: {summary}");
    assert_eq!(post[0]["tool_use_id"], "call_2");
    assert_eq!(post[0]["input"]["tool_response"]["stdout"], "fine", "{}", post[0]);
    let blocked = tool_result(&summary, "call_1");
    assert_eq!(blocked["is_error"], true);
    assert!(blocked["content"].as_str().is_some_and(|c| c.contains("hook says no touching")), "{blocked}");
    let ran = tool_result(&summary, "call_2");
    assert!(ran["content"].as_str().is_some_and(|c| c.contains("fine")), "{ran}");
    assert!(transcripts_hold(&s, "POST-CONTEXT-MARKER"), "the PostToolUse additionalContext reached the model");
    let result = &results(&summary)[0];
    assert_success(result, "Done.");
    assert_eq!(result["permission_denials"][0]["tool_use_id"], "call_1", "{result}");
}

fn sdk_mcp_tool_result_reaches_the_model(sdk: Sdk) {
    let s = Sandbox::new();
    let turns = json!([
        {"tool_calls": [call("call_1", "mcp__calc__add", json!({"a": 2, "b": 3}))]},
        {"text": "The sum is 5."}
    ]);
    let summary = Host::new(&s, sdk, "sdk_mcp", turns).run();
    let added = callbacks(&summary, "add");
    assert_eq!(added.len(), 1, "{summary}");
    assert_eq!(added[0]["args"]["a"].as_f64(), Some(2.0));
    assert_eq!(added[0]["args"]["b"].as_f64(), Some(3.0));
    let uses = messages(&summary, "assistant");
    assert_eq!(uses[0]["tool_uses"][0]["name"], "mcp__calc__add");
    let result = tool_result(&summary, "call_1");
    assert_eq!(result["content"], "SUM=5");
    assert_eq!(result["is_error"], false);
    assert!(transcripts_hold(&s, "SUM=5"), "the tool's result reached the model's next turn");
    assert_success(&results(&summary)[0], "The sum is 5.");
    assert_eq!(summary["extra"]["mcp_status"], json!([{"name": "calc", "status": "connected"}]));
}

/// The long command marks its start, then would sleep 37 s and touch slept.txt.
const LONG: &str = "touch started.txt; sleep 37; touch slept.txt";

/// Whether a process runs `sleep` in `dir` (a zombie awaiting its reaper does not count).
fn sleeping_in(dir: &Path) -> bool {
    let Ok(procs) = std::fs::read_dir("/proc") else { return false };
    procs.filter_map(Result::ok).any(|p| {
        let cmdline = std::fs::read(p.path().join("cmdline")).unwrap_or_default();
        let zombie = std::fs::read_to_string(p.path().join("stat")).is_ok_and(|st| st.contains(") Z "));
        cmdline.starts_with(b"sleep\0")
            && !zombie
            && std::fs::read_link(p.path().join("cwd")).is_ok_and(|cwd| cwd == dir)
    })
}

fn interrupt_stops_a_running_tool_and_the_session_goes_on(sdk: Sdk) {
    let s = Sandbox::new();
    let turns = json!([{"tool_calls": [bash("call_1", LONG)]}, {"text": "Second answer."}]);
    let started = Instant::now();
    let summary = Host::new(&s, sdk, "interrupt", turns).run();
    assert!(started.elapsed() < Duration::from_secs(25), "the interrupt did not wait for the command");
    assert_eq!(callbacks(&summary, "interrupt sent").len(), 1, "{summary}");
    let all = results(&summary);
    assert_eq!(all.len(), 2, "one result per prompt: {summary}");
    assert_eq!(all[0]["subtype"], "error_during_execution", "{}", all[0]);
    assert_eq!(all[0]["is_error"], true);
    assert_eq!(tool_result(&summary, "call_1")["is_error"], true, "the interrupted call is answered");
    assert_success(&all[1], "Second answer.");
    assert_eq!(summary["files"]["slept.txt"], Value::Null);
    assert!(s.project().join("started.txt").exists(), "the command started");
    let project = s.project().canonicalize().expect("project");
    assert!(!sleeping_in(&project), "the interrupted command was killed");
}

fn interrupt_withdraws_a_pending_permission_question(sdk: Sdk) {
    let s = Sandbox::new();
    let turns = json!([{"tool_calls": [bash("call_1", "touch never.txt")]}, {"text": "Second answer."}]);
    let summary = Host::new(&s, sdk, "interrupt_pending", turns).run();
    // Claude Code sends control_cancel_request before it answers the interrupt; the SDKs log the
    // two from different tasks, so only their presence is pinned here.
    assert_eq!(callbacks(&summary, "can_use_tool").len(), 1, "{summary}");
    assert_eq!(
        callbacks(&summary, "can_use_tool cancelled").len(),
        1,
        "the question was withdrawn (control_cancel_request): {summary}"
    );
    assert_eq!(callbacks(&summary, "interrupt sent").len(), 1, "{summary}");
    assert_eq!(summary["files"]["never.txt"], Value::Null);
    let all = results(&summary);
    assert_eq!(all.len(), 2, "{summary}");
    assert_eq!(all[0]["subtype"], "error_during_execution", "{}", all[0]);
    assert_eq!(all[0]["is_error"], true);
    assert_eq!(tool_result(&summary, "call_1")["is_error"], true, "the pending call is answered");
    assert_success(&all[1], "Second answer.");
}

fn set_permission_mode_and_set_model_apply_to_the_next_turn(sdk: Sdk) {
    let s = Sandbox::new();
    let project = s.project();
    let write = |id: &str, name: &str| {
        call(
            id,
            "Write",
            json!({"file_path": project.join(name).display().to_string(), "content": format!("{name}\n")}),
        )
    };
    let first = json!([{"tool_calls": [write("call_1", "first.txt")]}, {"text": "Written."}]);
    let second = json!([{"tool_calls": [write("call_2", "second.txt")]}, {"text": "Written by the second model."}]);
    let summary = Host::new(&s, sdk, "modes", first).model_option("--model2", "second-model", second).run();
    let asked = callbacks(&summary, "can_use_tool");
    assert_eq!(asked.len(), 1, "acceptEdits allowed the second Write without asking: {summary}");
    assert_eq!(asked[0]["tool"], "Write");
    assert!(asked[0]["input"]["file_path"].as_str().is_some_and(|p| p.ends_with("first.txt")));
    assert_eq!(summary["files"]["first.txt"], "first.txt\n");
    assert_eq!(summary["files"]["second.txt"], "second.txt\n");
    assert_eq!(callbacks(&summary, "set_permission_mode done").len(), 1);
    assert_eq!(callbacks(&summary, "set_model done").len(), 1);
    let all = results(&summary);
    assert_eq!(all.len(), 2, "{summary}");
    assert_success(&all[0], "Written.");
    assert_success(&all[1], "Written by the second model.");
    let inits = messages(&summary, "system").into_iter().filter(|m| m["subtype"] == "init").count();
    assert!(inits >= 1, "{summary}");
    assert_eq!(messages(&summary, "system")[0]["permissionMode"], "default");
}

fn partial_messages_stream_text_deltas_before_the_assistant_message(sdk: Sdk) {
    let s = Sandbox::new();
    let summary = Host::new(&s, sdk, "partial", json!([{"text": "Streamed answer."}])).run();
    let all = summary["messages"].as_array().expect("messages");
    let events: Vec<&Value> = all.iter().filter(|m| m["type"] == "stream_event").collect();
    let kinds: Vec<&str> = events.iter().filter_map(|e| e["event"].as_str()).collect();
    assert_eq!(kinds.first(), Some(&"message_start"), "{summary}");
    assert_eq!(kinds.last(), Some(&"message_stop"), "{summary}");
    for kind in ["content_block_start", "content_block_delta", "content_block_stop", "message_delta"] {
        assert!(kinds.contains(&kind), "a {kind} event: {summary}");
    }
    let text: String = events.iter().filter_map(|e| e["delta"].as_str()).collect();
    assert_eq!(text, "Streamed answer.", "the deltas make up the text");
    let first_delta = all.iter().position(|m| m["type"] == "stream_event" && m["delta"].is_string()).expect("delta");
    let assistant = all.iter().position(|m| m["type"] == "assistant").expect("the assistant message still comes");
    assert!(first_delta < assistant, "{summary}");
    assert!(events.iter().all(|e| e["parent_tool_use_id"].is_null()));
    assert_success(&results(&summary)[0], "Streamed answer.");
}

fn subagent_lines_carry_the_agent_call_as_parent_tool_use_id(sdk: Sdk) {
    let s = Sandbox::new();
    let main = json!([
        {"tool_calls": [call("call_agent", "Agent", json!({"description": "Echo something", "prompt": "Run echo from-sub",
                                                           "subagent_type": "echoer", "run_in_background": false}))]},
        {"text": "The subagent said from-sub."}
    ]);
    let sub = json!([{"tool_calls": [bash("call_sub", "echo from-sub")]}, {"text": "sub report: from-sub"}]);
    let summary = Host::new(&s, sdk, "subagent", main).model_option("--agent-model", "agent-model", sub).run();
    let child: Vec<&Value> = summary["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .filter(|m| m["parent_tool_use_id"] == "call_agent")
        .collect();
    let bash_use = child
        .iter()
        .find(|m| m["type"] == "assistant" && m["tool_uses"][0]["id"] == "call_sub")
        .unwrap_or_else(|| panic!("the subagent's Bash call, with parent_tool_use_id: {summary}"));
    assert_eq!(bash_use["tool_uses"][0]["input"]["command"], "echo from-sub");
    let sub_result = tool_result(&summary, "call_sub");
    assert!(sub_result["content"].as_str().is_some_and(|c| c.contains("from-sub")), "{sub_result}");
    assert!(
        child.iter().any(|m| m["type"] == "user" && m["tool_results"][0]["tool_use_id"] == "call_sub"),
        "the subagent's tool result carries parent_tool_use_id: {summary}"
    );
    let main_lines: Vec<&Value> =
        messages(&summary, "assistant").into_iter().filter(|m| m["parent_tool_use_id"].is_null()).collect();
    assert_eq!(main_lines[0]["tool_uses"][0]["id"], "call_agent");
    let agent_result = tool_result(&summary, "call_agent");
    assert!(agent_result["content"].as_str().is_some_and(|c| c.contains("sub report: from-sub")), "{agent_result}");
    let last = results(&summary).last().expect("a result");
    assert_success(last, "The subagent said from-sub.");
}

macro_rules! both_sdks {
    ($($rule:ident),* $(,)?) => {
        mod python_sdk {
            $(#[test] fn $rule() { super::$rule(super::Sdk::Python) })*
        }
        mod typescript_sdk {
            $(#[test] fn $rule() { super::$rule(super::Sdk::TypeScript) })*
        }
    };
}

both_sdks!(
    one_shot_query_gets_the_answer_as_its_result,
    can_use_tool_runs_the_updated_input_and_never_the_denied_call,
    hook_callback_denies_a_bash_call_and_post_tool_use_adds_context,
    sdk_mcp_tool_result_reaches_the_model,
    interrupt_stops_a_running_tool_and_the_session_goes_on,
    interrupt_withdraws_a_pending_permission_question,
    set_permission_mode_and_set_model_apply_to_the_next_turn,
    partial_messages_stream_text_deltas_before_the_assistant_message,
    subagent_lines_carry_the_agent_call_as_parent_tool_use_id,
);
