//! A plugin's manifest, `.claude-plugin/plugin.json` (Claude Code 2.1's fields), parsed and
//! validated: [`Manifest::read`].
//!
//! Contract:
//! - The manifest is optional: without one the plugin's name is its directory's name and its
//!   components are found in their default places.
//! - `name` is required in a manifest: a non-empty string without whitespace, `/`, `\`, `:`,
//!   `@` or a leading `.` (it names commands, agents and the data directory).
//! - A recognised field with the wrong type is a [`PluginError`] naming the file and the field
//!   (`author.name`, `commands[1]`), as Claude Code fails to load such a plugin; `metadata` and
//!   `experimental` that are not objects are warnings. A component path must be relative and
//!   start with `./` (`skills` also takes `.`), without `..`.
//! - A field neither Claude Code nor spine knows is a warning (a near miss of a known one says
//!   which); fields Claude Code has and spine does not apply (`lspServers`, `userConfig`,
//!   `channels`, `dependencies`, `workflows`, `experimental`) are notes.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::PluginError;
use crate::source::type_name;
use crate::unknown::near_miss;

/// Where a plugin's manifest lives, relative to its root.
pub const MANIFEST: &str = ".claude-plugin/plugin.json";

/// Fields spine reads.
const APPLIED: &[&str] = &[
    "name",
    "version",
    "description",
    "author",
    "homepage",
    "repository",
    "license",
    "keywords",
    "displayName",
    "$schema",
    "metadata",
    "defaultEnabled",
    "commands",
    "agents",
    "skills",
    "outputStyles",
    "hooks",
    "mcpServers",
];

/// Claude Code's fields spine does not apply.
const NOT_APPLIED: &[&str] = &["lspServers", "userConfig", "channels", "dependencies", "workflows", "experimental"];

/// A component path field: its paths, or that the manifest does not set it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Paths(pub Option<Vec<String>>);

impl Paths {
    /// Whether the manifest does not set the field.
    pub fn is_unset(&self) -> bool {
        self.0.is_none()
    }
}

/// A field that is a path, a list of paths, or an inline object (`hooks`, `mcpServers`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Config {
    /// Files, relative to the root.
    Files(Vec<String>),
    /// The configuration itself.
    Inline(Map<String, Value>),
}

/// The manifest's fields spine reads.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    /// `name`.
    pub name: String,
    /// `version`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// `description`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// `author.name`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub author: Option<String>,
    /// `defaultEnabled` (unset: enabled).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_enabled: Option<bool>,
    /// `commands` (replaces `commands/`).
    #[serde(default, skip_serializing_if = "Paths::is_unset")]
    pub commands: Paths,
    /// `agents` (replaces `agents/`).
    #[serde(default, skip_serializing_if = "Paths::is_unset")]
    pub agents: Paths,
    /// `skills` (added to `skills/`).
    #[serde(default, skip_serializing_if = "Paths::is_unset")]
    pub skills: Paths,
    /// `outputStyles` (replaces `output-styles/`).
    #[serde(default, skip_serializing_if = "Paths::is_unset")]
    pub output_styles: Paths,
    /// `hooks` (added to `hooks/hooks.json`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hooks: Option<Config>,
    /// `mcpServers` (added to `.mcp.json`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mcp_servers: Option<Config>,
    /// Whether the file existed.
    pub present: bool,
}

/// A manifest and what reading it had to say.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Read {
    /// The manifest.
    pub manifest: Manifest,
    /// Unknown fields and non-object `metadata`/`experimental`.
    pub warnings: Vec<String>,
    /// Claude Code's fields spine does not apply.
    pub notes: Vec<String>,
}

impl Manifest {
    /// Reads the manifest of the plugin at `root` (see the module contract).
    pub fn read(root: &Path) -> Result<Read, PluginError> {
        let file = root.join(MANIFEST);
        let text = match super::files::read_text(&file) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                let name = root.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
                check_name(&file, &name)?;
                return Ok(Read { manifest: Manifest { name, ..Manifest::default() }, ..Read::default() });
            }
            Err(e) => return Err(PluginError::new(&file, "(file)", e.to_string())),
        };
        let value: Value = serde_json::from_str(&text)
            .map_err(|e| PluginError::new(&file, "(file)", format!("not valid JSON: {e}")))?;
        Manifest::parse(&file, &value)
    }

    /// Parses a manifest's JSON (`file` names it in errors).
    pub fn parse(file: &Path, value: &Value) -> Result<Read, PluginError> {
        let err = |field: &str, reason: String| PluginError::new(file, field, reason);
        let Value::Object(fields) = value else {
            return Err(err("(file)", format!("expected an object, found {}", type_name(value))));
        };
        let mut read = Read::default();
        let name = match fields.get("name") {
            Some(Value::String(name)) => name.clone(),
            Some(other) => return Err(err("name", format!("expected a string, found {}", type_name(other)))),
            None => return Err(err("name", "is required".to_owned())),
        };
        check_name(file, &name)?;
        let mut m = Manifest { name, present: true, ..Manifest::default() };
        for (key, v) in fields {
            match key.as_str() {
                "name" => {}
                "version" => m.version = Some(string(file, key, v)?),
                "description" => m.description = Some(string(file, key, v)?),
                "displayName" | "homepage" | "repository" | "license" | "$schema" => {
                    string(file, key, v)?;
                }
                "author" => m.author = author(file, v)?,
                "keywords" => strings(file, key, v).map(drop)?,
                "defaultEnabled" => {
                    m.default_enabled = Some(v.as_bool().ok_or_else(|| expected(file, key, "true or false", v))?)
                }
                "metadata" if !v.is_object() => {
                    read.warnings.push(format!("{}: `metadata` is not an object; ignored", file.display()))
                }
                "metadata" => {}
                "commands" => m.commands = Paths(Some(paths(file, key, v, false)?)),
                "agents" => m.agents = Paths(Some(paths(file, key, v, false)?)),
                "skills" => m.skills = Paths(Some(paths(file, key, v, true)?)),
                "outputStyles" => m.output_styles = Paths(Some(paths(file, key, v, false)?)),
                "hooks" => m.hooks = Some(config(file, key, v)?),
                "mcpServers" => m.mcp_servers = Some(config(file, key, v)?),
                "experimental" if !v.is_object() => {
                    read.warnings.push(format!("{}: `experimental` is not an object; ignored", file.display()))
                }
                other if NOT_APPLIED.contains(&other) => {
                    read.notes.push(format!("{}: `{other}` is not applied by spine", file.display()))
                }
                other => {
                    let hint = near_miss(other, APPLIED.iter().chain(NOT_APPLIED).copied())
                        .map(|k| format!(" (did you mean `{k}`?)"))
                        .unwrap_or_default();
                    read.warnings.push(format!("{}: unknown field `{other}` ignored{hint}", file.display()));
                }
            }
        }
        read.manifest = m;
        Ok(read)
    }
}

fn check_name(file: &Path, name: &str) -> Result<(), PluginError> {
    let bad = name.is_empty()
        || name.starts_with('.')
        || name.chars().any(|c| c.is_whitespace() || c.is_control() || matches!(c, '/' | '\\' | ':' | '@'));
    match bad {
        true => Err(PluginError::new(
            file,
            "name",
            format!("{name:?} is not a plugin name (no spaces, `/`, `:`, `@`, or leading `.`; kebab-case)"),
        )),
        false => Ok(()),
    }
}

fn expected(file: &Path, field: &str, what: &str, v: &Value) -> PluginError {
    PluginError::new(file, field, format!("expected {what}, found {}", type_name(v)))
}

fn string(file: &Path, field: &str, v: &Value) -> Result<String, PluginError> {
    v.as_str().map(str::to_owned).ok_or_else(|| expected(file, field, "a string", v))
}

fn strings(file: &Path, field: &str, v: &Value) -> Result<Vec<String>, PluginError> {
    let Value::Array(items) = v else { return Err(expected(file, field, "an array of strings", v)) };
    items.iter().enumerate().map(|(i, item)| string(file, &format!("{field}[{i}]"), item)).collect()
}

fn author(file: &Path, v: &Value) -> Result<Option<String>, PluginError> {
    let Value::Object(fields) = v else { return Err(expected(file, "author", "an object", v)) };
    for key in ["email", "url"] {
        if let Some(value) = fields.get(key) {
            string(file, &format!("author.{key}"), value)?;
        }
    }
    match fields.get("name") {
        Some(name) => string(file, "author.name", name).map(Some),
        None => Err(PluginError::new(file, "author.name", "is required in `author`".to_owned())),
    }
}

/// One path or a list of them, each relative to the root (see the module contract).
fn paths(file: &Path, field: &str, v: &Value, dot: bool) -> Result<Vec<String>, PluginError> {
    let list = match v {
        Value::String(one) => vec![(field.to_owned(), one.clone())],
        Value::Array(items) => items
            .iter()
            .enumerate()
            .map(|(i, item)| {
                let at = format!("{field}[{i}]");
                string(file, &at, item).map(|text| (at, text))
            })
            .collect::<Result<_, _>>()?,
        other => return Err(expected(file, field, "a path or an array of paths", other)),
    };
    list.into_iter().map(|(at, text)| relative(file, &at, &text, dot)).collect()
}

fn relative(file: &Path, at: &str, text: &str, dot: bool) -> Result<String, PluginError> {
    let starts = text.starts_with("./") || (dot && text == ".");
    let escapes = PathBuf::from(text).components().any(|c| matches!(c, std::path::Component::ParentDir));
    match (starts, escapes) {
        (true, false) => Ok(text.to_owned()),
        (false, _) => {
            Err(PluginError::new(file, at, format!("{text:?}: paths are relative to the plugin and start with `./`")))
        }
        (true, true) => Err(PluginError::new(file, at, format!("{text:?} leaves the plugin's directory (`..`)"))),
    }
}

fn config(file: &Path, field: &str, v: &Value) -> Result<Config, PluginError> {
    match v {
        Value::Object(inline) => Ok(Config::Inline(inline.clone())),
        other => paths(file, field, other, false).map(Config::Files),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn parse(value: Value) -> Result<Read, PluginError> {
        Manifest::parse(Path::new("/p/.claude-plugin/plugin.json"), &value)
    }

    #[test]
    fn the_fields_claude_code_reads_are_parsed_and_component_paths_kept() {
        let read = parse(json!({
            "name": "guard", "version": "1.2.0", "description": "d", "author": {"name": "A", "email": "a@x"},
            "keywords": ["k"], "commands": "./cmd/", "agents": ["./a.md"], "skills": ".",
            "hooks": "./config/hooks.json", "mcpServers": {"db": {"command": "x"}}, "defaultEnabled": false,
            "metadata": {"x": 1}, "$schema": "s", "displayName": "Guard"
        }))
        .expect("valid");
        let m = read.manifest;
        assert_eq!((m.name.as_str(), m.version.as_deref(), m.author.as_deref()), ("guard", Some("1.2.0"), Some("A")));
        assert_eq!(m.commands, Paths(Some(vec!["./cmd/".to_owned()])));
        assert_eq!(m.skills, Paths(Some(vec![".".to_owned()])));
        assert_eq!(m.hooks, Some(Config::Files(vec!["./config/hooks.json".to_owned()])));
        assert!(matches!(m.mcp_servers, Some(Config::Inline(_))));
        assert_eq!(m.default_enabled, Some(false));
        assert!(read.warnings.is_empty() && read.notes.is_empty(), "{:?} {:?}", read.warnings, read.notes);
    }

    #[test]
    fn a_wrong_type_names_the_file_and_the_field() {
        for (value, field) in [
            (json!({"name": "g", "keywords": "k"}), "keywords"),
            (json!({"name": "g", "author": {"email": "x"}}), "author.name"),
            (json!({"name": "g", "commands": ["./a.md", 3]}), "commands[1]"),
            (json!({"name": 3}), "name"),
            (json!({"version": "1"}), "name"),
            (json!({"name": "g", "defaultEnabled": "yes"}), "defaultEnabled"),
        ] {
            let error = parse(value).expect_err("invalid");
            assert_eq!(error.field, field, "{error}");
            assert!(error.to_string().starts_with("/p/.claude-plugin/plugin.json: "), "{error}");
        }
    }

    #[test]
    fn component_paths_start_with_dot_slash_and_stay_inside() {
        assert_eq!(parse(json!({"name": "g", "agents": "agents/"})).expect_err("no ./").field, "agents");
        assert_eq!(parse(json!({"name": "g", "hooks": ["./../x.json"]})).expect_err("..").field, "hooks[0]");
        assert!(parse(json!({"name": "g", "commands": "."})).is_err(), "only skills take `.`");
    }

    #[test]
    fn names_that_cannot_name_a_plugin_are_refused() {
        for name in ["", "a b", "a/b", "a:b", "a@m", ".hidden"] {
            assert_eq!(parse(json!({"name": name})).expect_err(name).field, "name");
        }
    }

    #[test]
    fn unknown_fields_warn_with_a_near_miss_and_claude_codes_other_fields_are_notes() {
        let read =
            parse(json!({"name": "g", "comands": "./c", "vscode": {}, "lspServers": "./.lsp.json"})).expect("loads");
        assert!(
            read.warnings.iter().any(|w| w.contains("`comands` ignored (did you mean `commands`?)")),
            "{:?}",
            read.warnings
        );
        assert!(read.warnings.iter().any(|w| w.contains("`vscode` ignored")), "{:?}", read.warnings);
        assert!(read.notes.iter().any(|n| n.contains("`lspServers` is not applied")), "{:?}", read.notes);
    }
}
