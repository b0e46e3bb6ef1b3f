//! What managed settings let hooks do (`spine_hooks::policy`): `allowManagedHooksOnly`,
//! `disableAllHooks` below and in managed settings, `allowedHttpHookUrls` and
//! `httpHookAllowedEnvVars`. Each test pins one rule; runs use real scripts and a real server
//! on 127.0.0.1.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use axum::Router;
use axum::routing::post;
use serde_json::{Value, json};
use spine_hooks::HookConfig;
use spine_hooks::config::Handler;
use spine_settings::{Origin, Settings, SettingsLayer};
use spine_testkit::http::serve;

use crate::support::*;

const MANAGED: &str = "/etc/spine/managed-settings.json";

fn managed() -> Origin {
    Origin::Managed(MANAGED.into())
}

fn user() -> Origin {
    Origin::User("/home/u/.spine/settings.json".into())
}

fn project(p: &Project) -> Origin {
    Origin::Project(p.root.join(".claude/settings.json"))
}

fn config(layers: Vec<(Origin, Value)>) -> HookConfig {
    let layers = layers
        .into_iter()
        .map(|(origin, v)| SettingsLayer { origin, value: v.as_object().cloned().expect("object") })
        .collect();
    HookConfig::from_settings(&Settings::from_layers(layers).expect("settings")).expect("valid hooks")
}

/// A PreToolUse Bash hook that touches `marker` under the project.
fn toucher(p: &Project, marker: &str) -> Value {
    hooks("PreToolUse", "Bash", vec![command(&format!("touch {}", p.path(marker)))])
}

fn warnings(c: &HookConfig) -> Vec<String> {
    c.warnings.iter().map(ToString::to_string).collect()
}

#[tokio::test]
async fn allow_managed_hooks_only_runs_managed_hooks_and_warns_once_per_other_source() {
    let p = Project::new();
    let mut managed_layer = toucher(&p, "managed-ran");
    managed_layer["allowManagedHooksOnly"] = json!(true);
    let c = config(vec![
        (user(), toucher(&p, "user-ran")),
        (project(&p), toucher(&p, "project-ran")),
        (managed(), managed_layer),
    ]);
    assert_eq!(c.handler_count(), 1);
    let w = warnings(&c);
    assert_eq!(w.len(), 2, "{w:?}");
    assert!(
        w[0].starts_with("/home/u/.spine/settings.json: hooks: 1 hook not run: `allowManagedHooksOnly` in"),
        "{w:?}"
    );
    assert!(w[1].contains(".claude/settings.json: hooks: 1 hook not run"), "{w:?}");
    run_config(&p, &c, Setup::default(), vec![bash("c1", "true"), text("ok")]).await;
    assert!(p.root.join("managed-ran").exists());
    assert!(!p.root.join("user-ran").exists() && !p.root.join("project-ran").exists());
}

#[tokio::test]
async fn a_disable_all_hooks_below_managed_settings_cannot_turn_off_managed_hooks() {
    let p = Project::new();
    let mut project_layer = toucher(&p, "project-ran");
    project_layer["disableAllHooks"] = json!(true);
    let c = config(vec![(managed(), toucher(&p, "managed-ran")), (project(&p), project_layer)]);
    assert_eq!(c.handler_count(), 1, "the managed guard still runs");
    let message = c.disabled_message().expect("disabled");
    assert!(message.starts_with("every hook but those of managed settings is disabled"), "{message}");
    run_config(&p, &c, Setup::default(), vec![bash("c1", "true"), text("ok")]).await;
    assert!(p.root.join("managed-ran").exists() && !p.root.join("project-ran").exists());
}

#[test]
fn a_managed_disable_all_hooks_turns_every_hook_off() {
    let p = Project::new();
    let mut managed_layer = toucher(&p, "managed-ran");
    managed_layer["disableAllHooks"] = json!(true);
    let c = config(vec![(user(), toucher(&p, "user-ran")), (managed(), managed_layer)]);
    assert_eq!(c.handler_count(), 0);
    assert_eq!(
        c.disabled_message().as_deref(),
        Some(format!("every hook is disabled by `disableAllHooks` in {MANAGED} (managed)").as_str())
    );
}

/// A server on 127.0.0.1 that denies every PreToolUse and counts the requests.
async fn counting_server() -> (String, Arc<AtomicUsize>) {
    let hits = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&hits);
    let app = Router::new().route(
        "/hook",
        post(move || {
            counter.fetch_add(1, Ordering::SeqCst);
            async {
                r#"{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny", "permissionDecisionReason": "server says no"}}"#
            }
        }),
    );
    (format!("http://{}/hook", serve(app).await), hits)
}

fn http_hook(url: &str, on_failure: &str) -> Value {
    hooks("PreToolUse", "Bash", vec![json!({"type": "http", "url": url, "onFailure": on_failure})])
}

#[tokio::test]
async fn an_http_hook_outside_allowed_http_hook_urls_never_sends_and_each_firing_is_a_launch_error() {
    let p = Project::new();
    let (url, hits) = counting_server().await;
    let policy = json!({"allowedHttpHookUrls": ["https://hooks.example.com/*"]});
    let c = config(vec![(user(), http_hook(&url, "closed")), (managed(), policy.clone())]);
    let w = warnings(&c);
    assert_eq!(w.len(), 1, "{w:?}");
    assert!(
        w[0].contains("hooks.PreToolUse[0].hooks[0].url")
            && w[0].contains("matches no pattern of `allowedHttpHookUrls`"),
        "{w:?}"
    );
    let ran = run_config(&p, &c, Setup::default(), vec![bash("c1", "echo ran"), text("ok")]).await;
    assert_eq!(ran.results()[0].content, "Error [hook_launch_error]: PreToolUse hook could not be started");
    let c = config(vec![(user(), http_hook(&url, "open")), (managed(), policy)]);
    let ran = run_config(&p, &c, Setup::default(), vec![bash("c1", "echo ran"), text("ok")]).await;
    assert!(ran.results()[0].content.contains("ran"), "open: the call proceeds");
    assert!(ran.warnings().iter().any(|w| w.contains("launch_error")), "{:?}", ran.warnings());
    assert_eq!(hits.load(Ordering::SeqCst), 0, "nothing was sent");
    let allowed = json!({"allowedHttpHookUrls": ["http://127.0.0.1:*/hook"]});
    let c = config(vec![(user(), http_hook(&url, "closed")), (managed(), allowed)]);
    let ran = run_config(&p, &c, Setup::default(), vec![bash("c1", "echo ran"), text("ok")]).await;
    assert_eq!(ran.results()[0].content, "Error [permission_denied]: server says no");
    assert_eq!(hits.load(Ordering::SeqCst), 1, "a matching URL is sent");
}

#[test]
fn an_empty_allowed_http_hook_urls_blocks_every_http_hook() {
    let c = config(vec![
        (user(), http_hook("http://127.0.0.1:9/hook", "open")),
        (user(), json!({"allowedHttpHookUrls": []})),
    ]);
    let Handler::Http(http) = &c.groups[0].handlers[0].handler else { panic!("an http hook") };
    assert!(
        http.blocked.as_deref().is_some_and(|b| b.contains("is empty: no HTTP hook may run")),
        "{:?}",
        http.blocked
    );
}

#[test]
fn a_list_outside_managed_settings_does_not_bind_managed_hooks_but_a_managed_list_does() {
    let hook = http_hook("http://127.0.0.1:9/hook", "open");
    let blocked = |c: &HookConfig| match &c.groups[0].handlers[0].handler {
        Handler::Http(http) => http.blocked.is_some(),
        Handler::Command { .. }
        | Handler::Prompt(_)
        | Handler::McpTool(_)
        | Handler::Agent { .. }
        | Handler::Callback { .. } => false,
    };
    let list = json!({"allowedHttpHookUrls": ["https://hooks.example.com/*"]});
    assert!(!blocked(&config(vec![(managed(), hook.clone()), (user(), list.clone())])));
    assert!(blocked(&config(vec![(managed(), hook.clone()), (managed(), list.clone())])));
    assert!(blocked(&config(vec![(user(), hook), (user(), list)])), "a user list binds user hooks");
}

#[test]
fn http_hook_allowed_env_vars_narrows_each_hooks_allowed_env_vars() {
    let hook = hooks(
        "Stop",
        "",
        vec![
            json!({"type": "http", "url": "http://127.0.0.1:9/stop", "headers": {"A": "$TOKEN $PATH"}, "allowedEnvVars": ["TOKEN", "PATH"]}),
        ],
    );
    let c = config(vec![(user(), hook), (managed(), json!({"httpHookAllowedEnvVars": ["TOKEN"]}))]);
    let Handler::Http(http) = &c.groups[0].handlers[0].handler else { panic!("an http hook") };
    assert_eq!(http.allowed_env_vars, ["TOKEN"]);
    let w = warnings(&c);
    assert!(w.iter().any(|w| w.contains("allowedEnvVars: `PATH` is not in `httpHookAllowedEnvVars`")), "{w:?}");
}
