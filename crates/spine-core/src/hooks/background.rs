//! Hooks that answer after their firing: `async` hooks, hooks that go to the background at run
//! time (Claude Code's `{"async": true}` first line), and `asyncRewake` hooks, which may wake the
//! model.
//!
//! Contract:
//! - A hook goes to the background by returning [`Started::Background`] from
//!   [`Hook::start`](super::Hook::start) (the default `start` answers with
//!   [`Hook::call`](super::Hook::call)); a hook registered [`RunMode::Background`](super::RunMode)
//!   always runs in the background. Either way the firing goes on as if the hook had no opinion.
//! - When a background hook ends, its [`Late`] answer is delivered once: its
//!   `additionalContext` and `systemMessage` are queued as context for the model, its decisions
//!   are ignored, and one trace entry records it (`applied: false`). A [`Wake`] (an
//!   `asyncRewake` hook that exited 2) is queued as a user message instead
//!   ([`Delivered::Wake`]), and its trace entry says `wake` (`applied: true`). The queue is read
//!   before the next model request ([`BackgroundHooks::take`]). Context is queued before the trace
//!   entry is written, so a reader of the trace that sees the entry knows the context is queued.
//! - [`BackgroundHooks::settle_wakes`] waits for the hooks that may wake (they are bounded by
//!   their own time limit), giving up when the run is canceled; a run about to end calls it.
//! - A [`BackgroundHooks`] belongs to one run (aborted when the run ends) or is shared by the
//!   runs of an interactive session (it then outlives each run, and the session ends it with
//!   [`BackgroundHooks::shutdown`]; [`BackgroundHooks::woken`] tells it that a wake arrived).
//! - Background subagents (the runner's background `Agent` calls) go through the same queue
//!   as wakers ([`BackgroundHooks::spawn_wake`]): a run about to end waits for them, what they
//!   deliver ([`Delivered::Agent`]: a `<task-notification>` user message, with the subagent's
//!   usage) reaches the next model request and wakes an idle interactive session, and
//!   cancellation and [`BackgroundHooks::shutdown`] end them as they end hooks.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Instant;

use std::collections::BTreeMap;

use futures_util::future::BoxFuture;
use serde_json::Value;
use spine_protocol::hook::{Action, HookEvent, HookOutput};
use spine_protocol::message::Message;
use spine_protocol::run::ModelUsage;
use spine_protocol::trace::{HookTrace, TraceRecord};
use tokio::sync::Notify;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use super::HookError;
use crate::trace::{Trace, micros};

/// How one firing of a hook began.
pub enum Started<A> {
    /// The hook answered.
    Answered(Result<HookOutput<A>, HookError>),
    /// The hook goes on in the background; the firing proceeds as if it had no opinion.
    Background {
        /// Its answer, when it ends (the future owns whatever the hook still runs, and bounds it
        /// by its own time limit and by the run's cancellation).
        answer: BoxFuture<'static, Late<A>>,
        /// Whether its end may wake the model (`asyncRewake`): a run about to end waits for it.
        wakes: bool,
    },
}

/// The answer of a hook that ran in the background.
#[derive(Debug)]
pub struct Late<A> {
    /// Its answer or its failure (decisions are ignored).
    pub result: Result<HookOutput<A>, HookError>,
    /// A message that wakes the model (an `asyncRewake` hook that exited 2).
    pub wake: Option<Wake>,
}

impl<A> Late<A> {
    /// An answer that does not wake the model.
    pub fn answered(result: Result<HookOutput<A>, HookError>) -> Self {
        Late { result, wake: None }
    }
}

/// A background hook's message to the model, delivered as a user message before the next
/// model request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Wake {
    /// What the model reads.
    pub message: String,
    /// One line for the user.
    pub summary: String,
}

/// What background hooks delivered for the next model request.
#[derive(Debug, Clone, PartialEq)]
pub enum Delivered {
    /// Context for the model (`additionalContext`, `systemMessage`).
    Context(Message),
    /// A wake: a user message for the model, and a line for the user.
    Wake {
        /// The hook that woke the model.
        hook_id: String,
        /// [`Wake::summary`].
        summary: String,
        /// [`Wake::message`].
        text: String,
    },
    /// A background subagent ended: its notification for the model, a line for the user, and
    /// its usage (added to the run that delivers it).
    Agent {
        /// Who it was: `<agent_type> <agent_id>`.
        agent: String,
        /// One line for the user (`Agent "<description>" finished`).
        summary: String,
        /// The `<task-notification>` the model reads as a user message.
        text: String,
        /// Its usage and cost, per model id.
        usage: BTreeMap<String, ModelUsage>,
        /// Whether it wakes the model: not when it was stopped (its run was canceled — the
        /// notification then waits for the next request without starting one).
        wakes: bool,
    },
}

impl Delivered {
    /// The message appended to the conversation.
    pub fn into_message(self) -> Message {
        match self {
            Delivered::Context(message) => message,
            Delivered::Wake { text, .. } | Delivered::Agent { text, .. } => Message::user(text),
        }
    }

    /// Whether it wakes the model (a user message the model must answer): a hook's wake or a
    /// background subagent's notification.
    pub fn wakes(&self) -> bool {
        matches!(self, Delivered::Wake { .. } | Delivered::Agent { wakes: true, .. })
    }
}

/// Who a background hook is, for its trace entry.
pub(crate) struct Origin {
    pub(crate) hook_id: String,
    pub(crate) source: String,
    pub(crate) tool_use_id: Option<String>,
    pub(crate) trace: Trace,
}

/// The background hooks of one run, or of an interactive session's runs (cheap to clone: the
/// clones share one state).
#[derive(Clone, Default)]
pub struct BackgroundHooks {
    inner: Arc<Inner>,
}

#[derive(Default)]
struct Inner {
    pending: Mutex<Vec<Delivered>>,
    tasks: Mutex<JoinSet<()>>,
    wakers: Mutex<JoinSet<()>>,
    woke: Notify,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl BackgroundHooks {
    /// No hooks running, nothing delivered.
    pub fn new() -> Self {
        Self::default()
    }

    /// Takes what background hooks delivered since the last call, in arrival order.
    pub fn take(&self) -> Vec<Delivered> {
        std::mem::take(&mut *lock(&self.inner.pending))
    }

    /// Whether a wake (a hook's, or a background subagent's notification) waits for the next
    /// model request.
    pub fn has_wake(&self) -> bool {
        lock(&self.inner.pending).iter().any(Delivered::wakes)
    }

    /// Whether a background subagent's notification that wakes the model waits for the next
    /// model request.
    pub fn has_agent_notice(&self) -> bool {
        lock(&self.inner.pending).iter().any(|d| matches!(d, Delivered::Agent { wakes: true, .. }))
    }

    /// Resolves when a wake arrives (at once if one arrived since the last call returned).
    pub async fn woken(&self) {
        self.inner.woke.notified().await;
    }

    /// Whether hooks that may wake the model are still running.
    pub fn wakers_running(&self) -> bool {
        let mut set = lock(&self.inner.wakers);
        while set.try_join_next().is_some() {}
        !set.is_empty()
    }

    /// Waits until no hook that may wake the model is running, or `cancel` fires (the hooks
    /// still running are then aborted).
    pub async fn settle_wakes(&self, cancel: &CancellationToken) {
        loop {
            let mut set = std::mem::take(&mut *lock(&self.inner.wakers));
            if set.is_empty() {
                return;
            }
            tokio::select! {
                () = async { while set.join_next().await.is_some() {} } => {}
                () = cancel.cancelled() => {
                    set.abort_all();
                    return;
                }
            }
        }
    }

    /// Aborts every background hook still running (their processes are killed).
    pub fn shutdown(&self) {
        lock(&self.inner.tasks).abort_all();
        lock(&self.inner.wakers).abort_all();
    }

    /// Runs `work` in the background as a waker (a background subagent): a run about to end
    /// waits for it, and what it delivers is queued for the next model request and wakes an
    /// idle session ([`BackgroundHooks::woken`]).
    pub fn spawn_wake(&self, work: BoxFuture<'static, Delivered>) {
        let inner = Arc::clone(&self.inner);
        let task = async move {
            let delivered = work.await;
            let wakes = delivered.wakes();
            lock(&inner.pending).push(delivered);
            if wakes {
                inner.woke.notify_one();
            }
        };
        let mut set = lock(&self.inner.wakers);
        while set.try_join_next().is_some() {}
        set.spawn(task);
    }

    /// Runs `answer` in the background and delivers it when it ends (see the module contract).
    pub(crate) fn spawn<E: HookEvent>(&self, answer: BoxFuture<'static, Late<E::Action>>, wakes: bool, who: Origin) {
        let started = Instant::now();
        let inner = Arc::clone(&self.inner);
        let task = async move {
            let late = answer.await;
            deliver::<E>(&inner, late, &who, started);
        };
        let set = if wakes { &self.inner.wakers } else { &self.inner.tasks };
        let mut set = lock(set);
        while set.try_join_next().is_some() {}
        set.spawn(task);
    }
}

/// Queues a late answer's context or wake, then records its trace entry.
fn deliver<E: HookEvent>(inner: &Inner, late: Late<E::Action>, who: &Origin, started: Instant) {
    let Late { result, wake } = late;
    let (decision, detail) = match &result {
        Ok(out) => (out.action.decision(), serde_json::to_value(out).unwrap_or(Value::Null)),
        Err(e) => (e.kind.as_str(), Value::String(e.to_string())),
    };
    {
        let mut pending = lock(&inner.pending);
        if let Ok(out) = result {
            let texts = [out.action.additional_context().map(str::to_owned), out.system_message];
            for text in texts.into_iter().flatten() {
                pending.push(Delivered::Context(Message::context(E::NAME, text)));
            }
        }
        if let Some(wake) = &wake {
            pending.push(Delivered::Wake {
                hook_id: who.hook_id.clone(),
                summary: wake.summary.clone(),
                text: wake.message.clone(),
            });
        }
    }
    if wake.is_some() {
        inner.woke.notify_one();
    }
    who.trace.record(TraceRecord::Hook(HookTrace {
        event: E::NAME,
        hook_id: who.hook_id.clone(),
        source: who.source.clone(),
        tool_use_id: who.tool_use_id.clone(),
        decision: if wake.is_some() { "wake".to_owned() } else { decision.to_owned() },
        applied: wake.is_some(),
        duration_us: micros(started.elapsed()),
        detail,
    }));
}

#[cfg(test)]
mod tests {
    use super::*;
    use spine_protocol::hook::{ContextAction, PostToolUseFailure};

    fn origin(trace: &Trace) -> Origin {
        Origin { hook_id: "h".into(), source: "test".into(), tool_use_id: None, trace: trace.clone() }
    }

    #[tokio::test]
    async fn a_wake_is_queued_as_a_user_message_and_recorded_as_applied() {
        let trace = Trace::default();
        let bg = BackgroundHooks::new();
        let wake = Wake { message: "tests failed".into(), summary: "tests".into() };
        let late: Late<ContextAction> = Late { result: Err(HookError::failed("exit 2")), wake: Some(wake) };
        bg.spawn::<PostToolUseFailure>(Box::pin(async move { late }), true, origin(&trace));
        bg.settle_wakes(&CancellationToken::new()).await;
        assert!(bg.has_wake());
        let delivered = bg.take();
        assert_eq!(delivered.len(), 1);
        assert_eq!(delivered[0].clone().into_message(), Message::user("tests failed"));
        let entries = trace.entries();
        assert!(matches!(&entries[0].record, TraceRecord::Hook(h) if h.decision == "wake" && h.applied));
        assert!(!bg.has_wake(), "taken once");
    }

    #[tokio::test]
    async fn a_background_agents_notice_is_waited_for_and_delivered_as_a_wake() {
        let bg = BackgroundHooks::new();
        let (release, released) = tokio::sync::oneshot::channel::<()>();
        bg.spawn_wake(Box::pin(async move {
            let _ = released.await;
            Delivered::Agent {
                agent: "worker a1".into(),
                summary: "Agent \"x\" finished".into(),
                text: "<task-notification>…</task-notification>".into(),
                usage: BTreeMap::new(),
                wakes: true,
            }
        }));
        assert!(bg.wakers_running() && !bg.has_wake(), "running, nothing delivered yet");
        let _ = release.send(());
        bg.settle_wakes(&CancellationToken::new()).await;
        assert!(bg.has_wake() && bg.has_agent_notice());
        let delivered = bg.take();
        assert_eq!(delivered[0].clone().into_message(), Message::user("<task-notification>…</task-notification>"));
    }

    #[tokio::test]
    async fn settling_wakes_gives_up_when_the_run_is_canceled() {
        let bg = BackgroundHooks::new();
        let never = Box::pin(std::future::pending::<Late<ContextAction>>());
        bg.spawn::<PostToolUseFailure>(never, true, origin(&Trace::default()));
        assert!(bg.wakers_running());
        let cancel = CancellationToken::new();
        cancel.cancel();
        bg.settle_wakes(&cancel).await;
        assert!(!bg.wakers_running(), "aborted");
    }

    #[tokio::test]
    async fn a_context_of_a_hook_that_does_not_wake_is_context() {
        let trace = Trace::default();
        let bg = BackgroundHooks::new();
        let out = HookOutput::new(ContextAction::context("late note"));
        bg.spawn::<PostToolUseFailure>(Box::pin(async move { Late::answered(Ok(out)) }), false, origin(&trace));
        for _ in 0..100 {
            if !trace.entries().is_empty() {
                break;
            }
            tokio::task::yield_now().await;
        }
        assert_eq!(bg.take(), vec![Delivered::Context(Message::context(PostToolUseFailure::NAME, "late note"))]);
        assert!(matches!(&trace.entries()[0].record, TraceRecord::Hook(h) if !h.applied));
    }
}
