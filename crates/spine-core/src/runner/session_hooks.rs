//! Hooks fired in a session but outside any run: a chat's `/model` (PreModelSwitch,
//! PostModelSwitch), `--init-only` (Setup). [`Agent::session_hooks`] gives the runtime and
//! context such a firing needs — the agent's frozen hooks, the session's facts, the caller's
//! trace and observer — so the firing goes through the same engine, merge rules and trace as
//! the hooks of a run.

use std::path::PathBuf;
use std::sync::Arc;

use spine_protocol::hook::HookEventName;
use tokio_util::sync::CancellationToken;

use super::Agent;
use crate::hooks::{HookContext, HookRuntime};
use crate::observer::RunObserver;
use crate::trace::Trace;

/// The session a firing outside a run belongs to.
pub struct SessionRef {
    /// The session's id.
    pub session_id: String,
    /// Its transcript (hooks' `transcript_path`).
    pub transcript_path: PathBuf,
    /// Its environment file.
    pub env_file: Option<PathBuf>,
    /// Where the hooks' entries go.
    pub trace: Trace,
    /// Who sees the hooks' messages.
    pub observer: Arc<dyn RunObserver>,
}

/// A hook runtime and context for firings outside a run. Dropping it ends background hooks.
pub struct SessionHooks {
    /// The runtime (fire events through its methods).
    pub runtime: HookRuntime,
    /// The context of every firing (its `event` is set by each firing).
    pub ctx: HookContext,
}

impl Agent {
    /// The runtime and context to fire hooks in `session` outside a run.
    pub fn session_hooks(&self, session: SessionRef) -> SessionHooks {
        let info = self.session_info(&session.session_id, session.transcript_path, session.env_file);
        let runtime = HookRuntime::new(
            Arc::clone(&self.hooks),
            session.trace,
            session.observer,
            self.config.workspace.root().to_path_buf(),
        );
        let ctx = HookContext {
            session: info,
            event: HookEventName::SessionStart,
            prompt_id: None,
            cancel: CancellationToken::new(),
            agent: None,
        };
        SessionHooks { runtime, ctx }
    }
}
