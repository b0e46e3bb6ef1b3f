//! One handler of a matcher group: its type, what it runs, and its policy fields.
//!
//! Fields: `type` (`command`, `http`, `prompt`, `mcp_tool`, `agent`), `timeout` (seconds,
//! default [`DEFAULT_TIMEOUT_SECS`]), `onFailure` (`open` or `continue`, the default for external
//! hooks; `closed` or `block`), `statusMessage`, `async`, `if` (a permission rule; tool events
//! only), `once` (the hook runs at its first firing only, [`crate::once`]), `cloud` (Claude
//! Code's, no effect). Command handlers: `command` (run by the shell of [`crate::shell`], bash
//! by default), `args` (exec form, no shell: with `command`, `command` is the program and `args`
//! its arguments; alone, `args[0]` is the program), `shell` (`bash`, `sh`, `powershell`),
//! `persistent` (spine's own), `asyncRewake` (in the background; its exit 2 wakes the model,
//! [`crate::rewake`]; not with `persistent`) with `rewakeMessage` and `rewakeSummary` (no effect
//! without `asyncRewake`, as in Claude Code). HTTP handlers: `url`, `headers`,
//! `allowedEnvVars`. Prompt and agent handlers: `prompt`, `model` (and `continueOnBlock`);
//! mcp_tool handlers: `server`, `tool`, `input`. A field of another handler type is an error; an
//! unknown field is a warning, or an error when it is a near miss of a known one (`timout`).

use std::time::Duration;

use serde_json::{Map, Value};
use spine_core::hooks::{FailurePolicy, RunMode};
use spine_core::permission::PermissionRule;
use spine_protocol::hook::{HookEventName, HookKind};

use super::Diagnostics;
use crate::shell::{Interpreter, ShellChoice, Shells};
use spine_settings::type_name;

/// Timeout of a handler that sets none, in seconds.
pub const DEFAULT_TIMEOUT_SECS: f64 = 60.0;

const COMMON: &[&str] = &["type", "timeout", "onFailure", "statusMessage", "async", "if", "once", "cloud"];
const COMMAND: &[&str] = &["command", "args", "shell", "persistent", "asyncRewake", "rewakeMessage", "rewakeSummary"];
const HTTP: &[&str] = &["url", "headers", "allowedEnvVars"];
const PROMPT: &[&str] = &["prompt", "model", "continueOnBlock"];
const MCP_TOOL: &[&str] = &["server", "tool", "input"];
const AGENT: &[&str] = &["prompt", "model"];

/// One handler, validated.
#[derive(Debug, Clone)]
pub struct HandlerConfig {
    /// Its JSON path (`hooks.PreToolUse[0].hooks[1]`).
    pub path: String,
    /// What it runs.
    pub handler: Handler,
    /// Time limit per event.
    pub timeout: Duration,
    /// What its failure means.
    pub on_failure: FailurePolicy,
    /// `statusMessage`: shown (with `-v`) while it runs.
    pub status_message: Option<String>,
    /// `async: true` (or `asyncRewake: true`) runs it in the background.
    pub run: RunMode,
    /// `asyncRewake: true`: its exit 2 wakes the model.
    pub rewake: Option<RewakeConfig>,
    /// `once: true`: it runs at its first firing only.
    pub once: bool,
    /// The `if` rule, as written and parsed.
    pub condition: Option<(String, PermissionRule)>,
}

/// `asyncRewake: true` and how the wake reads.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RewakeConfig {
    /// `rewakeMessage`: what the model reads before the hook's stderr.
    pub message: Option<String>,
    /// `rewakeSummary`: the line shown to the user.
    pub summary: Option<String>,
}

/// What a handler runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Handler {
    /// A process per event, or one per run when `persistent`.
    Command {
        /// How the process is started.
        program: Program,
        /// `"persistent": true`: one process per run, one JSON line in and out per event.
        persistent: bool,
    },
    /// A POST per event.
    Http(HttpConfig),
    /// One model request per event.
    Prompt(super::prompt::PromptConfig),
    /// One call of a connected MCP server's tool per event.
    McpTool(super::mcp_tool::McpToolConfig),
    /// A read-only verifier agent per event.
    Agent {
        /// The instructions (`$ARGUMENTS` stands for the event's JSON).
        prompt: String,
        /// The model spec, when the hook names one.
        model: Option<String>,
    },
    /// A function of the SDK host program, called with a `hook_callback` control request per
    /// event ([`crate::callback`]); only the host's `initialize` declares them
    /// ([`super::HookConfig::from_sdk`]), never a settings file.
    Callback {
        /// The callback id the host gave it (`hook_0`).
        id: String,
    },
}

/// How a command is started.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Program {
    /// `COMMAND` run by a shell (`bash -c COMMAND` by default, see [`crate::shell`]).
    Shell {
        /// The command line as written.
        line: String,
        /// The shell that runs it, resolved when the configuration was read.
        interpreter: Interpreter,
    },
    /// Exec form: the program and its arguments, no shell.
    Exec {
        /// The program (a path, or a name looked up on PATH).
        program: String,
        /// The arguments, passed as they are.
        args: Vec<String>,
    },
}

impl Program {
    /// `line` under the default shell of this machine (bash from `PATH`, else `/bin/sh`).
    pub fn shell(line: &str) -> Program {
        let (interpreter, _) = Shells::detect().resolve(ShellChoice::Bash);
        Program::Shell { line: line.to_owned(), interpreter }
    }

    /// The command as one line, for listings and ids.
    pub fn display(&self) -> String {
        match self {
            Program::Shell { line, .. } => line.clone(),
            Program::Exec { program, args } => {
                let mut parts = vec![program.clone()];
                parts.extend(args.iter().cloned());
                parts.join(" ")
            }
        }
    }
}

/// An HTTP handler.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpConfig {
    /// Where the event is POSTed (redirects are not followed).
    pub url: String,
    /// Header names and values as written (`$VAR` interpolated at send time).
    pub headers: Vec<(String, String)>,
    /// The variables header values may interpolate (narrowed by `httpHookAllowedEnvVars`,
    /// see [`crate::policy`]).
    pub allowed_env_vars: Vec<String>,
    /// Why managed-settings policy keeps it from sending (`allowedHttpHookUrls`, see
    /// [`crate::policy`]): each firing is then a launch error, and its `onFailure` decides.
    pub blocked: Option<String>,
}

impl Handler {
    /// The handler's [`HookKind`].
    pub fn kind(&self) -> HookKind {
        match self {
            Handler::Command { persistent: false, .. } => HookKind::Command,
            Handler::Command { persistent: true, .. } => HookKind::Persistent,
            Handler::Http(_) => HookKind::Http,
            Handler::Prompt(_) => HookKind::Prompt,
            Handler::McpTool(_) => HookKind::McpTool,
            Handler::Agent { .. } => HookKind::Agent,
            Handler::Callback { .. } => HookKind::Callback,
        }
    }

    /// The command line, URL, prompt, tool name or callback id.
    pub fn target(&self) -> String {
        match self {
            Handler::Command { program, .. } => program.display(),
            Handler::Http(http) => http.url.clone(),
            Handler::Prompt(prompt) => prompt.prompt.clone(),
            Handler::McpTool(m) => m.tool_name(),
            Handler::Agent { prompt, .. } => prompt.clone(),
            Handler::Callback { id } => id.clone(),
        }
    }

    /// Handlers with the same key run once per firing: the same type and command (or args),
    /// the same URL, the same callback id.
    pub fn dedup_key(&self) -> String {
        match self {
            Handler::Command { program: Program::Shell { line, interpreter }, persistent } => {
                format!("command:{persistent}:{}:{line}", interpreter.name())
            }
            Handler::Command { program: Program::Exec { program, args }, persistent } => {
                let argv = serde_json::to_string(args).unwrap_or_default();
                format!("command:{persistent}:exec:{program}:{argv}")
            }
            Handler::Http(http) => format!("http:{}", http.url),
            Handler::Prompt(p) => format!("prompt:{}:{}", p.model.as_deref().unwrap_or(""), p.prompt),
            Handler::McpTool(m) => {
                format!("mcp_tool:{}:{}", m.tool_name(), serde_json::to_string(&m.input).unwrap_or_default())
            }
            Handler::Agent { prompt, model } => format!("agent:{}:{prompt}", model.as_deref().unwrap_or("")),
            Handler::Callback { id } => format!("callback:{id}"),
        }
    }
}

/// Parses one handler; `None` when it is skipped (warning) or invalid (errors).
pub(super) fn parse(
    diag: &mut Diagnostics<'_>,
    event: HookEventName,
    path: &str,
    value: &Value,
) -> Option<HandlerConfig> {
    let Value::Object(obj) = value else {
        diag.error(path, format!("expected a handler object, found {}", type_name(value)));
        return None;
    };
    let kind = match obj.iter().find_map(|(k, v)| (k == "type").then_some(v)) {
        Some(Value::String(t)) => t.as_str(),
        Some(other) => {
            diag.error(format!("{path}.type"), format!("expected a string, found {}", type_name(other)));
            return None;
        }
        None => {
            diag.error(format!("{path}.type"), "missing (expected \"command\" or \"http\")");
            return None;
        }
    };
    let own: &[&str] = match kind {
        "command" => COMMAND,
        "http" => HTTP,
        "prompt" => PROMPT,
        "mcp_tool" => MCP_TOOL,
        "agent" => AGENT,
        other => {
            diag.error(
                format!("{path}.type"),
                format!("unknown handler type `{other}` (expected command, http, prompt, agent or mcp_tool)"),
            );
            return None;
        }
    };
    let errors_before = diag.errors.len();
    for key in obj.keys() {
        if !COMMON.contains(&key.as_str()) && !own.contains(&key.as_str()) {
            let at = format!("{path}.{key}");
            let other_type = [COMMAND, HTTP, PROMPT, MCP_TOOL, AGENT].iter().any(|f| f.contains(&key.as_str()));
            if other_type {
                diag.error(at, format!("`{key}` does not apply to `{kind}` hooks"));
            } else {
                let known: Vec<&str> =
                    COMMON.iter().chain(COMMAND).chain(HTTP).chain(PROMPT).chain(MCP_TOOL).copied().collect();
                diag.unknown(&at, key, &known);
            }
        }
    }
    let f = Fields { obj, path };
    let timeout = match f.get("timeout") {
        None => Duration::from_secs_f64(DEFAULT_TIMEOUT_SECS),
        Some(v) => match v.as_f64().filter(|s| *s > 0.0 && s.is_finite() && *s <= 86_400.0) {
            Some(secs) => Duration::from_secs_f64(secs),
            None => {
                diag.error(f.at("timeout"), format!("expected a positive number of seconds, found {v}"));
                Duration::ZERO
            }
        },
    };
    // `continue` and `block` are Claude Code's spellings of `open` and `closed`.
    let on_failure = match f.string(diag, "onFailure").as_deref() {
        None | Some("open" | "continue") => FailurePolicy::Open,
        Some("closed" | "block") => FailurePolicy::Closed,
        Some(other) => {
            diag.error(
                f.at("onFailure"),
                format!("expected \"open\" (\"continue\") or \"closed\" (\"block\"), found \"{other}\""),
            );
            FailurePolicy::Open
        }
    };
    let status_message = f.string(diag, "statusMessage");
    let mut background = f.boolean(diag, "async").unwrap_or(false);
    let once = f.boolean(diag, "once").unwrap_or(false);
    let condition = match f.string(diag, "if") {
        None => None,
        Some(text) => match PermissionRule::parse(&text) {
            Ok(rule) => {
                if !event.has_tool_call() {
                    diag.warn(
                        f.at("if"),
                        format!("`if` only applies to tool events; this {event} hook will never run"),
                    );
                    return None;
                }
                Some((text, rule))
            }
            Err(e) => {
                diag.error(f.at("if"), e.to_string());
                None
            }
        },
    };
    let mut rewake = None;
    let handler = if kind == "http" {
        parse_http(diag, &f)
    } else if kind == "prompt" {
        super::prompt::parse(diag, &f).map(Handler::Prompt)
    } else if kind == "mcp_tool" {
        super::mcp_tool::parse(diag, &f).map(Handler::McpTool)
    } else if kind == "agent" {
        super::prompt::parse(diag, &f).map(|p| Handler::Agent { prompt: p.prompt, model: p.model })
    } else {
        let message = f.string(diag, "rewakeMessage");
        let summary = f.string(diag, "rewakeSummary");
        if f.boolean(diag, "asyncRewake") == Some(true) {
            rewake = Some(RewakeConfig { message, summary });
            background = true;
        }
        let choice = match f.string(diag, "shell").as_deref() {
            None => ShellChoice::Bash,
            Some(text) => match ShellChoice::parse(text) {
                Some(choice) => choice,
                None => {
                    diag.error(f.at("shell"), format!("expected \"bash\", \"sh\" or \"powershell\", found \"{text}\""));
                    ShellChoice::Bash
                }
            },
        };
        let persistent = f.boolean(diag, "persistent").unwrap_or(false);
        if persistent && rewake.is_some() {
            diag.error(f.at("asyncRewake"), "`asyncRewake` does not apply to `persistent` hooks");
        }
        let (interpreter, warning) = diag.shells.resolve(choice);
        let program = parse_program(diag, &f, interpreter);
        if let (Some(Program::Shell { .. }), Some(warning)) = (&program, warning) {
            diag.warn(f.at("command"), warning);
        }
        program.map(|program| Handler::Command { program, persistent })
    };
    if diag.errors.len() > errors_before {
        return None;
    }
    Some(HandlerConfig {
        path: path.to_owned(),
        handler: handler?,
        timeout,
        on_failure,
        status_message,
        once,
        run: if background { RunMode::Background } else { RunMode::Blocking },
        rewake,
        condition,
    })
}

fn parse_program(diag: &mut Diagnostics<'_>, f: &Fields<'_>, interpreter: Interpreter) -> Option<Program> {
    let command = f.string(diag, "command");
    let args = match f.get("args") {
        None => None,
        Some(Value::Array(items)) => {
            let mut args = Vec::with_capacity(items.len());
            for (i, item) in items.iter().enumerate() {
                match item {
                    Value::String(s) => args.push(s.clone()),
                    other => diag.error(
                        format!("{}[{i}]", f.at("args")),
                        format!("expected a string, found {}", type_name(other)),
                    ),
                }
            }
            Some(args)
        }
        Some(other) => {
            diag.error(f.at("args"), format!("expected an array of strings, found {}", type_name(other)));
            return None;
        }
    };
    match (command, args) {
        (Some(c), _) if c.trim().is_empty() => {
            diag.error(f.at("command"), "empty command");
            None
        }
        (Some(line), None) => Some(Program::Shell { line, interpreter }),
        (Some(program), Some(args)) => Some(Program::Exec { program, args }),
        (None, Some(mut args)) => {
            if args.is_empty() || args[0].trim().is_empty() {
                diag.error(f.at("args"), "exec form needs the program as args[0] (or in `command`)");
                return None;
            }
            let program = args.remove(0);
            Some(Program::Exec { program, args })
        }
        (None, None) => {
            diag.error(f.at("command"), "missing (a command hook needs `command` or `args`)");
            None
        }
    }
}

fn parse_http(diag: &mut Diagnostics<'_>, f: &Fields<'_>) -> Option<Handler> {
    let url = match f.string(diag, "url") {
        Some(url) => url,
        None => {
            if f.get("url").is_none() {
                diag.error(f.at("url"), "missing (an http hook needs `url`)");
            }
            return None;
        }
    };
    match reqwest::Url::parse(&url) {
        Ok(u) if matches!(u.scheme(), "http" | "https") => {}
        Ok(u) => diag.error(f.at("url"), format!("expected an http or https URL, found scheme `{}`", u.scheme())),
        Err(e) => diag.error(f.at("url"), format!("invalid URL: {e}")),
    }
    let mut headers = Vec::new();
    match f.get("headers") {
        None => {}
        Some(Value::Object(map)) => {
            for (name, value) in map {
                let at = format!("{}.{name}", f.at("headers"));
                if reqwest::header::HeaderName::from_bytes(name.as_bytes()).is_err() {
                    diag.error(&at, "invalid header name");
                }
                match value {
                    Value::String(v) => headers.push((name.clone(), v.clone())),
                    other => diag.error(&at, format!("expected a string, found {}", type_name(other))),
                }
            }
        }
        Some(other) => diag.error(f.at("headers"), format!("expected an object, found {}", type_name(other))),
    }
    let mut allowed_env_vars = Vec::new();
    match f.get("allowedEnvVars") {
        None => {}
        Some(Value::Array(items)) => {
            for (i, item) in items.iter().enumerate() {
                match item.as_str() {
                    Some(name) if is_var_name(name) => allowed_env_vars.push(name.to_owned()),
                    Some(name) => diag.error(
                        format!("{}[{i}]", f.at("allowedEnvVars")),
                        format!("`{name}` is not a variable name (write NAME, not $NAME)"),
                    ),
                    None => diag.error(format!("{}[{i}]", f.at("allowedEnvVars")), "expected a string"),
                }
            }
        }
        Some(other) => {
            diag.error(f.at("allowedEnvVars"), format!("expected an array of names, found {}", type_name(other)))
        }
    }
    Some(Handler::Http(HttpConfig { url, headers, allowed_env_vars, blocked: None }))
}

/// Whether `name` is `[A-Za-z_][A-Za-z0-9_]*`.
pub(crate) fn is_var_name(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c == '_' || c.is_ascii_alphabetic())
        && chars.all(|c| c == '_' || c.is_ascii_alphanumeric())
}

/// Typed access to a handler's fields, reporting type errors at their JSON path.
pub(super) struct Fields<'a> {
    obj: &'a Map<String, Value>,
    path: &'a str,
}

impl Fields<'_> {
    pub(super) fn at(&self, key: &str) -> String {
        format!("{}.{key}", self.path)
    }

    pub(super) fn get(&self, key: &str) -> Option<&Value> {
        // A handler has a few fields: a scan is cheaper than hashing the key for each lookup.
        self.obj.iter().find_map(|(k, v)| (k == key).then_some(v)).filter(|v| !v.is_null())
    }

    pub(super) fn string(&self, diag: &mut Diagnostics<'_>, key: &str) -> Option<String> {
        match self.get(key)? {
            Value::String(s) => Some(s.clone()),
            other => {
                diag.error(self.at(key), format!("expected a string, found {}", type_name(other)));
                None
            }
        }
    }

    pub(super) fn boolean(&self, diag: &mut Diagnostics<'_>, key: &str) -> Option<bool> {
        match self.get(key)? {
            Value::Bool(b) => Some(*b),
            other => {
                diag.error(self.at(key), format!("expected a boolean, found {}", type_name(other)));
                None
            }
        }
    }
}
