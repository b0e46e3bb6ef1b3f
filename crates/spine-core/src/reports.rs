//! The report collector: turns the life of a run or an assignment into the ordered reports of
//! docs/pipeline.md ("Reports") — `execution_started` → `execution_progress` (`tool_reviewed`, `tool_output`,
//! and `subagent` for each child of an `Agent` call) → `execution_complete` | `execution_fail` |
//! `execution_canceled` — each with the identifying fields, and hands each to a [`ReportSink`] (the CLI's stream-json printer, the
//! worker's mailbox). Terminal reports are sent once; later ones are ignored.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use spine_protocol::report::{
    CanceledPayload, CompletePayload, FailPayload, FailureKind, FailurePayload, OutputChunk, ProgressPayload, Report,
    ReportBody, SubagentProgress, ToolErrorPayload, ToolInvocation, ToolInvocationOutput,
};
use spine_protocol::run::ModelUsage;
use spine_protocol::tool::ToolError;

use crate::tool::{OutputStream, ProgressSink, Projection};

/// Receives reports.
pub trait ReportSink: Send + Sync {
    /// One report, in order.
    fn publish(&self, report: &Report);
}

/// Who the reports are about.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct WorkIdentity {
    /// The mailbox item.
    pub mailbox_item_id: String,
    /// The logical work.
    pub logical_work_id: String,
    /// The attempt.
    pub attempt_no: u32,
    /// The conversation.
    pub conversation_id: Option<String>,
    /// The turn.
    pub turn_id: Option<String>,
}

/// Collects and publishes the reports of one unit of work.
pub struct ReportCollector {
    identity: WorkIdentity,
    sink: Arc<dyn ReportSink>,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    sequence: u64,
    invocations: Vec<ToolInvocation>,
    terminal: bool,
    reports: Vec<Report>,
}

impl ReportCollector {
    /// A collector publishing to `sink`.
    pub fn new(identity: WorkIdentity, sink: Arc<dyn ReportSink>) -> Self {
        ReportCollector { identity, sink, state: Mutex::new(State::default()) }
    }

    /// Who the reports are about (item, logical work, attempt), as every report carries it.
    pub fn identity(&self) -> &WorkIdentity {
        &self.identity
    }

    /// Every report published so far.
    pub fn reports(&self) -> Vec<Report> {
        self.lock().reports.clone()
    }

    /// Whether a terminal report was sent.
    pub fn finished(&self) -> bool {
        self.lock().terminal
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        match self.state.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        }
    }

    fn publish(&self, body: ReportBody) {
        let report = {
            let mut state = self.lock();
            if state.terminal {
                return;
            }
            state.terminal = body.is_terminal();
            state.sequence += 1;
            let report = Report {
                protocol_message_id: format!(
                    "spine-{}-{}-a{}-{}",
                    body.method_id(),
                    self.identity.mailbox_item_id,
                    self.identity.attempt_no,
                    state.sequence
                ),
                mailbox_item_id: self.identity.mailbox_item_id.clone(),
                logical_work_id: self.identity.logical_work_id.clone(),
                attempt_no: self.identity.attempt_no,
                body,
            };
            state.reports.push(report.clone());
            report
        };
        self.sink.publish(&report);
    }

    /// `execution_started`.
    pub fn started(&self) {
        self.publish(ReportBody::ExecutionStarted { expected_duration_seconds: 30 });
    }

    /// `execution_progress` / `tool_reviewed` for a call about to run.
    pub fn tool_reviewed(&self, call_id: &str, tool_name: &str, arguments: &Value) {
        let invocation = ToolInvocation {
            event: "started".into(),
            tool_invocation_id: invocation_id(call_id),
            call_id: call_id.to_owned(),
            tool_name: tool_name.to_owned(),
            request_payload: Some(json!({"tool_name": tool_name, "arguments": arguments})),
            response_payload: None,
            error_payload: None,
        };
        self.publish(ReportBody::ExecutionProgress {
            progress_payload: ProgressPayload::ToolReviewed { tool_invocation: invocation },
        });
    }

    /// Records a finished call (its projected response; never raw output).
    pub fn tool_completed(&self, call_id: &str, tool_name: &str, projection: &Projection) {
        let mut response = projection.metadata.clone();
        response.insert("content".into(), Value::String(projection.content.clone()));
        self.lock().invocations.push(ToolInvocation {
            event: "completed".into(),
            tool_invocation_id: invocation_id(call_id),
            call_id: call_id.to_owned(),
            tool_name: tool_name.to_owned(),
            request_payload: None,
            response_payload: Some(Value::Object(response)),
            error_payload: None,
        });
    }

    /// `execution_progress` / `subagent`: an `Agent` call's subagent started or ended.
    pub fn subagent(&self, progress: SubagentProgress) {
        self.publish(ReportBody::ExecutionProgress {
            progress_payload: ProgressPayload::Subagent { subagent: progress },
        });
    }

    /// Records a failed call.
    pub fn tool_failed(&self, call_id: &str, tool_name: &str, arguments: &Value, error: &ToolError) {
        self.lock().invocations.push(ToolInvocation {
            event: "failed".into(),
            tool_invocation_id: invocation_id(call_id),
            call_id: call_id.to_owned(),
            tool_name: tool_name.to_owned(),
            request_payload: Some(json!({"tool_name": tool_name, "arguments": arguments})),
            response_payload: None,
            error_payload: Some(ToolErrorPayload::from(error)),
        });
    }

    /// `execution_complete`.
    pub fn complete(&self, output: &str) {
        self.complete_with_usage(output, BTreeMap::new());
    }

    /// `execution_complete` of work that made model requests: with its usage and cost per
    /// model, and the total cost.
    pub fn complete_with_usage(&self, output: &str, model_usage: BTreeMap<String, ModelUsage>) {
        let tool_invocations = std::mem::take(&mut self.lock().invocations);
        let total_cost_usd = ModelUsage::totals(&model_usage).1;
        self.publish(ReportBody::ExecutionComplete {
            terminal_payload: CompletePayload {
                output: output.to_owned(),
                conversation_id: self.identity.conversation_id.clone(),
                turn_id: self.identity.turn_id.clone(),
                tool_invocations,
                model_usage,
                total_cost_usd,
            },
        });
    }

    /// `execution_fail`.
    pub fn fail(&self, failure: FailurePayload) {
        let tool_invocations = std::mem::take(&mut self.lock().invocations);
        self.publish(ReportBody::ExecutionFail { terminal_payload: FailPayload { failure, tool_invocations } });
    }

    /// `execution_canceled`.
    pub fn canceled(&self, summary: &str) {
        self.publish(ReportBody::ExecutionCanceled {
            terminal_payload: CanceledPayload {
                failure_kind: FailureKind::Canceled,
                last_error_summary: summary.to_owned(),
            },
        });
    }
}

fn invocation_id(call_id: &str) -> String {
    format!("tool-invocation-{call_id}")
}

impl ProgressSink for ReportCollector {
    fn output(&self, call_id: &str, tool_name: &str, stream: OutputStream, text: &str) {
        self.publish(ReportBody::ExecutionProgress {
            progress_payload: ProgressPayload::ToolOutput {
                tool_invocation_output: ToolInvocationOutput {
                    tool_invocation_id: invocation_id(call_id),
                    call_id: call_id.to_owned(),
                    tool_name: tool_name.to_owned(),
                    output_chunks: vec![OutputChunk { stream: stream.as_str().to_owned(), text: text.to_owned() }],
                },
            },
        });
    }
}

/// Keeps reports in memory (tests, summaries).
#[derive(Default)]
pub struct MemorySink(pub Mutex<Vec<Report>>);

impl ReportSink for MemorySink {
    fn publish(&self, report: &Report) {
        if let Ok(mut v) = self.0.lock() {
            v.push(report.clone());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reports_carry_identity_and_only_one_terminal_is_sent() {
        let sink = Arc::new(MemorySink::default());
        let c = ReportCollector::new(
            WorkIdentity {
                mailbox_item_id: "item-1".into(),
                logical_work_id: "work-1".into(),
                attempt_no: 2,
                ..Default::default()
            },
            sink.clone(),
        );
        c.started();
        c.tool_reviewed("c1", "calculator", &json!({"expression": "2 + 2"}));
        c.tool_completed("c1", "calculator", &Projection::plain("The calculator returned 4."));
        c.complete("The calculator returned 4.");
        c.canceled("too late");
        let reports = sink.0.lock().expect("sink").clone();
        let methods: Vec<&str> = reports.iter().map(|r| r.body.method_id()).collect();
        assert_eq!(methods, vec!["execution_started", "execution_progress", "execution_complete"]);
        assert!(
            reports.iter().all(|r| r.mailbox_item_id == "item-1" && r.logical_work_id == "work-1" && r.attempt_no == 2)
        );
        let json = serde_json::to_value(&reports[2]).expect("ser");
        assert_eq!(json["method_id"], "execution_complete");
        assert_eq!(json["terminal_payload"]["output"], "The calculator returned 4.");
        assert_eq!(
            json["terminal_payload"]["tool_invocations"][0]["response_payload"]["content"],
            "The calculator returned 4."
        );
    }
}
