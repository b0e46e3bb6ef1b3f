//! `spine doctor`: is this machine and this project ready to run spine? One line per check —
//! settings files, project trust, the model and its key, hooks, permission rules and the rest
//! of the settings, MCP servers, a shell for `Bash`, the command sandbox (what the kernel
//! offers, and the profile this project's settings would run commands under), and the mailbox
//! when one is configured —
//! each `ok`, `warning` or `failed`, with the fix for the last two. A key is never printed:
//! only the name of the variable that holds it.
//!
//! Exit status 0 when nothing failed (warnings allowed), 1 otherwise.

use std::path::{Path, PathBuf};
#[cfg(feature = "sqlite")]
use std::time::Duration;

use serde_json::{Value, json};
use spine_agent::models::ModelSpec;
use spine_settings::Settings;
use spine_settings::trust::McpApproval;

use super::context;
use crate::cli::{DoctorArgs, OutputFormat};
use crate::error::exit;
use crate::out;

/// How long the mailbox may take to answer.
#[cfg(feature = "sqlite")]
const MAILBOX_WAIT: Duration = Duration::from_secs(3);

/// A check's verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Status {
    Ok,
    Warning,
    Failed,
}

impl Status {
    fn as_str(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Warning => "warning",
            Status::Failed => "failed",
        }
    }

    fn mark(self) -> &'static str {
        match self {
            Status::Ok => "✓",
            Status::Warning => "!",
            Status::Failed => "✗",
        }
    }
}

/// One check.
struct Check {
    name: &'static str,
    status: Status,
    detail: String,
    fix: Option<String>,
}

impl Check {
    fn ok(name: &'static str, detail: impl Into<String>) -> Self {
        Check { name, status: Status::Ok, detail: detail.into(), fix: None }
    }

    fn warning(name: &'static str, detail: impl Into<String>, fix: impl Into<String>) -> Self {
        Check { name, status: Status::Warning, detail: detail.into(), fix: Some(fix.into()) }
    }

    fn failed(name: &'static str, detail: impl Into<String>, fix: impl Into<String>) -> Self {
        Check { name, status: Status::Failed, detail: detail.into(), fix: Some(fix.into()) }
    }
}

/// Runs `spine doctor`.
pub async fn doctor(args: DoctorArgs) -> anyhow::Result<u8> {
    let home = context::spine_home()?;
    let project = context::project_dir(args.cwd.as_ref())?;
    let mut checks = Vec::new();
    let settings = match context::settings_with(&home, &project, &args.settings, false, None, &[]) {
        Ok(settings) => {
            checks.push(settings_check(&settings));
            checks.push(trust_check(&settings, &project));
            settings
        }
        Err(e) => {
            checks.push(Check::failed("settings", e.to_string(), "correct the file and field named above"));
            Settings::default()
        }
    };
    checks.push(model_check(args.model.as_deref(), &settings));
    checks.push(hooks_check(&settings, &project));
    checks.push(validation_check(&settings, &project, &home));
    checks.push(mcp_check(&settings, &project));
    checks.push(shell_check());
    checks.push(sandbox_check(&settings, &project, &home));
    if let Some(mailbox) = &args.mailbox {
        checks.push(mailbox_check(mailbox).await);
    }
    let failed = checks.iter().any(|c| c.status == Status::Failed);
    if args.output_format == OutputFormat::Text {
        let mut text = String::new();
        for c in &checks {
            text.push_str(&format!("{} {:<9} {}\n", c.status.mark(), c.name, c.detail));
            if let Some(fix) = &c.fix {
                text.push_str(&format!("  {:<9} fix: {fix}\n", ""));
            }
        }
        let failures = checks.iter().filter(|c| c.status == Status::Failed).count();
        let warnings = checks.iter().filter(|c| c.status == Status::Warning).count();
        text.push_str(&format!("{}: {failures} failed, {warnings} warning(s)", if failed { "FAILED" } else { "ok" }));
        let _ = out::line(text);
    } else {
        let list: Vec<Value> = checks
            .iter()
            .map(|c| json!({"check": c.name, "status": c.status.as_str(), "detail": c.detail, "fix": c.fix}))
            .collect();
        let _ = out::line(serde_json::to_string_pretty(&json!({"ok": !failed, "checks": list})).unwrap_or_default());
    }
    Ok(if failed { exit::FAILED } else { exit::OK })
}

/// The settings files read; the managed ones (`/etc/…/managed-settings.json`) are named again
/// on their own, since nothing below them can loosen what they set.
fn settings_check(settings: &Settings) -> Check {
    let read = settings.files.iter().filter(|f| f.status == spine_settings::FileStatus::Read);
    let path = |f: &spine_settings::SettingsFile| f.origin.path().map(|p| p.display().to_string());
    let files: Vec<String> = read.clone().filter_map(path).collect();
    let managed: Vec<String> = read.filter(|f| f.origin.is_managed()).filter_map(path).collect();
    let managed = match managed.as_slice() {
        [] => String::new(),
        list => format!("; managed settings: {}", list.join(", ")),
    };
    match files.as_slice() {
        [] => Check::ok("settings", "no settings files (defaults apply)"),
        files => Check::ok("settings", format!("{} file(s) read: {}{managed}", files.len(), files.join(", "))),
    }
}

fn trust_check(settings: &Settings, project: &Path) -> Check {
    if settings.trust.is_trusted() {
        return Check::ok("trust", format!("{} is trusted", project.display()));
    }
    // The sentence `spine hooks list`, `spine mcp list` and `/hooks` print too.
    match crate::withheld::Withheld::of(settings, project).sentence(project) {
        None => Check::ok("trust", "untrusted, and its files configure nothing that needs trust"),
        Some(sentence) => Check::warning(
            "trust",
            sentence,
            "review what it brings first (`spine hooks list`, `spine mcp list`, `spine hooks check`)",
        ),
    }
}

fn model_check(flag: Option<&str>, settings: &Settings) -> Check {
    let (spec, from) = match spine_agent::model_choice(flag, settings) {
        Ok(choice) => choice,
        Err(e) => {
            return Check::failed(
                "model",
                e.to_string(),
                "pass --model, set `model` in ~/.spine/settings.json, or export ANTHROPIC_API_KEY or OPENAI_API_KEY",
            );
        }
    };
    let from = if from.is_empty() { "the key that is set".to_owned() } else { from };
    let set = |name: &str| std::env::var(name).is_ok_and(|v| !v.trim().is_empty());
    let key = match &spec {
        ModelSpec::Scripted(path) if !path.is_file() => {
            return Check::failed(
                "model",
                format!("scripted model file {} does not exist", path.display()),
                "write the script (docs/cli.md, \"Scripted model file\") or name another model",
            );
        }
        ModelSpec::Scripted(_) => "no key needed".to_owned(),
        ModelSpec::OpenAi(_) | ModelSpec::OpenAiResponses(_) => match (set("OPENAI_API_KEY"), local_base_url()) {
            (true, _) => "key: OPENAI_API_KEY is set".to_owned(),
            (false, Some(url)) => format!("no key, for the local server {url}"),
            (false, None) => {
                return Check::failed(
                    "model",
                    format!("{} (from {from}) needs OPENAI_API_KEY, which is not set", describe(&spec)),
                    "export OPENAI_API_KEY=… (or OPENAI_BASE_URL for a local server that needs none)",
                );
            }
        },
        ModelSpec::Anthropic(_) => match (set("ANTHROPIC_API_KEY"), set("ANTHROPIC_AUTH_TOKEN")) {
            (true, _) => "key: ANTHROPIC_API_KEY is set".to_owned(),
            (false, true) => "key: ANTHROPIC_AUTH_TOKEN is set".to_owned(),
            (false, false) => {
                return Check::failed(
                    "model",
                    format!(
                        "{} (from {from}) needs ANTHROPIC_API_KEY or ANTHROPIC_AUTH_TOKEN, neither is set",
                        describe(&spec)
                    ),
                    "export ANTHROPIC_API_KEY=…",
                );
            }
        },
    };
    match spine_agent::build_model(flag, settings) {
        Ok(client) => Check::ok("model", format!("{} (from {from}); {key}", describe_client(&spec, client.model()))),
        Err(e) => Check::failed("model", e.to_string(), "correct the model options named above"),
    }
}

fn describe(spec: &ModelSpec) -> String {
    match spec {
        ModelSpec::Scripted(path) => format!("scripted:{}", path.display()),
        ModelSpec::OpenAi(m) => format!("openai:{m}"),
        ModelSpec::OpenAiResponses(m) => format!("openai-responses:{m}"),
        ModelSpec::Anthropic(m) => format!("anthropic:{m}"),
    }
}

fn describe_client(spec: &ModelSpec, model: &str) -> String {
    match spec {
        ModelSpec::Scripted(_) => describe(spec),
        _ => format!("{} → {model}", describe(spec)),
    }
}

/// `OPENAI_BASE_URL` when it points at this machine (a local server may need no key).
fn local_base_url() -> Option<String> {
    let url = std::env::var("OPENAI_BASE_URL").ok()?;
    let parsed = url::Url::parse(&url).ok()?;
    let local = match parsed.host()? {
        url::Host::Domain(d) => d == "localhost",
        url::Host::Ipv4(ip) => ip.is_loopback(),
        url::Host::Ipv6(ip) => ip.is_loopback(),
    };
    local.then_some(url)
}

fn hooks_check(settings: &Settings, project: &Path) -> Check {
    let hooks = match spine_hooks::HookConfig::from_settings(settings) {
        Ok(hooks) => hooks,
        Err(e) => return Check::failed("hooks", e.to_string(), "correct the hook entries named above"),
    };
    let findings = spine_hooks::check::check(&hooks, project);
    let errors: Vec<String> = findings
        .iter()
        .filter(|f| f.severity == spine_hooks::check::Severity::Error)
        .map(ToString::to_string)
        .collect();
    let handlers: usize = hooks.groups.iter().map(|g| g.handlers.len()).sum();
    if !errors.is_empty() {
        return Check::failed("hooks", errors.join("; "), "fix each entry (`spine hooks check` shows every finding)");
    }
    let warnings = findings.len();
    // An untrusted project's hooks are not "none": the trust check's sentence counts them.
    let withheld = crate::withheld::Withheld::of(settings, project).hooks;
    let withheld = match withheld {
        0 => String::new(),
        1 => "; 1 hook withheld (see trust)".to_owned(),
        n => format!("; {n} hooks withheld (see trust)"),
    };
    match (handlers, warnings) {
        (0, _) if !withheld.is_empty() => Check::ok("hooks", format!("none active{withheld}")),
        (0, _) => Check::ok("hooks", "none configured"),
        (n, 0) => Check::ok("hooks", format!("{n} hook(s), each program found{withheld}")),
        (n, w) => {
            Check::warning("hooks", format!("{n} hook(s), {w} warning(s){withheld}"), "`spine hooks check` lists them")
        }
    }
}

fn validation_check(settings: &Settings, project: &Path, home: &Path) -> Check {
    let invalid = spine_agent::validate(settings, project, home);
    if invalid.is_empty() {
        let rules = settings.permissions.allow.len() + settings.permissions.ask.len() + settings.permissions.deny.len();
        return Check::ok("rules", format!("{rules} permission rule(s), every rule and setting valid"));
    }
    let list: Vec<String> = invalid
        .iter()
        .map(|i| {
            let at = [i.origin.as_deref(), i.path.as_deref()].into_iter().flatten().collect::<Vec<_>>().join(" ");
            if at.is_empty() { i.message.clone() } else { format!("{at}: {}", i.message) }
        })
        .collect();
    Check::failed("rules", list.join("; "), "correct each entry named")
}

fn mcp_check(settings: &Settings, project: &Path) -> Check {
    let servers = match spine_agent::configured_mcp_servers(settings, project) {
        Ok(servers) => servers,
        Err(e) => return Check::failed("mcp", e.to_string(), "correct `.mcp.json` or `mcpServers`"),
    };
    let mut missing = Vec::new();
    let mut skipped = Vec::new();
    let mut ready = 0;
    // A skipped server is never the effective one of its name: looked at before that filter.
    for server in servers.iter().filter(|s| s.effective || s.approval == McpApproval::Untrusted) {
        if server.approval == McpApproval::Untrusted {
            skipped.push(server.name.clone());
            continue;
        }
        match server.config.get("command").and_then(Value::as_str) {
            Some(command) if find_program(command).is_none() => {
                missing.push(format!("{} ({}: `{command}` not found)", server.name, server.source));
            }
            _ => ready += 1,
        }
    }
    if !missing.is_empty() {
        return Check::failed(
            "mcp",
            format!("cannot start: {}", missing.join(", ")),
            "install the program or correct its `command` (`spine mcp list --connect` tries each server)",
        );
    }
    if !skipped.is_empty() {
        return Check::warning(
            "mcp",
            format!("{ready} server(s) ready; {} withheld (see trust): {}", skipped.len(), skipped.join(", ")),
            "`spine mcp list` shows each server and why",
        );
    }
    Check::ok("mcp", format!("{ready} server(s) configured, each program found"))
}

/// `command` as an executable file: a path as given, else searched on `PATH`.
fn find_program(command: &str) -> Option<PathBuf> {
    let executable = |p: &Path| {
        use std::os::unix::fs::PermissionsExt;
        std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    };
    if command.contains('/') {
        let path = PathBuf::from(command);
        return executable(&path).then_some(path);
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).map(|dir| dir.join(command)).find(|p| executable(p))
}

fn shell_check() -> Check {
    match find_program("bash") {
        Some(path) => Check::ok("shell", format!("{} runs the Bash tool", path.display())),
        None => Check::failed("shell", "bash is not on PATH: the Bash tool cannot run", "install bash"),
    }
}

/// What the kernel offers the sandbox, and the layers this project's settings would use.
fn sandbox_check(settings: &Settings, project: &Path, home: &Path) -> Check {
    use spine_settings::SandboxMode;
    let helper = spine_sandbox::Helper::spine_current_exe();
    let capabilities = match &helper {
        Ok(helper) => spine_sandbox::probe_with(helper),
        Err(_) => spine_sandbox::probe(),
    };
    let kernel = format!("kernel {}: {}", capabilities.kernel, capabilities.summary());
    let enable = "`--sandbox workspace-write`, or \"sandbox\": {\"enabled\": true} in the settings";
    let (mode, required) = (settings.sandbox.mode(), settings.sandbox.fail_if_unavailable == Some(true));
    if mode == SandboxMode::Off {
        return match capabilities.is_complete() {
            true => Check::ok("sandbox", format!("{kernel}; off for this project (turn it on with {enable})")),
            false => Check::warning(
                "sandbox",
                format!("{kernel}; off for this project"),
                "a sandbox here would be partial: see docs/sandbox.md for the kernel settings each layer needs",
            ),
        };
    }
    let Ok(helper) = helper else {
        return Check::failed(
            "sandbox",
            format!("{kernel}; spine's own executable cannot be found"),
            "reinstall spine",
        );
    };
    let options = spine_agent::sandbox::SandboxOptions {
        flag: None,
        default_mode: SandboxMode::Off,
        require: false,
        project: project.to_path_buf(),
        spine_home: home.to_path_buf(),
        command_line: spine_agent::CommandLine::default(),
        helper,
        network_approver: None,
    };
    let sandbox = match spine_agent::sandbox::SessionSandbox::start(settings, options) {
        Ok(sandbox) => sandbox,
        Err(e) => return Check::failed("sandbox", e.to_string(), "correct the setting named above"),
    };
    let detail = format!("{kernel}; this project's commands would run under {}", sandbox.profile());
    match (capabilities.is_complete(), required) {
        (true, _) => Check::ok("sandbox", detail),
        (false, false) => Check::warning(
            "sandbox",
            format!("{detail} (best effort: a layer is missing)"),
            "see docs/sandbox.md for the kernel settings each layer needs, or set sandbox.failIfUnavailable",
        ),
        (false, true) => Check::failed(
            "sandbox",
            format!("{detail}; sandbox.failIfUnavailable refuses every command"),
            "see docs/sandbox.md for the kernel settings each layer needs",
        ),
    }
}

#[cfg(not(feature = "sqlite"))]
async fn mailbox_check(mailbox: &str) -> Check {
    Check::failed(
        "mailbox",
        format!("{mailbox}: this spine was built without the worker (cargo feature `sqlite`)"),
        "install a build with the default features",
    )
}

#[cfg(feature = "sqlite")]
async fn mailbox_check(mailbox: &str) -> Check {
    let url: spine_worker::MailboxUrl = match mailbox.parse() {
        Ok(url) => url,
        Err(e) => {
            let e: spine_worker::url::UrlError = e;
            return Check::failed("mailbox", e.to_string(), "use sqlite:PATH or nats://HOST:PORT");
        }
    };
    if let spine_worker::MailboxUrl::Sqlite { path, .. } = &url
        && !path.exists()
    {
        return Check::ok("mailbox", format!("{mailbox}: not created yet (the first submit or worker creates it)"));
    }
    match tokio::time::timeout(MAILBOX_WAIT, url.open()).await {
        Ok(Ok(_)) => Check::ok("mailbox", format!("{mailbox} answers")),
        Ok(Err(e)) => Check::failed("mailbox", format!("{mailbox}: {e}"), mailbox_fix(&url)),
        Err(_) => Check::failed(
            "mailbox",
            format!("{mailbox}: no answer within {} s", MAILBOX_WAIT.as_secs()),
            mailbox_fix(&url),
        ),
    }
}

#[cfg(feature = "sqlite")]
fn mailbox_fix(url: &spine_worker::MailboxUrl) -> String {
    match url {
        spine_worker::MailboxUrl::Sqlite { path, .. } => {
            format!("check that {} is a spine mailbox and writable", path.display())
        }
        #[allow(unreachable_patterns)]
        _ => "start the server with JetStream (`nats-server -js`), or correct the URL".to_owned(),
    }
}
