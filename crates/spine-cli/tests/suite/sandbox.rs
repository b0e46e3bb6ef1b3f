//! The command sandbox through the `spine` binary: each attempt is made under `--sandbox
//! workspace-write` (it fails, and the model reads which sandbox rule refused it) and again
//! with `--sandbox off` (it succeeds), so the sandbox — not the machine or the permission
//! policy — is what refused. Commands the static rules cannot see into (a script, `python3
//! -c`) are the ones the sandbox is for.

use std::io::Read;
use std::net::TcpListener;
use std::path::Path;
use std::process::Output;

use serde_json::{Value, json};

use crate::support::*;

/// One Bash call per command, then a final text: the run's output and each tool result.
pub(crate) fn bash(s: &Sandbox, commands: &[&str], args: &[&str]) -> (Output, Vec<String>) {
    bash_calls(s, commands.iter().map(|c| json!({"command": c})).collect(), args)
}

/// One Bash call per argument object, then a final text, in bypassPermissions mode unless
/// `args` say otherwise.
pub(crate) fn bash_calls(s: &Sandbox, calls: Vec<Value>, args: &[&str]) -> (Output, Vec<String>) {
    let calls: Vec<Value> = calls
        .into_iter()
        .enumerate()
        .map(|(i, arguments)| json!({"id": format!("c{i}"), "name": "Bash", "arguments": arguments}))
        .collect();
    let script = s.script(json!([{"tool_calls": calls}, {"text": "done"}]));
    let mut all = vec!["--output-format", "json", "--include-messages"];
    if !args.iter().any(|a| a.starts_with("--permission-mode")) {
        all.extend(["--permission-mode", "bypassPermissions"]);
    }
    all.extend(args);
    let out = s.run(&script, &all);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let results = tool_results(&json(&out));
    (out, results)
}

const SANDBOXED: &[&str] = &["--sandbox", "workspace-write"];
const UNSANDBOXED: &[&str] = &["--sandbox", "off"];

pub(crate) fn assert_refused(result: &str, reason: &str) {
    assert!(result.starts_with("Error [command_failed]"), "the command failed: {result}");
    assert!(result.contains(&format!("(sandbox: {reason}")), "the model reads why ({reason}): {result}");
}

pub(crate) fn assert_ran(result: &str) {
    assert!(result.starts_with("Command exited with status 0."), "it ran: {result}");
}

#[test]
fn writes_outside_the_workspace_are_refused_from_bash_and_from_python() {
    let s = Sandbox::new();
    let (a, b) = (s.dir.path().join("outside-a.txt"), s.dir.path().join("outside-b.txt"));
    let commands =
        [format!("touch {}", a.display()), format!("python3 -c \"open('{}', 'w').write('x')\"", b.display())];
    let commands: Vec<&str> = commands.iter().map(String::as_str).collect();
    let (_, refused) = bash(&s, &commands, SANDBOXED);
    assert_refused(&refused[0], "write outside the workspace");
    assert_refused(&refused[1], "write outside the workspace");
    assert!(!a.exists() && !b.exists(), "nothing was written outside");
    let (_, ran) = bash(&s, &commands, UNSANDBOXED);
    assert_ran(&ran[0]);
    assert_ran(&ran[1]);
    assert!(a.exists() && b.exists());
}

#[test]
fn a_key_in_the_homes_ssh_directory_is_hidden_from_commands() {
    let s = Sandbox::new();
    // The test's spine runs with HOME set to the sandbox directory.
    let ssh = s.dir.path().join(".ssh");
    std::fs::create_dir_all(&ssh).expect("ssh");
    std::fs::write(ssh.join("id_ed25519"), "PRIVATE KEY\n").expect("key");
    let (_, refused) = bash(&s, &["cat ~/.ssh/id_ed25519"], SANDBOXED);
    assert_refused(&refused[0], &format!("{} is hidden from commands", ssh.display()));
    assert!(!refused[0].contains("PRIVATE KEY"), "{}", refused[0]);
    let (_, ran) = bash(&s, &["cat ~/.ssh/id_ed25519"], UNSANDBOXED);
    assert!(ran[0].contains("PRIVATE KEY"), "{}", ran[0]);
}

#[test]
fn a_dot_env_denied_by_a_read_rule_is_hidden_from_cat_in_a_script_and_from_python() {
    let s = Sandbox::new();
    s.write(".env", "API_TOKEN=hunter2\n");
    // The rule refuses `cat .env` written in the command itself; a script or `python3 -c`
    // hides the read from the rules, and the sandbox is what stops it.
    s.write("show.sh", "cat .env\n");
    let deny = r#"{"permissions": {"deny": ["Read(./.env)"]}}"#;
    let commands = ["sh show.sh", "python3 -c \"print(open('.env').read())\""];
    let (_, refused) = bash(&s, &commands, &["--sandbox", "workspace-write", "--settings", deny]);
    let env = s.project().canonicalize().expect("canon").join(".env");
    for result in &refused {
        assert_refused(result, &format!("{} is hidden from commands", env.display()));
        assert!(!result.contains("hunter2"), "{result}");
    }
    let (_, ran) = bash(&s, &commands, &["--sandbox", "off", "--settings", deny]);
    assert!(ran.iter().all(|r| r.contains("hunter2")), "{ran:?}");
}

#[test]
fn sandbox_filesystem_deny_read_hides_a_path_even_from_a_plain_cat() {
    let s = Sandbox::new();
    s.write("secrets/token", "hunter2\n");
    let settings = r#"{"sandbox": {"filesystem": {"denyRead": ["./secrets"]}}}"#;
    let (_, refused) = bash(&s, &["cat secrets/token"], &["--sandbox", "workspace-write", "--settings", settings]);
    assert_refused(&refused[0], "");
    assert!(refused[0].contains("secrets is hidden from commands"), "{}", refused[0]);
    let (_, ran) = bash(&s, &["cat secrets/token"], &["--sandbox", "off", "--settings", settings]);
    assert!(ran[0].contains("hunter2"), "{}", ran[0]);
}

#[test]
fn claude_settings_inside_the_workspace_are_protected_from_commands() {
    let s = Sandbox::new();
    s.write(".claude/settings.json", "{}\n");
    let command = "python3 -c \"open('.claude/settings.json', 'w').write('{\\\"hooks\\\": {}}')\"";
    let (_, refused) = bash(&s, &[command], SANDBOXED);
    let claude = s.project().canonicalize().expect("canon").join(".claude");
    assert_refused(&refused[0], &format!("{} is protected and read-only", claude.display()));
    assert_eq!(std::fs::read_to_string(claude.join("settings.json")).expect("read"), "{}\n");
    let (_, ran) = bash(&s, &[command], UNSANDBOXED);
    assert_ran(&ran[0]);
    assert!(std::fs::read_to_string(claude.join("settings.json")).expect("read").contains("hooks"));
}

#[test]
fn a_protected_path_a_command_creates_is_removed_after_it_and_the_model_is_told() {
    let s = Sandbox::new();
    let (_, results) = bash(&s, &["mkdir -p .spine/hooks && echo made"], SANDBOXED);
    assert!(results[0].contains("made"), "{}", results[0]);
    assert!(results[0].contains("spine sandbox: removed"), "the model is told: {}", results[0]);
    assert!(!s.project().join(".spine").exists(), "the protected path is gone");
}

#[test]
fn a_loopback_tcp_server_on_the_machine_is_unreachable() {
    let s = Sandbox::new();
    let listener = TcpListener::bind("127.0.0.1:0").expect("listen");
    let port = listener.local_addr().expect("addr").port();
    listener.set_nonblocking(true).expect("nonblocking");
    let connect =
        format!("python3 -c \"import socket; socket.create_connection(('127.0.0.1', {port})).sendall(b'hi')\"");
    let (_, refused) = bash(&s, &[&connect], SANDBOXED);
    assert_refused(&refused[0], "network access is off");
    assert!(listener.accept().is_err(), "no connection reached the server");
    let (_, ran) = bash(&s, &[&connect], UNSANDBOXED);
    assert_ran(&ran[0]);
    let (mut stream, _) = listener.accept().expect("the unsandboxed command connected");
    stream.set_nonblocking(false).expect("blocking");
    let mut said = String::new();
    let _ = stream.read_to_string(&mut said);
    assert_eq!(said, "hi");
}

#[test]
fn sandbox_enabled_in_the_settings_is_applied_and_the_flag_wins_over_it() {
    let s = Sandbox::new();
    // An untrusted project may turn the sandbox on (it only tightens).
    s.write(".claude/settings.json", r#"{"sandbox": {"enabled": true}}"#);
    let outside = s.dir.path().join("outside.txt");
    let command = format!("touch {}", outside.display());
    let (out, refused) = bash(&s, &[&command], &[]);
    assert_refused(&refused[0], "write outside the workspace");
    let err = stderr(&out);
    assert!(!err.contains("no OS sandbox") && !err.contains("sandbox.enabled"), "never ignored: {err}");
    let (_, ran) = bash(&s, &[&command], UNSANDBOXED);
    assert_ran(&ran[0]);
    assert!(outside.exists());
}

#[test]
fn the_trace_records_the_profile_each_command_ran_under() {
    let s = Sandbox::new();
    let trace = s.dir.path().join("trace.jsonl");
    let trace_arg = trace.to_str().expect("utf-8");
    bash(&s, &["true"], &["--sandbox", "workspace-write", "--trace", trace_arg]);
    let execute = execute_entry(&trace);
    let profile = execute["sandbox"].as_str().expect("the execute entry names the sandbox");
    assert!(profile.starts_with("workspace-write,net=off,"), "{profile}");
    let off = s.dir.path().join("off.jsonl");
    bash(&s, &["true"], &["--sandbox", "off", "--trace", off.to_str().expect("utf-8")]);
    assert!(execute_entry(&off).get("sandbox").is_none(), "no sandbox, no profile");
}

pub(crate) fn execute_entry(trace: &Path) -> Value {
    std::fs::read_to_string(trace)
        .expect("trace")
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|e| e["hook"] == "execute")
        .expect("an execute entry")
}
