//! From a [`HookConfig`] to hooks in spine-core's registry.
//!
//! Contract of [`register`]:
//! - Each matcher group becomes one external [`HookGroup`], added in configuration order:
//!   [`GroupMode::Concurrent`] (answers merged in configuration order by the engine), or
//!   [`GroupMode::Chain`] with `"sequential": true`.
//! - Each handler becomes a [`HookSpec`]: id = its command or URL, source = its settings file
//!   and JSON path, kind = command, http or persistent
//!   ([`HookKind`](spine_protocol::hook::HookKind)), its `onFailure`, its `if`, `async` →
//!   [`RunMode::Background`], `asyncRewake` → a [`RewakeHook`] (registered blocking: it goes to
//!   the background itself, as a hook that may wake the model), and a dedup key (the same
//!   command or URL declared twice, in one file or several, runs once per firing).
//! - Handlers of a persistent command share one [`PersistentProcess`] per registry, across
//!   events; HTTP handlers share one client; SDK callback handlers ([`Handler::Callback`]) call
//!   [`BuildOptions::callbacks`] (without them, each firing is a launch error) and their dedup
//!   key is the callback id.
//! - Every process a hook starts (command and persistent hooks, the syntax checks of command
//!   lines) gets [`BuildOptions::child_env`], the environment of the agent the hooks belong to
//!   (its settings' `env`, the provider keys it passes through); mcp_tool hooks call their tool
//!   with it. There is no default: [`BuildOptions::new`] takes it. A plugin's handlers
//!   ([`Origin::Plugin`]) also get `CLAUDE_PLUGIN_ROOT` and
//!   `CLAUDE_PLUGIN_DATA`, and their dedup key is the plugin's own (two plugins never share
//!   a command or a persistent process).
//! - Only [`HookConfig::active_groups`] are registered: with `disableAllHooks`, nothing (or
//!   only managed settings' hooks), with `allowManagedHooksOnly` only managed settings' hooks.
//!   An HTTP hook that `allowedHttpHookUrls` blocks is registered and fails each firing with a
//!   launch error (see [`crate::http`]); its dedup key is its own, so it never stands in for an
//!   allowed hook of the same URL.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use spine_core::hooks::{GroupMode, Hook, HookGroup, HookRegistryBuilder, HookSpec, RunMode};
use spine_core::model::{ModelClient, NoModel};
use spine_process::ChildEnv;
use spine_settings::Origin;
use thiserror::Error;

use crate::agent_hook::{AgentHook, HookAgents};
use crate::callback::{CallbackHook, HookCallbacks};
use crate::command::CommandHook;
use crate::config::{GroupConfig, Handler, HandlerConfig, HookConfig};
use crate::http::{HttpHook, client};
use crate::mcp_tool::{HookTools, McpToolHook};
use crate::once::OnceHook;
use crate::persistent::{PersistentHook, PersistentProcess};
use crate::prompt::{HookModels, PromptHook};
use crate::record::{AnswerSink, HookMeta};
use crate::rewake::RewakeHook;
use crate::wire::{WireEvent, WireVisitor, visit_wire_event};

/// Options of [`register`].
#[derive(Clone)]
pub struct BuildOptions {
    /// The environment of the processes hooks start: the settings' `env`, the provider keys
    /// passed through.
    pub child_env: ChildEnv,
    /// Receives every external hook call's raw answer (`spine hooks test`).
    pub sink: Option<Arc<dyn AnswerSink>>,
    /// Runs `async` and `asyncRewake` hooks in the foreground too, and waits for a command hook
    /// that prints `{"async": true}` (`spine hooks test`, to see their answers).
    pub force_blocking: bool,
    /// The models of prompt hooks; without it, a prompt hook fails at each firing (its
    /// `onFailure` decides).
    pub models: Option<Arc<dyn HookModels>>,
    /// The tools of mcp_tool hooks; without them, an mcp_tool hook fails at each firing.
    pub tools: Option<HookTools>,
    /// The verifiers of agent hooks; without them, an agent hook fails at each firing.
    pub agents: Option<Arc<dyn HookAgents>>,
    /// The SDK host's hook callbacks; without them, a callback hook fails at each firing.
    pub callbacks: Option<Arc<dyn HookCallbacks>>,
}

impl BuildOptions {
    /// Options whose hook processes get `child_env`: no answer sink, `async` hooks in the
    /// background, and no models, tools, verifiers or callbacks (prompt, mcp_tool, agent and
    /// callback hooks fail at each firing until they are given).
    pub fn new(child_env: ChildEnv) -> Self {
        BuildOptions {
            child_env,
            sink: None,
            force_blocking: false,
            models: None,
            tools: None,
            agents: None,
            callbacks: None,
        }
    }
}

/// Hooks that could not be built.
#[derive(Debug, Error)]
pub enum BuildError {
    /// The HTTP client for HTTP hooks could not be created.
    #[error("cannot create the HTTP client for http hooks: {0}")]
    HttpClient(#[from] reqwest::Error),
    /// A prompt hook's `model` is not a model spine can build.
    #[error("{origin}: {path}.model: {reason}")]
    PromptModel {
        /// The settings source.
        origin: String,
        /// The handler's JSON path.
        path: String,
        /// Why the model cannot be built.
        reason: String,
    },
}

/// What was registered.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Registered {
    /// Matcher groups added.
    pub groups: usize,
    /// Handlers added.
    pub handlers: usize,
}

/// Adds the configured external hooks to a registry builder.
pub fn register(
    config: &HookConfig,
    builder: &mut HookRegistryBuilder,
    options: &BuildOptions,
) -> Result<Registered, BuildError> {
    let groups = config.active_groups();
    let needs_http = groups.iter().flat_map(|g| &g.handlers).any(|h| matches!(h.handler, Handler::Http(_)));
    let mut shared = Shared {
        client: if needs_http { Some(client()?) } else { None },
        processes: HashMap::new(),
        sink: options.sink.clone(),
        force_blocking: options.force_blocking,
        prompt_models: prompt_models(&groups, options.models.as_deref())?,
        tools: options.tools.clone(),
        agents: options.agents.clone(),
        callbacks: options.callbacks.clone(),
        child_env: options.child_env.clone(),
        plugin_envs: HashMap::new(),
    };
    let mut registered = Registered::default();
    // A source's groups follow each other: its name is written once for them.
    let mut last: Option<(&Origin, String)> = None;
    for group in groups {
        let source = match &last {
            Some((origin, source)) if **origin == group.origin => source.clone(),
            _ => group.origin.to_string(),
        };
        last = Some((&group.origin, source.clone()));
        visit_wire_event(group.event, AddGroup { group, source, builder: &mut *builder, shared: &mut shared });
        registered.groups += 1;
        registered.handlers += group.handlers.len();
    }
    Ok(registered)
}

struct Shared {
    client: Option<reqwest::Client>,
    processes: HashMap<String, Arc<PersistentProcess>>,
    sink: Option<Arc<dyn AnswerSink>>,
    force_blocking: bool,
    prompt_models: HashMap<String, Arc<dyn ModelClient>>,
    tools: Option<HookTools>,
    agents: Option<Arc<dyn HookAgents>>,
    callbacks: Option<Arc<dyn HookCallbacks>>,
    child_env: ChildEnv,
    /// The environment of each plugin's processes (by plugin id, with the root and data
    /// directories it was made for), built once and shared by the plugin's hooks.
    plugin_envs: HashMap<String, (PathBuf, PathBuf, ChildEnv)>,
}

impl Shared {
    /// The environment of the processes of a group from `origin`: a plugin's has its
    /// `CLAUDE_PLUGIN_ROOT` and `CLAUDE_PLUGIN_DATA` too.
    fn child_env(&mut self, origin: &Origin) -> ChildEnv {
        let Some(plugin) = origin.plugin() else { return self.child_env.clone() };
        if let Some((root, data, env)) = self.plugin_envs.get(&plugin.id)
            && *root == plugin.root
            && *data == plugin.data
        {
            return env.clone();
        }
        // A plugin's commands find their files through CLAUDE_PLUGIN_ROOT and CLAUDE_PLUGIN_DATA.
        let env = self.child_env.with_vars([
            ("CLAUDE_PLUGIN_ROOT".to_owned(), plugin.root.to_string_lossy().into_owned()),
            ("CLAUDE_PLUGIN_DATA".to_owned(), plugin.data.to_string_lossy().into_owned()),
        ]);
        self.plugin_envs.insert(plugin.id.clone(), (plugin.root.clone(), plugin.data.clone(), env.clone()));
        env
    }
}

/// What the handlers of one group share: their source as shown, their processes'
/// environment, and what makes their dedup keys the plugin's own.
struct GroupCtx<'a> {
    group: &'a GroupConfig,
    source: String,
    child_env: ChildEnv,
    key_suffix: Option<String>,
}

struct AddGroup<'a> {
    group: &'a GroupConfig,
    /// The group's source, as shown.
    source: String,
    builder: &'a mut HookRegistryBuilder,
    shared: &'a mut Shared,
}

impl WireVisitor for AddGroup<'_> {
    type Output = ();

    fn visit<E: WireEvent>(self) {
        let group = self.group;
        let ctx = GroupCtx {
            group,
            source: self.source,
            child_env: self.shared.child_env(&group.origin),
            // Two plugins' identical commands are two processes, each with its plugin's variables.
            key_suffix: group.origin.plugin().map(|plugin| format!("#plugin:{}", plugin.id)),
        };
        let hooks: Vec<HookSpec<E>> =
            group.handlers.iter().filter_map(|h| spec::<E>(&ctx, h, &mut *self.shared)).collect();
        let mode = if group.sequential { GroupMode::Chain } else { GroupMode::Concurrent };
        self.builder.add_group(HookGroup { matcher: group.matcher.clone(), mode, hooks });
    }
}

fn spec<E: WireEvent>(ctx: &GroupCtx<'_>, h: &HandlerConfig, shared: &mut Shared) -> Option<HookSpec<E>> {
    let group = ctx.group;
    let mut key = match &h.handler {
        Handler::Http(http) if http.blocked.is_some() => format!("{}#blocked", h.handler.dedup_key()),
        other => other.dedup_key(),
    };
    if let Some(suffix) = &ctx.key_suffix {
        key.push_str(suffix);
    }
    let target = h.handler.target();
    let meta = Arc::new(HookMeta {
        hook_id: target.clone(),
        path: h.path.clone(),
        source: ctx.source.clone(),
        kind: h.handler.kind(),
        sink: shared.sink.clone(),
    });
    let mut run = if shared.force_blocking { RunMode::Blocking } else { h.run };
    let child_env = ctx.child_env.clone();
    let hook: Arc<dyn Hook<E>> = match &h.handler {
        Handler::Command { program, persistent: false } => {
            let command = CommandHook::new(program.clone(), h.timeout, meta, child_env);
            match &h.rewake {
                _ if shared.force_blocking => Arc::new(command.in_foreground()),
                Some(rewake) => {
                    run = RunMode::Blocking;
                    let (message, summary) = (rewake.message.clone(), rewake.summary.clone());
                    Arc::new(RewakeHook::new(command, program.display(), message, summary))
                }
                None => Arc::new(command),
            }
        }
        Handler::Command { program, persistent: true } => {
            let process = shared
                .processes
                .entry(key.clone())
                .or_insert_with(|| Arc::new(PersistentProcess::new(program.clone(), child_env)));
            Arc::new(PersistentHook::new(Arc::clone(process), h.timeout, meta))
        }
        Handler::Http(http) => {
            let client = shared.client.clone()?;
            Arc::new(HttpHook::new(http.clone(), h.timeout, client, meta))
        }
        Handler::Prompt(p) => {
            let model = shared.prompt_models.get(&model_key(group, h)).cloned()?;
            Arc::new(PromptHook::new(p.prompt.clone(), model, p.continue_on_block, h.timeout, meta))
        }
        Handler::McpTool(m) => {
            let (tools, child_env) = (shared.tools.clone(), shared.child_env.clone());
            Arc::new(McpToolHook::new(&m.server, &m.tool, m.input.clone(), tools, child_env, h.timeout, meta))
        }
        Handler::Agent { prompt, model } => {
            Arc::new(AgentHook::new(prompt.clone(), model.clone(), shared.agents.clone(), h.timeout, meta))
        }
        Handler::Callback { id } => Arc::new(CallbackHook::new(id.clone(), shared.callbacks.clone(), h.timeout, meta)),
    };
    let hook: Arc<dyn Hook<E>> = if h.once { Arc::new(OnceHook::new(hook)) } else { hook };
    let mut source = String::with_capacity(ctx.source.len() + 1 + h.path.len());
    source.push_str(&ctx.source);
    source.push(' ');
    source.push_str(&h.path);
    Some(HookSpec {
        id: target,
        source,
        kind: h.handler.kind(),
        on_failure: h.on_failure,
        condition: h.condition.as_ref().map(|(_, rule)| rule.clone()),
        dedup_key: Some(key),
        run,
        status_message: h.status_message.clone(),
        hook,
    })
}

/// The key of a handler among the prompt models: its source and JSON path.
fn model_key(group: &GroupConfig, h: &HandlerConfig) -> String {
    format!("{} {}", group.origin, h.path)
}

/// The model of every prompt hook, built once: its `model`, or the session's; with no
/// [`HookModels`], a model whose every request fails (the hook then fails at each firing).
fn prompt_models(
    groups: &[&GroupConfig],
    models: Option<&dyn HookModels>,
) -> Result<HashMap<String, Arc<dyn ModelClient>>, BuildError> {
    let mut built = HashMap::new();
    for group in groups {
        for h in &group.handlers {
            let Handler::Prompt(p) = &h.handler else { continue };
            let model: Arc<dyn ModelClient> = match models {
                None => Arc::new(NoModel),
                Some(models) => models.model(p.model.as_deref()).map_err(|reason| BuildError::PromptModel {
                    origin: group.origin.to_string(),
                    path: h.path.clone(),
                    reason,
                })?,
            };
            built.insert(model_key(group, h), model);
        }
    }
    Ok(built)
}
