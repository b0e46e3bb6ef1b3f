//! `spine run`: resolve the configuration (settings, model, permissions, tools, hooks,
//! session), run the agent, print the outcome in the chosen format, map it to an exit status.
//! Every configuration problem is found before the run starts and exits 2.

use std::io::{IsTerminal, Read};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use spine_core::CancellationToken;
use spine_core::hooks::HookRegistryBuilder;
use spine_core::model::ModelClient;
use spine_core::observer::RunObserver;
use spine_core::permission::{Approver, DenyApprover, PermissionPolicy, PermissionRule, PermissionRules};
use spine_core::registry::{ToolRegistry, ToolRegistryBuilder};
use spine_core::reports::{ReportCollector, WorkIdentity};
use spine_core::runner::{Agent, AgentConfig, RunRequest};
use spine_core::session::Transcript;
use spine_core::skills::{SkillRoot, SkillRootKind};
use spine_core::stages::review_tool_call::Visibility;
use spine_core::tokens::WordsEstimator;
use spine_core::trace::{Trace, TraceSink};
use spine_core::workspace::Workspace;
use spine_hooks::settings::RuleEntry;
use spine_hooks::{HookConfig, Settings};
use spine_models::spec::ModelSpec;
use spine_protocol::hook::SessionSource;
use spine_protocol::permission::PermissionMode;
use spine_protocol::run::RunSubtype;

use super::context;
use crate::cli::{OutputFormat, RunArgs};
use crate::error::{config, exit};
use crate::render::Fanout;
use crate::render::approver::TerminalApprover;
use crate::render::result::result_json;
use crate::render::stderr::StderrObserver;
use crate::render::stream_json::{StreamJsonObserver, StreamJsonReports, emit};
use crate::render::trace_file::TraceFile;

/// Runs `spine run`.
pub async fn run(args: RunArgs) -> anyhow::Result<u8> {
    let started = Instant::now();
    let home = context::spine_home()?;
    let project = context::project_dir(args.cwd.as_ref())?;
    let settings = context::settings(&home, &project, &args.settings)?;
    if args.verbose {
        for note in &settings.notes {
            eprintln!("note: {note}");
        }
    }
    let interactive_prompt = args.prompt.is_some() && std::io::stdin().is_terminal();
    let prompt = read_prompt(args.prompt.clone())?;

    let (session_id, history, deferred, source) = match &args.resume {
        Some(id) => {
            let path = transcript_path(&home, id);
            let loaded =
                Transcript::load(&path).map_err(|e| config(format!("--resume {id}: {}: {e}", path.display())))?;
            (id.clone(), loaded.messages, loaded.deferred, SessionSource::Resume)
        }
        None => (uuid::Uuid::new_v4().to_string(), Vec::new(), None, SessionSource::Startup),
    };
    if prompt.is_none() && deferred.is_none() {
        return Err(config("no prompt: pass -p PROMPT or pipe the prompt on stdin"));
    }

    let model = build_model(args.model.as_deref(), &settings).await?;
    let tools = Arc::new(build_tools()?);
    let visibility = visibility(&args.allowed_tools, &tools)?;
    let mode = match (&args.permission_mode, settings.permissions.default_mode) {
        (Some(flag), _) => flag.parse::<PermissionMode>().map_err(|e| config(format!("--permission-mode: {e}")))?,
        (None, Some(mode)) => mode,
        (None, None) => PermissionMode::Default,
    };
    let rules = PermissionRules {
        allow: parse_rules(&settings.permissions.allow)?,
        ask: parse_rules(&settings.permissions.ask)?,
        deny: parse_rules(&settings.permissions.deny)?,
    };
    let hooks = build_hooks(&settings, args.quiet)?;
    let workspace =
        Arc::new(Workspace::new(&project).map_err(|e| config(format!("workspace {}: {e}", project.display())))?);

    let mut agent_config = AgentConfig::new(Arc::clone(&workspace));
    agent_config.max_turns = args.max_turns.or(settings.max_turns).unwrap_or(20);
    agent_config.max_forced_continuations = settings.max_forced_continuations.unwrap_or(1);
    agent_config.visibility = visibility;
    agent_config.turn.model_context.likely_model = Some(model.model().to_owned());
    agent_config.turn.conversation_id = Some(session_id.clone());
    agent_config.turn.allowed_tool_names = agent_config.visibility.names().to_vec();
    agent_config.skill_roots = skill_roots(&settings, &home, &project);
    agent_config.compaction_threshold = settings.compaction_threshold_tokens;
    agent_config.compaction_strategy = settings.compaction_strategy.unwrap_or_default();
    if settings.token_estimator.as_deref() == Some("words") {
        agent_config.estimator = Some(Arc::new(WordsEstimator));
    }
    agent_config.allow_defer = !interactive_prompt;
    let approver: Arc<dyn Approver> =
        if interactive_prompt { Arc::new(TerminalApprover) } else { Arc::new(DenyApprover) };
    let agent = Agent {
        model,
        tools,
        hooks: Arc::new(hooks),
        policy: PermissionPolicy::new(rules, mode, project.clone()),
        approver,
        config: agent_config,
    };

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
    let interrupted = Arc::new(std::sync::atomic::AtomicBool::new(false));
    {
        let cancel = cancel.clone();
        let interrupted = Arc::clone(&interrupted);
        tokio::spawn(async move {
            if tokio::signal::ctrl_c().await.is_ok() {
                interrupted.store(true, std::sync::atomic::Ordering::SeqCst);
                cancel.cancel();
                if tokio::signal::ctrl_c().await.is_ok() {
                    std::process::exit(i32::from(exit::CANCELED));
                }
            }
        });
    }

    let outcome = agent
        .run(RunRequest {
            prompt,
            session_id,
            transcript,
            history,
            deferred,
            source,
            cancel,
            observer: Arc::new(Fanout(observers)),
            trace: Trace::new(trace_sink),
            env_file: Some(env_file),
            progress: None,
            reports,
        })
        .await;

    let duration_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    match args.output_format {
        OutputFormat::Text => match outcome.subtype {
            RunSubtype::Success => println!("{}", outcome.result),
            RunSubtype::Deferred => eprintln!("{}", outcome.result),
            RunSubtype::ErrorMaxTurns
            | RunSubtype::ErrorDuringExecution
            | RunSubtype::Blocked
            | RunSubtype::Canceled => {
                eprintln!("error ({}): {}", subtype_name(outcome.subtype), outcome.result);
            }
        },
        OutputFormat::Json => println!("{}", result_json(&outcome, duration_ms)),
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
        RunSubtype::Canceled if interrupted.load(std::sync::atomic::Ordering::SeqCst) => exit::CANCELED,
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

async fn build_model(flag: Option<&str>, settings: &Settings) -> anyhow::Result<Arc<dyn ModelClient>> {
    let spec: ModelSpec = match (flag, settings.model.as_deref()) {
        (Some(text), _) | (None, Some(text)) => {
            text.parse().map_err(|e: spine_models::spec::SpecError| config(format!("--model: {e}")))?
        }
        (None, None) => spine_models::default_spec_from_env().ok_or_else(|| {
            config(
                "no model configured: pass --model scripted:FILE | openai:MODEL | anthropic:MODEL, \
                 set `model` in a settings file, or set ANTHROPIC_API_KEY or OPENAI_API_KEY",
            )
        })?,
    };
    spine_models::client_for(&spec).map_err(|e| config(e.to_string()))
}

/// `skills.roots` from settings, else `$SPINE_HOME/skills` (system) and `.spine/skills` (live).
fn skill_roots(settings: &Settings, home: &Path, project: &Path) -> Vec<SkillRoot> {
    match &settings.skill_roots {
        Some(roots) => roots
            .iter()
            .map(|r| {
                let path = Workspace::normalize(&r.path, project);
                SkillRoot { path, kind: r.kind }
            })
            .collect(),
        None => vec![
            SkillRoot { path: home.join("skills"), kind: SkillRootKind::System },
            SkillRoot { path: project.join(".spine").join("skills"), kind: SkillRootKind::Live },
        ],
    }
}

fn build_tools() -> anyhow::Result<ToolRegistry> {
    let mut builder = ToolRegistryBuilder::new();
    spine_tools::register_builtins(&mut builder);
    builder.build().map_err(|e| anyhow::anyhow!("tool registry: {e}"))
}

fn visibility(names: &[String], tools: &ToolRegistry) -> anyhow::Result<Visibility> {
    let names: Vec<String> = names.iter().map(|n| n.trim().to_owned()).filter(|n| !n.is_empty()).collect();
    if names.is_empty() {
        return Ok(Visibility::All);
    }
    for name in &names {
        if tools.lookup(name).is_none() {
            let known: Vec<&str> = tools.names().collect();
            return Err(config(format!("--allowed-tools: unknown tool `{name}` (known: {})", known.join(", "))));
        }
    }
    Ok(Visibility::Only(names))
}

fn parse_rules(entries: &[RuleEntry]) -> anyhow::Result<Vec<PermissionRule>> {
    entries
        .iter()
        .map(|e| PermissionRule::parse(&e.rule).map_err(|err| config(format!("{}: {}: {}", e.origin, e.path, err))))
        .collect()
}

/// The external hooks of the settings. Configuration errors exit 2 naming file and JSON path;
/// hooks that will not run (events or handler types spine lacks) are warned about on stderr
/// even without `-v`, so nobody believes an enforcement hook runs when it does not.
fn build_hooks(settings: &Settings, quiet: bool) -> anyhow::Result<spine_core::hooks::HookRegistry> {
    let hooks = HookConfig::from_settings(settings).map_err(|e| config(e.to_string()))?;
    if !quiet {
        for warning in &hooks.warnings {
            eprintln!("warning: {warning}");
        }
        if let Some(origin) = &hooks.disabled_by {
            eprintln!("warning: every hook is disabled by `disableAllHooks` in {origin}");
        }
    }
    let mut builder = HookRegistryBuilder::new();
    spine_hooks::register(&hooks, &mut builder, &spine_hooks::BuildOptions::default())
        .map_err(|e| config(e.to_string()))?;
    Ok(builder.build())
}
