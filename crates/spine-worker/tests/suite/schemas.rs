//! The committed JSON Schemas describe what the worker accepts and what it reports.

use serde_json::{Value, json};

use crate::support::*;

fn schema(name: &str) -> jsonschema::Validator {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../schemas").join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let value: Value = serde_json::from_str(&text).expect("schema JSON");
    jsonschema::validator_for(&value).expect("schema compiles")
}

#[test]
fn the_item_schema_accepts_every_kind_and_rejects_a_missing_task_payload() {
    let items = schema("item.schema.json");
    let good = [
        example("a"),
        program("b", "prepare_round", json!({})),
        program("c", "execute_program_tool", json!({"program_tool_call": {"tool_name": "calculator"}})),
        close("d", "a"),
    ];
    for item in &good {
        let errors: Vec<String> = items.iter_errors(item).map(|e| e.to_string()).collect();
        assert!(errors.is_empty(), "{item}: {errors:?}");
    }
    let mut no_task = example("e");
    no_task["payload"].as_object_mut().map(|p| p.remove("task_payload"));
    assert!(!items.is_valid(&no_task));
    assert!(!items.is_valid(&program("f", "execute_program_tool", json!({}))), "execute_program_tool needs a call");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_report_of_a_run_matches_the_report_schema() {
    let reports_schema = schema("report.schema.json");
    let h = Harness::new(Backend::Sqlite).await;
    h.submit(&example("calc")).await;
    h.submit(&program("round", "prepare_round", json!({}))).await;
    h.submit(&close("close", "calc")).await;
    h.mailbox.submit(b"not json").await.expect("submit");
    h.run_once(2).await;
    let reports = h.reports(None).await;
    assert!(reports.len() >= 6, "{:?}", methods(&reports));
    for r in &reports {
        let value = json_of(r);
        let errors: Vec<String> = reports_schema.iter_errors(&value).map(|e| e.to_string()).collect();
        assert!(errors.is_empty(), "{value}: {errors:?}");
    }
    let round = reports.iter().find(|r| r.mailbox_item_id == "round").expect("round report");
    let response = &json_of(round)["response_payload"];
    assert!(schema("prepare_round_response.schema.json").is_valid(response), "{response}");
}

#[test]
fn the_item_schema_takes_an_optional_w3c_traceparent() {
    let items = schema("item.schema.json");
    let mut traced = example("t");
    traced["traceparent"] = json!("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01");
    assert!(items.is_valid(&traced), "{traced}");
    traced["traceparent"] = json!("not-a-traceparent");
    assert!(!items.is_valid(&traced));
}
