//! Managed settings through the `spine` binary: the tier above user settings that nothing
//! below can loosen, read from `SPINE_MANAGED_SETTINGS_DIR` (in place of `/etc/claude-code` and
//! `/etc/spine`). Every effect is proven with a marker file or a request count.

use std::path::PathBuf;
use std::process::Output;

use serde_json::{Value, json};
use spine_testkit::http::{Reply, TestServer, server_runtime};

use crate::support::*;

/// A trusted project and a managed directory beside it.
struct Managed {
    s: Sandbox,
}

impl Managed {
    fn new() -> Self {
        let s = Sandbox::new();
        s.trust();
        Managed { s }
    }

    fn dir(&self) -> PathBuf {
        self.s.dir.path().join("managed")
    }

    /// Writes `managed-settings.json` of the managed directory.
    fn managed(&self, settings: Value) -> PathBuf {
        let path = self.dir().join("managed-settings.json");
        std::fs::create_dir_all(self.dir()).expect("mkdir");
        std::fs::write(&path, settings.to_string()).expect("write");
        path
    }

    /// `.spine/settings.json` of the project.
    fn project(&self, settings: Value) {
        self.s.write(".spine/settings.json", &settings.to_string());
    }

    fn marker(&self, name: &str) -> PathBuf {
        self.s.dir.path().join(name)
    }

    /// A PreToolUse Bash hook that touches a marker.
    fn toucher(&self, name: &str) -> Value {
        json!({"PreToolUse": [{"matcher": "Bash", "hooks": [
            {"type": "command", "command": format!("touch {}", self.marker(name).display())}]}]})
    }

    /// `spine ARGS…` with the managed directory.
    fn spine(&self, args: &[&str]) -> Output {
        self.s.spine().env("SPINE_MANAGED_SETTINGS_DIR", self.dir()).args(args).output().expect("spine runs")
    }

    /// `spine run` of a Bash call, then `done`, as JSON with the messages.
    fn run_bash(&self, command: &str, extra: &[&str]) -> Output {
        let script = self.s.script(bash_then_answer(command));
        let model = format!("scripted:{}", script.display());
        let mut args = vec!["run", "-p", "go", "--model", &model, "--output-format", "json", "--include-messages"];
        args.extend_from_slice(extra);
        self.spine(&args)
    }
}

#[test]
fn a_managed_deny_rule_holds_against_a_project_allow_rule_and_allowed_tools() {
    let m = Managed::new();
    m.project(json!({"permissions": {"allow": ["Bash"]}}));
    m.managed(json!({"permissions": {"deny": ["Bash(touch *)"]}}));
    let out = m.run_bash("touch denied-marker", &["--allowedTools", "Bash"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(tool_results(&json(&out)), ["Error [permission_denied]: denied by rule Bash(touch *)"]);
    assert!(!m.s.project().join("denied-marker").exists());
}

#[test]
fn allow_managed_permission_rules_only_drops_a_project_allow_and_the_call_is_denied() {
    let m = Managed::new();
    m.project(json!({"permissions": {"allow": ["Bash(touch allowed-marker)"]}}));
    m.managed(json!({}));
    let out = m.run_bash("touch allowed-marker", &[]);
    assert!(
        m.s.project().join("allowed-marker").exists(),
        "without the key the project's rule allows: {}",
        stderr(&out)
    );
    std::fs::remove_file(m.s.project().join("allowed-marker")).expect("rm");
    let file = m.managed(json!({"allowManagedPermissionRulesOnly": true}));
    let out = m.run_bash("touch allowed-marker", &["--allowedTools", "Bash"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(tool_results(&json(&out))[0].starts_with("Error [permission_denied]"), "{}", stdout(&out));
    assert!(!m.s.project().join("allowed-marker").exists());
    let err = stderr(&out);
    let notice: Vec<&str> =
        err.lines().filter(|l| l.starts_with("warning:") && l.contains("allowManagedPermissionRulesOnly")).collect();
    assert_eq!(notice.len(), 1, "one line says what was dropped: {err}");
    assert!(notice[0].contains(&format!("{} (managed)", file.display())), "{err}");
    assert!(notice[0].contains("1 allow rule from") && notice[0].contains("1 --allowedTools rule"), "{err}");
    assert!(
        err.contains("allow them with an allow rule in managed settings"),
        "the hint does not offer a way out: {err}"
    );
}

#[test]
fn allow_managed_hooks_only_runs_the_managed_guard_and_not_the_project_hook() {
    let m = Managed::new();
    m.project(json!({"permissions": {"allow": ["Bash"]}, "hooks": m.toucher("project-hook")}));
    m.managed(json!({"allowManagedHooksOnly": true, "hooks": m.toucher("managed-hook")}));
    let out = m.run_bash("true", &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(m.marker("managed-hook").exists(), "the managed guard ran");
    assert!(!m.marker("project-hook").exists(), "the project's hook did not");
    let err = stderr(&out);
    assert!(err.contains(".spine/settings.json: hooks: 1 hook not run: `allowManagedHooksOnly`"), "{err}");
}

#[test]
fn a_project_disable_all_hooks_does_not_disable_a_managed_guard() {
    let m = Managed::new();
    m.project(json!({"permissions": {"allow": ["Bash"]}, "disableAllHooks": true, "hooks": m.toucher("project-hook")}));
    m.managed(json!({"hooks": m.toucher("managed-hook")}));
    let out = m.run_bash("true", &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(m.marker("managed-hook").exists() && !m.marker("project-hook").exists());
    assert!(stderr(&out).contains("every hook but those of managed settings is disabled"), "{}", stderr(&out));
}

#[test]
fn an_http_hook_outside_allowed_http_hook_urls_does_not_run() {
    let m = Managed::new();
    let runtime = server_runtime();
    let server = runtime.block_on(TestServer::always(Reply::Json(json!({}))));
    let url = server.url("/hook");
    m.project(json!({"permissions": {"allow": ["Bash"]}, "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
        {"type": "http", "url": url}]}]}}));
    m.managed(json!({"allowedHttpHookUrls": ["https://hooks.example.com/*"]}));
    let out = m.run_bash("echo ran", &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(tool_results(&json(&out))[0].contains("ran"), "onFailure open: the call proceeds");
    assert_eq!(server.requests().len(), 0, "nothing was sent");
    let err = stderr(&out);
    assert!(
        err.contains("hooks.PreToolUse[0].hooks[0].url") && err.contains("matches no pattern of `allowedHttpHookUrls`"),
        "{err}"
    );
    m.managed(json!({"allowedHttpHookUrls": ["http://127.0.0.1:*/*"]}));
    let out = m.run_bash("echo ran", &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(server.requests().len(), 1, "a matching URL is sent");
}

#[test]
fn disable_bypass_permissions_mode_from_managed_refuses_bypass_permissions_naming_the_managed_file() {
    let m = Managed::new();
    let file = m.managed(json!({"permissions": {"disableBypassPermissionsMode": "disable"}}));
    let out = m.run_bash("true", &["--permission-mode", "bypassPermissions"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains(&format!("disableBypassPermissionsMode` in {} (managed)", file.display())),
        "{}",
        stderr(&out)
    );
    let out = m.run_bash("true", &["--settings", r#"{"permissions": {"defaultMode": "bypassPermissions"}}"#]);
    assert_eq!(out.status.code(), Some(2), "not from --settings either: {}", stderr(&out));
}

#[test]
fn bad_json_in_a_managed_file_is_an_error_naming_the_file_even_with_no_setting_sources() {
    let m = Managed::new();
    std::fs::create_dir_all(m.dir().join("managed-settings.d")).expect("mkdir");
    std::fs::write(m.dir().join("managed-settings.d/10-broken.json"), "{\"model\": ").expect("write");
    let out = m.run_bash("true", &["--setting-sources", ""]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("managed-settings.d/10-broken.json (managed): line 1"), "{}", stderr(&out));
}

#[test]
fn hooks_list_check_and_doctor_name_the_managed_file() {
    let m = Managed::new();
    let file = m.managed(json!({"hooks": m.toucher("managed-hook")}));
    let managed = format!("{} (managed)", file.display());
    let out = m.spine(&["hooks", "list"]);
    assert!(stdout(&out).contains(&format!("{managed} hooks.PreToolUse[0].hooks[0]")), "{}", stdout(&out));
    let out = m.spine(&["hooks", "check", "--output-format", "json"]);
    let v = json(&out);
    let files: Vec<&Value> = v["files"].as_array().expect("files").iter().filter(|f| f["kind"] == "managed").collect();
    assert_eq!(files.len(), 1, "{}", v["files"]);
    assert_eq!((files[0]["path"].as_str(), files[0]["status"].as_str()), (file.to_str(), Some("read")));
    let out = m.spine(&["doctor"]);
    assert!(stdout(&out).contains(&format!("managed settings: {}", file.display())), "{}", stdout(&out));
}
