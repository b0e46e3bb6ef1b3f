//! `install`: sources, versions, the cache's version directories, records.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::*;
use crate::plugins::git::tests::repository;
use crate::plugins::marketplace::CATALOG;

fn write(root: &Path, rel: &str, text: &str) {
    let file = root.join(rel);
    std::fs::create_dir_all(file.parent().expect("parent")).expect("mkdir");
    std::fs::write(file, text).expect("write");
}

fn read(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).expect("read")).expect("json")
}

struct Fixture {
    dir: tempfile::TempDir,
}

impl Fixture {
    fn new(plugins: Value) -> Fixture {
        let f = Fixture { dir: tempfile::tempdir().expect("dir") };
        let catalog = json!({"name": "market", "owner": {"name": "o"}, "plugins": plugins});
        write(&f.market(), CATALOG, &catalog.to_string());
        f
    }

    fn market(&self) -> PathBuf {
        self.dir.path().join("market")
    }

    fn store(&self) -> Store {
        Store { dir: self.dir.path().join("store") }
    }

    fn install(&self, name: &str) -> Result<Copied, InstallError> {
        let (market, _) = Marketplace::read(&self.market()).expect("catalog");
        let entry = market.entry(name).expect("entry").clone();
        install(&self.store(), &Git::default(), &market, &entry)
    }
}

#[test]
fn a_path_plugin_is_copied_under_its_version_and_a_version_directory_is_never_changed() {
    let f = Fixture::new(json!([{"name": "guard", "source": "./plugins/guard"}]));
    write(&f.market(), "plugins/guard/.claude-plugin/plugin.json", r#"{"name": "guard", "version": "1.0.0"}"#);
    write(&f.market(), "plugins/guard/hooks/hooks.json", r#"{"hooks": {}}"#);
    let copied = f.install("guard").expect("installs");
    assert_eq!(copied.install_path, f.store().dir.join("cache/market/guard/1.0.0"));
    assert!(copied.fresh && copied.sha.is_none() && copied.install_path.join("hooks/hooks.json").is_file());
    assert_eq!(read(&copied.install_path.join(".claude-plugin/plugin.json"))["version"], "1.0.0", "used as is");

    write(&f.market(), "plugins/guard/hooks/hooks.json", r#"{"hooks": {"Stop": []}}"#);
    let again = f.install("guard").expect("same version");
    assert!(!again.fresh);
    assert_eq!(read(&again.install_path.join("hooks/hooks.json")), json!({"hooks": {}}), "untouched");
    assert!(!f.store().dir.join(".tmp").exists(), "scratch removed");
}

#[test]
fn without_a_version_a_git_marketplace_gives_the_commit_and_a_plain_directory_a_digest() {
    let f = Fixture::new(
        json!([{"name": "tool", "source": "./tool"}, {"name": "pinned", "source": "./p", "version": "0.3.0"}]),
    );
    write(&f.market(), "tool/commands/hi.md", "hi");
    write(&f.market(), "p/commands/x.md", "x");
    let plain = f.install("tool").expect("installs");
    assert!(plain.version.starts_with("unknown-") && plain.version.len() == 20, "{}", plain.version);
    assert_eq!(
        read(&plain.install_path.join(".claude-plugin/plugin.json")),
        json!({"name": "tool"}),
        "named by the entry"
    );
    assert_eq!(f.install("pinned").expect("entry version").version, "0.3.0");
    let sha = repository(&f.market(), &[]);
    let tracked = f.install("tool").expect("installs");
    assert_eq!((tracked.version.as_str(), tracked.sha.as_deref()), (&sha[..12], Some(sha.as_str())));
}

#[test]
fn a_git_source_is_cloned_at_its_commit() {
    let f = Fixture::new(json!([]));
    let origin = f.dir.path().join("origin");
    let first = repository(&origin, &[(".claude-plugin/plugin.json", r#"{"name": "remote"}"#), ("commands/a.md", "a")]);
    repository(&origin, &[("commands/a.md", "b")]);
    let url = format!("file://{}", origin.display());
    let catalog = json!({"name": "market", "owner": {"name": "o"}, "plugins": [
        {"name": "remote", "source": {"source": "url", "url": url, "sha": first}}]});
    write(&f.market(), CATALOG, &catalog.to_string());
    let copied = f.install("remote").expect("installs");
    assert_eq!(copied.version, first[..12]);
    assert_eq!(std::fs::read_to_string(copied.install_path.join("commands/a.md")).expect("read"), "a");
    assert!(!copied.install_path.join(".git").exists());
}

#[test]
fn sources_leaving_the_marketplace_or_of_other_kinds_are_refused() {
    let f = Fixture::new(
        json!([{"name": "out", "source": "./link"}, {"name": "pkg", "source": {"source": "npm", "package": "x"}},
        {"name": "gone", "source": "./missing"}]),
    );
    std::fs::create_dir_all(f.dir.path().join("elsewhere")).expect("mkdir");
    std::os::unix::fs::symlink(f.dir.path().join("elsewhere"), f.market().join("link")).expect("link");
    let error = f.install("out").expect_err("leaves");
    assert!(error.to_string().contains("leads outside the marketplace"), "{error}");
    assert!(error.to_string().contains("plugins[0].source"), "{error}");
    let error = f.install("pkg").expect_err("npm");
    assert!(error.to_string().contains("does not install plugins from \"npm\""), "{error}");
    let error = f.install("gone").expect_err("missing");
    assert!(error.to_string().contains("plugin directory not found"), "{error}");
}

#[test]
fn records_keep_one_install_per_scope_and_project() {
    let mut installed = Installed::default();
    let copied = |v: &str| Copied {
        version: v.into(),
        install_path: PathBuf::from(format!("/c/{v}")),
        sha: None,
        fresh: true,
        skipped: Vec::new(),
        default_enabled: None,
    };
    let (a, b) = (Path::new("/a"), Path::new("/b"));
    record(&mut installed, "g@m", InstallScope::User, a, &copied("1"), "t1");
    record(&mut installed, "g@m", InstallScope::Local, a, &copied("1"), "t1");
    record(&mut installed, "g@m", InstallScope::Local, b, &copied("1"), "t1");
    record(&mut installed, "g@m", InstallScope::User, b, &copied("2"), "t2");
    let list = &installed.plugins["g@m"];
    assert_eq!(list.len(), 3);
    assert_eq!(
        (list[0].version.as_str(), list[0].installed_at.as_str(), list[0].last_updated.as_str()),
        ("2", "t1", "t2")
    );
    assert_eq!(list[0].project_path, None);
    assert_eq!(list[1].project_path.as_deref(), Some(a));
    assert!(forget(&mut installed, "g@m", InstallScope::Local, a).is_some());
    assert!(forget(&mut installed, "g@m", InstallScope::Project, a).is_none());
    assert_eq!(installed.plugins["g@m"].len(), 2);
}
