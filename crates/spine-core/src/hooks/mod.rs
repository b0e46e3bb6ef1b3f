//! The hook engine for every source of hooks.
//!
//! - [`Hook`] is the contract of one handler for one event: async, typed by the event's input
//!   and action. [`hook_fn`] and [`async_hook_fn`] adapt closures.
//! - [`registry`] holds hooks per event in groups (a chain, or a concurrent group whose answers
//!   merge in configuration order), built once and frozen. In-process hooks come first, in
//!   registration order, then external groups in settings order.
//! - [`engine`] runs the matching hooks of one event and applies the failure policy; each
//!   module of [`events`] folds the answers of its event into that event's outcome. The merge
//!   rules therefore live in one place, whatever source the hooks come from.
//! - [`background`] holds hooks that answer after their firing (`async`, a run-time
//!   `{"async": true}`, `asyncRewake`) and what they deliver to the next model request.
//! - [`matcher`] implements the settings matcher syntax; [`tool_view`] is how a tool call
//!   looks to hooks (every tool that runs a command line is `Bash`).
//! - [`raw`] carries what a hook printed to the observers' per-hook events.

pub mod background;
pub mod engine;
pub mod events;
pub mod matcher;
pub mod raw;
pub mod registry;
pub mod tool_view;

use std::future::Future;
use std::marker::PhantomData;
use std::path::PathBuf;
use std::sync::Arc;

use async_trait::async_trait;
use spine_protocol::hook::{HookCommonInput, HookEvent, HookEventName, HookOutput};
use spine_protocol::message::Effort;
use spine_protocol::permission::PermissionMode;
use thiserror::Error;
use tokio_util::sync::CancellationToken;

pub use background::{BackgroundHooks, Delivered, Late, Started, Wake};
pub use engine::HookRuntime;
pub use matcher::{Matcher, MatcherError};
pub use registry::{GroupMode, HookGroup, HookRegistry, HookRegistryBuilder, HookSpec, RunMode};
pub use spine_protocol::hook::HookKind;

/// Facts about the run that every hook may read.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionInfo {
    /// The run's session id (`session_id` of every hook input).
    pub session_id: String,
    /// The JSONL transcript of the run.
    pub transcript_path: PathBuf,
    /// The working directory hooks report (`cwd` of every input): the run's, then the shell
    /// tool's after a `cd` (CwdChanged).
    pub cwd: PathBuf,
    /// Where command hooks run and their relative program and script paths resolve: the
    /// session's starting working directory. The model's `cd` never moves it, so a guard
    /// written as `bash .claude/hooks/guard.sh` cannot be made to miss its script (Claude Code
    /// runs hooks in the current directory).
    pub hook_dir: PathBuf,
    /// The project root (`SPINE_PROJECT_DIR`, `CLAUDE_PROJECT_DIR`).
    pub project_dir: PathBuf,
    /// The run's permission mode, as hooks read it (`permission_mode`).
    pub permission_mode: PermissionMode,
    /// The reasoning effort set for the run, as hooks read it (`effort`); `None` when none is
    /// set.
    pub effort: Option<Effort>,
    /// The file SessionStart hooks append `export` lines to (`CLAUDE_ENV_FILE`).
    pub env_file: Option<PathBuf>,
}

/// What a hook receives beside its event's input.
#[derive(Debug, Clone)]
pub struct HookContext {
    /// Facts about the run.
    pub session: Arc<SessionInfo>,
    /// The firing event.
    pub event: HookEventName,
    /// The prompt being processed.
    pub prompt_id: Option<Arc<str>>,
    /// Canceled when the run is canceled.
    pub cancel: CancellationToken,
    /// Inside a subagent: who it is (hook inputs carry `agent_id` and `agent_type`).
    pub agent: Option<Arc<crate::subagents::AgentIdentity>>,
}

impl HookContext {
    /// The common fields of Claude Code's hook input.
    pub fn common_input(&self) -> HookCommonInput {
        HookCommonInput {
            session_id: self.session.session_id.clone(),
            transcript_path: self.session.transcript_path.clone(),
            cwd: self.session.cwd.clone(),
            permission_mode: self.session.permission_mode,
            effort: self.session.effort.clone(),
            hook_event_name: self.event,
            prompt_id: self.prompt_id.as_deref().map(str::to_owned),
            agent_id: self.agent.as_ref().map(|a| a.agent_id.clone()),
            agent_type: self.agent.as_ref().map(|a| a.agent_type.clone()),
        }
    }
}

/// One handler for event `E`.
#[async_trait]
pub trait Hook<E: HookEvent>: Send + Sync + 'static {
    /// Answers one firing of the event.
    async fn call(&self, ctx: &HookContext, input: &E::Input) -> Result<HookOutput<E::Action>, HookError>;

    /// Begins one firing: by default [`Hook::call`]'s answer. A hook may instead go on in the
    /// background ([`Started::Background`]); the firing then proceeds as if it had no opinion
    /// and its late answer is handled as an `async` hook's ([`background`]).
    async fn start(&self, ctx: &HookContext, input: &E::Input) -> Started<E::Action> {
        Started::Answered(self.call(ctx, input).await)
    }
}

/// A hook that could not decide.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("{kind}: {detail}")]
pub struct HookError {
    /// What kind of failure.
    pub kind: HookErrorKind,
    /// The detail, for the trace (never shown to the model: commands may hold secrets).
    pub detail: String,
}

impl HookError {
    /// A failure to decide.
    pub fn failed(detail: impl Into<String>) -> Self {
        HookError { kind: HookErrorKind::Failed, detail: detail.into() }
    }

    /// An answer that breaks the event's contract.
    pub fn contract(detail: impl Into<String>) -> Self {
        HookError { kind: HookErrorKind::Contract, detail: detail.into() }
    }

    /// A hook that could not be started.
    pub fn launch(detail: impl Into<String>) -> Self {
        HookError { kind: HookErrorKind::Launch, detail: detail.into() }
    }

    /// A hook that ran out of time.
    pub fn timeout(detail: impl Into<String>) -> Self {
        HookError { kind: HookErrorKind::Timeout, detail: detail.into() }
    }
}

/// Kinds of hook failure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HookErrorKind {
    /// It could not be started (missing file, exit 126/127).
    Launch,
    /// It ran and failed to decide (crashed, garbage output, error returned).
    Failed,
    /// It ran out of time.
    Timeout,
    /// It answered something its event does not allow. Contract errors ignore the failure
    /// policy: a hook that says something wrong must not be mistaken for "no opinion".
    Contract,
}

impl HookErrorKind {
    /// The kind in one word.
    pub fn as_str(self) -> &'static str {
        match self {
            HookErrorKind::Launch => "launch_error",
            HookErrorKind::Failed => "failed",
            HookErrorKind::Timeout => "timeout",
            HookErrorKind::Contract => "contract_error",
        }
    }
}

impl std::fmt::Display for HookErrorKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a hook failure means for the guarded action.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FailurePolicy {
    /// The action proceeds; the failure is a warning (external hooks' default).
    Open,
    /// The action does not proceed (in-process hooks' default).
    #[default]
    Closed,
}

/// A synchronous closure as a hook.
pub struct FnHook<E, F> {
    f: F,
    _event: PhantomData<fn(E)>,
}

/// Adapts `Fn(&HookContext, &Input) -> Result<HookOutput<Action>, HookError>` into a hook.
pub fn hook_fn<E, F>(f: F) -> FnHook<E, F>
where
    E: HookEvent,
    F: Fn(&HookContext, &E::Input) -> Result<HookOutput<E::Action>, HookError> + Send + Sync + 'static,
{
    FnHook { f, _event: PhantomData }
}

#[async_trait]
impl<E, F> Hook<E> for FnHook<E, F>
where
    E: HookEvent,
    F: Fn(&HookContext, &E::Input) -> Result<HookOutput<E::Action>, HookError> + Send + Sync + 'static,
{
    async fn call(&self, ctx: &HookContext, input: &E::Input) -> Result<HookOutput<E::Action>, HookError> {
        (self.f)(ctx, input)
    }
}

/// An async closure as a hook (it receives owned copies of the context and input).
pub struct AsyncFnHook<E, F> {
    f: F,
    _event: PhantomData<fn(E)>,
}

/// Adapts `Fn(HookContext, Input) -> impl Future<Output = Result<HookOutput<Action>, HookError>>`.
pub fn async_hook_fn<E, F, Fut>(f: F) -> AsyncFnHook<E, F>
where
    E: HookEvent,
    F: Fn(HookContext, E::Input) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<HookOutput<E::Action>, HookError>> + Send + 'static,
{
    AsyncFnHook { f, _event: PhantomData }
}

#[async_trait]
impl<E, F, Fut> Hook<E> for AsyncFnHook<E, F>
where
    E: HookEvent,
    F: Fn(HookContext, E::Input) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<HookOutput<E::Action>, HookError>> + Send + 'static,
{
    async fn call(&self, ctx: &HookContext, input: &E::Input) -> Result<HookOutput<E::Action>, HookError> {
        (self.f)(ctx.clone(), input.clone()).await
    }
}
