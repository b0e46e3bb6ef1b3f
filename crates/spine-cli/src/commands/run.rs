//! `spine run`: resolve the configuration (settings, model, permissions, tools, hooks,
//! session), run the agent, print the outcome in the chosen format, map it to an exit status.
//! Every configuration problem is found before the run starts and exits 2.

use std::io::{IsTerminal, Read};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use spine_agent::{AgentOptions, Tools};
use spine_core::CancellationToken;
use spine_core::observer::RunObserver;
use spine_core::permission::{Approver, DenyApprover};
use spine_core::reports::{ReportCollector, WorkIdentity};
use spine_core::runner::RunRequest;
use spine_core::session::{Transcript, check_session_id, new_session_id};
use spine_core::trace::{Trace, TraceSink};
use spine_protocol::hook::SessionSource;
use spine_protocol::permission::PermissionMode;
use spine_protocol::run::RunSubtype;

use super::context;
use crate::cli::{OutputFormat, RunArgs};
use crate::error::{config, exit};
use crate::out;
use crate::render::Fanout;
use crate::render::approver::TerminalApprover;
use crate::render::result::result_json;
use crate::render::stderr::StderrObserver;
use crate::render::stream_json::{StreamJsonObserver, StreamJsonReports, emit};
use crate::render::trace_file::TraceFile;

/// Runs `spine run`.
pub async fn run(args: RunArgs) -> anyhow::Result<u8> {
    let started = Instant::now();
    // Descendants that leave their process group are re-parented to spine, and killed at the end.
    crate::guard::start();
    if let Err(e) = spine_process::orphans::become_subreaper() {
        eprintln!(
            "warning: cannot become the child subreaper ({e}); processes that leave their group may outlive the run"
        );
    }
    let home = context::spine_home()?;
    let project = context::project_dir(args.cwd.as_ref())?;
    let settings = context::settings_with(&home, &project, &args.settings, args.trust, args.setting_sources.as_ref())?;
    if args.verbose {
        for note in &settings.notes {
            eprintln!("note: {note}");
        }
    }
    let interactive_prompt = args.prompt.is_some() && std::io::stdin().is_terminal();
    let prompt = read_prompt(args.prompt.clone())?;

    let (session_id, history, deferred, source) = match &args.resume {
        Some(id) => {
            check_session_id(id).map_err(|e| config(format!("--resume: {e}")))?;
            let path = transcript_path(&home, id);
            let loaded =
                Transcript::load(&path).map_err(|e| config(format!("--resume {id}: {}: {e}", path.display())))?;
            if !loaded.repaired.is_empty() && !args.quiet {
                eprintln!(
                    "note: session {id} ended with {} unanswered tool call(s) ({}); they are answered Error [canceled]",
                    loaded.repaired.len(),
                    loaded.repaired.join(", ")
                );
            }
            (id.clone(), loaded.messages, loaded.deferred, SessionSource::Resume)
        }
        None => (new_session_id(), Vec::new(), None, SessionSource::Startup),
    };
    if prompt.is_none() && deferred.is_none() {
        return Err(config("no prompt: pass -p PROMPT or pipe the prompt on stdin"));
    }

    let permission_mode = match &args.permission_mode {
        Some(flag) => Some(flag.parse::<PermissionMode>().map_err(|e| config(format!("--permission-mode: {e}")))?),
        None => None,
    };
    let approver: Arc<dyn Approver> =
        if interactive_prompt { Arc::new(TerminalApprover) } else { Arc::new(DenyApprover) };
    let connection = spine_agent::connect_mcp(&settings, &project).await.map_err(|e| config(e.to_string()))?;
    if !args.quiet
        && let Some(notice) = spine_agent::untrusted_notice(&settings, &project, &connection)
    {
        eprintln!("{notice}");
    }
    let (mcp, mcp_warnings) = (connection.tools, connection.warnings);
    let assembled = spine_agent::assemble(
        &settings,
        AgentOptions {
            project: project.clone(),
            spine_home: home.clone(),
            model: args.model.clone(),
            permission_mode,
            max_turns: args.max_turns,
            allowed_tools: args.allowed_tools.clone(),
            approver,
            allow_defer: !interactive_prompt,
            conversation_id: Some(session_id.clone()),
            tools: Tools::Fresh(mcp.tools()),
        },
    )
    .map_err(|e| config(e.to_string()))?;
    if !args.quiet {
        for warning in mcp_warnings.iter().chain(&assembled.warnings) {
            eprintln!("warning: {warning}");
        }
    }
    let (agent, families) = (assembled.agent, assembled.tools.families);

    let trace_sink: Option<Arc<dyn TraceSink>> = match &args.trace {
        Some(path) => {
            Some(Arc::new(TraceFile::create(path).map_err(|e| config(format!("--trace {}: {e}", path.display())))?))
        }
        None => None,
    };
    let mut observers: Vec<Arc<dyn RunObserver>> =
        vec![Arc::new(StderrObserver::new(args.verbose, args.quiet, args.verbose && std::io::stderr().is_terminal()))];
    if args.output_format == OutputFormat::StreamJson {
        observers.push(Arc::new(StreamJsonObserver));
    }
    let transcript_file = transcript_path(&home, &session_id);
    let transcript = Transcript::open(&transcript_file)
        .map_err(|e| config(format!("cannot write the session transcript {}: {e}", transcript_file.display())))?;
    let env_file = home.join("sessions").join(format!("{session_id}.env"));
    if let Err(e) = std::fs::OpenOptions::new().create(true).append(true).open(&env_file) {
        return Err(config(format!("cannot create {}: {e}", env_file.display())));
    }

    let reports = (args.output_format == OutputFormat::StreamJson).then(|| {
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

    let outcome = agent
        .run(
            RunRequest::new(session_id, transcript)
                .prompt(prompt)
                .history(history)
                .deferred(deferred)
                .source(source)
                .cancel(cancel)
                .observer(Arc::new(Fanout(observers)))
                .trace(Trace::new(trace_sink))
                .env_file(Some(env_file))
                .reports(reports),
        )
        .await;

    // Nothing the run started outlives it: command runs, background processes, MCP servers.
    drop(agent);
    families.shutdown().await;
    mcp.shutdown().await;
    spine_process::orphans::kill_orphans().await;
    let duration_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
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
            let _ = out::line(result_json(&outcome, duration_ms));
        }
        OutputFormat::StreamJson => emit(&result_json(&outcome, duration_ms)),
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

fn subtype_name(s: RunSubtype) -> String {
    serde_json::to_value(s).ok().and_then(|v| v.as_str().map(str::to_owned)).unwrap_or_default()
}

fn transcript_path(home: &Path, session_id: &str) -> PathBuf {
    home.join("sessions").join(format!("{session_id}.jsonl"))
}

fn read_prompt(flag: Option<String>) -> anyhow::Result<Option<String>> {
    if let Some(p) = flag {
        return Ok(Some(p));
    }
    let stdin = std::io::stdin();
    if stdin.is_terminal() {
        return Ok(None);
    }
    let mut text = String::new();
    stdin.lock().read_to_string(&mut text).map_err(|e| config(format!("cannot read the prompt from stdin: {e}")))?;
    let text = text.trim_end_matches(['\n', '\r']).to_owned();
    Ok(if text.trim().is_empty() { None } else { Some(text) })
}
