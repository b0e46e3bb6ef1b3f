//! What a hook printed, for observers: the engine tells them when each hook starts and ends
//! ([`RunEvent::HookStarted`], [`RunEvent::HookEnded`]: stream-json's `hook_started` and
//! `hook_response` lines), with the hook's output when it has one.
//!
//! Contract:
//! - The engine runs every hook's firing inside `capture`; a hook that has raw output (a
//!   command's stdout, stderr and exit status; an HTTP body and status; a persistent hook's
//!   line; a prompt hook's reply) hands it over with [`report`] before it answers. Outside a
//!   capture (a background hook's late answer) [`report`] does nothing, and [`listening`] says
//!   whether it would be kept, so a hook can skip copying its output.
//! - One firing of one hook is one `execution` id (a UUID), the same in its started and ended
//!   events; the hook's name is `Event:subject` (the matcher's subject: `PreToolUse:Bash`,
//!   `SessionStart:startup`), or the event alone when it has none (`Stop`), as Claude Code
//!   names hooks.
//! - The outcome ([`HookRunOutcome`]): `success` for an answer whose process exited 0 (or that
//!   has no exit status), `error` for any other exit status (exit 2 included, as Claude Code
//!   reports a blocking hook) and for a failure, `cancelled` for a time-out, `background` for a
//!   hook that went on in the background.

use std::cell::RefCell;
use std::future::Future;

use spine_protocol::hook::{HookEvent, HookOutput};

use super::background::Started;
use super::registry::HookSpec;
use super::{HookError, HookErrorKind};
use crate::observer::{RunEvent, RunObserver};

/// A hook's output as it printed it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HookRaw {
    /// Its stdout (an HTTP hook's body, a persistent hook's line, a prompt hook's reply).
    pub stdout: String,
    /// Its stderr.
    pub stderr: String,
    /// Its exit status; `None` when killed or not a process.
    pub exit_code: Option<i32>,
    /// An HTTP hook's status code.
    pub http_status: Option<u16>,
}

/// How one firing of one hook ended, for observers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HookRunOutcome {
    /// It answered, and its process (if any) exited 0.
    Success,
    /// Another exit status, or a failure.
    Error,
    /// It ran out of time.
    Cancelled,
    /// It went on in the background; its answer comes later.
    Background,
}

impl HookRunOutcome {
    /// Claude Code's word: `success`, `error`, `cancelled` (and spine's `background`).
    pub fn as_str(self) -> &'static str {
        match self {
            HookRunOutcome::Success => "success",
            HookRunOutcome::Error => "error",
            HookRunOutcome::Cancelled => "cancelled",
            HookRunOutcome::Background => "background",
        }
    }
}

tokio::task_local! {
    static RAW: RefCell<Option<HookRaw>>;
}

/// Whether a [`report`] now would be kept (the hook runs inside a `capture`).
pub fn listening() -> bool {
    RAW.try_with(|_| ()).is_ok()
}

/// Hands the running hook's output to the engine (see the module contract).
pub fn report(raw: HookRaw) {
    let _ = RAW.try_with(|slot| *slot.borrow_mut() = Some(raw));
}

/// Runs `firing` and returns what it reported with its result.
pub(crate) async fn capture<F: Future>(firing: F) -> (F::Output, Option<HookRaw>) {
    RAW.scope(RefCell::new(None), async {
        let out = firing.await;
        let raw = RAW.try_with(|slot| slot.borrow_mut().take()).ok().flatten();
        (out, raw)
    })
    .await
}

/// One firing of one hook, as observers see it.
pub(crate) struct Execution {
    id: String,
    name: String,
}

impl Execution {
    /// Tells `observer` that `hook` starts on `input`.
    pub(crate) fn start<E: HookEvent>(observer: &dyn RunObserver, hook: &HookSpec<E>, input: &E::Input) -> Self {
        let name = match E::matcher_subject(input) {
            Some(subject) => format!("{}:{subject}", E::NAME),
            None => E::NAME.to_string(),
        };
        let execution = Execution { id: uuid::Uuid::new_v4().to_string(), name };
        observer.on_event(&RunEvent::HookStarted {
            event: E::NAME,
            hook_id: &hook.id,
            hook_name: &execution.name,
            execution: &execution.id,
        });
        execution
    }

    /// Tells `observer` how it ended.
    pub(crate) fn end<E: HookEvent>(
        &self,
        observer: &dyn RunObserver,
        hook: &HookSpec<E>,
        started: &Started<E::Action>,
        raw: Option<&HookRaw>,
    ) {
        let outcome = match started {
            Started::Answered(result) => outcome_of(result, raw),
            Started::Background { .. } => HookRunOutcome::Background,
        };
        self.ended(observer, hook, outcome, raw);
    }

    /// Tells `observer` that it runs in the background (a [`super::RunMode::Background`] hook).
    pub(crate) fn backgrounded<E: HookEvent>(&self, observer: &dyn RunObserver, hook: &HookSpec<E>) {
        self.ended(observer, hook, HookRunOutcome::Background, None);
    }

    fn ended<E: HookEvent>(
        &self,
        observer: &dyn RunObserver,
        hook: &HookSpec<E>,
        outcome: HookRunOutcome,
        raw: Option<&HookRaw>,
    ) {
        observer.on_event(&RunEvent::HookEnded {
            event: E::NAME,
            hook_id: &hook.id,
            hook_name: &self.name,
            execution: &self.id,
            outcome,
            raw,
        });
    }
}

fn outcome_of<A>(result: &Result<HookOutput<A>, HookError>, raw: Option<&HookRaw>) -> HookRunOutcome {
    match (result, raw.and_then(|r| r.exit_code)) {
        (Err(e), _) if e.kind == HookErrorKind::Timeout => HookRunOutcome::Cancelled,
        (Err(_), _) => HookRunOutcome::Error,
        (Ok(_), None | Some(0)) => HookRunOutcome::Success,
        (Ok(_), Some(_)) => HookRunOutcome::Error,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_report_inside_a_capture_is_kept_and_outside_is_dropped() {
        report(HookRaw { stdout: "lost".into(), ..HookRaw::default() });
        assert!(!listening());
        let (value, raw) = capture(async {
            assert!(listening());
            report(HookRaw { stdout: "out".into(), stderr: "err".into(), exit_code: Some(2), http_status: None });
            7
        })
        .await;
        assert_eq!(value, 7);
        assert_eq!(raw.map(|r| (r.stdout, r.stderr, r.exit_code)), Some(("out".into(), "err".into(), Some(2))));
        let (_, none) = capture(async {}).await;
        assert_eq!(none, None);
    }

    #[test]
    fn exit_status_two_is_an_error_and_a_time_out_is_cancelled() {
        let ok: Result<HookOutput<()>, HookError> = Ok(HookOutput::new(()));
        let exit = |code| HookRaw { exit_code: Some(code), ..HookRaw::default() };
        assert_eq!(outcome_of(&ok, Some(&exit(0))), HookRunOutcome::Success);
        assert_eq!(outcome_of(&ok, None), HookRunOutcome::Success);
        assert_eq!(outcome_of(&ok, Some(&exit(2))), HookRunOutcome::Error);
        let timeout: Result<HookOutput<()>, HookError> = Err(HookError::timeout("slow"));
        assert_eq!(outcome_of(&timeout, None), HookRunOutcome::Cancelled);
        let failed: Result<HookOutput<()>, HookError> = Err(HookError::failed("x"));
        assert_eq!(outcome_of(&failed, Some(&exit(0))), HookRunOutcome::Error);
    }
}
