//! `spine plugin …` end to end: a marketplace in a local git repository, installs, listing,
//! enabling, the installed plugins' hooks deciding `spine run`'s calls, updates into new
//! version directories, trust, bad input, and the shapes of the records against Claude Code
//! 2.1.328's (`tests/fixtures/claude-code-2.1.328/plugins/`).

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::{Value, json};

use crate::support::*;

const GUARD_HOOKS: &str = r#"{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
    {"type": "command", "command": "\"${CLAUDE_PLUGIN_ROOT}\"/guard.sh"}]}]}}"#;

const GUARD_SH: &str =
    "#!/bin/sh\nif grep -q 'rm -rf'; then echo 'guard plugin: rm -rf refused' >&2; exit 2; fi\nexit 0\n";

const PY_HOOKS: &str = r#"{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
    {"type": "command", "command": "python3 \"${CLAUDE_PLUGIN_ROOT}/scripts/check.py\""}]}]}}"#;

const CHECK_PY: &str = "import json, sys\ncall = json.load(sys.stdin)\nif 'curl' in call['tool_input']['command']:\n    \
    print(json.dumps({'hookSpecificOutput': {'hookEventName': 'PreToolUse', 'permissionDecision': 'deny',\n        \
    'permissionDecisionReason': 'pyguard: no network'}}))\n";

fn write(root: &Path, rel: &str, text: &str) -> PathBuf {
    let file = root.join(rel);
    std::fs::create_dir_all(file.parent().expect("parent")).expect("mkdir");
    std::fs::write(&file, text).expect("write");
    file
}

fn executable(file: &Path) {
    std::fs::set_permissions(file, std::fs::Permissions::from_mode(0o755)).expect("chmod");
}

fn read(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display())))
        .expect("json")
}

/// Commits everything in the repository `dir` (made when missing); the new HEAD.
fn commit(dir: &Path) -> String {
    if !dir.join(".git").exists() {
        git(dir, &["init", "--quiet"]);
    }
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "--quiet", "-m", "change"]);
    git(dir, &["rev-parse", "HEAD"])
}

/// A marketplace `team` in a git repository: `guard` (a shell hook), `pyguard` (a python
/// hook), `cmds` (commands, no manifest), `loose` (`strict: false`); its path and HEAD.
fn team_marketplace(s: &Sandbox) -> (PathBuf, String) {
    let root = s.dir.path().join("team-market");
    let catalog = json!({
        "name": "team", "owner": {"name": "Team"}, "description": "the team's plugins",
        "plugins": [
            {"name": "guard", "source": "./plugins/guard", "description": "refuses rm -rf"},
            {"name": "pyguard", "source": "./plugins/pyguard", "description": "refuses curl"},
            {"name": "cmds", "source": "./plugins/cmds", "description": "commands"},
            {"name": "loose", "source": "./plugins/loose", "strict": false, "version": "0.1.0",
             "commands": ["./extra/hello.md"], "description": "its entry declares it"}
        ]
    });
    write(&root, ".claude-plugin/marketplace.json", &catalog.to_string());
    write(&root, "plugins/guard/.claude-plugin/plugin.json", r#"{"name": "guard", "version": "1.0.0"}"#);
    write(&root, "plugins/guard/hooks/hooks.json", GUARD_HOOKS);
    executable(&write(&root, "plugins/guard/guard.sh", GUARD_SH));
    write(&root, "plugins/pyguard/.claude-plugin/plugin.json", r#"{"name": "pyguard", "version": "2.0.0"}"#);
    write(&root, "plugins/pyguard/hooks/hooks.json", PY_HOOKS);
    write(&root, "plugins/pyguard/scripts/check.py", CHECK_PY);
    write(&root, "plugins/cmds/commands/review.md", "Review the change.\n");
    write(&root, "plugins/loose/extra/hello.md", "Say hello.\n");
    let head = commit(&root);
    (root, head)
}

fn plugin(s: &Sandbox, args: &[&str]) -> Output {
    s.spine().arg("plugin").args(args).output().expect("spine plugin runs")
}

/// `spine plugin ARGS…`, which must succeed; its stdout.
fn ok(s: &Sandbox, args: &[&str]) -> String {
    let out = plugin(s, args);
    assert_eq!(out.status.code(), Some(0), "spine plugin {args:?}: {}{}", stdout(&out), stderr(&out));
    stdout(&out)
}

fn file_url(path: &Path) -> String {
    format!("file://{}", path.display())
}

/// `spine run` with one Bash call of `command`; the tool's result.
fn bash(s: &Sandbox, command: &str) -> String {
    let out = s.run(&s.script(bash_then_answer(command)), &["--output-format", "json", "--include-messages"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    tool_results(&json(&out)).into_iter().next().unwrap_or_default()
}

/// The row of `id` in `spine plugin list --json`.
fn listed(s: &Sandbox, id: &str) -> Value {
    let rows: Value = serde_json::from_str(&ok(s, &["list", "--json"])).expect("json");
    rows.as_array().into_iter().flatten().find(|r| r["id"] == id).cloned().unwrap_or(Value::Null)
}

#[test]
fn installed_plugins_hooks_decide_bash_calls_until_disabled_or_uninstalled() {
    let s = Sandbox::new();
    write(&s.home(), "settings.json", r#"{"permissions": {"allow": ["Bash"]}}"#);
    let (market, head) = team_marketplace(&s);
    let added = ok(&s, &["marketplace", "add", &file_url(&market)]);
    assert!(added.contains("added marketplace team (4 plugins)"), "{added}");
    for name in ["guard@team", "pyguard@team", "cmds@team", "loose@team"] {
        ok(&s, &["install", name]);
    }
    let store = s.home().join("plugins");
    let known = read(&store.join("known_marketplaces.json"));
    assert_eq!(known["team"]["source"], json!({"source": "git", "url": file_url(&market)}));
    assert_eq!(known["team"]["installLocation"], json!(store.join("marketplaces/team")));
    let settings = read(&s.home().join("settings.json"));
    assert_eq!(settings["permissions"], json!({"allow": ["Bash"]}), "the rest of the file is kept");
    assert_eq!(
        settings["extraKnownMarketplaces"]["team"],
        json!({"source": {"source": "git", "url": file_url(&market)}})
    );
    for id in ["guard@team", "pyguard@team", "cmds@team", "loose@team"] {
        assert_eq!(settings["enabledPlugins"][id], true, "{id}");
        assert_eq!(listed(&s, id)["status"], "enabled", "{id}");
    }
    let installed = read(&store.join("installed_plugins.json"));
    let versions: Vec<&str> = ["guard@team", "pyguard@team", "cmds@team", "loose@team"]
        .iter()
        .map(|id| installed["plugins"][id][0]["version"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(versions, ["1.0.0", "2.0.0", &head[..12], "0.1.0"]);
    assert_eq!(installed["plugins"]["cmds@team"][0]["gitCommitSha"], head.as_str());
    let loose = store.join("cache/team/loose/0.1.0");
    assert_eq!(
        read(&loose.join(".claude-plugin/plugin.json")),
        json!({"name": "loose", "version": "0.1.0", "commands": ["./extra/hello.md"], "description": "its entry declares it"}),
        "the entry's definition is the copy's manifest"
    );
    assert_eq!(
        read(&store.join(format!("cache/team/cmds/{}/.claude-plugin/plugin.json", &head[..12])))["name"],
        "cmds"
    );
    let text = ok(&s, &["list"]);
    assert!(text.contains("guard@team") && text.contains("Status: enabled (by "), "{text}");

    // The installed plugins' hooks decide.
    assert_eq!(bash(&s, "rm -rf build"), "Error [hook_blocked]: guard plugin: rm -rf refused");
    assert!(bash(&s, "curl http://127.0.0.1:9/").contains("pyguard: no network"));
    assert!(bash(&s, "echo fine").contains("fine"));

    // Disabled: the call runs; enabled again: refused again.
    let out = ok(&s, &["disable", "guard@team"]);
    assert!(out.contains("disabled guard@team (user scope"), "{out}");
    assert_eq!(read(&s.home().join("settings.json"))["enabledPlugins"]["guard@team"], false);
    assert_eq!(listed(&s, "guard@team")["status"], "disabled");
    bash(&s, "rm -rf build; touch ran.txt");
    assert!(s.project().join("ran.txt").exists(), "the disabled plugin's hook did not run");
    ok(&s, &["enable", "guard"]);
    assert_eq!(bash(&s, "rm -rf build"), "Error [hook_blocked]: guard plugin: rm -rf refused");

    // Uninstalled: the record, the setting and the data go; the cached copy stays.
    let data = store.join("data/guard-team");
    assert!(data.is_dir(), "the loader made the data directory");
    let out = ok(&s, &["uninstall", "guard@team"]);
    assert!(out.contains("uninstalled guard@team (user scope)"), "{out}");
    assert!(read(&store.join("installed_plugins.json"))["plugins"].get("guard@team").is_none());
    assert!(read(&s.home().join("settings.json"))["enabledPlugins"].get("guard@team").is_none());
    assert!(!data.exists() && store.join("cache/team/guard/1.0.0/guard.sh").is_file());
    std::fs::remove_file(s.project().join("ran.txt")).expect("rm");
    bash(&s, "rm -rf build; touch ran.txt");
    assert!(s.project().join("ran.txt").exists(), "nothing refuses it now");
    assert_eq!(listed(&s, "guard@team"), Value::Null);
}

#[test]
fn an_update_installs_a_new_version_directory_and_leaves_the_old_one_untouched() {
    let s = Sandbox::new();
    let (market, first) = team_marketplace(&s);
    ok(&s, &["marketplace", "add", &file_url(&market)]);
    ok(&s, &["install", "cmds@team"]);
    ok(&s, &["install", "guard@team"]);
    let cache = s.home().join("plugins/cache/team");
    let old = cache.join("cmds").join(&first[..12]);
    let before = std::fs::read_to_string(old.join("commands/review.md")).expect("read");

    write(&market, "plugins/cmds/commands/review.md", "Review the change, twice.\n");
    write(&market, "plugins/guard/.claude-plugin/plugin.json", r#"{"name": "guard", "version": "1.1.0"}"#);
    let second = commit(&market);
    let out = ok(&s, &["marketplace", "update", "team"]);
    assert!(out.contains(&format!("updated marketplace team (4 plugins) at {}", &second[..12])), "{out}");
    let out = ok(&s, &["update", "cmds@team"]);
    assert!(out.contains(&format!("updated cmds@team from {} to {}", &first[..12], &second[..12])), "{out}");
    let out = ok(&s, &["install", "guard@team"]);
    assert!(out.contains("updated guard@team from 1.0.0 to 1.1.0"), "{out}");

    let new = cache.join("cmds").join(&second[..12]);
    assert_eq!(std::fs::read_to_string(new.join("commands/review.md")).expect("new"), "Review the change, twice.\n");
    assert_eq!(std::fs::read_to_string(old.join("commands/review.md")).expect("old"), before, "old untouched");
    assert!(cache.join("guard/1.0.0/guard.sh").is_file() && cache.join("guard/1.1.0/guard.sh").is_file());
    let installed = read(&s.home().join("plugins/installed_plugins.json"));
    let record = &installed["plugins"]["cmds@team"][0];
    assert_eq!((record["installPath"].clone(), record["gitCommitSha"].clone()), (json!(new), json!(second)));
    assert_eq!(
        ok(&s, &["update", "cmds"]).trim(),
        format!("cmds@team is already at the latest version, {} (user scope)", &second[..12])
    );
}

#[test]
fn an_untrusted_projects_settings_enabling_a_plugin_do_not_run_it() {
    let s = Sandbox::new();
    write(&s.home(), "settings.json", r#"{"permissions": {"allow": ["Bash"]}}"#);
    let (market, _) = team_marketplace(&s);
    ok(&s, &["marketplace", "add", &file_url(&market)]);
    let out = plugin(&s, &["install", "guard@team", "--scope", "project"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stderr(&out).contains("is not trusted"), "{}", stderr(&out));
    assert_eq!(read(&s.project().join(".spine/settings.json")), json!({"enabledPlugins": {"guard@team": true}}));
    let project = s.project().canonicalize().expect("canonical");
    let record = &read(&s.home().join("plugins/installed_plugins.json"))["plugins"]["guard@team"][0];
    assert_eq!((record["scope"].clone(), record["projectPath"].clone()), (json!("project"), json!(project)));

    let row = listed(&s, "guard@team");
    assert_eq!(row["status"], "withheld", "{row}");
    bash(&s, "rm -rf build; touch ran.txt");
    assert!(s.project().join("ran.txt").exists(), "the untrusted project's plugin did not run");

    s.trust();
    assert_eq!(bash(&s, "rm -rf build"), "Error [hook_blocked]: guard plugin: rm -rf refused");
    assert_eq!(listed(&s, "guard@team")["status"], "enabled");
}

#[test]
fn bad_catalogs_unknown_plugins_and_sources_leaving_the_marketplace_are_refused() {
    let s = Sandbox::new();
    let bad = s.dir.path().join("bad");
    write(
        &bad,
        ".claude-plugin/marketplace.json",
        r#"{"name": "bad", "owner": {"name": "o"}, "plugins": [{"name": "x", "source": "./x", "version": 3}]}"#,
    );
    let out = plugin(&s, &["marketplace", "add", bad.to_str().expect("utf-8")]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(err.contains(&bad.join(".claude-plugin/marketplace.json").display().to_string()), "{err}");
    assert!(err.contains("plugins[0].version: expected a string, found a number"), "{err}");

    write(
        &bad,
        ".claude-plugin/marketplace.json",
        r#"{"name": "bad", "owner": {"name": "o"}, "plugins": [{"name": "x", "source": "./../outside"}]}"#,
    );
    let err = stderr(&plugin(&s, &["marketplace", "add", bad.to_str().expect("utf-8")]));
    assert!(err.contains("plugins[0].source") && err.contains("Path contains \"..\""), "{err}");

    let (market, _) = team_marketplace(&s);
    std::fs::create_dir_all(s.dir.path().join("elsewhere/.claude-plugin")).expect("mkdir");
    std::os::unix::fs::symlink(s.dir.path().join("elsewhere"), market.join("plugins/escape")).expect("link");
    let mut catalog = read(&market.join(".claude-plugin/marketplace.json"));
    catalog["plugins"].as_array_mut().expect("plugins").push(json!({"name": "escape", "source": "./plugins/escape"}));
    write(&market, ".claude-plugin/marketplace.json", &catalog.to_string());
    commit(&market);
    ok(&s, &["marketplace", "add", &file_url(&market)]);
    let out = plugin(&s, &["install", "nothing@team"]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(
        err.contains("plugin \"nothing\" not found in marketplace team") && err.contains("guard, pyguard"),
        "{err}"
    );
    let out = plugin(&s, &["install", "escape@team"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("leads outside the marketplace"), "{}", stderr(&out));
    let out = plugin(&s, &["install", "guard@elsewhere"]);
    assert!(stderr(&out).contains("unknown marketplace \"elsewhere\""), "{}", stderr(&out));
    let out = plugin(&s, &["marketplace", "add", "file:///no/such/repository.git"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("cannot clone file:///no/such/repository.git"), "{}", stderr(&out));
}

#[test]
fn a_declared_marketplace_is_fetched_when_needed_and_removal_uninstalls_its_plugins() {
    let s = Sandbox::new();
    let (market, _) = team_marketplace(&s);
    let declared = json!({"extraKnownMarketplaces": {"team": {"source": {"source": "git", "url": file_url(&market)}}}});
    write(&s.home(), "settings.json", &declared.to_string());
    let rows: Value = serde_json::from_str(&ok(&s, &["marketplace", "list", "--json"])).expect("json");
    assert_eq!((rows[0]["name"].clone(), rows[0]["fetched"].clone()), (json!("team"), json!(false)), "{rows}");
    let out = plugin(&s, &["install", "guard@team", "--scope", "local"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stderr(&out).contains("fetching marketplace team"), "{}", stderr(&out));
    assert!(s.home().join("plugins/marketplaces/team/.claude-plugin/marketplace.json").is_file());
    assert_eq!(read(&s.project().join(".spine/settings.local.json"))["enabledPlugins"]["guard@team"], true);

    let out = ok(&s, &["marketplace", "remove", "team"]);
    assert!(out.contains("uninstalled its plugins: guard@team"), "{out}");
    assert!(!s.home().join("plugins/marketplaces/team").exists());
    assert_eq!(read(&s.home().join("plugins/known_marketplaces.json")), json!({}));
    assert!(
        read(&s.home().join("plugins/installed_plugins.json"))["plugins"].as_object().is_some_and(|p| p.is_empty())
    );
    assert_eq!(read(&s.project().join(".spine/settings.local.json")), json!({"enabledPlugins": {}}));
    assert_eq!(read(&s.home().join("settings.json")), json!({"extraKnownMarketplaces": {}}));
}

#[test]
fn validate_reports_errors_and_warnings_with_claude_codes_exit_codes() {
    let s = Sandbox::new();
    let (market, _) = team_marketplace(&s);
    let out = plugin(&s, &["validate", market.to_str().expect("utf-8")]);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    assert!(stdout(&out).contains("✔ Validation passed with warnings"), "{}", stdout(&out));
    let strict = plugin(&s, &["validate", market.to_str().expect("utf-8"), "--strict"]);
    assert_eq!(strict.status.code(), Some(1), "warnings fail with --strict");
    let bad = write(&market, "plugins/guard/.claude-plugin/plugin.json", r#"{"name": "guard", "keywords": "x"}"#);
    let out = plugin(&s, &["validate", bad.to_str().expect("utf-8")]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stdout(&out).contains("❯ keywords: expected an array of strings"), "{}", stdout(&out));
}

/// The keys and value types of `value`, with the keys of maps keyed by data (plugin ids,
/// marketplace names) kept: they are the same names here.
fn shape(value: &Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(map.iter().map(|(k, v)| (k.clone(), shape(v))).collect()),
        Value::Array(items) => Value::Array(items.iter().map(shape).collect()),
        Value::String(_) => json!("string"),
        Value::Number(_) => json!("number"),
        Value::Bool(_) => json!("bool"),
        Value::Null => json!("null"),
    }
}

fn copy_tree(from: &Path, to: &Path) {
    for entry in std::fs::read_dir(from).expect("read").filter_map(Result::ok) {
        let (src, dst) = (entry.path(), to.join(entry.file_name()));
        if src.is_dir() {
            copy_tree(&src, &dst);
        } else {
            std::fs::create_dir_all(to).expect("mkdir");
            std::fs::copy(&src, &dst).expect("copy");
        }
    }
}

#[test]
fn spine_writes_the_records_claude_code_writes() {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/claude-code-2.1.328/plugins");
    let s = Sandbox::new();
    let directory = s.dir.path().join("dir-market");
    copy_tree(&fixtures.join("directory/marketplace"), &directory);
    ok(&s, &["marketplace", "add", directory.to_str().expect("utf-8")]);
    ok(&s, &["install", "guard@dir-market"]);
    ok(&s, &["install", "loose@dir-market"]);
    let store = s.home().join("plugins");
    let reference = fixtures.join("directory/home/.claude");
    for (spine, claude) in [
        (store.join("installed_plugins.json"), reference.join("plugins/installed_plugins.json")),
        (store.join("known_marketplaces.json"), reference.join("plugins/known_marketplaces.json")),
        (s.home().join("settings.json"), reference.join("settings.json")),
    ] {
        assert_eq!(shape(&read(&spine)), shape(&read(&claude)), "{}", spine.display());
    }

    let s = Sandbox::new();
    let source = s.dir.path().join("git-market");
    copy_tree(&fixtures.join("git/marketplace"), &source);
    commit(&source);
    ok(&s, &["marketplace", "add", &format!("{}#main", file_url(&source))]);
    ok(&s, &["install", "tool@git-market"]);
    ok(&s, &["install", "raw@git-market", "--scope", "local"]);
    let store = s.home().join("plugins");
    let reference = fixtures.join("git");
    for (spine, claude) in [
        (store.join("installed_plugins.json"), reference.join("home/.claude/plugins/installed_plugins.json")),
        (store.join("known_marketplaces.json"), reference.join("home/.claude/plugins/known_marketplaces.json")),
        (s.home().join("settings.json"), reference.join("home/.claude/settings.json")),
        (s.project().join(".spine/settings.local.json"), reference.join("project/.claude/settings.local.json")),
    ] {
        assert_eq!(shape(&read(&spine)), shape(&read(&claude)), "{}", spine.display());
    }
    let rows: Value = serde_json::from_str(&ok(&s, &["marketplace", "list", "--json"])).expect("json");
    let claude_rows = read(&reference.join("marketplace-list.json"));
    for key in claude_rows[0].as_object().expect("row").keys() {
        assert!(rows[0].get(key).is_some(), "marketplace list --json has {key}: {rows}");
    }
    let rows: Value = serde_json::from_str(&ok(&s, &["list", "--json"])).expect("json");
    for key in ["id", "version", "scope", "enabled", "installPath", "installedAt", "lastUpdated", "projectPath"] {
        assert!(rows.as_array().expect("rows").iter().any(|r| r.get(key).is_some()), "list --json has {key}: {rows}");
    }
}
