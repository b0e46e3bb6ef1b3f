//! Assembly from settings and options: precedence, errors naming their source, MCP approval.

use std::path::Path;
use std::sync::Arc;

use spine_models::http::Timeouts;
use spine_protocol::permission::PermissionMode;
use spine_settings::Settings;
use spine_settings::trust::McpApproval;
use spine_tools::web::PrivateNetworks;

use super::*;
use spine_core::permission::DenyApprover;

fn options(dir: &Path) -> AgentOptions {
    AgentOptions {
        project: dir.to_path_buf(),
        spine_home: dir.join("home"),
        model: ModelChoice::ToolCallsOnly,
        hooks: spine_core::hooks::HookRegistryBuilder::new(),
        permission_mode: None,
        max_turns: None,
        allowed_tools: vec![],
        command_line: CommandLine::default(),
        approver: Arc::new(DenyApprover),
        allow_defer: true,
        conversation_id: None,
        tools: Tools::Fresh(vec![]),
        sandbox: None,
        sdk_hooks: None,
        choices: Default::default(),
    }
}

/// Options whose model comes from the settings.
fn configured(dir: &Path) -> AgentOptions {
    AgentOptions { model: ModelChoice::Configured, ..options(dir) }
}

fn settings(json: &str) -> Settings {
    let layer = spine_settings::SettingsLayer {
        origin: spine_settings::Origin::Cli { index: 1, path: None },
        value: serde_json::from_str(json).expect("json"),
    };
    Settings::from_layers(vec![layer]).expect("settings")
}

#[test]
fn model_timeouts_come_from_settings_over_the_defaults() {
    let s = settings(r#"{"model_options": {"timeouts": {"first_byte_ms": 1500, "total_ms": 90000}}}"#);
    let t = model_timeouts(&s);
    assert_eq!(t.first_byte, std::time::Duration::from_millis(1500));
    assert_eq!(t.total, std::time::Duration::from_secs(90));
    assert_eq!((t.connect, t.idle), (Timeouts::default().connect, Timeouts::default().idle));
}

#[test]
fn max_tokens_setting_wins_over_claude_code_max_output_tokens_which_wins_over_the_default() {
    let none = |_: &str| None;
    let var = |name: &str| (name == MAX_OUTPUT_TOKENS_VAR).then(|| "4096".to_owned());
    let bad = |name: &str| (name == MAX_OUTPUT_TOKENS_VAR).then(|| "lots".to_owned());
    let plain = settings("{}");
    assert_eq!(client_options(&plain, none).max_tokens, None, "unset: the client's default");
    assert_eq!(client_options(&plain, var).max_tokens, Some(4096));
    assert_eq!(client_options(&plain, bad).max_tokens, None, "an unparsable variable is ignored");
    let in_env = settings(r#"{"env": {"CLAUDE_CODE_MAX_OUTPUT_TOKENS": "2048"}}"#);
    assert_eq!(client_options(&in_env, none).max_tokens, Some(2048), "settings env, as Claude Code reads it");
    assert_eq!(client_options(&in_env, var).max_tokens, Some(4096), "the process environment first");
    let set = settings(
        r#"{"model_options": {"max_tokens": 1000, "temperature": 0.2, "stream": false, "tool_choice": "required", "prices": {"smollm2": {"input": 1, "output": 2}}}}"#,
    );
    let o = client_options(&set, var);
    assert_eq!(o.max_tokens, Some(1000), "the setting wins over the variable");
    assert_eq!(o.temperature, Some(0.2));
    assert_eq!(o.streaming, spine_models::Streaming::Off);
    assert_eq!(o.tool_choice, Some(spine_core::model::ToolChoice::Required));
    assert_eq!(o.prices.len(), 1);
    assert_eq!(o.prices[0].0, "smollm2");
}

#[test]
fn model_spec_errors_name_the_flag_or_the_settings_source_and_key() {
    let s = settings(r#"{"model": "llama3"}"#);
    let from_settings = build_model(None, &s).err().map(|e| e.to_string()).unwrap_or_default();
    assert!(from_settings.starts_with("--settings #1 (inline JSON): model: invalid model spec"), "{from_settings}");
    let from_flag = build_model(Some("nope"), &s).err().map(|e| e.to_string()).unwrap_or_default();
    assert!(from_flag.starts_with("--model: invalid model spec `nope`"), "{from_flag}");
}

#[test]
fn settings_decide_model_limits_and_mode_unless_options_override() {
    let dir = tempfile::tempdir().expect("dir");
    let script = dir.path().join("s.json");
    std::fs::write(&script, r#"{"turns": [{"text": "x"}]}"#).expect("w");
    let s = settings(&format!(
        r#"{{"model": "scripted:{}", "maxTurns": 7, "permissions": {{"defaultMode": "plan"}}}}"#,
        script.display()
    ));
    let a = assemble(&s, configured(dir.path())).expect("assembled");
    assert_eq!(a.agent.config.max_turns, 7);
    assert_eq!(a.agent.policy.mode(), PermissionMode::Plan);
    assert_eq!(a.agent.model.model(), "scripted");
    let mut o = configured(dir.path());
    o.max_turns = Some(2);
    o.permission_mode = Some(PermissionMode::BypassPermissions);
    let a = assemble(&s, o).expect("assembled");
    assert_eq!((a.agent.config.max_turns, a.agent.policy.mode()), (2, PermissionMode::BypassPermissions));
}

#[test]
fn disable_bypass_permissions_mode_refuses_a_bypass_run_from_flag_or_settings() {
    let dir = tempfile::tempdir().expect("dir");
    let s = settings(r#"{"permissions": {"disableBypassPermissionsMode": "disable"}}"#);
    let mut o = options(dir.path());
    o.permission_mode = Some(PermissionMode::BypassPermissions);
    let err = assemble(&s, o).err().map(|e| e.to_string()).unwrap_or_default();
    assert!(err.contains("bypassPermissions is disabled by `permissions.disableBypassPermissionsMode`"), "{err}");
    let both =
        settings(r#"{"permissions": {"disableBypassPermissionsMode": "disable", "defaultMode": "bypassPermissions"}}"#);
    assert!(assemble(&both, options(dir.path())).is_err());
    let mut plan = options(dir.path());
    plan.permission_mode = Some(PermissionMode::Plan);
    assert!(assemble(&s, plan).is_ok(), "other modes are untouched");
}

#[test]
fn private_networks_are_refused_unless_settings_allow_them() {
    assert_eq!(web_options(&settings("{}")).private_networks, PrivateNetworks::Refuse);
    let on = settings(r#"{"web": {"allow_private_networks": true}}"#);
    assert_eq!(web_options(&on).private_networks, PrivateNetworks::Allow);
    let off = settings(r#"{"web": {"allow_private_networks": false}}"#);
    assert_eq!(web_options(&off).private_networks, PrivateNetworks::Refuse);
}

#[test]
fn bad_rules_unknown_tools_and_missing_models_are_errors_naming_what_is_wrong() {
    let dir = tempfile::tempdir().expect("dir");
    let s = settings(r#"{"model": "scripted:/nope.json"}"#);
    let err = assemble(&s, configured(dir.path())).err().expect("model error");
    assert!(matches!(&err, AssemblyError::ModelClient { .. }) && err.to_string().contains("/nope.json"), "{err}");
    assert!(std::error::Error::source(&err).is_some(), "the client's error is kept as the source");
    let script = dir.path().join("s.json");
    std::fs::write(&script, r#"{"turns": [{"text": "x"}]}"#).expect("w");
    let s = settings(&format!(r#"{{"model": "scripted:{}", "permissions": {{"ask": ["Bash(x"]}}}}"#, script.display()));
    let err = assemble(&s, configured(dir.path())).err().expect("rule error");
    assert!(err.to_string().contains("permissions.ask[0]"), "{err}");
    let s = settings(&format!(r#"{{"model": "scripted:{}"}}"#, script.display()));
    let mut o = options(dir.path());
    o.allowed_tools = vec!["Nope".into()];
    assert!(matches!(assemble(&s, o), Err(AssemblyError::UnknownTool { name, .. }) if name == "Nope"));
}

#[test]
fn configured_mcp_servers_carry_source_and_approval_and_a_skipped_entry_never_replaces_an_approved_one() {
    let dir = tempfile::tempdir().expect("dir");
    let (home, project) = (dir.path().join("home"), dir.path().join("project"));
    std::fs::create_dir_all(&home).expect("mkdir");
    std::fs::create_dir_all(project.join(".spine")).expect("mkdir");
    std::fs::write(
        project.join(".mcp.json"),
        r#"{"mcpServers": {"fs": {"command": "evil"}, "docs": {"command": "d"}, "ok": {"command": "o"}}}"#,
    )
    .expect("w");
    std::fs::write(
        home.join("settings.json"),
        r#"{"mcpServers": {"fs": {"command": "mine"}}, "enabledMcpjsonServers": ["ok"]}"#,
    )
    .expect("w");
    let s = Settings::discover(&home, &project, &[], spine_settings::ProjectTrust::Untrusted).expect("settings");
    let servers = configured_mcp_servers(&s, &project).expect("servers");
    let row = |name: &str, command: &str| {
        servers.iter().find(|c| c.name == name && c.config["command"] == command).expect("listed").clone()
    };
    assert_eq!(row("fs", "evil").approval, McpApproval::Untrusted);
    assert!(row("fs", "evil").source.ends_with(".mcp.json mcpServers.fs"));
    assert!(row("fs", "mine").effective, "the user's server keeps its name");
    assert_eq!(row("fs", "mine").approval, McpApproval::UserConfigured);
    assert!(!row("docs", "d").effective);
    assert!(matches!(row("ok", "o").approval, McpApproval::Enabled { .. }) && row("ok", "o").effective);
    let trusted = Settings::discover(&home, &project, &[], spine_settings::ProjectTrust::Flag).expect("settings");
    let servers = configured_mcp_servers(&trusted, &project).expect("servers");
    assert!(servers.iter().filter(|c| c.effective).count() == 3);
    let fs = servers.iter().find(|c| c.name == "fs" && c.effective).expect("fs");
    assert_eq!(fs.config["command"], "mine", "settings replace .mcp.json entries of the same name");
}

fn with_managed(managed: &str, cli: &str) -> Settings {
    let layer =
        |origin, json: &str| spine_settings::SettingsLayer { origin, value: serde_json::from_str(json).expect("json") };
    Settings::from_layers(vec![
        layer(spine_settings::Origin::Cli { index: 1, path: None }, cli),
        layer(spine_settings::Origin::Managed("/etc/spine/managed-settings.json".into()), managed),
    ])
    .expect("settings")
}

#[test]
fn allow_managed_permission_rules_only_drops_allowed_tools_rules_with_a_one_line_notice() {
    let dir = tempfile::tempdir().expect("tmp");
    let s = with_managed(
        r#"{"allowManagedPermissionRulesOnly": true, "permissions": {"allow": ["Read"], "deny": ["Bash(rm *)"]}}"#,
        r#"{"permissions": {"allow": ["Write"]}}"#,
    );
    let mut o = options(dir.path());
    o.command_line.allow = vec!["Bash".to_owned()];
    o.command_line.deny = vec!["WebFetch".to_owned()];
    let a = assemble(&s, o).expect("assembled");
    let rules = a.agent.policy.rules();
    let names =
        |r: &[spine_core::permission::PermissionRule]| r.iter().map(|r| r.as_str().to_owned()).collect::<Vec<_>>();
    assert_eq!(names(&rules.allow), ["Read"], "only the managed allow rule");
    assert_eq!(names(&rules.deny), ["Bash(rm *)", "WebFetch"], "--disallowedTools still applies");
    let notices: Vec<&String> = a.warnings.iter().filter(|w| w.contains("allowManagedPermissionRulesOnly")).collect();
    assert_eq!(notices.len(), 1, "{:?}", a.warnings);
    assert!(
        notices[0].contains("1 allow rule from --settings #1 (inline JSON); 1 --allowedTools rule"),
        "{}",
        notices[0]
    );
}

#[test]
fn a_managed_disable_bypass_permissions_mode_refuses_the_flag_naming_the_managed_file() {
    let dir = tempfile::tempdir().expect("tmp");
    let s = with_managed(
        r#"{"permissions": {"disableBypassPermissionsMode": "disable"}}"#,
        r#"{"permissions": {"defaultMode": "acceptEdits"}}"#,
    );
    let mut o = options(dir.path());
    o.permission_mode = Some(PermissionMode::BypassPermissions);
    let err = assemble(&s, o).err().map(|e| e.to_string()).unwrap_or_default();
    assert!(err.contains("disableBypassPermissionsMode` in /etc/spine/managed-settings.json (managed)"), "{err}");
}
