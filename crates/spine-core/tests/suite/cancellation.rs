//! Cancellation mid-tool: the running tool is stopped, every pending call is answered.

use serde_json::json;
use spine_protocol::run::RunSubtype;
use spine_protocol::tool::ErrorCode;

use crate::support::*;

#[tokio::test]
async fn cancellation_mid_tool_kills_it_and_answers_every_pending_call() {
    let h = Harness::new();
    let cancel = h.cancel.clone();
    let log = h.log.clone();
    tokio::spawn(async move {
        for _ in 0..500 {
            if log.take().iter().any(|l| l == "slow:start") {
                cancel.cancel();
                return;
            }
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        }
    });
    let (outcome, script, log) = h
        .run(
            "go",
            vec![
                calls(&[
                    ("c1", "slow", json!({})),
                    ("c2", "value", json!({"value": 2})),
                    ("c3", "value", json!({"value": 3})),
                ]),
                text("never"),
            ],
        )
        .await;
    assert_eq!(outcome.subtype, RunSubtype::Canceled);
    assert_eq!(log.take(), vec!["slow:start", "slow:killed"]);
    let r = results(&outcome.messages);
    assert_eq!(r.len(), 3);
    assert!(r.iter().all(|t| t.error_code == Some(ErrorCode::Canceled)), "{r:?}");
    assert_eq!(script.requests().len(), 1);
}
