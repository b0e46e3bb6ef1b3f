//! The hooks of agent definitions in `spine hooks check` and `spine hooks list`.
//!
//! Contract:
//! - The definitions are the files a run reads (spine-agent's `agent_directories`: the
//!   project's `.spine/agents/` and `.claude/agents/`, the settings' `subagents.directories`,
//!   `$SPINE_HOME/agents/`, `~/.claude/agents/`), every `*.md` file of each, in a run's order.
//!   Only a definition with a `hooks` field matters here.
//! - Its hooks are read exactly as a run reads them for its subagent (spine-hooks'
//!   `HookConfig::from_agent` with `AgentRole::Subagent`: `Stop` fires as `SubagentStop`, a
//!   `SubagentStart` hook is dropped with a warning, `disableAllHooks` and the managed hook
//!   policy apply), with the file as the source of every finding.
//! - `check` ([`findings`]): each configuration error is an error finding (file, JSON path,
//!   reason), then, for a valid configuration, the checks of the settings' hooks (spine-hooks'
//!   `check`: programs, scripts, headers, warnings) and each prompt hook's `model` built as a
//!   run builds it. A file a run skips because its front matter does not parse is a warning,
//!   an error when the field at fault is `hooks` (its hooks would silently not run). A project
//!   definition's hooks in an untrusted project, and a definition another of the same name
//!   shadows, are warnings: their hooks do not run.
//! - `list` ([`rows`]): the hooks of each definition that takes effect (the first of its name),
//!   as the settings' rows plus `agent` (its name) and `runs_in` (`subagent <name>`); rows
//!   that do not run say why in `not_run` (the untrusted project too). A definition whose hooks
//!   are invalid lists none, with a warning.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::{Value, json};
use spine_core::model::{ModelClient, NoModel};
use spine_hooks::check::{Finding, Severity, check};
use spine_hooks::config::{AgentRole, Handler, HookConfig, HookConfigError};
use spine_hooks::prompt::HookModels;
use spine_settings::{Origin, Settings};

use super::hooks::hook_rows;

/// One definition file that has `hooks`, or that a run would skip.
pub(super) struct AgentHooks {
    /// The file.
    file: PathBuf,
    /// Its `name`, or why the file cannot be read (a run skips it).
    name: Result<String, String>,
    /// Its hooks as its subagent runs them (`None`: the file has none or cannot be read).
    hooks: Option<Result<HookConfig, HookConfigError>>,
    /// A definition in the project directory (not in a user directory): the project's.
    project_owned: bool,
    /// The file of an earlier definition of the same name, which takes effect instead.
    shadowed_by: Option<PathBuf>,
}

impl AgentHooks {
    fn runs_here(&self, settings: &Settings) -> bool {
        !self.project_owned || settings.trust.is_trusted()
    }
}

/// Reads every definition of the directories a run reads (see the module documentation);
/// `hooks_settings` decide `disableAllHooks` and the managed hook policy.
pub(super) fn read(
    settings: &Settings,
    hooks_settings: &Settings,
    project: &Path,
    spine_home: &Path,
) -> Vec<AgentHooks> {
    let home = spine_protocol::home::user_home();
    let user_dirs = spine_agent::agents::user_agent_directories(spine_home, home.as_deref());
    let dirs = spine_agent::agents::agent_directories(settings, project, spine_home, home.as_deref());
    let mut seen: Vec<(String, PathBuf)> = Vec::new();
    let mut out = Vec::new();
    for dir in dirs {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        let mut paths: Vec<PathBuf> = entries
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|e| e == "md") && p.is_file())
            .collect();
        paths.sort();
        for file in paths {
            let project_owned = file.starts_with(project) && !user_dirs.iter().any(|d| file.starts_with(d));
            let parsed = spine_agent::agents::parse_agent_file(&file);
            let (name, value) = match parsed {
                Ok((def, _)) => (Ok(def.name), def.hooks),
                Err(why) => (Err(why), None),
            };
            let shadowed_by = match &name {
                Ok(name) => match seen.iter().find(|(n, _)| n == name) {
                    Some((_, first)) => Some(first.clone()),
                    None => {
                        seen.push((name.clone(), file.clone()));
                        None
                    }
                },
                Err(_) => None,
            };
            if name.is_ok() && value.is_none() {
                continue;
            }
            let origin = if project_owned { Origin::Project(file.clone()) } else { Origin::User(file.clone()) };
            let hooks = value.map(|v| HookConfig::from_agent(&v, &origin, hooks_settings, AgentRole::Subagent));
            out.push(AgentHooks { file, name, hooks, project_owned, shadowed_by });
        }
    }
    out
}

/// The findings of `spine hooks check` about `agents` (see the module documentation), and the
/// number of hooks and of definitions with hooks.
pub(super) fn findings(agents: &[AgentHooks], settings: &Settings, project: &Path) -> (Vec<Finding>, usize, usize) {
    let mut out = Vec::new();
    let (mut handlers, mut definitions) = (0, 0);
    let models = spine_agent::PromptModels::new(settings, Arc::new(NoModel) as Arc<dyn ModelClient>);
    for agent in agents {
        let origin = agent.file.display().to_string();
        let finding = |severity, path: &str, message: String| Finding {
            severity,
            origin: origin.clone(),
            path: path.to_owned(),
            message,
        };
        let name = match &agent.name {
            Ok(name) => name,
            Err(why) => {
                let severity = if why.starts_with("field `hooks`") { Severity::Error } else { Severity::Warning };
                out.push(finding(severity, "(agent definition)", format!("the definition is skipped: {why}")));
                continue;
            }
        };
        definitions += 1;
        match &agent.hooks {
            None => {}
            Some(Err(e)) => out.extend(e.errors.iter().map(|err| Finding {
                severity: Severity::Error,
                origin: err.origin.clone(),
                path: err.path.clone(),
                message: format!("{} (agent `{name}`: the definition is skipped)", err.reason),
            })),
            Some(Ok(config)) => {
                handlers += config.handler_count();
                out.extend(check(config, project));
                out.extend(prompt_models(config, &models, &origin));
                if let Some(first) = &agent.shadowed_by {
                    let why = format!("agent `{name}` is defined first in {}: these hooks never run", first.display());
                    out.push(finding(Severity::Warning, "hooks", why));
                } else if !agent.runs_here(settings) && config.handler_count() > 0 {
                    let why = format!(
                        "not applied: the project is untrusted, so agent `{name}`'s hooks do not run; run `spine \
                         trust {}` to trust it",
                        project.display()
                    );
                    out.push(finding(Severity::Warning, "hooks", why));
                }
            }
        }
    }
    (out, handlers, definitions)
}

/// Each prompt hook whose `model` a run could not build.
fn prompt_models(config: &HookConfig, models: &dyn HookModels, origin: &str) -> Vec<Finding> {
    let handlers = config.groups.iter().flat_map(|g| &g.handlers);
    handlers
        .filter_map(|h| match &h.handler {
            Handler::Prompt(p) if p.model.is_some() => models.model(p.model.as_deref()).err().map(|reason| Finding {
                severity: Severity::Error,
                origin: origin.to_owned(),
                path: format!("{}.model", h.path),
                message: reason,
            }),
            _ => None,
        })
        .collect()
}

/// The rows of `spine hooks list` for the definitions that take effect, and a warning for
/// each whose hooks are invalid (see the module documentation).
pub(super) fn rows(agents: &[AgentHooks], settings: &Settings) -> (Vec<Value>, Vec<String>) {
    let mut rows = Vec::new();
    let mut warnings = Vec::new();
    for agent in agents.iter().filter(|a| a.shadowed_by.is_none()) {
        let Ok(name) = &agent.name else { continue };
        let config = match &agent.hooks {
            Some(Ok(config)) => config,
            Some(Err(e)) => {
                let why: Vec<String> = e.errors.iter().map(|err| format!("{}: {}", err.path, err.reason)).collect();
                warnings.push(format!("agent definition {} skipped: {}", agent.file.display(), why.join("; ")));
                continue;
            }
            None => continue,
        };
        warnings.extend(config.warnings.iter().map(ToString::to_string));
        let untrusted = !agent.runs_here(settings);
        for mut row in hook_rows(config) {
            if let Some(obj) = row.as_object_mut() {
                obj.insert("agent".into(), json!(name));
                obj.insert("runs_in".into(), json!(format!("subagent {name}")));
                if untrusted && obj.get("not_run").is_none_or(Value::is_null) {
                    obj.insert("not_run".into(), json!("the project is untrusted"));
                }
            }
            rows.push(row);
        }
    }
    (rows, warnings)
}

/// The text of `spine hooks list` for `rows` ([`rows`]): one table per agent, under a line
/// saying where its hooks run; empty without rows.
pub(super) fn text(rows: &[Value]) -> String {
    let mut names: Vec<&str> = rows.iter().filter_map(|r| r["agent"].as_str()).collect();
    names.dedup();
    let mut out = String::new();
    for name in names {
        let own: Vec<Value> = rows.iter().filter(|r| r["agent"] == name).cloned().collect();
        out.push_str(&format!(
            "\nhooks of agent `{name}` (run only inside a `{name}` subagent, after the settings' hooks):\n"
        ));
        out.push_str(&super::hooks::table(&own));
    }
    out
}
