//! What every item of a worker shares: the workspace, the frozen tool registry, skill roots,
//! compaction settings, and the agent factory of `agent_run`.
//!
//! Dependencies: [`crate::agents`] (the agent factory it builds and holds).

use std::collections::HashMap;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use spine_core::registry::ToolRegistry;
use spine_core::skills::SkillRoot;
use spine_core::tokens::TokenEstimator;
use spine_core::tool::Tool;
use spine_core::workspace::Workspace;
use spine_settings::Settings;
use spine_tools::FamilyHandles;
use thiserror::Error;

use crate::agents::{AgentBuildError, AgentFactory, SettingsAgents};

/// The environment could not be built.
#[derive(Debug, Error)]
pub enum EnvironmentError {
    /// The workspace root is unusable.
    #[error("workspace {path}: {reason}")]
    Workspace {
        /// The root.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// The tool registry did not build.
    #[error("tool registry: {0}")]
    Tools(String),
    /// The settings are invalid for agents (hooks).
    #[error(transparent)]
    Agents(#[from] AgentBuildError),
}

/// Shared by every item of a worker.
pub struct Environment {
    /// The workspace root of assignments (`spine worker --cwd`).
    pub workspace: Arc<Workspace>,
    /// The tools of deterministic assignments: built-ins, families, MCP tools.
    pub tools: Arc<ToolRegistry>,
    /// The worker's command runs and processes (shared by its assignments; killed with it).
    pub families: FamilyHandles,
    /// Skill roots (settings' `skills.roots`, else `$SPINE_HOME/skills` and `.spine/skills`).
    pub skill_roots: Vec<SkillRoot>,
    /// The settings' `context` key: compaction threshold and strategy, token estimator.
    pub run_defaults: spine_agent::RunDefaults,
    /// Builds `agent_run` agents.
    pub agents: Arc<dyn AgentFactory>,
    /// Runs single tool calls through the pipeline (hooks, rules, no approver).
    pub calls: Arc<spine_core::runner::Agent>,
    /// Warnings about the settings (hooks spine does not run…), for stderr.
    pub warnings: Vec<String>,
    /// Token counts of long texts seen recently (the system prompt repeats across items).
    pub token_counts: TokenCounts,
}

/// Remembered token counts of long texts, by estimator, length and hash (bounded: cleared
/// when full).
#[derive(Default)]
pub struct TokenCounts(Mutex<HashMap<(&'static str, usize, u64), u64>>);

impl TokenCounts {
    /// Texts shorter than this are counted directly.
    const MIN_LEN: usize = 512;
    /// Entries kept before the map is cleared.
    const CAPACITY: usize = 1024;

    /// An estimator that counts through this cache.
    pub fn around<'a>(&'a self, inner: &'a dyn TokenEstimator) -> CachedEstimator<'a> {
        CachedEstimator { inner, counts: self }
    }
}

/// A [`TokenEstimator`] that remembers the counts of long texts.
pub struct CachedEstimator<'a> {
    inner: &'a dyn TokenEstimator,
    counts: &'a TokenCounts,
}

impl TokenEstimator for CachedEstimator<'_> {
    fn name(&self) -> &'static str {
        self.inner.name()
    }

    fn count_text(&self, text: &str) -> u64 {
        if text.len() < TokenCounts::MIN_LEN {
            return self.inner.count_text(text);
        }
        let mut hasher = DefaultHasher::new();
        text.hash(&mut hasher);
        let key = (self.inner.name(), text.len(), hasher.finish());
        if let Some(n) = self.counts.0.lock().ok().and_then(|m| m.get(&key).copied()) {
            return n;
        }
        let n = self.inner.count_text(text);
        if let Ok(mut map) = self.counts.0.lock() {
            if map.len() >= TokenCounts::CAPACITY {
                map.clear();
            }
            map.insert(key, n);
        }
        n
    }
}

impl Environment {
    /// The environment of a workspace with the given settings; `spine_home` holds the system
    /// skills.
    pub fn new(
        workspace_root: &Path,
        spine_home: Option<&Path>,
        settings: Settings,
        extra_tools: Vec<Arc<dyn Tool>>,
    ) -> Result<Self, EnvironmentError> {
        Environment::sandboxed(workspace_root, spine_home, settings, extra_tools, None)
    }

    /// [`Environment::new`], the commands of every assignment running in `sandbox` when there
    /// is one.
    pub fn sandboxed(
        workspace_root: &Path,
        spine_home: Option<&Path>,
        settings: Settings,
        extra_tools: Vec<Arc<dyn Tool>>,
        sandbox: Option<Arc<spine_agent::sandbox::SessionSandbox>>,
    ) -> Result<Self, EnvironmentError> {
        let workspace =
            Arc::new(Workspace::new(workspace_root).map_err(|e| EnvironmentError::Workspace {
                path: workspace_root.to_path_buf(),
                reason: e.to_string(),
            })?);
        // One set of family registries per worker: command runs and processes started by one
        // assignment can be read, waited on or stopped by a later one.
        let tool_set =
            spine_agent::build_tools(&settings, &extra_tools).map_err(|e| EnvironmentError::Tools(e.to_string()))?;
        let (tools, families) = (Arc::clone(&tool_set.registry), tool_set.families.clone());
        let root = workspace.root().to_path_buf();
        let home = spine_home.map_or_else(|| root.join(".spine").join("home"), Path::to_path_buf);
        let skill_roots = spine_agent::skill_roots(&settings, &home, &root);
        let run_defaults = spine_agent::RunDefaults::of(&settings);
        let (agents, warnings) =
            SettingsAgents::new(settings, Arc::clone(&workspace), home, skill_roots.clone(), tool_set, sandbox)?;
        let calls = agents.call_agent();
        Ok(Environment {
            calls,
            workspace,
            tools,
            skill_roots,
            run_defaults,
            agents: Arc::new(agents),
            families,
            warnings,
            token_counts: TokenCounts::default(),
        })
    }
}
