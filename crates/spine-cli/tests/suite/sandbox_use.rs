//! Working inside the command sandbox through the `spine` binary: what a sandboxed command may
//! do (build in the workspace, commit, use `$TMPDIR`), the settings that take a command out of
//! it or let it skip the question, the read-only mode, MCP servers that opt in, the worker's
//! default, and `spine doctor`.

use serde_json::json;

use crate::sandbox::{bash, bash_calls, execute_entry};
use crate::support::*;

const SANDBOXED: &[&str] = &["--sandbox", "workspace-write"];

#[test]
fn building_committing_and_temporary_files_work_inside_the_sandbox() {
    let s = Sandbox::new();
    s.write("pkg/mod.py", "VALUE = 4\n");
    s.write("Makefile", "out.txt: pkg/mod.py\n\tpython3 -c 'import pkg.mod as m; print(m.VALUE)' > out.txt\n");
    let commit = "git init -q . && git add pkg Makefile && git -c user.email=a@b -c user.name=t commit -qm first \
                  && git log --oneline | wc -l";
    let commands = [
        "python3 -m compileall -q pkg && ls pkg/__pycache__ | wc -l",
        "make -s && cat out.txt",
        commit,
        "f=$(mktemp) && echo kept > \"$f\" && cat \"$f\" && case \"$f\" in /tmp/spine-sandbox-*) echo private;; esac",
    ];
    let (_, results) = bash(&s, &commands, SANDBOXED);
    for result in &results {
        assert!(result.starts_with("Command exited with status 0."), "{result}");
    }
    assert!(results[0].contains("\n1"), "compiled: {}", results[0]);
    assert!(results[1].contains('4'), "built: {}", results[1]);
    assert!(results[2].contains("\n1"), "committed: {}", results[2]);
    assert!(results[3].contains("kept") && results[3].contains("private"), "$TMPDIR: {}", results[3]);
    assert!(s.project().join("out.txt").exists() && s.project().join(".git/HEAD").exists());
}

#[test]
fn the_shell_stays_in_the_directory_a_sandboxed_command_left_it_in() {
    let s = Sandbox::new();
    s.write("sub/marker.txt", "here\n");
    let (_, results) = bash(&s, &["cd sub", "cat marker.txt && pwd"], SANDBOXED);
    assert!(results[1].starts_with("Command exited with status 0.") && results[1].contains("here"), "{}", results[1]);
    assert!(results[1].trim_end().ends_with("/sub"), "the next call starts in sub: {}", results[1]);
}

#[test]
fn read_only_mode_lets_commands_write_only_their_temporary_directory() {
    let s = Sandbox::new();
    let (_, results) = bash(&s, &["touch made.txt", "touch \"$TMPDIR/x\" && echo tmp"], &["--sandbox", "read-only"]);
    assert!(results[0].contains("(sandbox: the sandbox is read-only; only $TMPDIR is writable)"), "{}", results[0]);
    assert!(!s.project().join("made.txt").exists());
    assert!(results[1].contains("tmp"), "{}", results[1]);
}

#[test]
fn dangerously_disable_sandbox_always_asks_and_a_run_nobody_answers_refuses_it() {
    let s = Sandbox::new();
    let outside = s.dir.path().join("outside.txt");
    let call = json!({"command": format!("touch {}", outside.display()), "dangerouslyDisableSandbox": true});
    // Even bypassPermissions and an allow rule for Bash do not take a command out of the
    // sandbox: only the approver does, and nobody answers a `-p` run.
    let (_, results) = bash_calls(&s, vec![call.clone()], &["--sandbox", "workspace-write", "--allowedTools", "Bash"]);
    assert!(results[0].starts_with("Error [permission_denied]"), "{}", results[0]);
    assert!(results[0].contains("dangerouslyDisableSandbox"), "{}", results[0]);
    assert!(!outside.exists());
    // With allowUnsandboxedCommands off the parameter is ignored: the command runs confined.
    let strict = r#"{"sandbox": {"allowUnsandboxedCommands": false}}"#;
    let (_, results) = bash_calls(&s, vec![call], &["--sandbox", "workspace-write", "--settings", strict]);
    assert!(results[0].contains("(sandbox: write outside the workspace"), "{}", results[0]);
    assert!(!outside.exists());
}

#[test]
fn auto_allow_bash_if_sandboxed_runs_sandboxed_commands_without_asking_but_not_past_a_deny_rule() {
    let s = Sandbox::new();
    let settings = r#"{"sandbox": {"enabled": true, "autoAllowBashIfSandboxed": true},
                       "permissions": {"deny": ["Bash(rm *)"]}}"#;
    let calls = vec![json!({"command": "/bin/echo allowed"}), json!({"command": "rm -f nothing"})];
    let (_, results) = bash_calls(&s, calls.clone(), &["--permission-mode", "default", "--settings", settings]);
    assert!(results[0].contains("allowed") && !results[0].starts_with("Error"), "{}", results[0]);
    assert!(results[1].contains("denied by rule Bash(rm *)"), "{}", results[1]);
    // Without the setting the same command needs an approval nobody gives.
    let (_, asked) = bash_calls(&s, calls, &["--permission-mode", "default", "--sandbox", "workspace-write"]);
    assert!(asked[0].starts_with("Error [permission_denied]"), "{}", asked[0]);
}

#[test]
fn an_excluded_command_runs_outside_the_sandbox_and_the_trace_says_so() {
    let s = Sandbox::new();
    let outside = s.dir.path().join("outside.txt");
    let settings = r#"{"sandbox": {"enabled": true, "excludedCommands": ["touch *"]}}"#;
    let trace = s.dir.path().join("trace.jsonl");
    let command = format!("touch {}", outside.display());
    let (_, results) = bash(&s, &[&command], &["--settings", settings, "--trace", trace.to_str().expect("utf-8")]);
    assert!(results[0].starts_with("Command exited with status 0."), "{}", results[0]);
    assert!(outside.exists(), "the excluded command ran unconfined");
    assert_eq!(execute_entry(&trace)["sandbox"], "off (excludedCommands: Bash(touch *))");
}

#[test]
fn an_mcp_server_opts_in_with_sandbox_true_and_does_not_start_without_a_sandbox() {
    let s = Sandbox::new();
    let everything = spine_testkit::mcp::peer_entry("server-everything");
    let servers =
        json!({"mcpServers": {"everything": {"command": "node", "args": [everything, "stdio"], "sandbox": true}}});
    let script = s.script(json!([
        {"tool_calls": [{"id": "c1", "name": "mcp__everything__echo", "arguments": {"message": "confined"}}]},
        {"text": "done"}
    ]));
    let settings = json!({"permissions": {"allow": ["mcp__everything__*"]}, "mcpServers": servers["mcpServers"]});
    let args = ["--settings", &settings.to_string(), "--output-format", "json", "--include-messages"];
    let mut with_sandbox = args.to_vec();
    with_sandbox.extend(SANDBOXED);
    let out = s.run(&script, &with_sandbox);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(first_tool_result(&json(&out)).contains("Echo: confined"), "{}", stdout(&out));
    let out = s.run(&script, &args);
    assert!(stderr(&out).contains("this session has no sandbox to run it in"), "{}", stderr(&out));
}

#[test]
fn the_worker_sandboxes_its_commands_by_default_and_says_so_at_start() {
    let s = Sandbox::new();
    let url = format!("sqlite:{}", s.dir.path().join("mailbox.db").display());
    let out = s.spine().args(["worker", "--mailbox", &url, "--once", "-v"]).output().expect("spine worker");
    assert!(out.status.success(), "{}", stderr(&out));
    let err = stderr(&out);
    let start = err.lines().find(|l| l.starts_with("spine worker ")).unwrap_or_default();
    assert!(start.contains("sandbox workspace-write,net=off,"), "{err}");
    let out = s.spine().args(["worker", "--mailbox", &url, "--once", "-v", "--no-sandbox"]).output().expect("worker");
    assert!(stderr(&out).contains("sandbox off: commands run unconfined"), "{}", stderr(&out));
}

#[test]
fn doctor_reports_what_the_kernel_offers_and_the_profile_of_this_projects_settings() {
    let s = Sandbox::new();
    let out = s.spine().args(["doctor", "--model", "sonnet"]).output().expect("doctor");
    let text = stdout(&out);
    let line = text.lines().find(|l| l.contains(" sandbox ")).unwrap_or_default();
    assert!(line.contains("kernel ") && line.contains("landlock"), "{text}");
    assert!(line.contains("off for this project"), "{text}");
    let on = r#"{"sandbox": {"enabled": true}}"#;
    let out = s.spine().args(["doctor", "--model", "sonnet", "--settings", on]).output().expect("doctor");
    let text = stdout(&out);
    assert!(text.contains("this project's commands would run under workspace-write,net=off,"), "{text}");
}

#[test]
fn the_otlp_execute_span_of_a_sandboxed_command_carries_its_profile() {
    use crate::otel::{Receiver, attr, named};
    let s = Sandbox::new();
    let receiver = Receiver::start();
    let script = s.script(json!([{"tool_calls": [{"id": "c1", "name": "Bash", "arguments": {"command": "true"}}]},
                                 {"text": "done"}]));
    let mut cmd = s.spine();
    cmd.args(["run", "-p", "go", "--model", &format!("scripted:{}", script.display())])
        .args(["--permission-mode", "bypassPermissions", "--sandbox", "workspace-write"])
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.endpoint())
        .env_remove("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT");
    let out = cmd.output().expect("spine runs");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let spans = receiver.spans();
    let execute = named(&spans, "execute");
    let execute = execute.iter().find(|span| span.name == "execute").expect("the execute span");
    let profile = attr(execute, "spine.stage.sandbox");
    assert!(profile.as_str().is_some_and(|p| p.starts_with("workspace-write,net=off,")), "{profile}");
}
