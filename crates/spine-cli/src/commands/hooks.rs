//! `spine hooks list | check | test`: the configured external hooks, their validation, and
//! firing one event against them without a model.
//!
//! Exit status: 0, or 2 for bad configuration (`check` with an error, an unknown event, bad
//! `--input`). The logic lives in spine-hooks (`config`, `check`, `fire`); this module renders.
//! `list` and `check` cover the settings' hooks and agent definitions' own hooks
//! ([`super::hooks_agents`]); `test` is [`super::hooks_test`]. In an untrusted project, `list`
//! (and `/hooks`) shows the hooks its files configure as withheld, never "no hooks configured",
//! and ends with the sentence that counts what is withheld (`crate::withheld`).

use std::path::PathBuf;

use super::settings_report::{file_rows, root_rows, rule_rows, settings_report};
use super::{hooks_agents, hooks_test};
use serde_json::{Value, json};
use spine_core::hooks::{FailurePolicy, RunMode};
use spine_hooks::check::{Finding, Severity, check};
use spine_hooks::config::{Handler, HookConfig};
use spine_protocol::hook::HookEventName;

use super::context;
use crate::cli::{HooksArgs, HooksCommand, OutputFormat};
use crate::error::{config, exit};
use crate::out;

/// Runs `spine hooks`.
pub async fn hooks(cmd: HooksCommand) -> anyhow::Result<u8> {
    match cmd {
        HooksCommand::List(args) => list(&args),
        HooksCommand::Check(args) => check_cmd(&args),
        HooksCommand::Test(args) => hooks_test::test(&args).await,
    }
}

/// The settings of one `spine hooks` command.
pub(super) struct Loaded {
    /// The project directory.
    pub project: PathBuf,
    /// `SPINE_HOME`.
    pub home: PathBuf,
    /// The settings that apply.
    pub settings: spine_settings::Settings,
}

/// Resolves the project, `SPINE_HOME` and the settings of `args`.
pub(super) fn load(args: &HooksArgs) -> anyhow::Result<Loaded> {
    let home = context::spine_home()?;
    let project = context::project_dir(args.cwd.as_ref())?;
    let settings = context::settings_with(
        &home,
        &project,
        &args.settings,
        args.trust,
        args.setting_sources.as_ref(),
        &args.plugin_dirs,
    )?;
    Ok(Loaded { project, home, settings })
}

/// The hooks of the settings that apply; a configuration error is exit 2.
pub(super) fn hook_config(loaded: &Loaded) -> anyhow::Result<HookConfig> {
    HookConfig::from_settings(&loaded.settings).map_err(|e| config(e.to_string()))
}

fn list(args: &HooksArgs) -> anyhow::Result<u8> {
    let loaded = load(args)?;
    let hooks = hook_config(&loaded)?;
    let rows = hook_rows(&hooks);
    // Hooks of an untrusted project's files: shown, marked, never run.
    let withheld = withheld_hooks(&loaded.settings);
    let untrusted_rows = withheld.as_ref().map(hook_rows).unwrap_or_default();
    let agents = hooks_agents::read(&loaded.settings, &loaded.settings, &loaded.project, &loaded.home);
    let (agent_rows, agent_warnings) = hooks_agents::rows(&agents, &loaded.settings);
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
        let withheld_plugins: Vec<Value> = spine_agent::withheld_plugins(&loaded.settings)
            .map(|(file, id)| json!({"plugin": id, "enabled_by": file.display().to_string()}))
            .collect();
        let out = json!({
            "hooks": rows,
            "disabled_by": hooks.disabled_by,
            "managed_only_by": hooks.managed_only_by,
            "skipped": warnings(&hooks),
            "untrusted": skipped_rows,
            "agent_hooks": agent_rows,
            "agent_warnings": agent_warnings,
            "withheld_plugins": withheld_plugins,
            "withheld": crate::withheld::Withheld::of(&loaded.settings, &loaded.project).sentence(&loaded.project),
        });
        let _ = out::line(serde_json::to_string_pretty(&out).unwrap_or_default());
        return Ok(exit::OK);
    }
    for w in hooks.warnings.iter().map(ToString::to_string).chain(agent_warnings) {
        eprintln!("warning: {w}");
    }
    if let Some(message) = hooks.disabled_message() {
        eprintln!("note: {message}");
    }
    let _ = out::text(report(&loaded.settings, &loaded.project, &rows, &agent_rows, &untrusted_rows));
    Ok(exit::OK)
}

/// The text of `spine hooks list` and `/hooks`: the hooks that apply (or `no hooks configured`
/// when nothing is configured nor withheld), the agent definitions' hooks, the hooks an untrusted
/// project's files configure, the plugins it enables that were not loaded, and last the sentence
/// that counts what is withheld ([`crate::withheld`]).
fn report(
    settings: &spine_settings::Settings,
    project: &std::path::Path,
    rows: &[Value],
    agent_rows: &[Value],
    untrusted_rows: &[Value],
) -> String {
    let withheld = crate::withheld::Withheld::of(settings, project);
    let mut text = match (rows.is_empty(), agent_rows.is_empty()) {
        (false, _) => table(rows),
        // Not "no hooks": the untrusted project's (and its plugins') are withheld, said below.
        (true, _) if withheld.hooks + withheld.plugins > 0 => String::new(),
        (true, true) => "no hooks configured\n".to_owned(),
        (true, false) => "no hooks configured in the settings\n".to_owned(),
    };
    text.push_str(&hooks_agents::text(agent_rows));
    if !untrusted_rows.is_empty() {
        if !text.is_empty() {
            text.push('\n');
        }
        text.push_str("withheld (the project is not trusted):\n");
        text.push_str(&table(untrusted_rows));
    }
    if let Some(plugins) = spine_agent::withheld_plugins_text(settings) {
        text.push_str(&format!("\n{plugins}: their hooks do not run\n"));
    }
    if let Some(sentence) = withheld.sentence(project) {
        text.push_str(&format!("\n{sentence}\n"));
    }
    text.trim_start_matches('\n').to_owned()
}

/// The hooks an untrusted project's files configure (none when the project is trusted).
fn withheld_hooks(settings: &spine_settings::Settings) -> Option<HookConfig> {
    let layers: Vec<_> = settings.withheld.iter().filter(|l| l.value.contains_key("hooks")).cloned().collect();
    if layers.is_empty() {
        return None;
    }
    let settings = spine_settings::Settings::from_layers(layers).ok()?;
    HookConfig::from_settings(&settings).ok()
}

/// One JSON row per handler of `hooks`, in configuration order.
pub(super) fn hook_rows(hooks: &HookConfig) -> Vec<Value> {
    hooks
        .groups
        .iter()
        .flat_map(|g| g.handlers.iter().map(move |h| (g, h)))
        .map(|(g, h)| {
            // Why it does not run: the group's (`disableAllHooks`, `allowManagedHooksOnly`),
            // else the handler's own (`allowedHttpHookUrls`).
            let not_run = hooks.not_run(g).or_else(|| match &h.handler {
                Handler::Http(http) => http.blocked.clone(),
                Handler::Command { .. }
                | Handler::Prompt(_)
                | Handler::McpTool(_)
                | Handler::Agent { .. }
                | Handler::Callback { .. } => None,
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
                    Handler::Callback { .. } => obj.insert("callback".into(), json!(h.handler.target())),
                };
            }
            row
        })
        .collect()
}

/// The `spine hooks list` text of `settings` and of the agent definitions of `agent`'s
/// project and `spine_home` ([`report`]), for `/hooks`.
pub(crate) fn hooks_text(
    settings: &spine_settings::Settings,
    agent: &spine_core::runner::Agent,
    spine_home: &std::path::Path,
) -> anyhow::Result<String> {
    let project = agent.config.workspace.root();
    let hooks = HookConfig::from_settings(settings).map_err(|e| config(e.to_string()))?;
    let rows = hook_rows(&hooks);
    let agents = hooks_agents::read(settings, settings, project, spine_home);
    let (agent_rows, _) = hooks_agents::rows(&agents, settings);
    let untrusted_rows = withheld_hooks(settings).as_ref().map(hook_rows).unwrap_or_default();
    let mut text = report(settings, project, &rows, &agent_rows, &untrusted_rows);
    if let Some(message) = hooks.disabled_message() {
        text.push_str(&format!("{message}\n"));
    }
    Ok(text)
}

/// The text table of `rows` ([`hook_rows`]).
pub(super) fn table(rows: &[Value]) -> String {
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
    let mut layers = loaded.settings.layers.to_vec();
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
    // Agent definitions' own hooks, checked as a subagent reads them.
    let agents = hooks_agents::read(&loaded.settings, &all, &loaded.project, &loaded.home);
    let (agent_findings, agent_hooks, agent_definitions) =
        hooks_agents::findings(&agents, &loaded.settings, &loaded.project);
    findings.extend(agent_findings);
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
            "agent_hooks": agent_hooks,
            "agent_definitions": agent_definitions,
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
        let of_agents = match agent_definitions {
            0 => String::new(),
            n => format!(", {agent_hooks} hook(s) of {n} agent definition(s)"),
        };
        text.push_str(&format!(
            "{verdict}: {handlers} hook(s) on {events} event(s) from {sources} settings source(s){of_agents}; \
             {errors} error(s), {warnings} warning(s)"
        ));
        let _ = out::line(text);
    }
    Ok(if errors == 0 { exit::OK } else { exit::CONFIG })
}
