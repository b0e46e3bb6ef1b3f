//! `spine hooks test EVENT`: fires one event against the configured hooks without a session,
//! and renders each hook's raw answer and the merged decision (text or JSON).
//!
//! Contract: the hooks run as in a run of the same settings — the settings' `env`, the
//! built-in tools for tool events, and for prompt and agent hooks the models a run would use
//! (`--model`, else the settings' model; a hook's own `model` wins), agent hooks' verifiers
//! being the read-only agents of `spine run` (spine-agent's `Verifiers`, over `Read`, `Glob`
//! and `Grep` in the project directory). Without a session model a prompt or agent hook with
//! no `model` of its own fails when it fires, decided by its `onFailure`. Exit status 0, or 2
//! for an unknown event, bad `--input`, or a `--model` that cannot be built.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::{Value, json};
use spine_core::hooks::SessionInfo;
use spine_core::model::{ModelClient, NoModel};
use spine_core::registry::ToolRegistryBuilder;
use spine_core::workspace::Workspace;
use spine_hooks::agent_hook::HookAgents;
use spine_hooks::config::unsupported_event;
use spine_hooks::fire::{FireReport, FireRequest, TranscriptFile, fire};
use spine_hooks::prompt::HookModels;
use spine_hooks::record::{AnswerRecord, Raw};
use spine_protocol::hook::{HookEventName, HookKind};
use spine_protocol::permission::PermissionMode;

use super::hooks::{hook_config, load};
use crate::cli::{HooksTestArgs, OutputFormat};
use crate::error::{config, exit};
use crate::out;

/// Runs `spine hooks test`.
pub(super) async fn test(args: &HooksTestArgs) -> anyhow::Result<u8> {
    let event = match args.event.parse::<HookEventName>() {
        Ok(event) => event,
        Err(e) => {
            let why = unsupported_event(&args.event).unwrap_or_else(|| e.to_string());
            return Err(config(format!("spine hooks test: {why}")));
        }
    };
    let loaded = load(&args.common)?;
    let hooks = hook_config(&loaded)?;
    let input = match &args.input {
        None => None,
        Some(text) => Some(read_input(text, &loaded.project)?),
    };
    let mut tools = ToolRegistryBuilder::new();
    spine_agent::register_builtins(&mut tools);
    let tools = Arc::new(tools.build().map_err(|e| anyhow::anyhow!("tool registry: {e}"))?);
    let session_id = format!("hooks-test-{}", uuid::Uuid::new_v4());
    let env_dir = tempfile_dir()?;
    let env_file = env_dir.join("session.env");
    std::fs::write(&env_file, "").map_err(|e| anyhow::anyhow!("cannot create {}: {e}", env_file.display()))?;
    let (transcript_path, transcript) = match &args.transcript {
        Some(path) => {
            if !path.is_file() {
                return Err(config(format!("spine hooks test: --transcript {}: no such file", path.display())));
            }
            (std::path::absolute(path)?, TranscriptFile::Existing)
        }
        None => (env_dir.join(format!("{session_id}.jsonl")), TranscriptFile::Write),
    };
    let session = SessionInfo {
        transcript_path,
        session_id,
        cwd: loaded.project.clone(),
        hook_dir: loaded.project.clone(),
        project_dir: loaded.project.clone(),
        permission_mode: loaded.settings.permissions.default_mode.unwrap_or(PermissionMode::Default),
        effort: loaded.settings.model_options.reasoning_effort.map(spine_protocol::message::Effort::from),
        env_file: Some(env_file.clone()),
    };
    let (models, agents) = hook_models(args.model.as_deref(), &loaded.settings, &loaded.project, &tools)?;
    let request = FireRequest {
        event,
        tool: args.tool.clone(),
        input,
        session,
        tools,
        transcript,
        models: Some(models),
        agents: Some(agents),
        // The hooks see the settings' `env` (and provider keys) exactly as in a run.
        child_env: spine_agent::child_env(&loaded.settings),
    };
    let report = fire(&hooks, request).await.map_err(|e| config(format!("spine hooks test: {e}")));
    let env_lines = std::fs::read_to_string(&env_file).unwrap_or_default();
    let _ = std::fs::remove_dir_all(&env_dir);
    let report = report?;
    if args.common.output_format != OutputFormat::Text {
        let _ = out::line(serde_json::to_string_pretty(&report_json(&report, &env_lines)).unwrap_or_default());
    } else {
        let _ = out::text(report_text(&report, &env_lines));
    }
    Ok(exit::OK)
}

/// What prompt and agent hooks run with, as in a run: their own `model`, else `--model` (an
/// error when it cannot be built), else the settings' model (none: such hooks fail when they
/// fire); agent hooks' verifiers see the read-only tools of `tools` over the project directory.
fn hook_models(
    flag: Option<&str>,
    settings: &spine_settings::Settings,
    project: &Path,
    tools: &Arc<spine_core::registry::ToolRegistry>,
) -> anyhow::Result<(Arc<dyn HookModels>, Arc<dyn HookAgents>)> {
    let session_model: Arc<dyn ModelClient> = match flag {
        Some(spec) => {
            spine_agent::build_model(Some(spec), settings).map_err(|e| config(format!("spine hooks test: {e}")))?
        }
        None => spine_agent::build_model(None, settings).unwrap_or_else(|_| Arc::new(NoModel) as Arc<dyn ModelClient>),
    };
    let models: Arc<dyn HookModels> = Arc::new(spine_agent::PromptModels::new(settings, session_model));
    let workspace = Workspace::new(project)
        .map_err(|e| config(format!("spine hooks test: the project directory {}: {e}", project.display())))?;
    let verifiers = spine_agent::verifier::Verifiers::new(Arc::clone(&models), Arc::clone(tools), Arc::new(workspace));
    Ok((models, Arc::new(verifiers)))
}

fn tempfile_dir() -> anyhow::Result<PathBuf> {
    let dir = std::env::temp_dir().join(format!("spine-hooks-test-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&dir).map_err(|e| anyhow::anyhow!("cannot create {}: {e}", dir.display()))?;
    Ok(dir)
}

/// `--input`: inline JSON, or a file holding it (relative to the project directory).
fn read_input(text: &str, project: &Path) -> anyhow::Result<Value> {
    let (source, body) = if text.trim_start().starts_with('{') {
        ("--input".to_owned(), text.to_owned())
    } else {
        let path = project.join(text);
        let body = std::fs::read_to_string(&path).map_err(|e| config(format!("--input {}: {e}", path.display())))?;
        (format!("--input {}", path.display()), body)
    };
    serde_json::from_str(&body).map_err(|e| config(format!("{source}: invalid JSON: {e}")))
}

fn answer_json(a: &AnswerRecord) -> Value {
    let mut v = json!({
        "hook_id": a.hook_id,
        "type": a.kind,
        "source": a.source,
        "path": a.path,
        "duration_ms": (a.duration.as_secs_f64() * 1000.0 * 10.0).round() / 10.0,
        "raw": a.raw,
    });
    if let Some(obj) = v.as_object_mut() {
        if a.suppressed {
            obj.insert("suppressed".into(), json!(true));
        }
        match &a.outcome {
            Ok(output) => obj.insert("output".into(), output.clone()),
            Err(e) => obj.insert("error".into(), json!({"kind": e.kind.as_str(), "detail": e.detail})),
        };
    }
    v
}

fn report_json(r: &FireReport, env_lines: &str) -> Value {
    let mut v = json!({
        "event": r.event,
        "input": r.input,
        "hooks": r.answers.iter().map(answer_json).collect::<Vec<_>>(),
        "merged": r.merged,
        "warnings": r.warnings,
    });
    if r.event == HookEventName::SessionStart
        && let Some(obj) = v.as_object_mut()
    {
        obj.insert("env_file".into(), json!(env_lines));
    }
    v
}

/// A hook's raw output, or a note in its place when it answered `suppressOutput: true`.
fn shown<'a>(a: &AnswerRecord, raw: &'a str) -> &'a str {
    if a.suppressed { "(hidden: the hook answered suppressOutput)" } else { raw }
}

fn report_text(r: &FireReport, env_lines: &str) -> String {
    let mut out = format!("{}: {} hook(s) ran\n", r.event, r.answers.len());
    out.push_str(&format!("input: {}\n", r.input));
    for (i, a) in r.answers.iter().enumerate() {
        out.push_str(&format!("[{}] {} `{}` ({} {})\n", i + 1, a.kind, a.hook_id, a.source, a.path));
        let ms = a.duration.as_secs_f64() * 1000.0;
        match &a.raw {
            Raw::Exit { exit_code, stdout, stderr, stdout_overflow, .. } => {
                let code = exit_code.map_or_else(|| "none (killed)".to_owned(), |c| c.to_string());
                out.push_str(&format!("    exit {code} in {ms:.1} ms\n"));
                let stdout = if *stdout_overflow { "(over the size limit)" } else { stdout };
                out.push_str(&block("stdout", shown(a, stdout)));
                out.push_str(&block("stderr", stderr));
            }
            Raw::Http { status, body } => {
                out.push_str(&format!("    HTTP {status} in {ms:.1} ms\n"));
                out.push_str(&block("body", shown(a, body)));
            }
            Raw::Line { line } => {
                out.push_str(&format!("    answered in {ms:.1} ms\n"));
                out.push_str(&block("line", shown(a, line)));
            }
            Raw::Reply { text } => {
                let who = if a.kind == HookKind::Agent { "the verifier" } else { "model" };
                out.push_str(&format!("    {who} answered in {ms:.1} ms\n"));
                out.push_str(&block("reply", shown(a, text)));
            }
            Raw::None => out.push_str(&format!("    no answer after {ms:.1} ms\n")),
        }
        match &a.outcome {
            Ok(output) => out.push_str(&format!("    => {output}\n")),
            Err(e) => out.push_str(&format!("    => {} ({}): {}\n", "error", e.kind, e.detail)),
        }
    }
    for w in &r.warnings {
        out.push_str(&format!("warning: {w}\n"));
    }
    if r.event == HookEventName::SessionStart && !env_lines.trim().is_empty() {
        out.push_str(&block("env file", env_lines));
    }
    out.push_str(&format!("merged: {}\n", serde_json::to_string_pretty(&r.merged).unwrap_or_default()));
    out
}

fn block(label: &str, text: &str) -> String {
    let text = text.trim_end();
    if text.is_empty() {
        return format!("    {label}: (empty)\n");
    }
    if !text.contains('\n') {
        return format!("    {label}: {text}\n");
    }
    let mut out = format!("    {label}:\n");
    for line in text.lines() {
        out.push_str(&format!("      | {line}\n"));
    }
    out
}
