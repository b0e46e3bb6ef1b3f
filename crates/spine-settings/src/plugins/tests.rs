//! `load`: which plugins are enabled, trust, and the layers of their hooks and MCP servers.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::*;

struct Fixture {
    dir: tempfile::TempDir,
}

impl Fixture {
    fn new() -> Self {
        let f = Fixture { dir: tempfile::tempdir().expect("dir") };
        std::fs::create_dir_all(f.project()).expect("project");
        f
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    fn project(&self) -> PathBuf {
        self.path("project")
    }

    fn spine_home(&self) -> PathBuf {
        self.path("spine-home")
    }

    /// A plugin directory with `files` (relative path → JSON or text).
    fn plugin(&self, at: &str, files: &[(&str, Value)]) -> PathBuf {
        let root = self.path(at);
        for (rel, content) in files {
            let file = root.join(rel);
            std::fs::create_dir_all(file.parent().expect("parent")).expect("dirs");
            let text = match content {
                Value::String(text) => text.clone(),
                other => other.to_string(),
            };
            std::fs::write(file, text).expect("write");
        }
        root
    }

    /// Records `id` as installed for the user at `root` in spine's store.
    fn install(&self, id: &str, root: &Path) {
        self.install_as(id, root, json!({"scope": "user"}));
    }

    /// Records `id` as installed at `root` with `scope` fields (`scope`, `projectPath`).
    fn install_as(&self, id: &str, root: &Path, scope: Value) {
        let store = Store::spine(&self.spine_home());
        let mut installed = store.installed().expect("read");
        let mut install = json!({"installPath": root, "version": "1.0.0"});
        install.as_object_mut().expect("object").extend(scope.as_object().cloned().expect("object"));
        installed.plugins.insert(id.to_owned(), vec![serde_json::from_value(install).expect("install")]);
        store.write_installed(&installed).expect("write");
    }

    fn load(&self, layers: &[SettingsLayer], trust: ProjectTrust, dirs: &[PathBuf]) -> Loaded {
        self.load_remembering(layers, trust, dirs, &ParseMemo::disabled())
    }

    fn load_remembering(
        &self,
        layers: &[SettingsLayer],
        trust: ProjectTrust,
        dirs: &[PathBuf],
        memo: &ParseMemo,
    ) -> Loaded {
        let spine_home = self.spine_home();
        let project = self.project();
        load(&Request {
            layers,
            withheld_layers: &[],
            trust,
            spine_home: &spine_home,
            home: None,
            project_dir: &project,
            plugin_dirs: dirs,
            memo,
        })
    }
}

fn layer(origin: Origin, value: Value) -> SettingsLayer {
    SettingsLayer { origin, value: value.as_object().cloned().expect("object") }
}

fn guard_files() -> Vec<(&'static str, Value)> {
    vec![
        (".claude-plugin/plugin.json", json!({"name": "guard", "version": "1.0.0"})),
        (
            "hooks/hooks.json",
            json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
            {"type": "command", "command": "\"${CLAUDE_PLUGIN_ROOT}\"/block.sh"},
            {"type": "command", "command": "${CLAUDE_PLUGIN_ROOT}/bin/check", "args": ["${CLAUDE_PLUGIN_DATA}/x"]}]}]}}),
        ),
        (
            ".mcp.json",
            json!({"mcpServers": {"db": {"command": "${CLAUDE_PLUGIN_ROOT}/db", "args": ["--dir", "${CLAUDE_PROJECT_DIR}"]}}}),
        ),
        ("commands/review.md", json!("Review the code")),
        ("skills/lint/SKILL.md", json!("---\nname: lint\n---\nLint")),
        ("output-styles/terse.md", json!("---\nname: terse\n---\nBe terse")),
    ]
}

#[test]
fn an_installed_plugin_enabled_by_the_user_brings_hooks_mcp_servers_commands_and_skills() {
    let f = Fixture::new();
    let root = f.plugin("cache/guard", &guard_files());
    f.install("guard@market", &root);
    let user = layer(Origin::User(f.path("settings.json")), json!({"enabledPlugins": {"guard@market": true}}));
    let loaded = f.load(&[user], ProjectTrust::Untrusted, &[]);
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
    let [plugin] = loaded.plugins.as_slice() else { panic!("one plugin: {:?}", loaded.plugins) };
    let root = root.canonicalize().expect("root");
    assert_eq!((plugin.id.as_str(), plugin.root.as_path()), ("guard@market", root.as_path()));
    assert_eq!(plugin.commands, vec![root.join("commands")]);
    assert_eq!(plugin.skills, vec![SkillSource::Directory(root.join("skills"))]);
    assert_eq!(plugin.output_styles, vec![root.join("output-styles")]);
    assert_eq!(plugin.data, f.spine_home().join("plugins/data/guard-market"));
    assert!(plugin.data.is_dir(), "the data directory is made");

    let hooks = loaded.layers.iter().find(|l| l.value.contains_key("hooks")).expect("hooks layer");
    let origin = hooks.origin.plugin().expect("a plugin origin");
    assert_eq!((origin.id.as_str(), origin.file.as_path()), ("guard@market", root.join("hooks/hooks.json").as_path()));
    let handlers = &hooks.value["hooks"]["PreToolUse"][0]["hooks"];
    assert_eq!(handlers[0]["command"], format!("\"{}\"/block.sh", root.display()), "shell form: replaced");
    assert_eq!(handlers[1]["command"], format!("{}/bin/check", root.display()), "exec form: replaced");
    assert_eq!(handlers[1]["args"][0], format!("{}/x", plugin.data.display()));

    let mcp = loaded.layers.iter().find(|l| l.value.contains_key("mcpServers")).expect("mcp layer");
    let server = &mcp.value["mcpServers"]["plugin:guard:db"];
    assert_eq!(server["command"], format!("{}/db", root.display()));
    assert_eq!(server["args"][1], f.project().display().to_string());
    assert_eq!(server["env"]["CLAUDE_PLUGIN_ROOT"], root.display().to_string());
}

#[test]
fn the_highest_precedence_tier_decides_and_a_disabled_plugin_does_not_load() {
    let f = Fixture::new();
    let root = f.plugin("cache/guard", &guard_files());
    f.install("guard@market", &root);
    let on = layer(Origin::User(f.path("a.json")), json!({"enabledPlugins": {"guard@market": true}}));
    let off = layer(Origin::Cli { index: 1, path: None }, json!({"enabledPlugins": {"guard@market": false}}));
    assert!(f.load(&[on.clone(), off.clone()], ProjectTrust::Untrusted, &[]).plugins.is_empty());
    assert_eq!(f.load(&[off, on], ProjectTrust::Untrusted, &[]).plugins.len(), 1);
}

#[test]
fn an_untrusted_projects_plugins_are_withheld_and_a_trusted_ones_load() {
    let f = Fixture::new();
    let root = f.plugin("cache/guard", &guard_files());
    f.install_as("guard@market", &root, json!({"scope": "project", "projectPath": f.project()}));
    let file = f.project().join(".claude/settings.json");
    let project = layer(Origin::Project(file.clone()), json!({"enabledPlugins": {"guard@market": true}}));
    let untrusted = f.load(std::slice::from_ref(&project), ProjectTrust::Untrusted, &[]);
    assert!(untrusted.plugins.is_empty() && untrusted.layers.is_empty());
    assert_eq!(untrusted.withheld, vec![(file, "guard@market".to_owned())]);
    let trusted = f.load(&[project], ProjectTrust::Recorded, &[]);
    assert_eq!(trusted.plugins.len(), 1);
}

#[test]
fn installed_plugins_are_on_by_default_unless_their_manifest_says_otherwise() {
    let f = Fixture::new();
    let on = f.plugin("cache/guard", &guard_files());
    let off =
        f.plugin("cache/quiet", &[(".claude-plugin/plugin.json", json!({"name": "quiet", "defaultEnabled": false}))]);
    f.install("guard@market", &on);
    f.install("quiet@market", &off);
    let loaded = f.load(&[], ProjectTrust::Untrusted, &[]);
    let ids: Vec<&str> = loaded.plugins.iter().map(|p| p.id.as_str()).collect();
    assert_eq!(ids, ["guard@market"]);
}

#[test]
fn a_plugin_dir_replaces_an_installed_plugin_of_the_same_name() {
    let f = Fixture::new();
    let installed = f.plugin("cache/guard", &guard_files());
    f.install("guard@market", &installed);
    let local = f.plugin("dev/guard", &[(".claude-plugin/plugin.json", json!({"name": "guard"}))]);
    let loaded = f.load(&[], ProjectTrust::Untrusted, std::slice::from_ref(&local));
    let ids: Vec<&str> = loaded.plugins.iter().map(|p| p.id.as_str()).collect();
    assert_eq!(ids, ["guard@inline"]);
}

#[test]
fn a_plugin_that_is_not_installed_or_does_not_load_is_a_warning_and_the_rest_go_on() {
    let f = Fixture::new();
    let bad = f.plugin("cache/bad", &[(".claude-plugin/plugin.json", json!({"name": "bad", "keywords": "x"}))]);
    f.install("bad@market", &bad);
    let user = layer(Origin::User(f.path("s.json")), json!({"enabledPlugins": {"ghost@market": true}}));
    let loaded = f.load(&[user], ProjectTrust::Untrusted, &[]);
    assert!(loaded.plugins.is_empty());
    let warnings = loaded.warnings.join("\n");
    assert!(warnings.contains("plugin ghost@market is enabled") && warnings.contains("not installed"), "{warnings}");
    assert!(warnings.contains("plugin bad@market not loaded: ") && warnings.contains("keywords"), "{warnings}");
}

#[test]
fn a_component_path_that_leaves_the_plugin_through_a_link_is_refused() {
    let f = Fixture::new();
    let root =
        f.plugin("dev/sneaky", &[(".claude-plugin/plugin.json", json!({"name": "sneaky", "hooks": "./h.json"}))]);
    std::fs::write(f.path("outside.json"), "{}").expect("write");
    std::os::unix::fs::symlink(f.path("outside.json"), root.join("h.json")).expect("link");
    let loaded = f.load(&[], ProjectTrust::Untrusted, &[root]);
    assert!(loaded.plugins.is_empty());
    assert!(
        loaded.warnings.iter().any(|w| w.contains("leads outside the plugin's directory")),
        "{:?}",
        loaded.warnings
    );
}

#[test]
fn an_installed_plugin_without_a_manifest_is_named_by_its_id_not_its_version_directory() {
    let f = Fixture::new();
    let root = f.plugin("cache/market/loose/0.3.0", &[("commands/hi.md", json!("Say hi"))]);
    f.install("loose@market", &root);
    let loaded = f.load(&[], ProjectTrust::Untrusted, &[]);
    let [plugin] = loaded.plugins.as_slice() else { panic!("one plugin: {:?}", loaded.warnings) };
    assert_eq!((plugin.id.as_str(), plugin.name.as_str()), ("loose@market", "loose"));
    assert_eq!(plugin.data, f.spine_home().join("plugins/data/loose-market"));
    let dev = f.plugin("dev/tools", &[("commands/x.md", json!("x"))]);
    let loaded = f.load(&[], ProjectTrust::Untrusted, &[dev]);
    assert_eq!(loaded.plugins[0].id, "tools@inline", "a --plugin-dir plugin is named by its directory");
}

#[test]
fn a_plugin_directory_a_shell_would_read_as_syntax_is_left_to_the_hooks_environment() {
    let f = Fixture::new();
    let root = f.plugin("dev/odd $(dir)", &guard_files());
    let loaded = f.load(&[], ProjectTrust::Untrusted, &[root]);
    let hooks = loaded.layers.iter().find(|l| l.value.contains_key("hooks")).expect("hooks layer");
    let handlers = &hooks.value["hooks"]["PreToolUse"][0]["hooks"];
    assert_eq!(handlers[0]["command"], "\"${CLAUDE_PLUGIN_ROOT}\"/block.sh", "never spliced into a shell line");
    assert!(handlers[1]["command"].as_str().expect("text").contains("odd $(dir)/bin/check"), "exec form: replaced");
}

#[test]
fn a_plugin_directory_below_a_canonical_base_resolves_as_realpath_does() {
    let tmp = tempfile::tempdir().expect("tmp");
    let real = tmp.path().join("real");
    std::fs::create_dir_all(real.join("cache/m/p/1.0.0")).expect("dirs");
    std::fs::create_dir_all(tmp.path().join("elsewhere/q")).expect("dirs");
    // The base is reached through a link; below it, one more link and a `..`.
    std::os::unix::fs::symlink(&real, tmp.path().join("home")).expect("link");
    std::os::unix::fs::symlink(tmp.path().join("elsewhere/q"), real.join("cache/m/linked")).expect("link");
    // A plugin's directory that is a link, in a marketplace directory already found plain.
    std::os::unix::fs::symlink(real.join("cache/m/p"), real.join("cache/m/p2")).expect("link");
    let bases = super::paths::CanonicalBases::new([tmp.path().join("home/cache")]);
    let paths = ["home/cache/m/p/1.0.0", "home/cache/m/linked", "home/cache/m/p/../p/1.0.0", "home/cache/m/p2/1.0.0"];
    for path in paths.into_iter().chain(["elsewhere/q"]) {
        let path = tmp.path().join(path);
        let realpath = path.canonicalize().expect("realpath");
        let (found, meta) = bases.canonical(&path).expect("resolves");
        assert_eq!((found, meta.is_dir()), (realpath, true), "{path:?}");
    }
    std::fs::write(real.join("cache/m/file"), "x").expect("file");
    let file = tmp.path().join("home/cache/m/file");
    let (found, meta) = bases.canonical(&file).expect("resolves");
    assert_eq!((found, meta.is_dir()), (real.join("cache/m/file").canonicalize().expect("rp"), false));
    assert!(bases.canonical(&tmp.path().join("home/cache/missing")).is_err(), "a missing directory is an error");
}

#[test]
fn a_plugins_files_are_remembered_while_unchanged_and_read_again_when_one_of_them_changes() {
    let f = Fixture::new();
    let hooks = |command: &str| json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": command}]}]}});
    let root = f.plugin(
        "cache/guard",
        &[(".claude-plugin/plugin.json", json!({"name": "guard"})), ("hooks/hooks.json", hooks("cmd-first"))],
    );
    f.install("guard@market", &root);
    std::thread::sleep(spine_protocol::parse_memo::SETTLE + std::time::Duration::from_millis(100));
    let memo_file = f.path("memo");
    let run = || {
        let memo = ParseMemo::at(memo_file.clone());
        let loaded = f.load_remembering(&[], ProjectTrust::Untrusted, &[], &memo);
        memo.save();
        assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
        loaded
    };
    let commands = |loaded: &Loaded| -> Vec<String> {
        let hooks = loaded.layers.iter().filter_map(|l| l.value.get("hooks"));
        hooks.map(|h| h["PreToolUse"][0]["hooks"][0]["command"].as_str().unwrap_or_default().to_owned()).collect()
    };
    assert_eq!(commands(&run()), ["cmd-first"]);

    // What the memo holds is what the next run uses: the files are not read again.
    let text = std::fs::read_to_string(&memo_file).expect("memo written");
    assert!(text.contains("plugin.files.v1"), "{text}");
    std::fs::write(&memo_file, text.replace("cmd-first", "cmd-remembered")).expect("edit memo");
    assert_eq!(commands(&run()), ["cmd-remembered"]);

    // A hooks file changed in place (same size) is read again.
    std::fs::write(root.join("hooks/hooks.json"), hooks("cmd-again").to_string()).expect("edit");
    assert_eq!(commands(&run()), ["cmd-again"]);
    // A component directory added to the root shows, and so does a file removed below it.
    std::fs::create_dir(root.join("agents")).expect("agents");
    std::fs::remove_file(root.join("hooks/hooks.json")).expect("remove");
    let loaded = run();
    assert_eq!(loaded.plugins[0].agents, [root.canonicalize().expect("root").join("agents")]);
    assert!(commands(&loaded).is_empty(), "no hooks: {:?}", loaded.layers);

    // Remembered without a hooks file, one written into the hooks directory later shows.
    std::thread::sleep(spine_protocol::parse_memo::SETTLE + std::time::Duration::from_millis(100));
    assert!(commands(&run()).is_empty());
    assert!(commands(&run()).is_empty(), "from the memo");
    std::fs::write(root.join("hooks/hooks.json"), hooks("cmd-later").to_string()).expect("write");
    assert_eq!(commands(&run()), ["cmd-later"]);
}
