//! Runs the hooks of one event: matcher and `if` filtering, de-duplication, chains and
//! concurrent groups, background hooks, the failure policy, and one trace entry per hook.
//!
//! A hook answers through [`Hook::start`](super::Hook::start): an answer is settled now; a hook
//! that goes to the background (and every [`RunMode::Background`] hook) is handed to the run's
//! [`BackgroundHooks`] and counts as no opinion for this firing (a `-v` note says so).
//!
//! The engine knows nothing of any event's rules: it hands each answer, in configuration order,
//! to the event's [`Fold`] (in [`super::events`]), which merges it and says whether to
//! short-circuit. Answers after a short-circuit are recorded as not applied.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::future::join_all;
use serde_json::Value;
use spine_protocol::hook::{Action, HookEvent, HookOutput};
use spine_protocol::trace::{HookTrace, TraceRecord};
use tokio_util::sync::CancellationToken;

use super::background::{BackgroundHooks, Delivered, Late, Origin, Started};
use super::raw::{self, Execution};
use super::registry::{GroupMode, HookRegistry, HookSpec, RunMode};
use super::{FailurePolicy, HookContext, HookError, HookErrorKind};
use crate::observer::{RunEvent, RunObserver};
use crate::permission::rule::RuleUse;
use crate::trace::{Trace, micros};

/// Whether to go on with the next hook.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flow {
    /// Go on with the next hook.
    Continue,
    /// Later hooks of this event do not run (or are not applied).
    ShortCircuit,
}

/// An event's merge rules.
pub trait Fold<E: HookEvent> {
    /// Merges one answer, in configuration order. `input` is what the next hook of a chain
    /// sees; rewrites update it. An `Err` is a contract violation (e.g. an invalid rewrite).
    fn answer(&mut self, hook: &HookSpec<E>, action: E::Action, input: &mut E::Input) -> Result<Flow, HookError>;

    /// A failure that counts: the hook fails closed, or broke the contract.
    fn failure(&mut self, hook: &HookSpec<E>, error: &HookError) -> Flow;
}

/// `continue: false` from some hook: the run ends after this event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HaltBy {
    /// The hook that asked.
    pub hook_id: String,
    /// Its reason for the user.
    pub stop_reason: Option<String>,
}

/// What every dispatch returns beside the event's own outcome.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Dispatched {
    /// The first `continue: false`, if any hook asked (OR over hooks).
    pub halt: Option<HaltBy>,
    /// `(hook id, answer in one word)` of each applied answer and each failure that counted,
    /// in configuration order; a rewrite the fold rejects adds `contract_error` after it.
    pub said: Vec<(String, &'static str)>,
}

/// The hooks of one run: the frozen registry plus per-run state (trace, observer, the
/// background hooks and what they delivered).
pub struct HookRuntime {
    registry: Arc<HookRegistry>,
    trace: Trace,
    observer: Arc<dyn RunObserver>,
    project_dir: PathBuf,
    background: BackgroundHooks,
    /// Whether `background` is this run's own (ended with the run) or a session's.
    owns_background: bool,
}

impl HookRuntime {
    /// The hooks of one run.
    pub fn new(
        registry: Arc<HookRegistry>,
        trace: Trace,
        observer: Arc<dyn RunObserver>,
        project_dir: PathBuf,
    ) -> Self {
        HookRuntime {
            registry,
            trace,
            observer,
            project_dir,
            background: BackgroundHooks::new(),
            owns_background: true,
        }
    }

    /// Uses a session's background hooks: they outlive this run (the session delivers their
    /// wakes and ends them), and the run does not wait for them at its end.
    pub fn with_background(mut self, shared: BackgroundHooks) -> Self {
        self.background = shared;
        self.owns_background = false;
        self
    }

    /// The frozen hooks this runtime fires.
    pub fn registry(&self) -> &HookRegistry {
        &self.registry
    }

    /// Where hook entries and warnings are recorded.
    pub fn trace(&self) -> &Trace {
        &self.trace
    }

    /// Who is told of firings, answers and warnings as they happen.
    pub fn observer(&self) -> &dyn RunObserver {
        self.observer.as_ref()
    }

    /// The background work of this run (or of its session): where background subagents go
    /// too ([`BackgroundHooks::spawn_wake`]).
    pub fn background(&self) -> &BackgroundHooks {
        &self.background
    }

    /// Takes what background hooks delivered since the last call (contexts and wakes).
    pub fn take_background(&self) -> Vec<Delivered> {
        self.background.take()
    }

    /// Before the run ends: waits for this run's hooks that may wake the model (not for a
    /// session's: the session delivers their wakes), giving up when `cancel` fires; true when
    /// a wake waits for the next model request.
    pub async fn settle_wakes(&self, cancel: &CancellationToken) -> bool {
        if self.owns_background {
            self.background.settle_wakes(cancel).await;
        }
        self.background.has_wake()
    }

    /// Cancels this run's background hooks still running (at the end of the run; a session's
    /// are left to the session).
    pub fn shutdown(&self) {
        if self.owns_background {
            self.background.shutdown();
        }
    }

    /// Runs the hooks of event `E` and folds their answers.
    pub async fn dispatch<E: HookEvent, F: Fold<E>>(
        &self,
        ctx: &HookContext,
        input: &mut E::Input,
        fold: &mut F,
        tool_use_id: Option<&str>,
    ) -> Dispatched {
        let mut out = Dispatched::default();
        let mut seen: Vec<&str> = Vec::new();
        for group in self.registry.groups::<E>() {
            let alias = E::matcher_alias(input);
            let subject = E::matcher_subject(input);
            // A tool's former name (`Task` for `Agent`) matches its calls too (crate::tool_names).
            let former = |s: &str| crate::tool_names::former_names(s).any(|f| group.matcher.matches(Some(f)));
            let matched = group.matcher.matches(subject)
                || alias.is_some_and(|a| group.matcher.matches(Some(a)))
                || (E::HAS_TOOL_CALL && subject.is_some_and(former));
            if !matched {
                continue;
            }
            let mut members: Vec<&HookSpec<E>> = Vec::with_capacity(group.hooks.len());
            for hook in &group.hooks {
                if !self.selected(hook, input, &mut seen) {
                    continue;
                }
                if let Some(status) = &hook.status_message {
                    let text = format!("{} hook `{}`: {status}", E::NAME, hook.id);
                    self.observer.on_event(&RunEvent::Note { text: &text });
                }
                match hook.run {
                    RunMode::Blocking => members.push(hook),
                    RunMode::Background => self.spawn_background(hook, ctx, input, tool_use_id),
                }
            }
            let flow = match (group.mode, members.len()) {
                (_, 0) => Flow::Continue,
                (GroupMode::Chain, _) | (GroupMode::Concurrent, 1) => {
                    let mut flow = Flow::Continue;
                    for hook in members {
                        let started = Instant::now();
                        let execution = Execution::start(self.observer(), hook, input);
                        let (answer, raw) = raw::capture(hook.hook.start(ctx, input)).await;
                        execution.end(self.observer(), hook, &answer, raw.as_ref());
                        let result = match answer {
                            Started::Answered(result) => result,
                            Started::Background { answer, wakes } => {
                                self.went_background(hook, answer, wakes, tool_use_id);
                                continue;
                            }
                        };
                        flow = self.settle(hook, result, started.elapsed(), input, fold, &mut out, tool_use_id, true);
                        if flow == Flow::ShortCircuit {
                            break;
                        }
                    }
                    flow
                }
                (GroupMode::Concurrent, _) => {
                    let snapshot = input.clone();
                    // Every hook of the group is announced before any starts, as Claude Code
                    // does: a quick one may otherwise end within its first poll, before the
                    // next one's start is told.
                    let executions: Vec<Execution> =
                        members.iter().map(|hook| Execution::start(self.observer(), hook, &snapshot)).collect();
                    let results = join_all(members.iter().zip(&executions).map(|(hook, execution)| {
                        let snapshot = &snapshot;
                        async move {
                            let started = Instant::now();
                            let (result, raw) = raw::capture(hook.hook.start(ctx, snapshot)).await;
                            execution.end(self.observer(), hook, &result, raw.as_ref());
                            (result, started.elapsed())
                        }
                    }))
                    .await;
                    let mut flow = Flow::Continue;
                    for (hook, (result, elapsed)) in members.into_iter().zip(results) {
                        let result = match result {
                            Started::Answered(result) => result,
                            Started::Background { answer, wakes } => {
                                self.went_background(hook, answer, wakes, tool_use_id);
                                continue;
                            }
                        };
                        let live = flow == Flow::Continue;
                        let next = self.settle(hook, result, elapsed, input, fold, &mut out, tool_use_id, live);
                        if live {
                            flow = next;
                        }
                    }
                    flow
                }
            };
            if flow == Flow::ShortCircuit {
                break;
            }
        }
        out
    }

    /// Matcher-independent filters: the `if` rule and de-duplication.
    fn selected<'a, E: HookEvent>(&self, hook: &'a HookSpec<E>, input: &E::Input, seen: &mut Vec<&'a str>) -> bool {
        if let Some(rule) = &hook.condition {
            let Some((tool, args)) = E::tool_call(input) else {
                return false;
            };
            let Some(args) = args.as_object() else {
                return false;
            };
            if !rule.matches(tool, args, &self.project_dir, RuleUse::Restrict) {
                return false;
            }
        }
        if let Some(key) = hook.dedup_key.as_deref() {
            if seen.contains(&key) {
                return false;
            }
            seen.push(key);
        }
        true
    }

    /// Applies one hook's result: the fold for answers, the failure policy for failures, and
    /// the trace entry either way. With `live` false (an earlier answer short-circuited), the
    /// answer is only recorded.
    #[allow(clippy::too_many_arguments)]
    fn settle<E: HookEvent, F: Fold<E>>(
        &self,
        hook: &HookSpec<E>,
        result: Result<HookOutput<E::Action>, HookError>,
        elapsed: Duration,
        input: &mut E::Input,
        fold: &mut F,
        out: &mut Dispatched,
        tool_use_id: Option<&str>,
        live: bool,
    ) -> Flow {
        match result {
            Ok(output) => {
                let decision = output.action.decision();
                let detail =
                    if output.action == E::Action::default() && output.halt.is_none() && !output.suppress_output {
                        Value::Null
                    } else {
                        let mut detail = serde_json::to_value(&output).unwrap_or(Value::Null);
                        if let (Some(traced), Some(map)) = (output.action.traced(), detail.as_object_mut()) {
                            map.insert("action".to_owned(), traced);
                        }
                        detail
                    };
                if !live {
                    self.record(hook, decision, false, elapsed, detail, tool_use_id);
                    return Flow::ShortCircuit;
                }
                self.observer.on_event(&RunEvent::HookAnswered { event: E::NAME, hook_id: &hook.id, decision });
                if !output.ignored.is_empty() {
                    let text = format!(
                        "{} hook `{}` answered {} (not applied by spine)",
                        E::NAME,
                        hook.id,
                        output.ignored.join(", ")
                    );
                    self.observer.on_event(&RunEvent::Note { text: &text });
                }
                if let Some(text) = &output.system_message {
                    self.observer.on_event(&RunEvent::SystemMessage { hook_id: &hook.id, text });
                }
                if let Some(halt) = output.halt
                    && out.halt.is_none()
                {
                    out.halt = Some(HaltBy { hook_id: hook.id.clone(), stop_reason: halt.stop_reason });
                }
                out.said.push((hook.id.clone(), decision));
                match fold.answer(hook, output.action, input) {
                    Ok(flow) => {
                        self.record(hook, decision, true, elapsed, detail, tool_use_id);
                        flow
                    }
                    Err(violation) => {
                        out.said.push((hook.id.clone(), violation.kind.as_str()));
                        self.record(
                            hook,
                            "contract_error",
                            true,
                            elapsed,
                            Value::String(violation.detail.clone()),
                            tool_use_id,
                        );
                        fold.failure(hook, &violation)
                    }
                }
            }
            Err(error) => {
                let detail = Value::String(error.to_string());
                if !live {
                    self.record(hook, "failed", false, elapsed, detail, tool_use_id);
                    return Flow::ShortCircuit;
                }
                let counts = error.kind == HookErrorKind::Contract || hook.on_failure == FailurePolicy::Closed;
                self.record(hook, error.kind.as_str(), counts, elapsed, detail, tool_use_id);
                if counts {
                    out.said.push((hook.id.clone(), error.kind.as_str()));
                    fold.failure(hook, &error)
                } else {
                    let text = format!("{} hook `{}` failed{}; failing open", E::NAME, hook.id, failure_reason(&error));
                    self.trace.warn(text.clone(), tool_use_id);
                    self.observer.on_event(&RunEvent::Warning { text: &text });
                    Flow::Continue
                }
            }
        }
    }

    fn record<E: HookEvent>(
        &self,
        hook: &HookSpec<E>,
        decision: &str,
        applied: bool,
        elapsed: Duration,
        detail: Value,
        tool_use_id: Option<&str>,
    ) {
        self.trace.record(TraceRecord::Hook(HookTrace {
            event: E::NAME,
            hook_id: hook.id.clone(),
            source: hook.source.clone(),
            tool_use_id: tool_use_id.map(str::to_owned),
            decision: decision.to_owned(),
            applied,
            duration_us: micros(elapsed),
            detail,
        }));
    }

    /// Starts a [`RunMode::Background`] hook: it answers in the background, even when it
    /// would answer at once.
    fn spawn_background<E: HookEvent>(
        &self,
        hook: &HookSpec<E>,
        ctx: &HookContext,
        input: &E::Input,
        tool_use_id: Option<&str>,
    ) {
        let who = self.origin(hook, tool_use_id);
        let execution = Execution::start(self.observer(), hook, input);
        execution.backgrounded(self.observer(), hook);
        let hook = hook.clone();
        let ctx = ctx.clone();
        let input = input.clone();
        let answer = Box::pin(async move {
            match hook.hook.start(&ctx, &input).await {
                Started::Answered(result) => Late::answered(result),
                Started::Background { answer, .. } => answer.await,
            }
        });
        self.background.spawn::<E>(answer, false, who);
    }

    /// A hook that went to the background while the event fired: no opinion now, its late
    /// answer later.
    fn went_background<E: HookEvent>(
        &self,
        hook: &HookSpec<E>,
        answer: futures_util::future::BoxFuture<'static, Late<E::Action>>,
        wakes: bool,
        tool_use_id: Option<&str>,
    ) {
        let text = format!("{} hook `{}` went to the background", E::NAME, hook.id);
        self.observer.on_event(&RunEvent::Note { text: &text });
        self.background.spawn::<E>(answer, wakes, self.origin(hook, tool_use_id));
    }

    fn origin<E: HookEvent>(&self, hook: &HookSpec<E>, tool_use_id: Option<&str>) -> Origin {
        Origin {
            hook_id: hook.id.clone(),
            source: hook.source.clone(),
            tool_use_id: tool_use_id.map(str::to_owned),
            trace: self.trace.clone(),
        }
    }
}

impl Drop for HookRuntime {
    fn drop(&mut self) {
        self.shutdown();
    }
}

/// Why a hook failed, on one line (whitespace runs collapsed, at most 300 characters), for the
/// warning a fail-open failure prints: `: <detail>`, or ` (<kind>): <detail>` for the kinds
/// other than a plain failure (`launch_error`, `timeout`).
fn failure_reason(error: &HookError) -> String {
    let detail = error.detail.split_whitespace().collect::<Vec<_>>().join(" ");
    let detail = match detail.char_indices().nth(300) {
        Some((cut, _)) => format!("{}…", &detail[..cut]),
        None => detail,
    };
    let detail = if detail.is_empty() { "no detail".to_owned() } else { detail };
    match error.kind {
        HookErrorKind::Failed => format!(": {detail}"),
        HookErrorKind::Launch | HookErrorKind::Timeout | HookErrorKind::Contract => {
            format!(" ({}): {detail}", error.kind)
        }
    }
}
