//! Item kinds: what each one reports.

use std::time::Duration;

use serde_json::json;
use spine_protocol::report::ReportBody;

use crate::both_backends;
use crate::support::*;

both_backends!(
    the_example_assignment_reports_started_reviewed_and_the_calculator_output,
    prepare_round_answers_with_messages_tools_model_and_trace,
    execute_program_tool_answers_with_the_result_or_the_tool_error_payload,
    a_masked_tool_fails_with_tool_not_allowed_and_authorization,
    skill_modes_list_load_and_read_with_started_and_complete_only,
    malformed_items_get_a_validation_error_report_naming_the_problem,
    unknown_kinds_get_unsupported_request_kind,
    a_close_request_cancels_a_running_bash_assignment_and_its_process_group,
    an_agent_run_assignment_runs_the_agent_loop_and_reports_through_the_same_collector,
    an_agent_run_that_delegates_reports_progress_for_each_child,
);

async fn the_example_assignment_reports_started_reviewed_and_the_calculator_output(backend: Backend) {
    let h = Harness::new(backend).await;
    h.submit(&example("item-0001")).await;
    h.run_once(2).await;
    let reports = h.reports(Some("item-0001")).await;
    assert_eq!(methods(&reports), ["execution_started", "execution_progress", "execution_complete"]);
    let progress = json_of(&reports[1]);
    assert_eq!(progress["progress_payload"]["stage"], "tool_reviewed");
    assert_eq!(progress["progress_payload"]["tool_invocation"]["tool_name"], "calculator");
    let complete = json_of(&reports[2]);
    assert_eq!(complete["terminal_payload"]["output"], "The calculator returned 4.");
    assert_eq!(complete["terminal_payload"]["conversation_id"], "conv-1");
    assert_eq!(
        complete["terminal_payload"]["tool_invocations"][0]["response_payload"]["content"],
        "The calculator returned 4."
    );
    for r in &reports {
        assert_eq!(
            (r.mailbox_item_id.as_str(), r.logical_work_id.as_str(), r.attempt_no),
            ("item-0001", "work-item-0001", 1)
        );
    }
}

async fn prepare_round_answers_with_messages_tools_model_and_trace(backend: Backend) {
    let h = Harness::new(backend).await;
    std::fs::write(h.workspace().join("SOUL.md"), "Workspace soul.").expect("soul");
    h.submit(&program("round-1", "prepare_round", json!({}))).await;
    h.run_once(2).await;
    let reports = h.reports(Some("round-1")).await;
    assert_eq!(methods(&reports), ["agent_program_completed"]);
    let r = json_of(&reports[0]);
    assert_eq!(r["request_kind"], "prepare_round");
    let response = &r["response_payload"];
    assert_eq!(response["status"], "ok");
    assert_eq!(response["messages"][0]["role"], "system");
    assert!(response["messages"][0]["content"].as_str().is_some_and(|s| s.contains("Soul:\nWorkspace soul.")));
    assert_eq!(response["messages"][1], json!({"role": "user", "content": "add two and two"}));
    assert_eq!(response["visible_tool_names"], json!(["calculator"]));
    assert_eq!(response["likely_model"], "gpt-4.1-mini");
    let hooks: Vec<&str> =
        response["trace"].as_array().expect("trace").iter().filter_map(|t| t["hook"].as_str()).collect();
    assert_eq!(hooks, ["prepare_turn", "compact_context"]);
    assert_eq!(response["trace"][0]["profile"], "main");
    // The visible tool's schema counts in the estimate (the program's request carries it).
    let prepare = &response["trace"][0];
    let tool_tokens = prepare["tool_tokens"].as_u64().expect("tool_tokens");
    assert!(tool_tokens > 0 && tool_tokens < prepare["estimated_token_count"].as_u64().unwrap_or(0), "{prepare}");
}

async fn execute_program_tool_answers_with_the_result_or_the_tool_error_payload(backend: Backend) {
    let h = Harness::new(backend).await;
    let call = |expr: &str| json!({"program_tool_call": {"tool_name": "calculator", "arguments": {"expression": expr}, "call_id": "call-9"}});
    h.submit(&program("tool-ok", "execute_program_tool", call("2 + 2"))).await;
    h.submit(&program("tool-bad", "execute_program_tool", call("1 / 0"))).await;
    h.run_once(2).await;

    let ok = h.reports(Some("tool-ok")).await;
    assert_eq!(methods(&ok), ["agent_program_completed"]);
    let response = &json_of(&ok[0])["response_payload"];
    assert_eq!(response["status"], "ok");
    assert_eq!(response["program_tool_call"]["call_id"], "call-9");
    assert_eq!(response["result"]["content"], "The calculator returned 4.");
    assert_eq!(response["result"]["response"]["result"], 4);

    let bad = h.reports(Some("tool-bad")).await;
    assert_eq!(methods(&bad), ["agent_program_failed"]);
    let failed = json_of(&bad[0]);
    assert_eq!(failed["request_kind"], "execute_program_tool");
    assert_eq!(failed["error_payload"]["code"], "validation_error");
    assert_eq!(failed["error_payload"]["classification"], "semantic");
    assert_eq!(failed["error_payload"]["retryable"], false);
    assert!(failed["error_payload"]["message"].as_str().is_some_and(|m| m.contains("by zero")), "{failed}");
}

async fn a_masked_tool_fails_with_tool_not_allowed_and_authorization(backend: Backend) {
    let h = Harness::new(backend).await;
    let masked = assignment(
        "masked",
        json!({"mode": "deterministic_tool_call", "tool_call": {"tool_name": "calculator", "arguments": {"expression": "2 + 2"}}}),
        &["Read"],
    );
    h.submit(&masked).await;
    h.run_once(2).await;
    let reports = h.reports(Some("masked")).await;
    assert_eq!(methods(&reports), ["execution_started", "execution_fail"]);
    let fail = json_of(&reports[1]);
    let payload = &fail["terminal_payload"];
    assert_eq!(payload["failure_kind"], "authorization_error");
    assert_eq!(payload["retryable"], false);
    assert!(
        payload["last_error_summary"].as_str().is_some_and(|s| s.contains("calculator") && s.contains("not visible"))
    );
    let invocation = &payload["tool_invocations"][0];
    assert_eq!(invocation["event"], "failed");
    assert_eq!(invocation["error_payload"]["code"], "tool_not_allowed");
    assert_eq!(invocation["error_payload"]["classification"], "authorization");
}

async fn skill_modes_list_load_and_read_with_started_and_complete_only(backend: Backend) {
    let h = Harness::new(backend).await;
    let skill = h.workspace().join(".spine/skills/portable-notes");
    std::fs::create_dir_all(&skill).expect("skill dir");
    std::fs::write(skill.join("SKILL.md"), "---\ndescription: notes anywhere\n---\nWrite notes as Markdown.\n")
        .expect("w");
    std::fs::write(skill.join("ref.md"), "reference text").expect("w");
    h.submit(&assignment("list", json!({"mode": "skills_catalog_list"}), &[])).await;
    h.submit(&assignment("load", json!({"mode": "skills_load", "skill_name": "portable-notes"}), &[])).await;
    h.submit(&assignment(
        "read",
        json!({"mode": "skills_read_file", "skill_name": "portable-notes", "relative_path": "ref.md"}),
        &[],
    ))
    .await;
    h.submit(&assignment(
        "escape",
        json!({"mode": "skills_read_file", "skill_name": "portable-notes", "relative_path": "../../x"}),
        &[],
    ))
    .await;
    h.run_once(2).await;
    let output =
        |reports: &[spine_protocol::report::Report]| json_of(&reports[1])["terminal_payload"]["output"].clone();

    let list = h.reports(Some("list")).await;
    assert_eq!(methods(&list), ["execution_started", "execution_complete"]);
    let catalog: serde_json::Value = serde_json::from_str(output(&list).as_str().expect("text")).expect("json");
    assert_eq!(catalog["skills"][0]["name"], "portable-notes");
    assert_eq!(catalog["skills"][0]["description"], "notes anywhere");

    let load = h.reports(Some("load")).await;
    assert_eq!(methods(&load), ["execution_started", "execution_complete"]);
    let loaded: serde_json::Value = serde_json::from_str(output(&load).as_str().expect("text")).expect("json");
    assert!(loaded["skill_md"].as_str().is_some_and(|s| s.contains("Write notes as Markdown.")));
    assert_eq!(loaded["files"], json!(["ref.md"]));

    let read = h.reports(Some("read")).await;
    assert_eq!(output(&read), "reference text");

    let escape = h.reports(Some("escape")).await;
    assert_eq!(methods(&escape), ["execution_started", "execution_fail"]);
    assert_eq!(json_of(&escape[1])["terminal_payload"]["failure_kind"], "validation_error");
}

async fn malformed_items_get_a_validation_error_report_naming_the_problem(backend: Backend) {
    let h = Harness::new(backend).await;
    let broken = h.mailbox.submit(b"{not json").await.expect("submit");
    let mut missing = example("missing-turn");
    missing["payload"]["task"].as_object_mut().map(|t| t.remove("turn_id"));
    h.submit(&missing).await;
    let mut version = example("old-version");
    version["payload"]["protocol_version"] = json!("agent-program/2026-04-01");
    h.submit(&version).await;
    let mut typed = example("bad-type");
    typed["payload"]["allowed_tool_names"] = json!("calculator");
    h.submit(&typed).await;
    h.run_once(2).await;

    let expect = |id: String, needle: &'static str| {
        let h = &h;
        async move {
            let reports = h.reports(Some(&id)).await;
            assert_eq!(methods(&reports), ["execution_fail"], "{id}");
            let payload = &json_of(&reports[0])["terminal_payload"];
            assert_eq!(payload["failure_kind"], "validation_error", "{id}");
            assert_eq!(payload["retryable"], false);
            let summary = payload["last_error_summary"].as_str().unwrap_or_default();
            assert!(summary.contains(needle), "{id}: {summary}");
        }
    };
    expect(broken, "not JSON").await;
    expect("missing-turn".into(), "payload.task: missing field `turn_id`").await;
    expect("old-version".into(), "unknown protocol version `agent-program/2026-04-01`").await;
    expect("bad-type".into(), "payload.allowed_tool_names").await;
}

async fn unknown_kinds_get_unsupported_request_kind(backend: Backend) {
    let h = Harness::new(backend).await;
    let mut refresh = example("refresh");
    refresh["item_type"] = json!("capabilities_refresh_request");
    h.submit(&refresh).await;
    h.submit(&program("dragon", "summon_dragon", json!({}))).await;
    h.run_once(2).await;

    let refresh = h.reports(Some("refresh")).await;
    assert_eq!(methods(&refresh), ["execution_fail"]);
    let payload = &json_of(&refresh[0])["terminal_payload"];
    assert_eq!(payload["failure_kind"], "unsupported_request_kind");
    assert!(payload["last_error_summary"].as_str().is_some_and(|s| s.contains("capabilities_refresh_request")));

    let dragon = h.reports(Some("dragon")).await;
    assert_eq!(methods(&dragon), ["agent_program_failed"]);
    let failed = json_of(&dragon[0]);
    assert_eq!(failed["request_kind"], "summon_dragon");
    assert_eq!(failed["error_payload"]["code"], "unsupported_request_kind");
}

async fn a_close_request_cancels_a_running_bash_assignment_and_its_process_group(backend: Backend) {
    let h = Harness::new(backend).await;
    let pid_file = h.workspace().join("sleep.pid");
    h.submit(&bash("long", &format!("sleep 30 & echo $! > {}; wait", pid_file.display()))).await;
    let worker = h.start(h.config(2, false)).await;
    wait_for_file(&pid_file, Duration::from_secs(20)).await;
    let pid: u32 = std::fs::read_to_string(&pid_file).expect("pid").trim().parse().expect("pid number");
    assert!(!dead(pid), "sleep runs before the close request");

    h.submit(&close("close-1", "long")).await;
    let target = h.wait_terminal("long", Duration::from_secs(20)).await;
    let closed = h.wait_terminal("close-1", Duration::from_secs(20)).await;
    worker.stop().await;

    assert_eq!(methods(&target), ["execution_started", "execution_progress", "execution_canceled"]);
    let ReportBody::ExecutionCanceled { terminal_payload } = &target[2].body else { panic!("canceled") };
    assert!(terminal_payload.last_error_summary.contains("close request close-1"), "{terminal_payload:?}");
    assert_eq!(methods(&closed), ["resource_close_acknowledged", "resource_closed"]);
    assert_eq!(json_of(&closed[1])["close_outcome_kind"], "graceful");
    assert_eq!(json_of(&closed[1])["resource_id"], "long");
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while !dead(pid) {
        assert!(std::time::Instant::now() < deadline, "the sleep process {pid} survived the close request");
        std::thread::sleep(Duration::from_millis(20));
    }
}

async fn an_agent_run_assignment_runs_the_agent_loop_and_reports_through_the_same_collector(backend: Backend) {
    let h = Harness::new(backend).await;
    let script = h.workspace().join("script.json");
    let turns = json!([
        {"tool_calls": [{"id": "c1", "name": "calculator", "arguments": {"expression": "6 * 7"}}],
         "usage": {"input_tokens": 10, "output_tokens": 3}},
        {"text": "The answer is 42."}
    ]);
    spine_testkit::script::write_script_file(&script, turns).expect("script");
    let run = |id: &str, prompt: &str| {
        assignment(
            id,
            json!({"mode": "agent_run", "prompt": prompt, "model": "scripted:script.json", "max_turns": 4}),
            &["calculator"],
        )
    };
    h.submit(&run("agent-1", "what is six times seven?")).await;
    h.run_once(2).await;
    let reports = h.reports(Some("agent-1")).await;
    assert_eq!(methods(&reports), ["execution_started", "execution_progress", "execution_complete"]);
    assert_eq!(json_of(&reports[1])["progress_payload"]["tool_invocation"]["tool_name"], "calculator");
    let complete = json_of(&reports[2]);
    assert_eq!(complete["terminal_payload"]["output"], "The answer is 42.");
    assert_eq!(
        complete["terminal_payload"]["tool_invocations"][0]["response_payload"]["content"],
        "The calculator returned 42."
    );
    // The completion report carries usage per model: one request reported usage, one did not
    // (absent, not 0); the scripted model has no price, so there is no cost.
    let usage = &complete["terminal_payload"]["model_usage"]["scripted"];
    assert_eq!(
        (usage["requests"].clone(), usage["requests_without_usage"].clone()),
        (json!(2), json!(1)),
        "{complete}"
    );
    assert_eq!(
        (usage["usage"]["input_tokens"].clone(), usage["usage"]["output_tokens"].clone()),
        (json!(10), json!(3))
    );
    assert!(usage.get("cost_usd").is_none() && complete["terminal_payload"].get("total_cost_usd").is_none());

    let mut bad = run("agent-2", "x");
    bad["payload"]["task_payload"]["model"] = json!("gopher:nope");
    h.submit(&bad).await;
    h.run_once(1).await;
    let reports = h.reports(Some("agent-2")).await;
    assert_eq!(methods(&reports), ["execution_started", "execution_fail"]);
    assert_eq!(json_of(&reports[1])["terminal_payload"]["failure_kind"], "validation_error");
}

async fn an_agent_run_that_delegates_reports_progress_for_each_child(backend: Backend) {
    let h = Harness::new(backend).await;
    let child = h.workspace().join("child.json");
    spine_testkit::script::write_script_file(&child, json!([{"text": "child answer"}])).expect("child script");
    let agents = h.workspace().join(".claude/agents");
    std::fs::create_dir_all(&agents).expect("agents dir");
    std::fs::write(
        agents.join("helper.md"),
        format!("---\nname: helper\ndescription: helps\nmodel: scripted:{}\n---\nYou help.\n", child.display()),
    )
    .expect("definition");
    let script = h.workspace().join("script.json");
    let task = json!({"id": "t1", "name": "Task", "arguments": {"description": "ask the helper", "prompt": "help", "subagent_type": "helper"}});
    spine_testkit::script::write_script_file(&script, json!([{"tool_calls": [task]}, {"text": "parent answer"}]))
        .expect("script");
    let item = assignment(
        "delegating",
        json!({"mode": "agent_run", "prompt": "go", "model": format!("scripted:{}", script.display()), "max_turns": 4}),
        &["Task"],
    );
    h.submit(&item).await;
    h.run_once(1).await;
    let reports = h.reports(Some("delegating")).await;
    let subagent: Vec<serde_json::Value> = reports
        .iter()
        .map(json_of)
        .filter(|r| r["progress_payload"]["stage"] == "subagent")
        .map(|r| r["progress_payload"]["subagent"].clone())
        .collect();
    assert_eq!(subagent.len(), 2, "{reports:?}");
    assert_eq!(
        (subagent[0]["event"].as_str(), subagent[0]["description"].as_str()),
        (Some("started"), Some("ask the helper"))
    );
    assert_eq!(
        (subagent[1]["event"].as_str(), subagent[1]["result"].as_str()),
        (Some("completed"), Some("child answer"))
    );
    assert!(subagent.iter().all(|p| p["call_id"] == "t1" && p["agent_type"] == "helper"));
    let complete = json_of(reports.last().expect("terminal"));
    assert_eq!(complete["method_id"], "execution_complete", "{complete}");
    assert_eq!(complete["terminal_payload"]["output"], "parent answer");
    assert_eq!(complete["terminal_payload"]["model_usage"]["scripted"]["requests"], 3, "the child's request counted");
}
