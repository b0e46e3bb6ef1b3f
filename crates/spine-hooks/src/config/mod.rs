//! The `hooks` key of the settings, parsed and validated into a [`HookConfig`].
//!
//! Shape (Claude Code's): `{"hooks": {"<Event>": [{"matcher": "…", "hooks": [handler, …],
//! "sequential"?: bool}]}}`. Lists are appended across layers in settings order (user →
//! project → local → each `--settings`), so [`HookConfig::groups`] is in configuration order.
//!
//! Contract:
//! - Every malformed value is a [`SettingsError`] naming the source, the JSON path
//!   (`hooks.PreToolUse[0].hooks[1].timeout`) and the reason; all of them are collected.
//! - A name or field spine and Claude Code 2.1 do not know is a warning (a file written for a
//!   newer version never stops spine); a near miss of a known one is an error with a
//!   suggestion (`PreToolUsee`, `timout`), since ignoring it would silently change behaviour.
//! - Events and handler types Claude Code has but spine does not fire or run (`TeammateIdle`,
//!   `prompt` hooks…) are skipped with a [`ConfigWarning`], so a user never believes an
//!   enforcement hook runs when it does not. So is an `if` on an event without a tool call
//!   (such a handler never runs).
//! - `disableAllHooks: true` in the highest-precedence layer that sets it keeps the
//!   configuration (it is still validated) but [`HookConfig::disabled_by`] says no hook runs —
//!   none at all when a managed source set it, every one but managed settings' own otherwise.
//!   What managed settings restrict (`allowManagedHooksOnly`, `allowedHttpHookUrls`,
//!   `httpHookAllowedEnvVars`) is applied by [`crate::policy`]; [`HookConfig::active_groups`]
//!   are the groups that run.
//! - The SDK host's hook callbacks ([`HookConfig::from_sdk`], [`Origin::Sdk`]) are appended
//!   after the settings' groups ([`HookConfig::extend`]) and follow Claude Code's rule for
//!   them: they are the host program's own code, so `allowManagedHooksOnly` and a
//!   `disableAllHooks` below managed settings leave them running; only managed settings'
//!   `disableAllHooks` turns them off.

mod agent;
mod events;
mod handler;
mod mcp_tool;
mod prompt;
mod sdk;

use std::fmt;

use serde_json::Value;
use spine_core::hooks::Matcher;
use spine_protocol::hook::HookEventName;
use spine_settings::{Origin, Settings, SettingsError, type_name};

use crate::shell::Shells;
use thiserror::Error;

pub use agent::AgentRole;
pub use events::unsupported_event;
pub(crate) use handler::is_var_name;
pub use handler::{DEFAULT_TIMEOUT_SECS, Handler, HandlerConfig, HttpConfig, Program, RewakeConfig};
pub use mcp_tool::McpToolConfig;
pub use prompt::PromptConfig;

/// The fields of a matcher group: Claude Code's, and spine's `sequential`.
const GROUP_FIELDS: &[&str] = &["matcher", "hooks", "sequential"];

/// The external hooks of a run, in configuration order.
#[derive(Debug, Clone, Default)]
pub struct HookConfig {
    /// Matcher groups, in settings order.
    pub groups: Vec<GroupConfig>,
    /// Things configured that will not run, and why.
    pub warnings: Vec<ConfigWarning>,
    /// The source whose `disableAllHooks: true` turns hooks off.
    pub disabled_by: Option<String>,
    /// Whether [`HookConfig::disabled_by`] (a source below managed settings) leaves the hooks of
    /// managed settings running.
    pub disabled_spares_managed: bool,
    /// The managed source of `allowManagedHooksOnly: true`: hooks of other sources do not run.
    pub managed_only_by: Option<String>,
}

/// One matcher group of one event.
#[derive(Debug, Clone)]
pub struct GroupConfig {
    /// The event whose hooks these are.
    pub event: HookEventName,
    /// The settings file (or `--settings` value) that declares the group.
    pub origin: Origin,
    /// Its JSON path (`hooks.PreToolUse[0]`).
    pub path: String,
    /// The matcher as written (absent = all).
    pub matcher_text: Option<String>,
    /// The matcher as compiled, applied at each firing.
    pub matcher: Matcher,
    /// `"sequential": true`: the handlers run as a chain instead of concurrently.
    pub sequential: bool,
    /// The handlers that will run, in order.
    pub handlers: Vec<HandlerConfig>,
}

/// Something configured that will not run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigWarning {
    /// The settings file (or `--settings` value) it comes from.
    pub origin: String,
    /// Where in it (`hooks.TeammateIdle`).
    pub path: String,
    /// What and why.
    pub message: String,
}

impl fmt::Display for ConfigWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}: {}", self.origin, self.path, self.message)
    }
}

/// Every error found in the hook configuration.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub struct HookConfigError {
    /// The errors, in settings order.
    pub errors: Vec<SettingsError>,
}

impl fmt::Display for HookConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, e) in self.errors.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "{e}")?;
        }
        Ok(())
    }
}

/// Collects errors and warnings while parsing.
pub(crate) struct Diagnostics<'a> {
    pub(crate) origin: &'a Origin,
    pub(crate) shells: &'a Shells,
    pub(crate) errors: Vec<SettingsError>,
    pub(crate) warnings: Vec<ConfigWarning>,
}

impl Diagnostics<'_> {
    pub(crate) fn error(&mut self, path: impl Into<String>, reason: impl Into<String>) {
        self.errors.push(SettingsError::at(self.origin, path, reason));
    }

    /// An unknown field at `path`: an error for a near miss of one of `known`, else a warning.
    pub(crate) fn unknown(&mut self, path: &str, key: &str, known: &[&str]) {
        match spine_settings::unknown::near_miss(key, known.iter().copied()) {
            Some(nearest) => self.error(path, format!("unknown field `{key}` (did you mean `{nearest}`?)")),
            None => self.warn(path, format!("unknown field `{key}` ignored (written for a newer version?)")),
        }
    }

    pub(crate) fn warn(&mut self, path: impl Into<String>, message: impl Into<String>) {
        self.warnings.push(ConfigWarning {
            origin: self.origin.to_string(),
            path: path.into(),
            message: message.into(),
        });
    }
}

impl HookConfig {
    /// Parses the `hooks` key of every layer, with the shells found on `PATH`.
    pub fn from_settings(settings: &Settings) -> Result<HookConfig, HookConfigError> {
        HookConfig::from_settings_with(settings, &Shells::detect())
    }

    /// Parses the `hooks` key of every layer; `command` lines run under `shells`.
    pub fn from_settings_with(settings: &Settings, shells: &Shells) -> Result<HookConfig, HookConfigError> {
        let mut config = HookConfig::default();
        let mut errors = Vec::new();
        for (origin, value) in settings.all("hooks") {
            let mut diag = Diagnostics { origin, shells, errors: Vec::new(), warnings: Vec::new() };
            parse_layer(&mut diag, value, &mut config.groups);
            errors.append(&mut diag.errors);
            config.warnings.append(&mut diag.warnings);
        }
        crate::policy::apply(&mut config, settings, &mut errors);
        if errors.is_empty() { Ok(config) } else { Err(HookConfigError { errors }) }
    }

    /// Why a group does not run (`disableAllHooks`, `allowManagedHooksOnly`), or `None`. The
    /// SDK host's callbacks are spared as managed settings' hooks are.
    pub fn not_run(&self, group: &GroupConfig) -> Option<String> {
        let spared = group.origin.is_managed() || group.origin == Origin::Sdk;
        if let Some(by) = &self.disabled_by
            && !(self.disabled_spares_managed && spared)
        {
            return Some(format!("`disableAllHooks` in {by}"));
        }
        if let Some(by) = &self.managed_only_by
            && !spared
        {
            return Some(format!("`allowManagedHooksOnly` in {by}"));
        }
        None
    }

    /// Appends the groups and warnings of `other` (the SDK host's callbacks after the
    /// settings' hooks); this configuration's `disableAllHooks` and managed policy apply to them.
    pub fn extend(&mut self, other: HookConfig) {
        self.groups.extend(other.groups);
        self.warnings.extend(other.warnings);
    }

    /// Whether a group runs.
    pub fn runs(&self, group: &GroupConfig) -> bool {
        self.not_run(group).is_none()
    }

    /// The groups that run, in configuration order.
    pub fn active_groups(&self) -> Vec<&GroupConfig> {
        self.groups.iter().filter(|g| self.runs(g)).collect()
    }

    /// Whether a hook that runs may wake the model (`asyncRewake`): an interactive session then
    /// watches for wakes while it waits at its prompt.
    pub fn can_wake(&self) -> bool {
        self.active_groups().iter().flat_map(|g| &g.handlers).any(|h| h.rewake.is_some())
    }

    /// How many handlers will run.
    pub fn handler_count(&self) -> usize {
        self.active_groups().iter().map(|g| g.handlers.len()).sum()
    }

    /// The one line about `disableAllHooks`, when it is set: `every hook is disabled by
    /// `disableAllHooks` in FILE`, or, set below managed settings, that every hook but those of
    /// managed settings (and the SDK host's callbacks) is, when there are such hooks.
    pub fn disabled_message(&self) -> Option<String> {
        let by = self.disabled_by.as_ref()?;
        let has = |sdk: bool| {
            self.disabled_spares_managed
                && self.groups.iter().any(|g| if sdk { g.origin == Origin::Sdk } else { g.origin.is_managed() })
        };
        let spared = match (has(false), has(true)) {
            (false, false) => return Some(format!("every hook is disabled by `disableAllHooks` in {by}")),
            (true, false) => "those of managed settings",
            (false, true) => "the SDK host's callbacks",
            (true, true) => "those of managed settings and the SDK host's callbacks",
        };
        Some(format!(
            "every hook but {spared} is disabled by `disableAllHooks` in {by} \
             (only managed settings can disable them)"
        ))
    }
}

fn parse_layer(diag: &mut Diagnostics<'_>, value: &Value, groups: &mut Vec<GroupConfig>) {
    let Value::Object(events) = value else {
        diag.error("hooks", format!("expected an object of events, found {}", type_name(value)));
        return;
    };
    for (name, list) in events {
        let path = format!("hooks.{name}");
        let event = match name.parse::<HookEventName>() {
            Ok(event) => event,
            Err(_) => {
                match unsupported_event(name) {
                    Some(why) => {
                        let n = count_handlers(list);
                        diag.warn(&path, format!("{why}; its {n} hook(s) will not run"));
                    }
                    None => match events::unknown_event(name) {
                        Ok(warning) => diag.warn(&path, warning),
                        Err(error) => diag.error(&path, error),
                    },
                }
                continue;
            }
        };
        let Value::Array(items) = list else {
            diag.error(&path, format!("expected an array of matcher groups, found {}", type_name(list)));
            continue;
        };
        for (i, item) in items.iter().enumerate() {
            if let Some(group) = parse_group(diag, event, &format!("{path}[{i}]"), item) {
                groups.push(group);
            }
        }
    }
}

fn count_handlers(list: &Value) -> usize {
    list.as_array()
        .map(|groups| groups.iter().filter_map(|g| g.get("hooks").and_then(Value::as_array)).map(Vec::len).sum())
        .unwrap_or(0)
}

fn parse_group(diag: &mut Diagnostics<'_>, event: HookEventName, path: &str, item: &Value) -> Option<GroupConfig> {
    let Value::Object(obj) = item else {
        diag.error(path, format!("expected a matcher group object, found {}", type_name(item)));
        return None;
    };
    let errors_before = diag.errors.len();
    let mut matcher_text = None;
    let mut matcher = Matcher::All;
    let mut sequential = false;
    let mut handlers_value = None;
    for (key, v) in obj {
        // The field's path, made only for a message.
        let field = || format!("{path}.{key}");
        match key.as_str() {
            "matcher" => match v {
                Value::String(text) => match Matcher::parse(text) {
                    Ok(m) => {
                        matcher = m;
                        matcher_text = Some(text.clone());
                    }
                    Err(e) => diag.error(field(), e.to_string()),
                },
                Value::Null => {}
                other => diag.error(field(), format!("expected a string, found {}", type_name(other))),
            },
            "sequential" => match v {
                Value::Bool(b) => sequential = *b,
                other => diag.error(field(), format!("expected a boolean, found {}", type_name(other))),
            },
            "hooks" => handlers_value = Some(v),
            other => diag.unknown(&field(), other, GROUP_FIELDS),
        }
    }
    let Some(list) = handlers_value else {
        diag.error(format!("{path}.hooks"), "missing the list of handlers");
        return None;
    };
    let Value::Array(list) = list else {
        diag.error(format!("{path}.hooks"), format!("expected an array of handlers, found {}", type_name(list)));
        return None;
    };
    let mut handlers = Vec::with_capacity(list.len());
    for (i, h) in list.iter().enumerate() {
        let hpath = format!("{path}.hooks[{i}]");
        if let Some(handler) = handler::parse(diag, event, &hpath, h) {
            handlers.push(handler);
        }
    }
    if diag.errors.len() > errors_before {
        return None;
    }
    Some(GroupConfig {
        event,
        origin: diag.origin.clone(),
        path: path.to_owned(),
        matcher_text,
        matcher,
        sequential,
        handlers,
    })
}
