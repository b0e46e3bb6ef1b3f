//! The registry of live processes one tool family keeps for one agent run: command runs
//! ([`crate::command_runs::CommandRuns`]) and background processes
//! ([`crate::processes::Processes`]) are both a [`LiveRegistry`], told apart by their
//! [`Family`].
//!
//! Contract:
//! - Entries are kept oldest first. Each has the id `<Family::ID_PREFIX>-N`, N counting from 1
//!   per registry and never reused.
//! - At most [`Family::capacity`] entries are kept, running or ended. Starting a process when
//!   full evicts the oldest entry that has ended; when every entry still runs, the start is a
//!   `validation_error` with the family's [`Family::full`] message and nothing is spawned.
//! - [`Enlist::Now`] registers the process as it starts; with [`Enlist::WhenReady`] the caller
//!   registers it ([`LiveRegistry::insert`]) once it is ready, or drops it.
//! - An unknown id is `not_found` naming the known ids; a failed spawn is a `runtime_error`.
//! - Every process runs under the registry's cancellation token: dropping the registry (the end
//!   of the agent run) ends every process group; [`LiveRegistry::shutdown`] ends them and waits.

use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use spine_protocol::tool::{ErrorCode, ToolError};
use tokio_util::sync::CancellationToken;

use super::{Live, SpawnSpec};

/// What sets one family's registry apart from another's.
pub trait Family: Send + Sync + 'static {
    /// The family's limits, as configured in settings.
    type Options: Copy + fmt::Debug + Send + Sync;
    /// What the family keeps about each process besides its id, command and start time.
    type Meta: Clone + Send + Sync;
    /// Ids are `<ID_PREFIX>-N` (`cmd-1`).
    const ID_PREFIX: &'static str;
    /// One entry as the model names it in `not_found` messages (`command run`).
    const NOUN: &'static str;
    /// Entries kept at once, running or ended.
    fn capacity(options: &Self::Options) -> usize;
    /// The `validation_error` message of a start refused because `running` entries all still run.
    fn full(running: usize) -> String;
}

/// When a started process joins the registry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Enlist {
    /// As it starts.
    Now,
    /// Later, through [`LiveRegistry::insert`] (a service, once it is ready).
    WhenReady,
}

/// One registered process.
#[derive(Clone)]
pub(crate) struct Entry<M> {
    /// `<prefix>-N`.
    pub id: String,
    /// The shell command as given.
    pub command: String,
    /// RFC 3339, UTC.
    pub started_at: String,
    pub live: Arc<Live>,
    /// The family's own fields.
    pub meta: M,
}

struct Inner<M> {
    next: u64,
    entries: Vec<Entry<M>>,
}

/// The live processes of one family for one agent run. Dropping it ends every process group.
pub struct LiveRegistry<F: Family> {
    inner: Mutex<Inner<F::Meta>>,
    owner: CancellationToken,
    options: F::Options,
}

impl<F: Family> fmt::Debug for LiveRegistry<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ids: Vec<String> = self.entries().into_iter().map(|e| e.id).collect();
        f.debug_struct("LiveRegistry")
            .field("family", &F::NOUN)
            .field("ids", &ids)
            .field("options", &self.options)
            .finish()
    }
}

impl<F: Family> LiveRegistry<F> {
    /// An empty registry.
    pub fn new(options: F::Options) -> Arc<Self> {
        Arc::new(LiveRegistry {
            inner: Mutex::new(Inner { next: 1, entries: Vec::new() }),
            owner: CancellationToken::new(),
            options,
        })
    }

    /// The limits it was created with.
    pub fn options(&self) -> F::Options {
        self.options
    }

    /// How many processes are registered, running or ended.
    pub fn len(&self) -> usize {
        self.lock().entries.len()
    }

    /// Whether no process is registered.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The leaders' process ids of the registered processes still running.
    pub fn running_pids(&self) -> Vec<u32> {
        self.entries().iter().filter(|e| e.live.exit().is_none()).filter_map(|e| e.live.pid()).collect()
    }

    /// Ends every process (SIGTERM, then SIGKILL, to each group), waits until they are gone,
    /// and empties the registry.
    pub async fn shutdown(&self) {
        let entries = std::mem::take(&mut self.lock().entries);
        for e in &entries {
            e.live.kill();
        }
        for e in &entries {
            e.live.terminate().await;
        }
    }

    fn lock(&self) -> MutexGuard<'_, Inner<F::Meta>> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Makes room (evicting the oldest ended entry when full), spawns the process and gives it
    /// an id; registers it now or leaves that to the caller, as `enlist` says.
    pub(crate) fn start(
        &self,
        spec: SpawnSpec<'_>,
        meta: F::Meta,
        enlist: Enlist,
    ) -> Result<Entry<F::Meta>, ToolError> {
        let mut inner = self.lock();
        if inner.entries.len() >= F::capacity(&self.options) {
            match inner.entries.iter().position(|e| e.live.exit().is_some()) {
                Some(oldest_ended) => {
                    inner.entries.remove(oldest_ended);
                }
                None => return Err(ToolError::new(ErrorCode::ValidationError, F::full(inner.entries.len()))),
            }
        }
        let command = spec.command.to_owned();
        let live =
            Live::spawn(spec, &self.owner).map_err(|e| ToolError::new(ErrorCode::RuntimeError, e.to_string()))?;
        let id = format!("{}-{}", F::ID_PREFIX, inner.next);
        inner.next += 1;
        let entry = Entry { id, command, started_at: now_rfc3339(), live, meta };
        match enlist {
            Enlist::Now => inner.entries.push(entry.clone()),
            Enlist::WhenReady => {}
        }
        Ok(entry)
    }

    /// Registers a process started with [`Enlist::WhenReady`].
    pub(crate) fn insert(&self, entry: Entry<F::Meta>) {
        self.lock().entries.push(entry);
    }

    /// A process by id; `not_found` naming the known ids otherwise.
    pub(crate) fn get(&self, id: &str) -> Result<Entry<F::Meta>, ToolError> {
        let inner = self.lock();
        if let Some(entry) = inner.entries.iter().find(|e| e.id == id) {
            return Ok(entry.clone());
        }
        let known: Vec<&str> = inner.entries.iter().map(|e| e.id.as_str()).collect();
        let hint = if known.is_empty() { "there are none".to_owned() } else { format!("known: {}", known.join(", ")) };
        Err(ToolError::new(ErrorCode::NotFound, format!("no {} `{id}` ({hint})", F::NOUN)))
    }

    /// Removes a process from the registry (it keeps running unless ended first).
    pub(crate) fn remove(&self, id: &str) -> Option<Entry<F::Meta>> {
        let mut inner = self.lock();
        let i = inner.entries.iter().position(|e| e.id == id)?;
        Some(inner.entries.remove(i))
    }

    /// Every process, oldest first.
    pub(crate) fn entries(&self) -> Vec<Entry<F::Meta>> {
        self.lock().entries.clone()
    }
}

impl<F: Family> Drop for LiveRegistry<F> {
    fn drop(&mut self) {
        self.owner.cancel();
    }
}

/// The current time as RFC 3339 (UTC).
fn now_rfc3339() -> String {
    time::OffsetDateTime::now_utc().format(&time::format_description::well_known::Rfc3339).unwrap_or_default()
}

#[cfg(test)]
mod tests;
