//! `plugin validate`: checking a plugin or a marketplace before it is shared ([`validate`]).
//!
//! Contract (Claude Code 2.1's `claude plugin validate`, without its plugin-directory
//! submission checks):
//! - A directory holding `.claude-plugin/marketplace.json` is a marketplace; one holding
//!   `.claude-plugin/plugin.json`, or `commands/`, `agents/`, `skills/` or `hooks/hooks.json`,
//!   is a plugin; a `marketplace.json` or `plugin.json` file is checked as what it is named.
//!   Anything else is an error (`No manifest found`).
//! - A marketplace: [`Marketplace::check`]'s errors and warnings; then each entry whose source
//!   is a path of the marketplace has its `plugin.json` checked, its problems prefixed
//!   `plugins[i] plugin.json →`; an entry `version` that differs from `plugin.json`'s is a
//!   warning; `strict: false` with components in `plugin.json` is an error.
//! - A plugin: [`Manifest::parse`]'s error (the file and the field); unknown fields and a
//!   non-object `metadata` are warnings, as are a missing `version`, `description` and
//!   `author`; a component path that does not exist is an error; `hooks/hooks.json` must be
//!   a JSON object. Fields spine does not apply are notes.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::Manifest;
use super::manifest::MANIFEST;
use super::marketplace::{CATALOG, Check, Marketplace, Problem};
use super::strict::COMPONENTS;

/// What was checked, and what was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Section {
    /// `marketplace manifest`, `plugin manifest` or `hooks`.
    pub what: &'static str,
    /// The file (or directory) checked.
    pub file: PathBuf,
    /// Errors and warnings.
    pub check: Check,
    /// What spine does not apply (not warnings).
    pub notes: Vec<Problem>,
}

/// Validates the plugin or marketplace at `path` (see the module contract).
pub fn validate(path: &Path) -> Vec<Section> {
    let mut check = Check::default();
    if !path.exists() {
        check.errors.push(problem("file", format!("File not found: {}", path.display())));
        return vec![section("plugin manifest", path, check)];
    }
    if path.is_file() {
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        return match name.as_str() {
            "marketplace.json" => marketplace(path),
            _ => plugin(&Marketplace::root_of(path), Some(path.to_path_buf())),
        };
    }
    if path.join(CATALOG).is_file() {
        return marketplace(&path.join(CATALOG));
    }
    let component = ["commands", "agents", "skills"].iter().any(|d| path.join(d).is_dir())
        || path.join("hooks/hooks.json").is_file();
    if path.join(MANIFEST).is_file() || component {
        return plugin(path, None);
    }
    check.errors.push(problem(
        "directory",
        "No manifest found in directory. Expected .claude-plugin/marketplace.json or .claude-plugin/plugin.json",
    ));
    vec![section("plugin manifest", path, check)]
}

fn problem(field: impl Into<String>, message: impl Into<String>) -> Problem {
    Problem { field: field.into(), message: message.into() }
}

/// The first `quoted` word of a message (the field a manifest warning is about).
fn quoted(text: &str) -> Option<&str> {
    let (_, rest) = text.split_once('`')?;
    rest.split_once('`').map(|(word, _)| word)
}

fn section(what: &'static str, file: &Path, check: Check) -> Section {
    Section { what, file: file.to_path_buf(), check, notes: Vec::new() }
}

fn read_json(file: &Path, check: &mut Check) -> Option<Value> {
    let text = match std::fs::read_to_string(file) {
        Ok(text) => text,
        Err(e) => {
            check.errors.push(problem("file", format!("cannot read: {e}")));
            return None;
        }
    };
    match serde_json::from_str(&text) {
        Ok(value) => Some(value),
        Err(e) => {
            check.errors.push(problem("json", format!("Invalid JSON syntax: {e}")));
            None
        }
    }
}

fn marketplace(file: &Path) -> Vec<Section> {
    let mut check = Check::default();
    let Some(value) = read_json(file, &mut check) else { return vec![section("marketplace manifest", file, check)] };
    let (_, mut check) = Marketplace::check(file, &value);
    let root = Marketplace::root_of(file);
    let items = value.get("plugins").and_then(Value::as_array).cloned().unwrap_or_default();
    for (i, item) in items.iter().enumerate() {
        let Some(rel) = item.get("source").and_then(Value::as_str) else { continue };
        if !(rel == "." || rel.starts_with("./")) || rel.split('/').any(|p| p == "..") {
            continue;
        }
        let dir = root.join(rel);
        let manifest_file = dir.join(MANIFEST);
        if !manifest_file.is_file() {
            continue;
        }
        let prefix = format!("plugins[{i}] plugin.json → ");
        let mut inner = Check::default();
        let own = plugin_manifest(&dir, &manifest_file, &mut inner, &mut Vec::new());
        for p in inner.errors {
            check.errors.push(problem(format!("{prefix}{}", p.field), p.message));
        }
        for p in inner.warnings {
            check.warnings.push(problem(format!("{prefix}{}", p.field), p.message));
        }
        let Some(Value::Object(own)) = own else { continue };
        let declared = item.get("version").and_then(Value::as_str);
        let actual = own.get("version").and_then(Value::as_str);
        if let (Some(declared), Some(actual)) = (declared, actual)
            && declared != actual
        {
            check.warnings.push(problem(
                format!("plugins[{i}].version"),
                format!("Entry declares version {declared:?} but {rel}/{MANIFEST} says {actual:?}. At install time, plugin.json wins; the entry's version is ignored"),
            ));
        }
        if item.get("strict") == Some(&Value::Bool(false))
            && let Some(key) = COMPONENTS.iter().find(|k| own.contains_key(**k))
        {
            check.errors.push(problem(
                format!("plugins[{i}].strict"),
                format!("conflicting manifests: `strict: false` makes the entry the whole definition, and {rel}/{MANIFEST} declares `{key}` too"),
            ));
        }
    }
    vec![section("marketplace manifest", file, check)]
}

/// Checks a plugin's manifest file; its JSON when it parses.
fn plugin_manifest(root: &Path, file: &Path, check: &mut Check, notes: &mut Vec<Problem>) -> Option<Value> {
    let value = read_json(file, check)?;
    let prefix = format!("{}: ", file.display());
    let unprefixed = |text: &str| {
        let text = text.strip_prefix(&prefix).unwrap_or(text).to_owned();
        problem(quoted(&text).unwrap_or("(file)"), text.clone())
    };
    // The parser stops at the first error: set the field aside and parse again, so that every
    // error and the warnings are reported.
    let mut rest = value.clone();
    loop {
        match Manifest::parse(file, &rest) {
            Ok(read) => {
                check.warnings.extend(read.warnings.iter().map(|w| unprefixed(w)));
                notes.extend(read.notes.iter().map(|n| unprefixed(n)));
                break;
            }
            Err(e) => {
                let key = e.field.split(['.', '[']).next().unwrap_or_default().to_owned();
                check.errors.push(problem(e.field, e.reason));
                let removed = key != "name" && rest.as_object_mut().and_then(|f| f.shift_remove(&key)).is_some();
                if !removed {
                    break;
                }
            }
        }
    }
    let fields = value.as_object()?;
    for (key, message) in [
        ("version", "No version specified. Consider adding a version following semver (e.g., \"1.0.0\")"),
        ("description", "No description provided. Adding a description helps users understand what your plugin does"),
        ("author", "No author information provided. Consider adding author details for plugin attribution"),
    ] {
        if !fields.contains_key(key) {
            check.warnings.push(problem(key, message));
        }
    }
    for key in COMPONENTS {
        let paths: Vec<(String, &str)> = match fields.get(*key) {
            Some(Value::String(p)) => vec![((*key).to_owned(), p.as_str())],
            Some(Value::Array(items)) => {
                items.iter().enumerate().filter_map(|(i, v)| v.as_str().map(|p| (format!("{key}[{i}]"), p))).collect()
            }
            _ => Vec::new(),
        };
        for (field, path) in paths {
            if (path.starts_with("./") || path == ".") && !root.join(path).exists() {
                check.errors.push(problem(
                    field,
                    format!("Path not found: {path}. The runtime loader will report this as a load failure."),
                ));
            }
        }
    }
    Some(value)
}

fn plugin(root: &Path, file: Option<PathBuf>) -> Vec<Section> {
    let file = file.unwrap_or_else(|| root.join(MANIFEST));
    let mut check = Check::default();
    let mut notes = Vec::new();
    if file.is_file() {
        plugin_manifest(root, &file, &mut check, &mut notes);
    }
    let mut sections = vec![Section { what: "plugin manifest", file: file.clone(), check, notes }];
    let hooks = root.join("hooks/hooks.json");
    if hooks.is_file() {
        let mut check = Check::default();
        if let Some(value) = read_json(&hooks, &mut check)
            && !value.is_object()
        {
            check.errors.push(problem("(file)", "expected an object of hook events (or {\"hooks\": {…}})"));
        }
        sections.push(section("hooks", &hooks, check));
    }
    sections
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(root: &Path, rel: &str, text: &str) {
        let file = root.join(rel);
        std::fs::create_dir_all(file.parent().expect("parent")).expect("mkdir");
        std::fs::write(file, text).expect("write");
    }

    fn fields(problems: &[Problem]) -> Vec<&str> {
        problems.iter().map(|p| p.field.as_str()).collect()
    }

    #[test]
    fn a_plugin_reports_type_errors_missing_paths_and_warnings_as_claude_code() {
        let dir = tempfile::tempdir().expect("dir");
        write(dir.path(), ".claude-plugin/plugin.json", r#"{"name": "p", "keywords": "x", "comands": "./c"}"#);
        let sections = validate(dir.path());
        let check = &sections[0].check;
        assert_eq!(fields(&check.errors), ["keywords"]);
        assert!(check.warnings.iter().any(|w| w.message.contains("did you mean `commands`")), "{check:?}");
        assert!(fields(&check.warnings).contains(&"version") && fields(&check.warnings).contains(&"author"));

        write(
            dir.path(),
            ".claude-plugin/plugin.json",
            r#"{"name": "p", "commands": "./nope.md", "lspServers": "./l"}"#,
        );
        write(dir.path(), "hooks/hooks.json", "{bad");
        let sections = validate(dir.path());
        assert_eq!(fields(&sections[0].check.errors), ["commands", "lspServers"]);
        assert_eq!(sections[0].notes.len(), 1, "lspServers is not applied");
        assert_eq!((sections[1].what, fields(&sections[1].check.errors)), ("hooks", vec!["json"]));
    }

    #[test]
    fn a_marketplace_checks_its_entries_and_their_manifests() {
        let dir = tempfile::tempdir().expect("dir");
        write(
            dir.path(),
            CATALOG,
            r#"{"name": "m", "owner": {"name": "o"}, "plugins": [
                {"name": "a", "source": "./a", "version": "2.0.0", "strict": false},
                {"name": "a", "source": "../x"}]}"#,
        );
        write(dir.path(), "a/.claude-plugin/plugin.json", r#"{"name": "a", "version": "1.0.0", "commands": "./c"}"#);
        let sections = validate(dir.path());
        let check = &sections[0].check;
        let errors = fields(&check.errors);
        assert!(errors.contains(&"plugins[1].source"), "{check:?}");
        assert!(errors.contains(&"plugins[0] plugin.json → commands"), "{check:?}");
        assert!(errors.contains(&"plugins[0].strict"), "{check:?}");
        assert!(fields(&check.warnings).contains(&"plugins[0].version"), "{check:?}");
        assert!(fields(&check.warnings).contains(&"description"), "{check:?}");
        let empty = tempfile::tempdir().expect("dir");
        assert_eq!(fields(&validate(empty.path())[0].check.errors), ["directory"]);
    }
}
