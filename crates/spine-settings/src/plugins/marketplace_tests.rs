//! `Marketplace::check` and `Marketplace::read`: the catalog's schema, errors naming the file
//! and the field, Claude Code's warnings.

use serde_json::{Value, json};

use super::*;

const FILE: &str = "/m/.claude-plugin/marketplace.json";

fn check(value: Value) -> (Option<Marketplace>, Check) {
    Marketplace::check(Path::new(FILE), &value)
}

fn fields(problems: &[Problem]) -> Vec<&str> {
    problems.iter().map(|p| p.field.as_str()).collect()
}

#[test]
fn a_catalog_is_read_with_its_entries_and_sources() {
    let (market, found) = check(json!({
    "name": "team-tools", "owner": {"name": "Team"}, "description": "d",
    "metadata": {"pluginRoot": "./plugins"},
    "plugins": [
        {"name": "guard", "source": "./plugins/guard", "version": "1.0.0"},
        {"name": "fmt", "source": "fmt"},
        {"name": "gh", "source": {"source": "github", "repo": "acme/gh", "ref": "v2"}},
        {"name": "raw", "source": {"source": "url", "url": "file:///r.git",
            "sha": "0123456789abcdef0123456789abcdef01234567"}, "strict": false},
        {"name": "sub", "source": {"source": "git-subdir", "url": "u", "path": "tools/p"}},
        {"name": "pkg", "source": {"source": "npm", "package": "p"}}
    ]}));
    assert!(found.errors.is_empty() && found.warnings.is_empty(), "{found:?}");
    let market = market.expect("valid");
    assert_eq!((market.name.as_str(), market.owner.as_str()), ("team-tools", "Team"));
    assert_eq!(market.root, Path::new("/m"));
    let sources: Vec<&PluginSource> = market.plugins.iter().map(|e| &e.source).collect();
    assert_eq!(sources[0], &PluginSource::Path("./plugins/guard".into()));
    assert_eq!(sources[1], &PluginSource::Path("./plugins/fmt".into()), "a bare name under pluginRoot");
    assert!(matches!(sources[2], PluginSource::Git { url, git_ref: Some(r), .. }
        if url == "https://github.com/acme/gh.git" && r == "v2"));
    assert!(matches!(sources[3], PluginSource::Git { sha: Some(_), .. }));
    assert!(matches!(sources[4], PluginSource::Git { subdir: Some(p), .. } if p == "tools/p"));
    assert_eq!(sources[5], &PluginSource::Other("npm".into()));
    assert!(!market.plugins[3].strict && market.plugins[0].strict);
    assert_eq!(market.entry("guard").and_then(|e| e.version.as_deref()), Some("1.0.0"));
}

#[test]
fn wrong_types_and_missing_fields_name_the_field() {
    let (market, found) = check(json!({
        "name": "Bad Market", "owner": "me", "extra": 1,
        "plugins": [{"name": "a", "source": "../x"}, {"name": "a", "source": "./p", "version": 3},
            {"name": "b", "source": {"source": "github"}}, {"name": "c", "source": "p"},
            {"name": "d", "source": "./d", "keywords": "k"}, {"source": "./e"},
            {"name": "f", "source": {"source": "url", "url": "u", "sha": "abc"}}]
    }));
    assert!(market.is_none());
    let errors = fields(&found.errors);
    for field in [
        "name",
        "owner",
        "plugins[0].source",
        "plugins[1].version",
        "plugins[2].source.repo",
        "plugins[3].source",
        "plugins[4].keywords",
        "plugins[5].name",
        "plugins[6].source.sha",
    ] {
        assert!(errors.contains(&field), "{field} in {errors:?}");
    }
    assert!(fields(&found.warnings).contains(&"extra"), "{found:?}");
    let traversal = found.errors.iter().find(|p| p.field == "plugins[0].source").expect("..");
    assert!(traversal.message.contains("Path contains \"..\""), "{traversal:?}");
    let (_, found) = check(json!({"name": "m", "owner": {"name": "o"}, "plugins": [
        {"name": "a", "source": "./a"}, {"name": "a", "source": "./b"}]}));
    assert!(found.errors.iter().any(|p| p.message.contains("Duplicate plugin name \"a\"")), "{found:?}");
    let (_, found) = check(json!({"name": "claude-plugins-official", "owner": {"name": "o"}, "plugins": {}}));
    assert_eq!(fields(&found.errors), ["name", "plugins"]);
}

#[test]
fn warnings_are_claude_codes() {
    let (market, found) = check(json!({"name": "m", "owner": {"name": "o"}, "plugins": []}));
    assert!(market.is_some());
    assert_eq!(fields(&found.warnings), ["description", "plugins"]);
    let (_, found) = check(
        json!({"name": "m", "owner": {"name": "o"}, "description": "d", "plugins": [{"name": "My_Plugin", "source": "./p"}]}),
    );
    assert!(found.warnings.iter().any(|p| p.message.contains("not kebab-case")), "{found:?}");
}

#[test]
fn reading_names_the_file_and_the_first_field() {
    let dir = tempfile::tempdir().expect("dir");
    let error = Marketplace::read(dir.path()).expect_err("missing");
    assert!(error.to_string().contains("marketplace.json"), "{error}");
    std::fs::create_dir_all(dir.path().join(".claude-plugin")).expect("mkdir");
    let file = dir.path().join(CATALOG);
    std::fs::write(&file, r#"{"name": "m", "owner": {"name": "o"}, "plugins": [{"name": "p", "source": 3}]}"#)
        .expect("write");
    let error = Marketplace::read(dir.path()).expect_err("bad source");
    assert_eq!((error.file.as_path(), error.field.as_str()), (file.as_path(), "plugins[0].source"));
    std::fs::write(&file, "{").expect("write");
    assert!(Marketplace::read(&file).expect_err("not JSON").reason.contains("invalid JSON"));
}
