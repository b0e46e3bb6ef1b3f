//! Worker items take the tool-call pipeline: review, PreToolUse, the permission policy of the
//! worker's settings (nobody answers `ask`: fail closed) and PostToolUse, whatever the item
//! kind. `allowed_tool_names` only narrows what the worker allows.

use serde_json::json;

use crate::both_backends;
use crate::support::*;

both_backends!(
    a_deterministic_item_for_a_denied_command_is_refused_and_never_runs,
    an_execute_program_tool_item_for_a_denied_command_is_refused_and_never_runs,
    a_worker_with_no_allow_rule_refuses_a_command_it_would_have_to_ask_about,
    pre_tool_use_hooks_block_worker_items_and_post_tool_use_hooks_see_the_result,
    allowed_tool_names_never_lift_a_deny_rule,
);

const DENY_RM: &str = r#"{"permissions": {"defaultMode": "bypassPermissions", "deny": ["Bash(rm *)"]}}"#;

async fn a_deterministic_item_for_a_denied_command_is_refused_and_never_runs(backend: Backend) {
    let mut h = Harness::new(backend).await;
    h.settings = DENY_RM.to_owned();
    let victim = h.workspace().join("victim.txt");
    std::fs::write(&victim, "keep me").expect("victim");
    h.submit(&bash("rm-1", "rm victim.txt")).await;
    h.submit(&bash("rm-2", "env /bin/rm -f victim.txt")).await;
    h.submit(&bash("ok-1", "echo fine")).await;
    h.run_once(2).await;

    for id in ["rm-1", "rm-2"] {
        let reports = h.reports(Some(id)).await;
        assert_eq!(methods(&reports).last(), Some(&"execution_fail"), "{id}: {:?}", methods(&reports));
        let payload = &json_of(reports.last().expect("terminal"))["terminal_payload"];
        assert_eq!(payload["failure_kind"], "authorization_error", "{id}: {payload}");
        let summary = payload["last_error_summary"].as_str().unwrap_or_default();
        assert!(summary.contains("Bash(rm *)"), "{id} names the rule: {summary}");
    }
    assert_eq!(std::fs::read_to_string(&victim).expect("victim survives"), "keep me");
    let ok = h.reports(Some("ok-1")).await;
    assert_eq!(methods(&ok).last(), Some(&"execution_complete"), "an allowed command still runs");
}

async fn an_execute_program_tool_item_for_a_denied_command_is_refused_and_never_runs(backend: Backend) {
    let mut h = Harness::new(backend).await;
    h.settings = DENY_RM.to_owned();
    let victim = h.workspace().join("victim.txt");
    std::fs::write(&victim, "keep me").expect("victim");
    let call = json!({"program_tool_call": {"tool_name": "Bash", "arguments": {"command": "rm victim.txt"}, "call_id": "c-1"}});
    let mut item = program("prog-rm", "execute_program_tool", call);
    item["payload"]["allowed_tool_names"] = json!(["Bash"]);
    h.submit(&item).await;
    h.run_once(1).await;

    let reports = h.reports(Some("prog-rm")).await;
    assert_eq!(methods(&reports), ["agent_program_failed"]);
    let failed = json_of(&reports[0]);
    assert_eq!(failed["error_payload"]["code"], "permission_denied", "{failed}");
    assert_eq!(std::fs::read_to_string(&victim).expect("victim survives"), "keep me");
}

async fn a_worker_with_no_allow_rule_refuses_a_command_it_would_have_to_ask_about(backend: Backend) {
    let mut h = Harness::new(backend).await;
    h.settings = "{}".to_owned();
    let marker = h.workspace().join("marker");
    h.submit(&bash("touch-1", "touch marker")).await;
    h.submit(&example("calc-1")).await;
    h.run_once(1).await;

    let reports = h.reports(Some("touch-1")).await;
    let payload = &json_of(reports.last().expect("terminal"))["terminal_payload"];
    assert_eq!(payload["failure_kind"], "authorization_error", "{payload}");
    assert!(!marker.exists(), "the command did not run");
    let calc = h.reports(Some("calc-1")).await;
    assert_eq!(methods(&calc).last(), Some(&"execution_complete"), "read-only tools need no approval");
}

async fn pre_tool_use_hooks_block_worker_items_and_post_tool_use_hooks_see_the_result(backend: Backend) {
    let mut h = Harness::new(backend).await;
    let seen = h.workspace().join("post-seen.json");
    h.settings = json!({
        "permissions": {"defaultMode": "bypassPermissions"},
        "hooks": {
            "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command",
                "command": "/usr/bin/python3 -c \"import json,sys; d=json.load(sys.stdin); c=d['tool_input']['command']; sys.stderr.write('no curl here'); sys.exit(2 if 'curl' in c else 0)\""}]}],
            "PostToolUse": [{"matcher": "calculator", "hooks": [{"type": "command",
                "command": format!("cat > {}", seen.display())}]}]
        }
    })
    .to_string();
    h.submit(&bash("curl-1", "curl http://127.0.0.1:9/")).await;
    h.submit(&example("calc-1")).await;
    h.run_once(1).await;

    let reports = h.reports(Some("curl-1")).await;
    let payload = &json_of(reports.last().expect("terminal"))["terminal_payload"];
    assert_eq!(payload["failure_kind"], "authorization_error", "{payload}");
    assert!(payload["last_error_summary"].as_str().is_some_and(|s| s.contains("no curl here")), "{payload}");

    let calc = h.reports(Some("calc-1")).await;
    assert_eq!(methods(&calc).last(), Some(&"execution_complete"));
    let post: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&seen).expect("PostToolUse ran")).expect("hook input");
    assert_eq!(post["hook_event_name"], "PostToolUse");
    assert_eq!(post["tool_name"], "calculator");
    assert_eq!(post["tool_response"]["result"], 4);
}

async fn allowed_tool_names_never_lift_a_deny_rule(backend: Backend) {
    let mut h = Harness::new(backend).await;
    h.settings = r#"{"permissions": {"deny": ["calculator"]}}"#.to_owned();
    h.submit(&example("calc-denied")).await;
    h.run_once(1).await;
    let reports = h.reports(Some("calc-denied")).await;
    let payload = &json_of(reports.last().expect("terminal"))["terminal_payload"];
    assert_eq!(payload["failure_kind"], "authorization_error", "{payload}");
    assert!(payload["last_error_summary"].as_str().is_some_and(|s| s.contains("calculator")), "{payload}");
}
