//! `spine run`: resolve the configuration (settings, model, permissions, tools, hooks,
//! session), run the agent, print the outcome in the chosen format, map it to an exit status.
//! Every configuration problem is found before the run starts and exits 2.

use std::io::{IsTerminal, Read};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use spine_agent::{AgentOptions, CommandLine, Tools};
use spine_core::CancellationToken;
use spine_core::observer::RunObserver;
use spine_core::permission::{Approver, DenyApprover};
use spine_core::reports::{ReportCollector, WorkIdentity};
use spine_core::runner::RunRequest;
use spine_core::session::{LoadedSession, Transcript, check_session_id, new_session_id};
use spine_core::trace::{Trace, TraceSink};
use spine_protocol::hook::SessionSource;
use spine_protocol::permission::PermissionMode;
use spine_protocol::run::RunSubtype;

use super::context;
use crate::cli::{OutputFormat, RunArgs};
use crate::error::{config, exit};
use crate::flags::split_list;
use crate::out;
use crate::render::Fanout;
use crate::render::approver::TerminalApprover;
use crate::render::result::{ResultContext, config_error_json, denial_note, permission_denials, result_json};
use crate::render::status::StatusLine;
use crate::render::stderr::StderrObserver;
use crate::render::stream_json::{HookEvents, InitInfo, StreamJsonObserver, StreamJsonReports, emit};
use crate::render::trace_file::TraceFile;

/// Runs `spine run`. With a JSON output format, a configuration error is also printed as a
/// result object on stdout (the error line on stderr and exit status 2 stay).
pub async fn run(args: RunArgs) -> anyhow::Result<u8> {
    let started = Instant::now();
    let format = args.output_format;
    let result = run_inner(args, started).await;
    if let Err(e) = &result
        && let Some(config) = e.downcast_ref::<crate::error::ConfigError>()
        && format != OutputFormat::Text
    {
        let duration_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
        let _ = out::line(config_error_json(&config.0, duration_ms));
    }
    result
}

async fn run_inner(args: RunArgs, started: Instant) -> anyhow::Result<u8> {
    // Descendants that leave their process group are re-parented to spine, and killed at the end.
    crate::guard::start();
    if let Err(e) = spine_process::orphans::become_subreaper() {
        eprintln!(
            "warning: cannot become the child subreaper ({e}); processes that leave their group may outlive the run"
        );
    }
    let Opened { home, launch_dir, session, project, model, settings } = open(&args)?;
    let ChosenSession { id: session_id, transcript: transcript_file, resumed } = session;
    let interactive_prompt = args.prompt.is_some() && std::io::stdin().is_terminal();
    let prompt = read_prompt(args.prompt.clone(), args.quiet)?;
    let images = load_images(&args.image, &std::env::current_dir().unwrap_or_else(|_| launch_dir.clone()))?;

    let (history, deferred, source) = match resumed {
        Some(loaded) => {
            if !loaded.repaired.is_empty() && !args.quiet {
                eprintln!(
                    "note: session {session_id} ended with {} unanswered tool call(s) ({}); they are answered Error [canceled]",
                    loaded.repaired.len(),
                    loaded.repaired.join(", ")
                );
            }
            (loaded.messages, loaded.deferred, SessionSource::Resume)
        }
        None => (Vec::new(), None, SessionSource::Startup),
    };
    if prompt.is_none() && deferred.is_none() && !args.init_only {
        let list_flags = !(args.allowed_tools.is_empty()
            && args.disallowed_tools.is_empty()
            && args.tools.is_empty()
            && args.add_dir.is_empty());
        let hint = if list_flags {
            " (--allowedTools, --disallowedTools, --tools and --add-dir take every word up to the next flag: put the prompt before them)"
        } else {
            ""
        };
        return Err(config(format!(
            "no prompt: pass it as an argument (spine -p \"PROMPT\") or pipe it on stdin{hint}"
        )));
    }

    // The live status line: on a terminal, without -v (which prints every event) or -q.
    let status = (std::io::stderr().is_terminal() && !args.verbose && !args.quiet).then(StatusLine::start);
    let terminal =
        interactive_prompt.then(|| Arc::new(TerminalApprover::new(project.clone(), status.clone(), &settings)));
    let approver: Arc<dyn Approver> = match &terminal {
        Some(terminal) => terminal.clone(),
        None => Arc::new(DenyApprover),
    };
    let Built { agent, families, mcp } =
        build(&args, &settings, &project, &home, model, &session_id, approver, !interactive_prompt).await?;
    if args.init_only {
        let code =
            super::setup::init_only(&agent, &session_id, &transcript_file, args.verbose, args.trace.as_deref()).await;
        drop(agent);
        families.shutdown().await;
        mcp.shutdown().await;
        return Ok(code);
    }
    let model_id = agent.model.model().to_owned();
    let context_window = agent.model.context_window();

    let mut trace_sink: Option<Arc<dyn TraceSink>> = match &args.trace {
        Some(path) => {
            Some(Arc::new(TraceFile::create(path).map_err(|e| config(format!("--trace {}: {e}", path.display())))?))
        }
        None => None,
    };
    let mut observers: Vec<Arc<dyn RunObserver>> = vec![Arc::new(StderrObserver::new(
        args.verbose,
        args.quiet,
        args.verbose && std::io::stderr().is_terminal(),
        status.clone(),
    ))];
    if args.output_format == OutputFormat::StreamJson {
        let init = InitInfo {
            cwd: agent.config.cwd.display().to_string(),
            tools: agent
                .tools
                .specs()
                .filter(|s| agent.config.visibility.allows(&s.name))
                .map(|s| s.name.clone())
                .collect(),
            mcp_servers: mcp.server_names().into_iter().map(str::to_owned).collect(),
            permission_mode: agent.policy.mode().as_str().to_owned(),
        };
        let hook_events = if args.include_hook_events { HookEvents::Include } else { HookEvents::Omit };
        observers.push(Arc::new(StreamJsonObserver::new(init, hook_events)));
    }
    // OpenTelemetry export, when on: the last spans are sent as soon as the run ends, while the
    // run's processes are stopped and the output is written; `telemetry` waits for them when
    // it drops, after the output.
    let mut telemetry = crate::telemetry::install(&settings, &mut trace_sink, &mut observers, args.quiet);
    let transcript = if args.no_session_persistence {
        Transcript::discard(&transcript_file)
    } else {
        Transcript::open(&transcript_file)
            .map_err(|e| config(format!("cannot write the session transcript {}: {e}", transcript_file.display())))?
    };
    // The environment file exists only once a SessionStart hook writes to it (`>>` creates it);
    // a missing file applies nothing.
    let env_file = transcript_file.with_extension("env");
    if let Some(folder) = env_file.parent()
        && let Err(e) = std::fs::create_dir_all(folder)
    {
        return Err(config(format!("cannot create {}: {e}", folder.display())));
    }

    let reports = (args.output_format == OutputFormat::StreamJson && args.include_reports).then(|| {
        let identity = WorkIdentity {
            mailbox_item_id: session_id.clone(),
            logical_work_id: session_id.clone(),
            attempt_no: 1,
            conversation_id: Some(session_id.clone()),
            turn_id: None,
        };
        Arc::new(ReportCollector::new(identity, Arc::new(StreamJsonReports)))
    });
    let cancel = CancellationToken::new();
    if let Some(terminal) = &terminal {
        terminal.set_cancel(cancel.clone());
    }
    // SIGINT, SIGTERM and SIGHUP cancel the run (the running tool's group is killed, pending
    // calls are answered `Error [canceled]`, the transcript and the result are written); a
    // second signal exits at once. The exit status is 128 + the first signal's number.
    let interrupted = Arc::new(std::sync::atomic::AtomicU8::new(0));
    match crate::signals::Cancellers::install() {
        Ok(mut signals) => {
            let cancel = cancel.clone();
            let interrupted = Arc::clone(&interrupted);
            tokio::spawn(async move {
                if let Some(code) = signals.next().await {
                    interrupted.store(code, std::sync::atomic::Ordering::SeqCst);
                    cancel.cancel();
                    if let Some(again) = signals.next().await {
                        std::process::exit(i32::from(again));
                    }
                }
            });
        }
        Err(e) => eprintln!("warning: cannot watch signals: {e}"),
    }

    // What the session watches (the shell's directory, files, settings) stops with the run.
    let watch = spine_core::watch::SessionWatch::new(agent.config.cwd.clone())
        .with_config(spine_agent::watch::config_files(&settings, &agent.config.skill_roots));
    let outcome = agent
        .run(
            RunRequest::new(session_id, transcript)
                .watch(Some(Arc::new(watch)))
                .prompt(prompt)
                .images(images)
                .history(history)
                .deferred(deferred)
                .source(source)
                .cancel(cancel)
                .observer(Arc::new(Fanout(observers)))
                .trace(Trace::new(trace_sink))
                .env_file(Some(env_file))
                .reports(reports)
                .setup(crate::commands::setup::trigger(&args)),
        )
        .await;
    if let Some(telemetry) = &mut telemetry {
        telemetry.ended();
    }
    if let Some(status) = &status {
        status.finish();
    }

    // Nothing the run started outlives it: command runs, background processes, MCP servers.
    drop(agent);
    families.shutdown().await;
    mcp.shutdown().await;
    spine_process::orphans::kill_orphans().await;
    let duration_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    let result_context =
        ResultContext { duration_ms, model: &model_id, context_window, include_messages: args.include_messages };
    match args.output_format {
        OutputFormat::Text => match outcome.subtype {
            RunSubtype::Success => {
                let _ = out::line(&outcome.result);
            }
            RunSubtype::Deferred => eprintln!("{}", outcome.result),
            RunSubtype::ErrorMaxTurns
            | RunSubtype::ErrorDuringExecution
            | RunSubtype::Blocked
            | RunSubtype::Canceled => {
                eprintln!("error ({}): {}", subtype_name(outcome.subtype), outcome.result);
            }
        },
        OutputFormat::Json => {
            let _ = out::line(result_json(&outcome, &result_context));
        }
        OutputFormat::StreamJson => emit(&result_json(&outcome, &result_context)),
    }
    if !args.quiet
        && !args.verbose
        && let Some(note) = denial_note(&permission_denials(&outcome), settings.managed.permission_rules_only.as_ref())
    {
        eprintln!("{note}");
    }
    if let Some(reason) = &outcome.stop_reason
        && !args.quiet
        && args.output_format == OutputFormat::Text
    {
        eprintln!("stopped: {reason}");
    }
    Ok(match outcome.subtype {
        RunSubtype::Success | RunSubtype::Deferred => exit::OK,
        RunSubtype::Canceled if interrupted.load(std::sync::atomic::Ordering::SeqCst) != 0 => {
            interrupted.load(std::sync::atomic::Ordering::SeqCst)
        }
        RunSubtype::ErrorMaxTurns | RunSubtype::ErrorDuringExecution | RunSubtype::Blocked | RunSubtype::Canceled => {
            exit::FAILED
        }
    })
}

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
    let settings = context::settings_with(&home, &project, &args.settings, args.trust, args.setting_sources.as_ref())?;
    if args.verbose {
        for note in &settings.notes {
            eprintln!("note: {note}");
        }
    }
    Ok(Opened { home, launch_dir, session, project, model, settings })
}

/// The agent of a session, with what must be shut down after it.
pub(crate) struct Built {
    pub(crate) agent: spine_core::runner::Agent,
    pub(crate) families: spine_tools::FamilyHandles,
    pub(crate) mcp: spine_tools::mcp::McpTools,
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
) -> anyhow::Result<Built> {
    let permission_mode = match &args.permission_mode {
        Some(flag) => Some(flag.parse::<PermissionMode>().map_err(|e| config(format!("--permission-mode: {e}")))?),
        None if args.dangerously_skip_permissions => Some(PermissionMode::BypassPermissions),
        None => None,
    };
    let connection = spine_agent::connect_mcp(settings, project).await.map_err(|e| config(e.to_string()))?;
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
            model,
            permission_mode,
            max_turns: Some(args.max_turns.or(settings.max_turns).unwrap_or(NO_TURN_LIMIT)),
            allowed_tools: visible_tools(&args.tools)?,
            command_line: CommandLine {
                allow: split_list(&args.allowed_tools),
                deny: split_list(&args.disallowed_tools),
                system_prompt: args.system_prompt.clone(),
                append_system_prompt: args.append_system_prompt.clone(),
                add_dirs: add_dirs(&args.add_dir, project),
                agents: args.agents.clone(),
                agent: args.agent.clone(),
                tool_set: args.tool_set,
            },
            approver,
            allow_defer,
            conversation_id: Some(session_id.to_owned()),
            tools: Tools::Fresh(mcp.tools()),
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

fn subtype_name(s: RunSubtype) -> String {
    serde_json::to_value(s).ok().and_then(|v| v.as_str().map(str::to_owned)).unwrap_or_default()
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
    match name.parse::<spine_models::spec::ModelSpec>() {
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
/// written in the launch directory's project folder.
fn choose_session(args: &RunArgs, home: &Path, launch_dir: &Path) -> anyhow::Result<ChosenSession> {
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

/// How long stdin may stay silent, when a prompt was given, before the run goes on without it
/// (Claude Code waits the same 3 s, for a stdin that is an open pipe nobody writes to).
const STDIN_WAIT: std::time::Duration = std::time::Duration::from_secs(3);

/// The prompt: the argument, with stdin appended after a newline when stdin is not a terminal
/// (Claude Code's `[prompt, stdin].filter(Boolean).join("\n")`), or stdin alone without an
/// argument. Trailing newlines of stdin are removed; an empty prompt is none.
fn read_prompt(arg: Option<String>, quiet: bool) -> anyhow::Result<Option<String>> {
    let stdin = std::io::stdin();
    if stdin.is_terminal() {
        return Ok(arg);
    }
    let piped = match arg {
        None => {
            let mut text = String::new();
            stdin
                .lock()
                .read_to_string(&mut text)
                .map_err(|e| config(format!("cannot read the prompt from stdin: {e}")))?;
            text
        }
        Some(prompt) => match read_stdin_unless_silent()? {
            Some(text) => join_prompt(&prompt, &text),
            None => {
                if !quiet {
                    eprintln!(
                        "warning: no stdin data received in {}s, going on without it (redirect stdin from /dev/null to skip the wait)",
                        STDIN_WAIT.as_secs()
                    );
                }
                prompt
            }
        },
    };
    let text = piped.trim_end_matches(['\n', '\r']).to_owned();
    Ok(if text.trim().is_empty() { None } else { Some(text) })
}

/// The prompt argument followed by piped stdin: `PROMPT\nSTDIN`, or the prompt alone when stdin
/// is empty.
fn join_prompt(prompt: &str, piped: &str) -> String {
    if piped.is_empty() { prompt.to_owned() } else { format!("{prompt}\n{piped}") }
}

/// Reads stdin to its end, unless nothing (not even its end) arrives within [`STDIN_WAIT`].
fn read_stdin_unless_silent() -> anyhow::Result<Option<String>> {
    let (first_tx, first_rx) = std::sync::mpsc::channel::<()>();
    let (done_tx, done_rx) = std::sync::mpsc::channel::<std::io::Result<String>>();
    std::thread::spawn(move || {
        let mut stdin = std::io::stdin().lock();
        let mut bytes = Vec::new();
        let mut buf = [0u8; 8192];
        let mut signalled = false;
        let result = loop {
            match stdin.read(&mut buf) {
                Ok(n) => {
                    if !signalled {
                        signalled = true;
                        let _ = first_tx.send(());
                    }
                    if n == 0 {
                        break String::from_utf8(bytes)
                            .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e));
                    }
                    bytes.extend_from_slice(&buf[..n]);
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => break Err(e),
            }
        };
        if !signalled {
            let _ = first_tx.send(());
        }
        let _ = done_tx.send(result);
    });
    if first_rx.recv_timeout(STDIN_WAIT).is_err() {
        return Ok(None);
    }
    match done_rx.recv() {
        Ok(Ok(text)) => Ok(Some(text)),
        Ok(Err(e)) => Err(config(format!("cannot read stdin: {e}"))),
        Err(_) => Err(config("cannot read stdin")),
    }
}

/// The `--image` files, read and prepared for the model (relative paths against the directory
/// spine was started in, as `--add-dir`; the user named them, so the workspace boundary does not apply). A missing file
/// or one that is not a usable image is a configuration error naming the flag.
fn load_images(paths: &[PathBuf], started_in: &Path) -> anyhow::Result<Vec<spine_protocol::message::ImageBlock>> {
    paths
        .iter()
        .map(|path| {
            let full = started_in.join(path);
            spine_tools::image::load(&full)
                .map(|image| image.block)
                .map_err(|e| config(format!("--image {}: {e}", path.display())))
        })
        .collect()
}

/// `--add-dir` values as added directories: relative ones against the directory spine was
/// started in (the project directory when that cannot be read).
fn add_dirs(values: &[String], project: &Path) -> Vec<spine_settings::AddedDirectory> {
    let cwd = std::env::current_dir().unwrap_or_else(|_| project.to_path_buf());
    values.iter().map(|v| spine_settings::AddedDirectory::from_flag(v, &cwd)).collect()
}

#[cfg(test)]
mod tests {
    use super::join_prompt;

    #[test]
    fn piped_stdin_follows_the_prompt_after_a_newline() {
        assert_eq!(join_prompt("summarize", "line 1\nline 2\n"), "summarize\nline 1\nline 2\n");
        assert_eq!(join_prompt("summarize", ""), "summarize");
    }
}
