//! Provider keys and telemetry credentials kept out of child processes.
//!
//! Contract:
//! - [`PROVIDER_KEYS`] lists the environment variables that hold model-provider credentials
//!   (spine's own `ANTHROPIC_API_KEY`, `ANTHROPIC_AUTH_TOKEN`, `ANTHROPIC_CUSTOM_HEADERS` — whose
//!   header lines may carry credentials —, `OPENAI_API_KEY`, and the `*_API_KEY` of other
//!   well-known providers).
//! - [`TELEMETRY_SECRETS`] lists the OpenTelemetry exporter's header variables, which carry a
//!   collector's token (`OTEL_EXPORTER_OTLP_HEADERS` and its per-signal forms): from a child they
//!   would reach the tool result, the next model request, the exported spans, the trace and the
//!   transcript. They are never passed through.
//! - [`scrub`] removes each of both lists from a command's environment **when it would be
//!   inherited** from spine's own: every child spine starts (Bash, `exec_command`,
//!   `process_exec`, command and persistent hooks, MCP servers) goes through
//!   [`GroupChild::spawn`](crate::GroupChild::spawn), which calls it. A value set on the
//!   command explicitly (an MCP server's `env` in its configuration, a line of the run's env
//!   file) is the configuration's own choice and stays.
//! - A key named in the process-wide pass-through set ([`set_passthrough`], from the
//!   `env_passthrough` setting) is inherited as before.
//! - The settings' `env` ([`set_settings_env`], process-wide) is set on every child first
//!   ([`apply_settings_env`], called by the same spawn): each variable the command does not
//!   set explicitly itself. A provider key set there is the configuration's own choice too.

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsStr;
use std::sync::{PoisonError, RwLock};

use tokio::process::Command;

/// The environment variables holding provider credentials, removed from children.
pub const PROVIDER_KEYS: &[&str] = &[
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "ANTHROPIC_CUSTOM_HEADERS",
    "OPENAI_API_KEY",
    "AZURE_OPENAI_API_KEY",
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
    "MISTRAL_API_KEY",
    "GROQ_API_KEY",
    "DEEPSEEK_API_KEY",
    "OPENROUTER_API_KEY",
    "XAI_API_KEY",
    "TOGETHER_API_KEY",
    "FIREWORKS_API_KEY",
    "COHERE_API_KEY",
    "PERPLEXITY_API_KEY",
];

/// The OpenTelemetry exporter's header variables (a collector's credentials), removed from
/// children.
pub const TELEMETRY_SECRETS: &[&str] = &[
    "OTEL_EXPORTER_OTLP_HEADERS",
    "OTEL_EXPORTER_OTLP_TRACES_HEADERS",
    "OTEL_EXPORTER_OTLP_METRICS_HEADERS",
    "OTEL_EXPORTER_OTLP_LOGS_HEADERS",
];

static PASSTHROUGH: RwLock<BTreeSet<String>> = RwLock::new(BTreeSet::new());

static SETTINGS_ENV: RwLock<BTreeMap<String, String>> = RwLock::new(BTreeMap::new());

/// Replaces the variables every child gets (the settings' `env` of the run).
pub fn set_settings_env(vars: BTreeMap<String, String>) {
    *SETTINGS_ENV.write().unwrap_or_else(PoisonError::into_inner) = vars;
}

/// Sets the settings' `env` on `command`: each variable it does not set (or remove)
/// explicitly.
pub fn apply_settings_env(command: &mut Command) {
    let vars = SETTINGS_ENV.read().unwrap_or_else(PoisonError::into_inner);
    if vars.is_empty() {
        return;
    }
    let explicit: BTreeSet<String> =
        command.as_std().get_envs().map(|(name, _)| name.to_string_lossy().into_owned()).collect();
    for (name, value) in vars.iter() {
        if !explicit.contains(name) {
            command.env(name, value);
        }
    }
}

/// Whether `name` is one of the [`PROVIDER_KEYS`].
pub fn is_provider_key(name: &str) -> bool {
    PROVIDER_KEYS.contains(&name)
}

/// Replaces the set of provider keys children inherit after all (the `env_passthrough`
/// setting of the run). Names outside [`PROVIDER_KEYS`] have no effect.
pub fn set_passthrough<I, S>(names: I)
where
    I: IntoIterator<Item = S>,
    S: Into<String>,
{
    let names: BTreeSet<String> = names.into_iter().map(Into::into).collect();
    *PASSTHROUGH.write().unwrap_or_else(PoisonError::into_inner) = names;
}

/// The provider keys children inherit after all.
pub fn passthrough() -> BTreeSet<String> {
    PASSTHROUGH.read().unwrap_or_else(PoisonError::into_inner).clone()
}

/// Removes the inherited provider keys (not passed through, not set explicitly) and telemetry
/// credentials (not set explicitly) from `command`'s environment.
pub fn scrub(command: &mut Command) {
    let explicit: BTreeSet<String> = command
        .as_std()
        .get_envs()
        .filter(|(_, value)| value.is_some())
        .map(|(name, _)| name.to_string_lossy().into_owned())
        .collect();
    let passthrough = PASSTHROUGH.read().unwrap_or_else(PoisonError::into_inner);
    for key in PROVIDER_KEYS {
        if !passthrough.contains(*key) && !explicit.contains(*key) {
            command.env_remove(OsStr::new(key));
        }
    }
    for key in TELEMETRY_SECRETS {
        if !explicit.contains(*key) {
            command.env_remove(OsStr::new(key));
        }
    }
}

#[cfg(test)]
mod tests {
    use std::ffi::OsString;

    use super::*;

    /// What the command will do with `name`: `Some(None)` removed, `Some(Some(v))` set,
    /// `None` inherited.
    fn env_of(command: &Command, name: &str) -> Option<Option<OsString>> {
        command.as_std().get_envs().find(|(k, _)| *k == name).map(|(_, v)| v.map(OsStr::to_os_string))
    }

    #[test]
    fn settings_env_is_set_on_children_unless_the_command_sets_the_variable_itself() {
        set_settings_env(BTreeMap::from([
            ("SPINE_T_A".to_owned(), "settings".to_owned()),
            ("SPINE_T_B".to_owned(), "settings".to_owned()),
        ]));
        let mut command = Command::new("true");
        command.env("SPINE_T_B", "explicit");
        apply_settings_env(&mut command);
        set_settings_env(BTreeMap::new());
        assert_eq!(env_of(&command, "SPINE_T_A"), Some(Some("settings".into())));
        assert_eq!(env_of(&command, "SPINE_T_B"), Some(Some("explicit".into())));
    }

    #[test]
    fn inherited_provider_keys_are_removed_unless_set_explicitly_or_passed_through() {
        let mut command = Command::new("true");
        command.env("OPENAI_API_KEY", "explicit-for-this-child");
        scrub(&mut command);
        assert_eq!(env_of(&command, "ANTHROPIC_API_KEY"), Some(None));
        assert_eq!(env_of(&command, "ANTHROPIC_AUTH_TOKEN"), Some(None));
        assert_eq!(env_of(&command, "ANTHROPIC_CUSTOM_HEADERS"), Some(None));
        assert_eq!(env_of(&command, "GROQ_API_KEY"), Some(None));
        assert_eq!(env_of(&command, "OPENAI_API_KEY"), Some(Some("explicit-for-this-child".into())));
        assert_eq!(env_of(&command, "PATH"), None);
        assert_eq!(env_of(&command, "OTEL_EXPORTER_OTLP_HEADERS"), Some(None));
        assert_eq!(env_of(&command, "OTEL_EXPORTER_OTLP_TRACES_HEADERS"), Some(None));

        set_passthrough(["ANTHROPIC_API_KEY"]);
        let mut command = Command::new("true");
        scrub(&mut command);
        set_passthrough(Vec::<String>::new());
        assert_eq!(env_of(&command, "ANTHROPIC_API_KEY"), None, "passed through: inherited");
        assert_eq!(env_of(&command, "OPENAI_API_KEY"), Some(None));
    }
}
