//! The child environment: every process a tool starts — Bash, `exec_command`, `process_exec`,
//! a stdio MCP server — gets the `ChildEnv` it is given (the call's context, the MCP options),
//! not one shared by the process; a variable the child is given explicitly wins.

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::json;
use spine_core::tool::ChildEnv;
use spine_tools::mcp::{McpOptions, connect_mcp_servers};

use crate::direct::Direct;
use crate::support::Fixture;

fn marked(mark: &str) -> ChildEnv {
    let vars = BTreeMap::from([
        ("SPINE_T_MARK".to_owned(), mark.to_owned()),
        ("SPINE_T_OWN".to_owned(), "settings".to_owned()),
    ]);
    ChildEnv::new(vars, Vec::<String>::new())
}

#[tokio::test]
async fn bash_sees_the_child_env_of_its_own_call_and_an_env_file_line_wins() {
    let f = Fixture::new();
    let (mut one, mut two) = (f.ctx.clone(), f.ctx.clone());
    one.child_env = marked("one");
    two.child_env = marked("two");
    let env_file = f.write("session.env", "export SPINE_T_OWN=env-file\n");
    two.env_file = Some(env_file);
    let command = json!({"command": "echo \"$SPINE_T_MARK $SPINE_T_OWN\""});
    let (a, b, none) = tokio::join!(
        f.call_with("Bash", command.clone(), &one),
        f.call_with("Bash", command.clone(), &two),
        f.call("Bash", json!({"command": "echo \"[${SPINE_T_MARK-unset}]\""})),
    );
    assert_eq!(a.expect("bash")["stdout"], json!("one settings"));
    assert_eq!(b.expect("bash")["stdout"], json!("two env-file"));
    assert_eq!(none.expect("bash")["stdout"], json!("[unset]"), "a context without settings sets nothing");
}

#[tokio::test]
async fn command_runs_and_background_processes_see_the_child_env_of_their_call() {
    let d = Direct::new();
    let mut ctx = d.ctx.clone();
    ctx.child_env = marked("run");
    let r = d.call_with("exec_command", json!({"command": "echo \"$SPINE_T_MARK\""}), &ctx).await.expect("exec");
    assert_eq!(r["stdout_tail"], json!("run\n"));

    ctx.child_env = marked("service");
    let started = d
        .call_with("process_exec", json!({"command": "echo \"$SPINE_T_MARK\"; sleep 30", "name": "svc"}), &ctx)
        .await
        .expect("started");
    let id = started["process_run_id"].clone();
    let mut tail = String::new();
    for _ in 0..100 {
        let out = d.call("process_read_output", json!({"process_run_id": id})).await.expect("read");
        tail = out["stdout_tail"].as_str().unwrap_or_default().to_owned();
        if !tail.is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(tail, "service\n");
    d.call("process_stop", json!({"process_run_id": id})).await.expect("stop");
}

#[tokio::test]
async fn a_stdio_mcp_server_gets_the_options_child_env_under_its_own_env() {
    let dir = tempfile::tempdir().expect("tmp");
    let marker = dir.path().join("started");
    let seen = dir.path().join("seen");
    let server = spine_testkit::mcp::write_mcp_server(dir.path(), "probe", &marker, 0).expect("server");
    let python = format!("echo \"$SPINE_T_MARK $SPINE_T_OWN\" > '{}'; exec /usr/bin/python3 \"$@\"", seen.display());
    let mut args = vec![json!("-c"), json!(python), json!("sh")];
    args.extend(server["args"].as_array().expect("args").iter().cloned());
    let config = json!({"probe": {"command": "/bin/sh", "args": args, "env": {"SPINE_T_OWN": "server"}}});
    let (mcp, issues) = connect_mcp_servers(&config, &McpOptions::new(dir.path(), marked("mcp"))).await;
    assert!(issues.is_empty(), "{issues:?}");
    assert_eq!(std::fs::read_to_string(&seen).expect("seen"), "mcp server\n");
    mcp.shutdown().await;
}
