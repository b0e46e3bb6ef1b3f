//! spine's requests of the host (`can_use_tool`, `hook_callback`, `mcp_message`): ids, the
//! wait for the answer, and what happens when none comes.
//!
//! Contract of [`Control`]:
//! - [`Control::request`] writes `{"type":"control_request","request_id":"spine_req_N",…}` and
//!   waits for the host's `control_response` with that id ([`Control::resolve`], called by the
//!   stdin reader): its `response` on success, its `error` text otherwise.
//! - It never waits forever: a canceled token (the turn was interrupted, a hook's time limit)
//!   ends the wait with [`ControlError::Canceled`] and tells the host with a
//!   `control_cancel_request`; a host that closed stdin ([`Control::close`]) fails every
//!   pending request and every later one with [`ControlError::HostGone`]; an optional time
//!   limit ends it with [`ControlError::TimedOut`].
//! - [`Control::withdraw_questions`] withdraws the pending `can_use_tool` questions at once (an
//!   interrupt does, before it is answered, as Claude Code does); their waits end with their
//!   token, and a late answer to one is ignored.
//! - A response whose id is not pending (late, duplicated, made up, withdrawn) is ignored.
//! - Every line goes to stdout through one lock, whole: lines of concurrent writers never mix.
//! - [`Control::state`] writes Claude Code's `session_state_changed` lines (`running`,
//!   `requires_action`, `idle`, marked `sdk_host_only`) when the host asked for them with
//!   `CLAUDE_CODE_SDK_READS_SESSION_STATE=1` (the SDKs do: they keep stdin open until `idle`).

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use serde_json::Value;
use spine_core::CancellationToken;
use thiserror::Error;
use tokio::sync::oneshot;

use super::wire;

/// Why a request got no answer to use.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub(crate) enum ControlError {
    /// The host answered with an error.
    #[error("the host answered an error: {0}")]
    Host(String),
    /// The wait was canceled.
    #[error("canceled")]
    Canceled,
    /// The host closed stdin (or stdout is gone).
    #[error("the host closed the session")]
    HostGone,
    /// No answer within the time limit.
    #[error("no answer from the host within {0:?}")]
    TimedOut(Duration),
}

/// A request waiting for its answer; withdrawn when the wait ends without one.
struct Pending<'a> {
    control: &'a Control,
    id: &'a str,
    settled: bool,
}

impl Drop for Pending<'_> {
    fn drop(&mut self) {
        if !self.settled {
            self.control.withdraw(self.id);
        }
    }
}

/// The pending requests and the writer of lines.
#[derive(Debug, Default)]
pub(crate) struct Control {
    next: AtomicU64,
    state: Mutex<State>,
    /// The session's id, for `session_state_changed` lines; `None`: the host did not ask.
    states_for: Option<String>,
}

#[derive(Debug, Default)]
struct State {
    pending: HashMap<String, Waiting>,
    closed: bool,
}

/// A request waiting for its answer.
#[derive(Debug)]
struct Waiting {
    answer: oneshot::Sender<Result<Value, String>>,
    subtype: String,
    /// The host was told it is withdrawn (`control_cancel_request`).
    withdrawn: bool,
}

impl Control {
    /// A control channel with nothing pending.
    pub(crate) fn new() -> Self {
        Control::default()
    }

    /// One that also reports the session's state changes (session `session_id`).
    pub(crate) fn with_states(session_id: &str) -> Self {
        Control { states_for: Some(session_id.to_owned()), ..Control::default() }
    }

    /// Writes a `session_state_changed` line (`running`, `requires_action`, `idle`), when the
    /// host asked for them.
    pub(crate) fn state(&self, state: &str) {
        if let Some(session_id) = &self.states_for {
            self.emit(&serde_json::json!({
                "type": "system",
                "subtype": "session_state_changed",
                "state": state,
                "sdk_host_only": true,
                "uuid": uuid::Uuid::new_v4().to_string(),
                "session_id": session_id,
            }));
        }
    }

    /// Writes one line to stdout.
    pub(crate) fn emit(&self, value: &Value) {
        crate::render::stream_json::emit(value);
    }

    /// Sends `body` (with its `subtype`) and waits for the answer; see the module contract.
    pub(crate) async fn request(
        &self,
        body: Value,
        cancel: &CancellationToken,
        limit: Option<Duration>,
    ) -> Result<Value, ControlError> {
        let id = format!("spine_req_{}", self.next.fetch_add(1, Ordering::Relaxed) + 1);
        let (tx, rx) = oneshot::channel();
        {
            let Ok(mut state) = self.state.lock() else { return Err(ControlError::HostGone) };
            if state.closed {
                return Err(ControlError::HostGone);
            }
            let subtype = body.get("subtype").and_then(Value::as_str).unwrap_or_default().to_owned();
            state.pending.insert(id.clone(), Waiting { answer: tx, subtype, withdrawn: false });
        }
        self.emit(&wire::request(&id, body));
        // Whatever ends the wait — an answer, the token, the limit, or the caller dropping this
        // future (a hook's own time limit) — the request is no longer pending; the host is told
        // when spine gave it up.
        let mut pending = Pending { control: self, id: &id, settled: false };
        let wait = async {
            match limit {
                Some(limit) => tokio::time::timeout(limit, rx).await.map_err(|_| ControlError::TimedOut(limit)),
                None => Ok(rx.await),
            }
        };
        let outcome = tokio::select! {
            answer = wait => answer,
            () = cancel.cancelled() => Err(ControlError::Canceled),
        };
        match outcome {
            Ok(Ok(Ok(value))) => {
                pending.settled = true;
                Ok(value)
            }
            Ok(Ok(Err(message))) => {
                pending.settled = true;
                Err(ControlError::Host(message))
            }
            // The sender was dropped: the host is gone.
            Ok(Err(_)) => {
                pending.settled = true;
                Err(ControlError::HostGone)
            }
            Err(e) => Err(e),
        }
    }

    /// Delivers the host's answer to request `id`; `false` when nothing waits for it.
    pub(crate) fn resolve(&self, id: &str, result: Result<Value, String>) -> bool {
        let Ok(mut state) = self.state.lock() else { return false };
        // A withdrawn question stays until its wait ends (with its token), unanswered.
        if state.pending.get(id).is_none_or(|waiting| waiting.withdrawn) {
            return false;
        }
        state.pending.remove(id).is_some_and(|waiting| waiting.answer.send(result).is_ok())
    }

    /// The host is gone: every pending request and every later one fails.
    pub(crate) fn close(&self) {
        if let Ok(mut state) = self.state.lock() {
            state.closed = true;
            state.pending.clear();
        }
    }

    /// Withdraws every pending `can_use_tool` question: the host is told before this returns
    /// (so before what the caller writes next); the waits end with their token and do not tell
    /// it again.
    pub(crate) fn withdraw_questions(&self) {
        let withdrawn: Vec<String> = match self.state.lock() {
            Ok(mut state) => state
                .pending
                .iter_mut()
                .filter(|(_, waiting)| waiting.subtype == "can_use_tool" && !waiting.withdrawn)
                .map(|(id, waiting)| {
                    waiting.withdrawn = true;
                    id.clone()
                })
                .collect(),
            Err(_) => return,
        };
        for id in withdrawn {
            self.emit(&wire::cancel(&id));
        }
    }

    /// Gives up request `id` if it is still pending: the host is told, unless it was already.
    fn withdraw(&self, id: &str) {
        let told = self.state.lock().ok().and_then(|mut s| s.pending.remove(id)).map(|waiting| waiting.withdrawn);
        if told == Some(false) {
            self.emit(&wire::cancel(id));
        }
    }

    /// How many requests wait for an answer.
    #[cfg(test)]
    pub(crate) fn pending(&self) -> usize {
        self.state.lock().map(|s| s.pending.len()).unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use serde_json::json;

    use super::*;

    async fn settle(control: &Control) {
        for _ in 0..100 {
            if control.pending() > 0 {
                return;
            }
            tokio::task::yield_now().await;
        }
    }

    #[tokio::test]
    async fn an_answer_resolves_the_request_with_its_id() {
        let control = Arc::new(Control::new());
        let waiting = {
            let control = Arc::clone(&control);
            tokio::spawn(async move {
                control.request(json!({"subtype": "can_use_tool"}), &CancellationToken::new(), None).await
            })
        };
        settle(&control).await;
        assert!(!control.resolve("spine_req_999", Ok(json!({}))), "an unknown id resolves nothing");
        assert!(control.resolve("spine_req_1", Ok(json!({"behavior": "allow"}))));
        assert_eq!(waiting.await.ok(), Some(Ok(json!({"behavior": "allow"}))));
    }

    #[tokio::test]
    async fn closing_fails_pending_and_later_requests() {
        let control = Arc::new(Control::new());
        let waiting = {
            let control = Arc::clone(&control);
            tokio::spawn(async move { control.request(json!({"subtype": "x"}), &CancellationToken::new(), None).await })
        };
        settle(&control).await;
        control.close();
        assert_eq!(waiting.await.ok(), Some(Err(ControlError::HostGone)));
        let later = control.request(json!({"subtype": "x"}), &CancellationToken::new(), None).await;
        assert_eq!(later, Err(ControlError::HostGone));
    }

    #[tokio::test]
    async fn a_canceled_or_timed_out_request_is_no_longer_pending() {
        let control = Control::new();
        let cancel = CancellationToken::new();
        cancel.cancel();
        assert_eq!(control.request(json!({"subtype": "x"}), &cancel, None).await, Err(ControlError::Canceled));
        let limit = Duration::from_millis(10);
        let timed = control.request(json!({"subtype": "x"}), &CancellationToken::new(), Some(limit)).await;
        assert_eq!(timed, Err(ControlError::TimedOut(limit)));
        assert_eq!(control.pending(), 0);
    }

    #[tokio::test]
    async fn a_dropped_wait_is_no_longer_pending() {
        let control = Control::new();
        let token = CancellationToken::new();
        let wait = control.request(json!({"subtype": "x"}), &token, None);
        let limited = tokio::time::timeout(Duration::from_millis(10), wait).await;
        assert!(limited.is_err(), "nothing answered");
        assert_eq!(control.pending(), 0);
    }

    #[tokio::test]
    async fn a_withdrawn_questions_late_answer_is_ignored_and_its_wait_ends_with_its_token() {
        let control = Arc::new(Control::new());
        let token = CancellationToken::new();
        let waiting = {
            let (control, token) = (Arc::clone(&control), token.clone());
            tokio::spawn(async move { control.request(json!({"subtype": "can_use_tool"}), &token, None).await })
        };
        settle(&control).await;
        control.withdraw_questions();
        assert!(!control.resolve("spine_req_1", Ok(json!({"behavior": "allow"}))), "a withdrawn question");
        token.cancel();
        assert_eq!(waiting.await.ok(), Some(Err(ControlError::Canceled)));
        assert_eq!(control.pending(), 0);
    }

    #[tokio::test]
    async fn an_error_answer_is_the_hosts_error() {
        let control = Arc::new(Control::new());
        let waiting = {
            let control = Arc::clone(&control);
            tokio::spawn(async move { control.request(json!({"subtype": "x"}), &CancellationToken::new(), None).await })
        };
        settle(&control).await;
        control.resolve("spine_req_1", Err("no callback".to_owned()));
        assert_eq!(waiting.await.ok(), Some(Err(ControlError::Host("no callback".to_owned()))));
    }
}
