//! `spine run`: resolve the configuration (settings, model, permissions, tools, hooks,
//! session), run the agent, print the outcome in the chosen format, map it to an exit status.
//! Every configuration problem is found before the run starts and exits 2.
//!
//! - [`crate::session_open`]: the session, settings and model, and the agent (shared with the
//!   interactive session);
//! - [`input`]: the prompt (argument and piped stdin) and the `--image` files;
//! - [`output`]: the result in the output format, the notes, the exit status;
//! - this module: the run itself — approvals, observers, trace, telemetry, transcript,
//!   signals — and stopping everything it started.

mod input;
pub(crate) mod output;
pub(crate) mod slash_prompt;

use std::io::IsTerminal;
use std::sync::Arc;
use std::time::Instant;

use spine_core::CancellationToken;
use spine_core::observer::RunObserver;
use spine_core::permission::{Approver, DenyApprover};
use spine_core::reports::{ReportCollector, WorkIdentity};
use spine_core::runner::RunRequest;
use spine_core::session::Transcript;
use spine_core::trace::{Trace, TraceSink};
use spine_protocol::hook::SessionSource;

use crate::cli::{OutputFormat, RunArgs};
use crate::error::config;
use crate::render::Fanout;
use crate::render::approver::TerminalApprover;
use crate::render::result::ResultContext;
use crate::render::status::StatusLine;
use crate::render::stderr::StderrObserver;
use crate::render::stream_json::{HookEvents, InitInfo, StreamJsonObserver, StreamJsonReports, mcp_statuses};
use crate::render::trace_file::TraceFile;
use crate::session_open::{Built, ChosenSession, Opened, build, open};

/// Runs `spine run`. With a JSON output format, a configuration error is also printed as a
/// result object on stdout (the error line on stderr and exit status 2 stay).
pub async fn run(args: RunArgs) -> anyhow::Result<u8> {
    let started = Instant::now();
    let format = args.output_format;
    let result = run_inner(args, started).await;
    if let Err(e) = &result {
        output::config_error(e, format, started);
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
    let prompt = input::read_prompt(args.prompt.clone(), args.quiet)?;
    let images = input::load_images(&args.image, &std::env::current_dir().unwrap_or_else(|_| launch_dir.clone()))?;

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
    let Built { mut agent, families, mcp } =
        build(&args, &settings, &project, &home, model, &session_id, approver, !interactive_prompt, Default::default())
            .await?;
    // `spine -p "/command args"`: a custom command's expansion, as Claude Code's print mode.
    let mut expansion = None;
    let prompt = match prompt.as_deref().map(|p| slash_prompt::expand(p, &agent, &settings, &project, &home)) {
        Some(Err(e)) => return Err(config(e)),
        Some(Ok(Some(expanded))) => {
            agent.policy = agent.policy.with_allowed(expanded.allow);
            expansion = Some(expanded.expansion);
            Some(expanded.prompt)
        }
        _ => prompt,
    };
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
        let init = InitInfo::new(&agent, &settings, &project, &home).with_mcp_servers(mcp_statuses(&mcp));
        let hook_events = if args.include_hook_events { HookEvents::Include } else { HookEvents::Omit };
        observers.push(Arc::new(
            StreamJsonObserver::new(init, hook_events).with_partial_messages(args.host.include_partial_messages),
        ));
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
                .expansion(expansion)
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
    output::print_outcome(&outcome, &args, &result_context, &settings);
    Ok(output::exit_status(&outcome, interrupted.load(std::sync::atomic::Ordering::SeqCst)))
}
