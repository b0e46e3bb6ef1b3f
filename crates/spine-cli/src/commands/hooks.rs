//! `spine hooks list | check | test`: the configured external hooks, their validation, and
//! firing one event against them without a model.
//!
//! Exit status: 0, or 2 for bad configuration (`check` with an error, an unknown event, bad
//! `--input`). The logic lives in spine-hooks (`config`, `check`, `fire`); this module renders.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::settings_report::{file_rows, root_rows, rule_rows, settings_report};
use serde_json::{Value, json};
use spine_core::hooks::{FailurePolicy, RunMode, SessionInfo};
use spine_core::registry::ToolRegistryBuilder;
use spine_hooks::check::{Finding, Severity, check};
use spine_hooks::config::{Handler, HookConfig, unsupported_event};
use spine_hooks::fire::{FireReport, FireRequest, TranscriptFile, fire};
use spine_hooks::record::{AnswerRecord, Raw};
use spine_protocol::{hook::HookEventName, permission::PermissionMode};

use super::context;
use crate::cli::{HooksArgs, HooksCommand, HooksTestArgs, OutputFormat};
use crate::error::{config, exit};
use crate::out;

/// Runs `spine hooks`.
pub async fn hooks(cmd: HooksCommand) -> anyhow::Result<u8> {
    match cmd {
        HooksCommand::List(args) => list(&args),
        HooksCommand::Check(args) => check_cmd(&args),
        HooksCommand::Test(args) => test(&args).await,
    }
}

struct Loaded {
    project: PathBuf,
    home: PathBuf,
    settings: spine_settings::Settings,
}

fn load(args: &HooksArgs) -> anyhow::Result<Loaded> {
    let home = context::spine_home()?;
    let project = context::project_dir(args.cwd.as_ref())?;
    let settings = context::settings_with(&home, &project, &args.settings, args.trust, args.setting_sources.as_ref())?;
    Ok(Loaded { project, home, settings })
}

fn hook_config(loaded: &Loaded) -> anyhow::Result<HookConfig> {
    HookConfig::from_settings(&loaded.settings).map_err(|e| config(e.to_string()))
}

fn list(args: &HooksArgs) -> anyhow::Result<u8> {
    let loaded = load(args)?;
    let hooks = hook_config(&loaded)?;
    let rows = hook_rows(&hooks);
    // Hooks of an untrusted project's files: shown, marked, never run.
    let withheld = withheld_hooks(&loaded);
    let untrusted_rows = withheld.as_ref().map(hook_rows).unwrap_or_default();
    if args.output_format != OutputFormat::Text {
        let skipped_rows: Vec<Value> = untrusted_rows
            .into_iter()
            .map(|mut r| {
                if let Some(obj) = r.as_object_mut() {
                    obj.insert("skipped".into(), json!("untrusted project"));
                }
                r
            })
            .collect();
        let out = json!({
            "hooks": rows,
            "disabled_by": hooks.disabled_by,
            "managed_only_by": hooks.managed_only_by,
            "skipped": warnings(&hooks),
            "untrusted": skipped_rows,
        });
        let _ = out::line(serde_json::to_string_pretty(&out).unwrap_or_default());
        return Ok(exit::OK);
    }
    for w in &hooks.warnings {
        eprintln!("warning: {w}");
    }
    if let Some(message) = hooks.disabled_message() {
        eprintln!("note: {message}");
    }
    if rows.is_empty() {
        let _ = out::line("no hooks configured");
    } else {
        print_table(&rows);
    }
    if !untrusted_rows.is_empty() {
        let _ = out::line(format!(
            "\nskipped, the project is untrusted (run `spine trust {}` to trust it):",
            loaded.project.display()
        ));
        print_table(&untrusted_rows);
    }
    Ok(exit::OK)
}

/// The hooks an untrusted project's files configure (none when the project is trusted).
fn withheld_hooks(loaded: &Loaded) -> Option<HookConfig> {
    let layers: Vec<_> = loaded.settings.withheld.iter().filter(|l| l.value.contains_key("hooks")).cloned().collect();
    if layers.is_empty() {
        return None;
    }
    let settings = spine_settings::Settings::from_layers(layers).ok()?;
    HookConfig::from_settings(&settings).ok()
}

fn hook_rows(hooks: &HookConfig) -> Vec<Value> {
    hooks
        .groups
        .iter()
        .flat_map(|g| g.handlers.iter().map(move |h| (g, h)))
        .map(|(g, h)| {
            // Why it does not run: the group's (`disableAllHooks`, `allowManagedHooksOnly`),
            // else the handler's own (`allowedHttpHookUrls`).
            let not_run = hooks.not_run(g).or_else(|| match &h.handler {
                Handler::Http(http) => http.blocked.clone(),
                Handler::Command { .. } | Handler::Prompt(_) | Handler::McpTool(_) | Handler::Agent { .. } => None,
            });
            let mut row = json!({
                "event": g.event,
                "matcher": g.matcher_text.clone().unwrap_or_else(|| "*".to_owned()),
                "type": h.handler.kind(),
                "source": g.origin.to_string(),
                "path": h.path,
                "timeout_s": h.timeout.as_secs_f64(),
                "on_failure": if h.on_failure == FailurePolicy::Closed { "closed" } else { "open" },
                "async": h.run == RunMode::Background,
                "async_rewake": h.rewake.is_some(),
                "sequential": g.sequential,
                "if": h.condition.as_ref().map(|(text, _)| text.clone()),
                "status_message": h.status_message,
                "not_run": not_run,
            });
            if let Some(obj) = row.as_object_mut() {
                match &h.handler {
                    Handler::Command { .. } => obj.insert("command".into(), json!(h.handler.target())),
                    Handler::Http(http) => obj.insert("url".into(), json!(http.url)),
                    Handler::Prompt(p) => {
                        obj.insert("model".into(), json!(p.model));
                        obj.insert("prompt".into(), json!(p.prompt))
                    }
                    Handler::McpTool(m) => obj.insert("tool".into(), json!(m.tool_name())),
                    Handler::Agent { prompt, model } => {
                        obj.insert("model".into(), json!(model));
                        obj.insert("prompt".into(), json!(prompt))
                    }
                };
            }
            row
        })
        .collect()
}

/// The `spine hooks list` table of `settings` (or `no hooks configured`), for `/hooks`.
pub(crate) fn hooks_text(settings: &spine_settings::Settings) -> anyhow::Result<String> {
    let hooks = HookConfig::from_settings(settings).map_err(|e| config(e.to_string()))?;
    let rows = hook_rows(&hooks);
    let mut text = if rows.is_empty() { "no hooks configured\n".to_owned() } else { table(&rows) };
    if let Some(message) = hooks.disabled_message() {
        text.push_str(&format!("{message}\n"));
    }
    Ok(text)
}

fn print_table(rows: &[Value]) {
    let _ = out::text(table(rows));
}

fn table(rows: &[Value]) -> String {
    let table: Vec<[String; 6]> = rows
        .iter()
        .map(|r| {
            let s = |k: &str| r[k].as_str().unwrap_or_default().to_owned();
            let secs = r["timeout_s"].as_f64().unwrap_or_default();
            let secs = if secs.fract() == 0.0 { format!("{secs:.0}") } else { format!("{secs}") };
            let mut options = vec![format!("timeout={secs}s")];
            if s("on_failure") == "closed" {
                options.push("onFailure=closed".to_owned());
            }
            if r["async_rewake"] == json!(true) {
                options.push("asyncRewake".to_owned());
            } else if r["async"] == json!(true) {
                options.push("async".to_owned());
            }
            if r["sequential"] == json!(true) {
                options.push("sequential".to_owned());
            }
            if let Some(rule) = r["if"].as_str() {
                options.push(format!("if={rule}"));
            }
            if let Some(why) = r["not_run"].as_str() {
                options.push(format!("NOT RUN: {why}"));
            }
            let target = if r["url"].is_string() { s("url") } else { s("command") };
            [s("event"), s("matcher"), s("type"), target, options.join(" "), format!("{} {}", s("source"), s("path"))]
        })
        .collect();
    render_table(&["EVENT", "MATCHER", "TYPE", "COMMAND/URL", "OPTIONS", "SOURCE"], &table)
}

fn warnings(hooks: &HookConfig) -> Vec<String> {
    hooks.warnings.iter().map(ToString::to_string).collect()
}

fn render_table(header: &[&str; 6], rows: &[[String; 6]]) -> String {
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for row in rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let line = |cells: Vec<&str>| {
        let mut out = String::new();
        for (i, (cell, w)) in cells.iter().zip(&widths).enumerate() {
            if i + 1 == cells.len() {
                out.push_str(cell);
            } else {
                out.push_str(&format!("{cell:<w$}  "));
            }
        }
        out.trim_end().to_owned() + "\n"
    };
    let mut out = line(header.to_vec());
    for row in rows {
        out.push_str(&line(row.iter().map(String::as_str).collect()));
    }
    out
}

fn check_cmd(args: &HooksArgs) -> anyhow::Result<u8> {
    let loaded = load(args)?;
    // An untrusted project's hooks are checked too (so they can be reviewed before
    // `spine trust`); a warning below says they do not run.
    let mut layers = loaded.settings.layers.clone();
    layers.extend(loaded.settings.withheld.iter().cloned());
    let all = spine_settings::Settings::from_layers(layers).map_err(|e| config(e.to_string()))?;
    let (findings, hooks) = match HookConfig::from_settings(&all) {
        Ok(hooks) => (check(&hooks, &loaded.project), Some(hooks)),
        Err(e) => (
            e.errors
                .iter()
                .map(|err| Finding {
                    severity: Severity::Error,
                    origin: err.origin.clone(),
                    path: err.path.clone(),
                    message: err.reason.clone(),
                })
                .collect(),
            None,
        ),
    };
    let mut findings = findings;
    // Exactly the validation `run` uses (permission rules, hooks' `if` rules, tools,
    // workspace, `.mcp.json`), over the applied and the withheld settings alike.
    if !findings.iter().any(|f| f.severity == Severity::Error) {
        for invalid in spine_agent::validate(&all, &loaded.project, &loaded.home) {
            findings.push(Finding {
                severity: Severity::Error,
                origin: invalid.origin.unwrap_or_else(|| "(settings)".to_owned()),
                path: invalid.path.unwrap_or_else(|| "(run)".to_owned()),
                message: invalid.message,
            });
        }
    }
    for skipped in &loaded.settings.skipped {
        findings.push(Finding {
            severity: Severity::Warning,
            origin: skipped.file.display().to_string(),
            path: "(project trust)".to_owned(),
            message: format!(
                "{} not applied: the project is untrusted; run `spine trust {}` to trust it",
                skipped.item,
                loaded.project.display()
            ),
        });
    }
    let errors = findings.iter().filter(|f| f.severity == Severity::Error).count();
    let warnings = findings.len() - errors;
    let handlers = hooks.as_ref().map_or(0, |h| h.groups.iter().map(|g| g.handlers.len()).sum::<usize>());
    let events = hooks.as_ref().map_or(0, |h| {
        let mut names: Vec<HookEventName> = h.groups.iter().map(|g| g.event).collect();
        names.sort();
        names.dedup();
        names.len()
    });
    let sources = loaded.settings.layers.len();
    if args.output_format != OutputFormat::Text {
        let list: Vec<Value> = findings
            .iter()
            .map(|f| json!({"severity": f.severity.as_str(), "source": f.origin, "path": f.path, "message": f.message}))
            .collect();
        let out = json!({
            "ok": errors == 0,
            "hooks": handlers,
            "events": events,
            "sources": sources,
            "errors": errors,
            "warnings": warnings,
            "findings": list,
            "setting_sources": loaded.settings.sources.to_string(),
            "files": file_rows(&loaded.settings),
            "ignored": loaded.settings.notes,
            "unsupported": loaded.settings.warnings,
            "rules": rule_rows(&loaded.settings, &all),
            "roots": root_rows(&loaded.settings, &all, &loaded.project),
        });
        let _ = out::line(serde_json::to_string_pretty(&out).unwrap_or_default());
    } else {
        let mut text = settings_report(&loaded.settings, &all, &loaded.project);
        text.extend(findings.iter().map(|f| format!("{f}\n")));
        let verdict = if errors == 0 { "ok" } else { "FAILED" };
        text.push_str(&format!(
            "{verdict}: {handlers} hook(s) on {events} event(s) from {sources} settings source(s); \
             {errors} error(s), {warnings} warning(s)"
        ));
        let _ = out::line(text);
    }
    Ok(if errors == 0 { exit::OK } else { exit::CONFIG })
}

async fn test(args: &HooksTestArgs) -> anyhow::Result<u8> {
    let event = match args.event.parse::<HookEventName>() {
        Ok(event) => event,
        Err(e) => {
            let why = unsupported_event(&args.event).unwrap_or_else(|| e.to_string());
            return Err(config(format!("spine hooks test: {why}")));
        }
    };
    let loaded = load(&args.common)?;
    let hooks = hook_config(&loaded)?;
    // The hooks see the settings' `env` (and provider keys) exactly as in a run.
    spine_agent::apply_env_passthrough(&loaded.settings);
    let input = match &args.input {
        None => None,
        Some(text) => Some(read_input(text, &loaded.project)?),
    };
    let mut tools = ToolRegistryBuilder::new();
    spine_tools::register_builtins(&mut tools);
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
    // Prompt hooks ask their own model, or the one `spine run` would use (none: they fail).
    let session_model = spine_agent::build_model(None, &loaded.settings)
        .unwrap_or_else(|_| Arc::new(spine_core::model::NoModel) as Arc<dyn spine_core::model::ModelClient>);
    let models: Arc<dyn spine_hooks::prompt::HookModels> =
        Arc::new(spine_agent::PromptModels::new(&loaded.settings, session_model));
    let request =
        FireRequest { event, tool: args.tool.clone(), input, session, tools, transcript, models: Some(models) };
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
                out.push_str(&format!("    model answered in {ms:.1} ms\n"));
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
