//! Opening a session, shared by `spine run` ([`crate::commands::run`]) and the interactive
//! session ([`crate::chat`]).
//!
//! Contract:
//! - [`open`] resolves, from the command line, everything decided before the agent exists: the
//!   `SPINE_HOME` and launch directories, the session ([`ChosenSession`]: new, `--session-id`,
//!   `--resume [ID]` or `--continue`), the project it runs in (a resumed session's directory
//!   unless `--cwd`), the model flag (a resumed session's model unless `--model`) and the
//!   settings (their notes on stderr with `-v`, each once per project: [`crate::shown_notes`]).
//!   [`open_asking`] (the interactive session's) then asks the trust question of a project that
//!   is not trusted and withholds something, and reads the settings again when it is trusted.
//! - [`build`] then starts the session's command sandbox ([`crate::sandbox`]), connects the MCP
//!   servers and assembles the agent with its tool families ([`Built`]); the caller shuts the
//!   families and the MCP servers down after the agent.
//! - Both run before any prompt; their problems are configuration errors (exit status 2),
//!   except a failure to read the project's sessions or the answer of the `--resume` picker.
//!   Notes and warnings go to stderr unless `-q`.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use spine_agent::{AgentOptions, CommandLine, ModelChoice, Tools};
use spine_core::hooks::HookRegistryBuilder;
use spine_core::permission::Approver;
use spine_core::session::{LoadedSession, Transcript, check_session_id, new_session_id};
use spine_protocol::permission::PermissionMode;

use crate::cli::RunArgs;
use crate::commands::context;
use crate::error::config;
use crate::flags::split_list;
use crate::sandbox::{Request, Verbosity};
use spine_settings::SandboxMode;

/// What `spine run` and the interactive session open before their first prompt: the session
/// (new, `--resume`d or `--continue`d), the project it runs in, the model flag and the settings.
pub(crate) struct Opened {
    pub(crate) home: PathBuf,
    pub(crate) launch_dir: PathBuf,
    pub(crate) session: ChosenSession,
    pub(crate) project: PathBuf,
    pub(crate) model: Option<String>,
    pub(crate) settings: spine_settings::Settings,
}

/// Opens the session of `args` (see [`Opened`]).
pub(crate) fn open(args: &RunArgs) -> anyhow::Result<Opened> {
    let home = context::spine_home()?;
    let launch_dir = context::project_dir(args.cwd.as_ref())?;
    let session = choose_session(args, &home, &launch_dir)?;
    // A resumed session runs where it ran before, with the model it used, unless the flags say
    // otherwise.
    let project = resumed_project(args, session.resumed.as_ref(), &launch_dir);
    let model = resumed_model(args, session.resumed.as_ref());
    let settings = context::settings_with(
        &home,
        &project,
        &args.settings,
        args.trust,
        args.setting_sources.as_ref(),
        &args.plugin_dirs,
    )?;
    if args.verbose {
        // The settings' notes say the same on every run until the files change: once each.
        for note in crate::shown_notes::fresh(&home, &project, "settings", &settings.notes) {
            eprintln!("note: {note}");
        }
    }
    Ok(Opened { home, launch_dir, session, project, model, settings })
}

/// [`open`], then the trust question of an interactive session: in a project that is not
/// trusted and withholds something ([`crate::withheld::Withheld`]), on a terminal (stdin,
/// stdout and stderr), with text output, `spine` asks ([`crate::render::trust_question`]).
/// "trust" records the project as `spine trust` does; "this session only" trusts it for this
/// process; either way the settings are read again, trusted. "no" keeps them as they are.
pub(crate) fn open_asking(args: &RunArgs) -> anyhow::Result<Opened> {
    use crate::render::trust_question::{self, TrustAnswer};
    let mut opened = open(args)?;
    let terminal = std::io::stdin().is_terminal() && std::io::stdout().is_terminal() && std::io::stderr().is_terminal();
    let asks = terminal && !args.print && args.output_format == crate::cli::OutputFormat::Text;
    if opened.settings.trust.is_trusted() || !asks {
        return Ok(opened);
    }
    let withheld = crate::withheld::Withheld::of(&opened.settings, &opened.project);
    if withheld.is_empty() {
        return Ok(opened);
    }
    let for_this_run = match trust_question::ask(&opened.project, &withheld) {
        TrustAnswer::No => return Ok(opened),
        TrustAnswer::Trust => {
            eprintln!("{}", crate::commands::trust::record(&opened.home, &opened.project)?);
            false
        }
        TrustAnswer::Session => {
            eprintln!("trusted for this session only: {} (not recorded)", opened.project.display());
            true
        }
    };
    opened.settings = context::settings_with(
        &opened.home,
        &opened.project,
        &args.settings,
        for_this_run || args.trust,
        args.setting_sources.as_ref(),
        &args.plugin_dirs,
    )?;
    Ok(opened)
}

/// The agent of a session, with what must be shut down after it.
pub(crate) struct Built {
    pub(crate) agent: spine_core::runner::Agent,
    pub(crate) families: spine_agent::FamilyHandles,
    pub(crate) mcp: spine_agent::McpTools,
}

/// What a program driving spine adds to the flags (the Agent SDK's `initialize`): nothing for
/// a run or a chat.
#[derive(Default)]
pub(crate) struct Extras {
    /// Subagent definitions (`--agents` JSON), merged over the flag's.
    pub(crate) agents: Option<String>,
    /// The host's system prompt and addition (`initialize`'s), over the flags'.
    pub(crate) system_prompt: Option<String>,
    pub(crate) append_system_prompt: Option<String>,
    /// Hooks answered by the host's callbacks, after the settings' hooks.
    pub(crate) sdk_hooks: Option<spine_agent::SdkHooks>,
    /// The host's in-process MCP servers (`"type": "sdk"` in `--mcp-config`).
    pub(crate) mcp_host: Option<Arc<dyn spine_agent::SdkMcpHost>>,
}

/// Connects the MCP servers and assembles the agent of `args` (warnings on stderr unless
/// `-q`). Every problem is a configuration error.
#[allow(clippy::too_many_arguments)]
pub(crate) async fn build(
    args: &RunArgs,
    settings: &spine_settings::Settings,
    project: &Path,
    home: &Path,
    model: Option<String>,
    session_id: &str,
    approver: Arc<dyn Approver>,
    allow_defer: bool,
    extras: Extras,
) -> anyhow::Result<Built> {
    let permission_mode = match &args.permission_mode {
        Some(flag) => Some(flag.parse::<PermissionMode>().map_err(|e| config(format!("--permission-mode: {e}")))?),
        None if args.dangerously_skip_permissions => Some(PermissionMode::BypassPermissions),
        None => None,
    };
    // The driven-session flags (prompt files, reasoning, fallback, budget, schema), checked
    // before anything starts.
    let host = crate::host_flags::HostChoices::of(args)?;
    let command_line = CommandLine {
        allow: split_list(&args.allowed_tools),
        deny: split_list(&args.disallowed_tools),
        system_prompt: extras.system_prompt.or_else(|| host.system_prompt.clone()),
        append_system_prompt: extras.append_system_prompt.or_else(|| host.append_system_prompt.clone()),
        add_dirs: add_dirs(&args.add_dir, project),
        agents: extras.agents.or_else(|| args.agents.clone()),
        agent: args.agent.clone(),
        tool_set: args.tool_set,
    };
    // The agent's commands run in the session's sandbox (off unless the flag or the settings
    // turn it on); hooks stay outside it.
    let verbosity = match (args.quiet, args.verbose) {
        (true, _) => Verbosity::Quiet,
        (false, true) => Verbosity::Verbose,
        (false, false) => Verbosity::Normal,
    };
    let request = Request {
        flag: args.sandbox,
        default_mode: SandboxMode::Off,
        require: false,
        project,
        home,
        command_line: &command_line,
        verbosity,
        // A person at a terminal answers the proxy's questions about new domains.
        network_approver: approver.asks_elicitations().then(|| Arc::clone(&approver)),
    };
    let sandbox = crate::sandbox::start(settings, request)?;
    // Rules the approver saves while a sandboxed command runs are spine's, not the command's.
    if let Some(writes) = sandbox.own_writes() {
        approver.record_writes_in(writes);
    }
    // The settings' environment of the agent's children: assembly builds the same value.
    let child_env = spine_agent::child_env(settings);
    let mcp_selection = spine_agent::McpSelection {
        configs: args.host.mcp_config.clone(),
        strict: args.host.strict_mcp_config,
        sdk_host: extras.mcp_host,
    };
    let connection = spine_agent::connect_mcp_selected(settings, project, &child_env, Some(&sandbox), &mcp_selection)
        .await
        .map_err(|e| config(e.to_string()))?;
    if !args.quiet
        && let Some(notice) = spine_agent::untrusted_notice(settings, project, &connection)
    {
        eprintln!("{notice}");
    }
    let (mcp, mcp_warnings) = (connection.tools, connection.warnings);
    let assembled = spine_agent::assemble(
        settings,
        AgentOptions {
            project: project.to_path_buf(),
            spine_home: home.to_path_buf(),
            model: model.map_or(ModelChoice::Configured, ModelChoice::Spec),
            hooks: HookRegistryBuilder::new(),
            permission_mode,
            max_turns: Some(args.max_turns.or(settings.max_turns).unwrap_or(NO_TURN_LIMIT)),
            allowed_tools: visible_tools(&args.tools)?,
            command_line,
            approver,
            allow_defer,
            conversation_id: Some(session_id.to_owned()),
            tools: Tools::Fresh(mcp.tools()),
            sandbox: Some(sandbox),
            sdk_hooks: extras.sdk_hooks,
            choices: host.session_choices(),
        },
    )
    .map_err(|e| config(e.to_string()))?;
    if !args.quiet {
        for warning in mcp_warnings.iter().chain(&assembled.warnings) {
            eprintln!("warning: {warning}");
        }
    }
    Ok(Built { agent: assembled.agent, families: assembled.tools.families, mcp })
}

/// `--tools`: the names, or every tool (an empty list) for `default`. A `--tools` that names no
/// tool at all (Claude Code's `--tools ""`, no tools) is a usage error: spine's agent needs one.
fn visible_tools(values: &[String]) -> anyhow::Result<Vec<String>> {
    let names = split_list(values);
    if !values.is_empty() && names.is_empty() {
        return Err(config("--tools: no tool named (use `default` for every tool)"));
    }
    Ok(if names.iter().any(|n| n == "default") { Vec::new() } else { names })
}

/// The project of the run: a resumed session's directory when `--cwd` is not given and that
/// directory still exists, else the launch directory.
fn resumed_project(args: &RunArgs, resumed: Option<&LoadedSession>, launch_dir: &Path) -> PathBuf {
    let Some(cwd) = resumed.and_then(|r| r.cwd.as_ref()).filter(|_| args.cwd.is_none()) else {
        return launch_dir.to_path_buf();
    };
    match cwd.canonicalize() {
        Ok(dir) if dir.is_dir() => dir,
        Ok(_) | Err(_) => {
            if !args.quiet {
                eprintln!(
                    "note: the session's directory {} is gone; running in {}",
                    cwd.display(),
                    launch_dir.display()
                );
            }
            launch_dir.to_path_buf()
        }
    }
}

/// The model spec of the run: `--model`, else a resumed session's model when it is a name
/// `--model` accepts, else none (settings and environment decide).
fn resumed_model(args: &RunArgs, resumed: Option<&LoadedSession>) -> Option<String> {
    if args.model.is_some() {
        return args.model.clone();
    }
    let name = resumed.and_then(|r| r.model.as_deref())?;
    match name.parse::<spine_agent::models::ModelSpec>() {
        Ok(_) => Some(name.to_owned()),
        Err(_) => {
            if !args.quiet {
                eprintln!(
                    "note: the session's model `{name}` is not a model name spine can choose again; using the configured model"
                );
            }
            None
        }
    }
}

/// The session of the run: `--resume ID` (in whichever project's folder it is) or `--continue`
/// (the most recent session of this project) load a transcript; `--session-id UUID` names a new
/// session (refused when that session exists anywhere); otherwise a new id. New sessions are
/// written in the launch directory's project folder. `--fork-session` continues a loaded
/// transcript under a new id ([`crate::host_flags::fork`]).
fn choose_session(args: &RunArgs, home: &Path, launch_dir: &Path) -> anyhow::Result<ChosenSession> {
    crate::host_flags::fork::note_unused(args);
    let (id, path, flag) = match (&args.resume, args.continue_session, &args.session_id) {
        (Some(given), _, _) => {
            let id = if given.is_empty() { pick_session(home, launch_dir)? } else { given.clone() };
            let id = &id;
            check_session_id(id).map_err(|e| config(format!("--resume: {e}")))?;
            let path = crate::sessions::find(home, id)
                .map_err(|e| config(format!("--resume: cannot read {}: {e}", home.join("projects").display())))?
                .ok_or_else(|| {
                    config(format!("--resume {id}: no such session in {}", home.join("projects").display()))
                })?;
            (id.clone(), path, "--resume")
        }
        (None, true, _) => {
            let latest = crate::sessions::latest_for_project(home, launch_dir).map_err(|e| {
                config(format!(
                    "--continue: cannot read {}: {e}",
                    crate::sessions::project_folder(home, launch_dir).display()
                ))
            })?;
            let id = latest
                .ok_or_else(|| config(format!("--continue: no session of {} to continue", launch_dir.display())))?;
            let path = crate::sessions::transcript_path(home, launch_dir, &id);
            (id, path, "--continue")
        }
        (None, false, Some(given)) => {
            let id = uuid::Uuid::try_parse(given)
                .map_err(|_| config(format!("--session-id: `{given}` is not a UUID")))?
                .hyphenated()
                .to_string();
            if crate::sessions::find(home, &id).ok().flatten().is_some() {
                return Err(config(format!("--session-id: session {id} is already in use (use --resume {id})")));
            }
            let transcript = crate::sessions::transcript_path(home, launch_dir, &id);
            return Ok(ChosenSession { id, transcript, resumed: None });
        }
        (None, false, None) => {
            let id = new_session_id();
            let transcript = crate::sessions::transcript_path(home, launch_dir, &id);
            return Ok(ChosenSession { id, transcript, resumed: None });
        }
    };
    let loaded = Transcript::load(&path).map_err(|e| config(format!("{flag} {id}: {}: {e}", path.display())))?;
    if crate::host_flags::fork::wanted(args) {
        return crate::host_flags::fork::fork(args, &id, &path, loaded);
    }
    Ok(ChosenSession { id, transcript: path, resumed: Some(loaded) })
}

/// `--resume` without an id: the picker on a terminal, else an error saying how to find one.
fn pick_session(home: &Path, launch_dir: &Path) -> anyhow::Result<String> {
    if !(std::io::stdin().is_terminal() && std::io::stderr().is_terminal()) {
        return Err(config(
            "--resume needs a session id when not on a terminal (`spine sessions list` shows them)".to_owned(),
        ));
    }
    crate::commands::sessions::pick(home, launch_dir)?
        .ok_or_else(|| config(format!("--resume: no session of {} was picked", launch_dir.display())))
}

/// The session a run continues or starts.
pub(crate) struct ChosenSession {
    pub(crate) id: String,
    /// Its transcript file (its `CLAUDE_ENV_FILE` is next to it, `<id>.env`).
    pub(crate) transcript: PathBuf,
    /// The transcript read back, for `--resume` and `--continue`.
    pub(crate) resumed: Option<LoadedSession>,
}

/// The turn limit of `spine run` without `--max-turns` or a `maxTurns` setting: none, as in
/// Claude Code (the worker keeps spine-agent's default of 20). A user who wants a safety net
/// sets `"maxTurns"` in `~/.spine/settings.json`.
const NO_TURN_LIMIT: u32 = u32::MAX;

/// `--add-dir` values as added directories: relative ones against the directory spine was
/// started in (the project directory when that cannot be read).
fn add_dirs(values: &[String], project: &Path) -> Vec<spine_settings::AddedDirectory> {
    let cwd = std::env::current_dir().unwrap_or_else(|_| project.to_path_buf());
    values.iter().map(|v| spine_settings::AddedDirectory::from_flag(v, &cwd)).collect()
}
