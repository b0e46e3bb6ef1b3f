//! What every child spine starts gets of its environment: [`ChildEnv`], the settings' `env`
//! and the provider keys passed through, given to each spawn as a value; and the provider keys
//! and telemetry credentials kept out of children.
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
//! - A [`ChildEnv`] is one agent's: the variables of its settings' `env` and the provider keys
//!   of its `env_passthrough`. It is a value, not process state: two agents of one process with
//!   different settings each give their own to their children. Every child spine starts (Bash,
//!   `exec_command`, `process_exec`, command and persistent hooks, MCP servers) goes through
//!   [`GroupChild::spawn`](crate::GroupChild::spawn), which takes one and calls
//!   [`ChildEnv::apply`] on the command:
//!   1. each settings variable the command does not set (or remove) explicitly is set;
//!   2. each of [`PROVIDER_KEYS`] is removed **when it would be inherited** from spine's own
//!      environment, unless the `ChildEnv` passes it through;
//!   3. each of [`TELEMETRY_SECRETS`] is removed when it would be inherited.
//!
//!   A value set on the command explicitly (an MCP server's `env` in its configuration, a line
//!   of the run's env file, a provider key in the settings' `env`) is the configuration's own
//!   choice and stays.
//! - [`ChildEnv::default`] sets nothing and passes nothing through: the environment of
//!   children started without settings (tests, a tool called outside any run).
//! - A `ChildEnv` may carry a confinement ([`ChildEnv::confined`], see [`crate::confine`]): its
//!   commands are then built with [`ChildEnv::command`] (the sandbox launcher in front of the
//!   program) and every spawn goes through the confinement's guard. [`ChildEnv::unconfined`]
//!   is the same environment without it (a command the configuration runs outside the
//!   sandbox). The agent's tools get the confined value; hooks keep the unconfined one.

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsStr;
use std::fmt;
use std::sync::Arc;

use tokio::process::Command;

use crate::confine::{Confine, launcher_line};

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

/// The environment one agent gives its children: the settings' `env` and the provider keys
/// passed through, and the confinement of its commands if any (see the module contract).
/// Cheap to clone.
#[derive(Clone, Default)]
pub struct ChildEnv {
    inner: Arc<Inner>,
    confinement: Option<Arc<dyn Confine>>,
}

#[derive(Debug, Default, PartialEq, Eq)]
struct Inner {
    vars: BTreeMap<String, String>,
    passthrough: BTreeSet<String>,
}

impl fmt::Debug for ChildEnv {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ChildEnv")
            .field("vars", &self.inner.vars)
            .field("passthrough", &self.inner.passthrough)
            .field("confinement", &self.confinement.as_ref().map(|c| c.profile()))
            .finish()
    }
}

/// Equal when the variables and pass-through are, and both carry the same confinement (the
/// same value, by identity) or none.
impl PartialEq for ChildEnv {
    fn eq(&self, other: &Self) -> bool {
        let same_confinement = match (&self.confinement, &other.confinement) {
            (None, None) => true,
            (Some(a), Some(b)) => Arc::ptr_eq(a, b),
            (Some(_), None) | (None, Some(_)) => false,
        };
        self.inner == other.inner && same_confinement
    }
}

impl Eq for ChildEnv {}

impl ChildEnv {
    /// Children get `vars` (the settings' `env`) and inherit the provider keys named in
    /// `passthrough` (the `env_passthrough` setting; names outside [`PROVIDER_KEYS`] have no
    /// effect).
    pub fn new<I, S>(vars: BTreeMap<String, String>, passthrough: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let passthrough = passthrough.into_iter().map(Into::into).collect();
        ChildEnv { inner: Arc::new(Inner { vars, passthrough }), confinement: None }
    }

    /// The same environment with `vars` set too (they win over a settings variable of the same
    /// name): a plugin's hooks get `CLAUDE_PLUGIN_ROOT` and `CLAUDE_PLUGIN_DATA` this way.
    pub fn with_vars(&self, vars: impl IntoIterator<Item = (String, String)>) -> Self {
        let mut all = self.inner.vars.clone();
        all.extend(vars);
        let inner = Inner { vars: all, passthrough: self.inner.passthrough.clone() };
        ChildEnv { inner: Arc::new(inner), confinement: self.confinement.clone() }
    }

    /// The same environment, its commands confined by `confinement`.
    pub fn confined(self, confinement: Arc<dyn Confine>) -> Self {
        ChildEnv { confinement: Some(confinement), ..self }
    }

    /// The same environment without confinement.
    pub fn unconfined(&self) -> Self {
        ChildEnv { inner: Arc::clone(&self.inner), confinement: None }
    }

    /// The confinement of this environment's commands, if any.
    pub fn confinement(&self) -> Option<&Arc<dyn Confine>> {
        self.confinement.as_ref()
    }

    /// A command running `program`: under a confinement, the launcher with `program` after
    /// its prefix (arguments added to the command go to `program`) and the confinement's
    /// variables set; else `program` itself.
    pub fn command(&self, program: impl AsRef<OsStr>) -> Command {
        match &self.confinement {
            None => Command::new(program),
            Some(confinement) => {
                let (launcher, args) = launcher_line(confinement.as_ref(), program.as_ref());
                let mut command = Command::new(launcher);
                command.args(args).envs(confinement.env());
                command
            }
        }
    }

    /// The variables set on every child.
    pub fn vars(&self) -> &BTreeMap<String, String> {
        &self.inner.vars
    }

    /// The provider keys children inherit after all.
    pub fn passed_through(&self) -> &BTreeSet<String> {
        &self.inner.passthrough
    }

    /// Prepares `command`'s environment: the settings variables it does not set (or remove)
    /// explicitly are set, then the inherited provider keys (unless passed through) and
    /// telemetry credentials are removed; explicit values stay.
    pub fn apply(&self, command: &mut Command) {
        self.set_vars(command);
        self.scrub(command);
    }

    fn set_vars(&self, command: &mut Command) {
        if self.inner.vars.is_empty() {
            return;
        }
        let explicit: BTreeSet<String> =
            command.as_std().get_envs().map(|(name, _)| name.to_string_lossy().into_owned()).collect();
        for (name, value) in &self.inner.vars {
            if !explicit.contains(name) {
                command.env(name, value);
            }
        }
    }

    fn scrub(&self, command: &mut Command) {
        let explicit: BTreeSet<String> = command
            .as_std()
            .get_envs()
            .filter(|(_, value)| value.is_some())
            .map(|(name, _)| name.to_string_lossy().into_owned())
            .collect();
        for key in PROVIDER_KEYS {
            if !self.inner.passthrough.contains(*key) && !explicit.contains(*key) {
                command.env_remove(OsStr::new(key));
            }
        }
        for key in TELEMETRY_SECRETS {
            if !explicit.contains(*key) {
                command.env_remove(OsStr::new(key));
            }
        }
    }
}

/// Whether `name` is one of the [`PROVIDER_KEYS`].
pub fn is_provider_key(name: &str) -> bool {
    PROVIDER_KEYS.contains(&name)
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

    fn vars(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect()
    }

    #[test]
    fn settings_vars_are_set_unless_the_command_sets_or_removes_the_variable_itself() {
        let env = ChildEnv::new(
            vars(&[("SPINE_T_A", "settings"), ("SPINE_T_B", "settings"), ("SPINE_T_C", "settings")]),
            Vec::<String>::new(),
        );
        let mut command = Command::new("true");
        command.env("SPINE_T_B", "explicit").env_remove("SPINE_T_C");
        env.apply(&mut command);
        assert_eq!(env_of(&command, "SPINE_T_A"), Some(Some("settings".into())));
        assert_eq!(env_of(&command, "SPINE_T_B"), Some(Some("explicit".into())));
        assert_eq!(env_of(&command, "SPINE_T_C"), Some(None), "an explicit removal wins");
    }

    #[test]
    fn inherited_provider_keys_are_removed_unless_set_explicitly_or_passed_through() {
        let mut command = Command::new("true");
        command.env("OPENAI_API_KEY", "explicit-for-this-child");
        ChildEnv::default().apply(&mut command);
        assert_eq!(env_of(&command, "ANTHROPIC_API_KEY"), Some(None));
        assert_eq!(env_of(&command, "ANTHROPIC_AUTH_TOKEN"), Some(None));
        assert_eq!(env_of(&command, "ANTHROPIC_CUSTOM_HEADERS"), Some(None));
        assert_eq!(env_of(&command, "GROQ_API_KEY"), Some(None));
        assert_eq!(env_of(&command, "OPENAI_API_KEY"), Some(Some("explicit-for-this-child".into())));
        assert_eq!(env_of(&command, "PATH"), None);

        let env = ChildEnv::new(BTreeMap::new(), ["ANTHROPIC_API_KEY"]);
        let mut command = Command::new("true");
        env.apply(&mut command);
        assert_eq!(env_of(&command, "ANTHROPIC_API_KEY"), None, "passed through: inherited");
        assert_eq!(env_of(&command, "OPENAI_API_KEY"), Some(None));
    }

    #[test]
    fn a_provider_key_in_the_settings_env_is_the_configurations_own_choice_and_stays() {
        let env = ChildEnv::new(vars(&[("OPENAI_API_KEY", "from-settings")]), Vec::<String>::new());
        let mut command = Command::new("true");
        env.apply(&mut command);
        assert_eq!(env_of(&command, "OPENAI_API_KEY"), Some(Some("from-settings".into())));
        assert_eq!(env_of(&command, "ANTHROPIC_API_KEY"), Some(None));
    }

    #[test]
    fn telemetry_headers_are_removed_even_when_named_for_pass_through_unless_set_explicitly() {
        let env = ChildEnv::new(BTreeMap::new(), ["OTEL_EXPORTER_OTLP_HEADERS"]);
        let mut command = Command::new("true");
        command.env("OTEL_EXPORTER_OTLP_LOGS_HEADERS", "explicit");
        env.apply(&mut command);
        assert_eq!(env_of(&command, "OTEL_EXPORTER_OTLP_HEADERS"), Some(None));
        assert_eq!(env_of(&command, "OTEL_EXPORTER_OTLP_TRACES_HEADERS"), Some(None));
        assert_eq!(env_of(&command, "OTEL_EXPORTER_OTLP_METRICS_HEADERS"), Some(None));
        assert_eq!(env_of(&command, "OTEL_EXPORTER_OTLP_LOGS_HEADERS"), Some(Some("explicit".into())));
    }

    #[test]
    fn two_values_are_independent_and_clones_share_theirs() {
        let one = ChildEnv::new(vars(&[("SPINE_T_MARK", "one")]), Vec::<String>::new());
        let two = ChildEnv::new(vars(&[("SPINE_T_MARK", "two")]), ["OPENAI_API_KEY"]);
        let (mut a, mut b) = (Command::new("true"), Command::new("true"));
        one.clone().apply(&mut a);
        two.apply(&mut b);
        assert_eq!(env_of(&a, "SPINE_T_MARK"), Some(Some("one".into())));
        assert_eq!(env_of(&b, "SPINE_T_MARK"), Some(Some("two".into())));
        assert_eq!(env_of(&a, "OPENAI_API_KEY"), Some(None));
        assert_eq!(env_of(&b, "OPENAI_API_KEY"), None);
        assert_eq!(one.clone(), one);
        assert_ne!(one, two);
    }
}
