//! What one delivery does, decided once: [`Plan::of`] maps what its claim found
//! ([`Claimed`]: the mailbox's [`Begin`], or why nothing was claimed), the decoded item and the
//! delivery's counters to a [`Plan`]; the rest of the delivery only carries it out. Every rule
//! is one arm of [`Plan::of`] and one unit test.

use std::time::Duration;

use spine_protocol::assignment::MailboxItem;
use spine_protocol::report::Report;

use crate::decode::Rejection;
use crate::mailbox::Begin;
use crate::sink::Republish;

/// What the claim step found.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Claimed {
    /// The mailbox answered the claim.
    Begun(Begin),
    /// Not claimed: the worker is stopping.
    Stopping,
    /// Not claimed: the mailbox failed (logged).
    Failed,
}

/// What a delivery does.
#[derive(Debug, PartialEq)]
pub(crate) enum Plan {
    /// The delivery is this worker's: do [`Work`], then settle the delivery.
    Work(Work),
    /// Hand the delivery back (nack) to be delivered again after `after`: another delivery of
    /// the item runs it ([`Begin::Busy`]), the claim failed, or the worker is stopping.
    Retry {
        /// The redelivery delay; `None`: at once.
        after: Option<Duration>,
    },
    /// Neither run nor settle: a later delivery of the same message holds the item as
    /// `attempt_no` ([`Begin::Stale`]); the message belongs to it.
    Leave {
        /// The attempt of the later delivery.
        attempt_no: u32,
    },
}

/// What a claimed delivery does before it is settled.
#[derive(Debug, PartialEq)]
pub(crate) enum Work {
    /// Run the item's flow.
    Run(Box<MailboxItem>),
    /// Report why the item is not run (malformed, or an unsupported kind).
    Reject(Rejection),
    /// Report the failure, then dead-letter the delivery: its deliveries ran out.
    Exhausted {
        /// The deliveries the mailbox allows.
        max_deliver: u32,
    },
    /// Report `execution_canceled`: a close request came before the item started.
    Canceled,
    /// Publish the item's stored terminal report again, as `when` says, instead of running it:
    /// it already finished.
    Republish {
        /// The stored terminal report.
        report: Box<Report>,
        /// Always, or only when the item's reports lack it.
        when: Republish,
    },
}

/// How a delivery is settled once its work ended and its reports are durable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Settlement {
    /// Acknowledge it.
    Ack,
    /// Move it to the dead-letter place, with this reason.
    DeadLetter(String),
}

impl Plan {
    /// The plan of a delivery whose claim found `claimed`. `delivery_count` counts this
    /// delivery (from 1); past `max_deliver` the delivery is exhausted. `busy_retry` is the
    /// redelivery delay of an item that is busy elsewhere or whose claim failed.
    pub(crate) fn of(
        claimed: Claimed,
        item: Result<MailboxItem, Rejection>,
        delivery_count: u32,
        max_deliver: u32,
        busy_retry: Duration,
    ) -> Plan {
        let begin = match claimed {
            Claimed::Begun(begin) => begin,
            // Handed back at once: the redelivery goes to a worker that is not stopping.
            Claimed::Stopping => return Plan::Retry { after: None },
            Claimed::Failed => return Plan::Retry { after: Some(busy_retry) },
        };
        let work = match begin {
            Begin::Run if delivery_count > max_deliver => Work::Exhausted { max_deliver },
            Begin::Run => match item {
                Ok(item) => Work::Run(Box::new(item)),
                Err(rejection) => Work::Reject(rejection),
            },
            Begin::CancelRequested => Work::Canceled,
            // A new message of a finished item (submitted again) waits for its report; the same
            // message delivered again re-publishes only what is missing.
            Begin::Done(report) => {
                let when = if delivery_count > 1 { Republish::IfMissing } else { Republish::Always };
                Work::Republish { report, when }
            }
            // It finished under this very message, whatever the delivery counter says.
            Begin::Redelivered(report) => Work::Republish { report, when: Republish::IfMissing },
            Begin::Busy => return Plan::Retry { after: Some(busy_retry) },
            Begin::Stale { attempt_no } => return Plan::Leave { attempt_no },
        };
        Plan::Work(work)
    }
}

impl Work {
    /// Whether the delivery holds the execution while it works, so that its claim is watched
    /// (a later delivery may supersede it) — not when it only re-publishes a stored report.
    pub(crate) fn holds_the_claim(&self) -> bool {
        match self {
            Work::Run(_) | Work::Reject(_) | Work::Exhausted { .. } | Work::Canceled => true,
            Work::Republish { .. } => false,
        }
    }

    /// Whether the delivery may be acknowledged in the write that stores its terminal report
    /// (where the backend can): it ends with a fresh terminal report and is then acknowledged.
    /// An exhausted one is dead-lettered afterwards instead.
    pub(crate) fn acks_with_its_terminal_report(&self) -> bool {
        match self {
            Work::Run(_) | Work::Reject(_) | Work::Canceled => true,
            Work::Exhausted { .. } | Work::Republish { .. } => false,
        }
    }

    /// How the delivery is settled once the work ended with a terminal report.
    pub(crate) fn settlement(&self) -> Settlement {
        match self {
            Work::Exhausted { max_deliver } => {
                Settlement::DeadLetter(format!("{max_deliver} deliveries without a result"))
            }
            Work::Run(_) | Work::Reject(_) | Work::Canceled | Work::Republish { .. } => Settlement::Ack,
        }
    }
}

#[cfg(test)]
mod tests {
    use spine_protocol::report::{CanceledPayload, FailureKind, ReportBody};

    use super::*;
    use crate::decode::decode;

    const BUSY: Duration = Duration::from_millis(700);

    fn item() -> MailboxItem {
        let body = serde_json::json!({
            "item_id": "i", "protocol_message_id": "m", "logical_work_id": "w",
            "payload": {
                "protocol_version": "spine-assignment/1",
                "task": {"conversation_id": "c", "turn_id": "t"},
                "task_payload": {"mode": "skills_catalog_list"},
                "context_messages": [{"role": "user", "content": "hi"}]
            }
        });
        decode(body.to_string().as_bytes(), "d-1").item.expect("the item decodes")
    }

    fn terminal() -> Box<Report> {
        Box::new(Report {
            protocol_message_id: "m".into(),
            mailbox_item_id: "i".into(),
            logical_work_id: "w".into(),
            attempt_no: 1,
            body: ReportBody::ExecutionCanceled {
                terminal_payload: CanceledPayload {
                    failure_kind: FailureKind::Canceled,
                    last_error_summary: "x".into(),
                },
            },
        })
    }

    #[test]
    fn a_claimed_delivery_within_its_attempts_runs_its_item() {
        let plan = Plan::of(Claimed::Begun(Begin::Run), Ok(item()), 5, 5, BUSY);
        assert_eq!(plan, Plan::Work(Work::Run(Box::new(item()))));
        let Plan::Work(work) = plan else { return };
        assert!(work.holds_the_claim());
        assert!(work.acks_with_its_terminal_report());
        assert_eq!(work.settlement(), Settlement::Ack);
    }

    #[test]
    fn a_claimed_item_that_does_not_decode_is_rejected_not_run() {
        let rejection = Rejection::Invalid("payload: missing field".into());
        let plan = Plan::of(Claimed::Begun(Begin::Run), Err(rejection.clone()), 1, 5, BUSY);
        assert_eq!(plan, Plan::Work(Work::Reject(rejection)));
        let Plan::Work(work) = plan else { return };
        assert!(work.holds_the_claim());
        assert!(work.acks_with_its_terminal_report());
        assert_eq!(work.settlement(), Settlement::Ack);
    }

    #[test]
    fn a_delivery_past_its_attempts_is_exhausted_not_run() {
        for item in [Ok(item()), Err(Rejection::Unsupported("x".into()))] {
            let plan = Plan::of(Claimed::Begun(Begin::Run), item, 6, 5, BUSY);
            assert_eq!(plan, Plan::Work(Work::Exhausted { max_deliver: 5 }));
            let Plan::Work(work) = plan else { return };
            assert!(work.holds_the_claim());
            assert!(!work.acks_with_its_terminal_report(), "dead-lettered after its report, not acknowledged");
            assert_eq!(work.settlement(), Settlement::DeadLetter("5 deliveries without a result".into()));
        }
    }

    #[test]
    fn an_item_a_close_request_canceled_before_it_started_reports_canceled_even_past_its_attempts() {
        for count in [1, 6] {
            let plan = Plan::of(Claimed::Begun(Begin::CancelRequested), Ok(item()), count, 5, BUSY);
            assert_eq!(plan, Plan::Work(Work::Canceled));
            let Plan::Work(work) = plan else { return };
            assert!(work.holds_the_claim());
            assert!(work.acks_with_its_terminal_report());
            assert_eq!(work.settlement(), Settlement::Ack);
        }
    }

    #[test]
    fn a_finished_item_in_its_first_delivery_republishes_its_terminal_report_always() {
        let plan = Plan::of(Claimed::Begun(Begin::Done(terminal())), Ok(item()), 1, 5, BUSY);
        assert_eq!(plan, Plan::Work(Work::Republish { report: terminal(), when: Republish::Always }));
        let Plan::Work(work) = plan else { return };
        assert!(!work.holds_the_claim());
        assert!(!work.acks_with_its_terminal_report());
        assert_eq!(work.settlement(), Settlement::Ack);
    }

    #[test]
    fn a_finished_item_delivered_again_republishes_only_what_is_missing_even_past_its_attempts() {
        for count in [2, 6] {
            let plan = Plan::of(Claimed::Begun(Begin::Done(terminal())), Ok(item()), count, 5, BUSY);
            assert_eq!(plan, Plan::Work(Work::Republish { report: terminal(), when: Republish::IfMissing }));
        }
    }

    #[test]
    fn an_item_finished_under_the_same_message_republishes_only_what_is_missing_whatever_the_counter() {
        let plan = Plan::of(Claimed::Begun(Begin::Redelivered(terminal())), Ok(item()), 1, 5, BUSY);
        assert_eq!(plan, Plan::Work(Work::Republish { report: terminal(), when: Republish::IfMissing }));
    }

    #[test]
    fn an_item_another_delivery_runs_is_retried_after_the_busy_delay() {
        let plan = Plan::of(Claimed::Begun(Begin::Busy), Ok(item()), 6, 5, BUSY);
        assert_eq!(plan, Plan::Retry { after: Some(BUSY) });
    }

    #[test]
    fn a_delivery_the_worker_stops_before_claiming_is_handed_back_at_once() {
        assert_eq!(Plan::of(Claimed::Stopping, Ok(item()), 1, 5, BUSY), Plan::Retry { after: None });
    }

    #[test]
    fn a_delivery_whose_claim_failed_is_retried_after_the_busy_delay() {
        assert_eq!(Plan::of(Claimed::Failed, Ok(item()), 1, 5, BUSY), Plan::Retry { after: Some(BUSY) });
    }

    #[test]
    fn a_stale_delivery_is_left_to_the_later_one_neither_run_nor_settled() {
        let plan = Plan::of(Claimed::Begun(Begin::Stale { attempt_no: 3 }), Ok(item()), 1, 5, BUSY);
        assert_eq!(plan, Plan::Leave { attempt_no: 3 });
    }
}
