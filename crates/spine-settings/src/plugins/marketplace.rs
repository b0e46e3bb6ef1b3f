//! A marketplace's catalog, `.claude-plugin/marketplace.json` (Claude Code 2.1's schema),
//! parsed and checked: [`Marketplace::read`], [`Marketplace::check`].
//!
//! Contract:
//! - Required: `name` (no spaces; each character a letter, a digit, `.`, `_` or `-`, starting
//!   with a letter or a digit; not one of Claude Code's reserved names), `owner` (an object
//!   with a string `name`), `plugins` (an array). A wrong type or a missing field is an error
//!   naming the file and the field (`plugins[2].source`), as `claude plugin validate` reports
//!   it; [`Marketplace::read`] fails on the first one.
//! - Each entry needs `name` (as the marketplace's name; unique in the catalog) and `source`:
//!   a path inside the marketplace starting with `./` (`.` and `./` are the marketplace root;
//!   a bare name resolves under `metadata.pluginRoot`), never with `..`; or an object
//!   `{"source": "github", "repo": "owner/repo"}`, `{"source": "url"|"git", "url"}`,
//!   `{"source": "git-subdir", "url", "path"}`, each with optional `ref` and `sha` (40 hex
//!   digits). `npm`, `archive` and `command` sources parse ([`PluginSource::Other`]) but spine
//!   does not install them. The entry's other fields are a manifest's (checked as
//!   [`super::Manifest::parse`] checks `plugin.json`) plus `strict`, `category`, `tags` and
//!   `relevance`.
//! - Warnings, as Claude Code's: no plugins, no description, a plugin name that is not
//!   kebab-case, a name Claude Desktop refuses, unknown fields.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::PluginError;
use crate::source::type_name;

/// Where a marketplace's catalog lives, relative to its root.
pub const CATALOG: &str = ".claude-plugin/marketplace.json";

/// Names Claude Code reserves for Anthropic's marketplaces.
const RESERVED: &[&str] = &[
    "claude-code-marketplace",
    "claude-code-plugins",
    "claude-plugins-official",
    "claude-plugins-community",
    "claude-community",
    "anthropic-marketplace",
    "anthropic-plugins",
    "agent-skills",
    "anthropic-agent-skills",
    "knowledge-work-plugins",
    "life-sciences",
    "claude-for-legal",
    "claude-for-financial-services",
    "financial-services-plugins",
    "first-party-plugins",
    "healthcare",
];

/// The catalog's top-level fields.
const TOP: &[&str] = &[
    "$schema",
    "name",
    "owner",
    "plugins",
    "description",
    "version",
    "metadata",
    "allowCrossMarketplaceDependenciesOn",
    "renames",
];

/// An entry's fields that are the marketplace's, not a manifest's.
const ENTRY_ONLY: &[&str] = &["source", "strict", "category", "tags", "relevance"];

/// One problem found in a file: the JSON field and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// The field (`plugins[0].source`), or `(file)`.
    pub field: String,
    /// What is wrong.
    pub message: String,
}

/// What checking a file found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Check {
    /// Problems that make the file unusable.
    pub errors: Vec<Problem>,
    /// Problems that do not.
    pub warnings: Vec<Problem>,
}

impl Check {
    fn error(&mut self, field: impl Into<String>, message: impl Into<String>) {
        self.errors.push(Problem { field: field.into(), message: message.into() });
    }

    fn warn(&mut self, field: impl Into<String>, message: impl Into<String>) {
        self.warnings.push(Problem { field: field.into(), message: message.into() });
    }
}

/// A marketplace's catalog.
#[derive(Debug, Clone, PartialEq)]
pub struct Marketplace {
    /// The catalog file.
    pub file: PathBuf,
    /// The marketplace's root (relative sources resolve against it).
    pub root: PathBuf,
    /// `name`.
    pub name: String,
    /// `owner.name`.
    pub owner: String,
    /// `description` (or `metadata.description`).
    pub description: Option<String>,
    /// `plugins`.
    pub plugins: Vec<Entry>,
}

impl Marketplace {
    /// The catalog file of `location`: a directory's `.claude-plugin/marketplace.json`, or
    /// `location` itself when it is a file.
    pub fn catalog(location: &Path) -> PathBuf {
        if location.is_file() { location.to_path_buf() } else { location.join(CATALOG) }
    }

    /// The root of the marketplace whose catalog is `file`: the directory holding
    /// `.claude-plugin/`, else the file's own directory.
    pub fn root_of(file: &Path) -> PathBuf {
        let parent = file.parent().unwrap_or(Path::new("."));
        match parent.file_name().is_some_and(|n| n == ".claude-plugin") {
            true => parent.parent().unwrap_or(parent).to_path_buf(),
            false => parent.to_path_buf(),
        }
    }

    /// Reads the marketplace at `location` (a directory or a catalog file); the first error
    /// names the file and the field. Returns the warnings too.
    pub fn read(location: &Path) -> Result<(Marketplace, Vec<Problem>), PluginError> {
        let file = Marketplace::catalog(location);
        let text = std::fs::read_to_string(&file).map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => PluginError::new(&file, "(file)", "no marketplace catalog here"),
            _ => PluginError::new(&file, "(file)", e.to_string()),
        })?;
        let value: Value = serde_json::from_str(&text)
            .map_err(|e| PluginError::new(&file, "(file)", format!("invalid JSON syntax: {e}")))?;
        let (marketplace, check) = Marketplace::check(&file, &value);
        match (marketplace, check.errors.into_iter().next()) {
            (Some(marketplace), None) => Ok((marketplace, check.warnings)),
            (_, Some(first)) => Err(PluginError::new(&file, &first.field, first.message)),
            (None, None) => Err(PluginError::new(&file, "(file)", "not a marketplace catalog")),
        }
    }

    /// Checks a catalog's JSON (`file` is where it was read); the marketplace when there is
    /// no error.
    pub fn check(file: &Path, value: &Value) -> (Option<Marketplace>, Check) {
        let mut check = Check::default();
        let Value::Object(fields) = value else {
            check.error("(file)", format!("expected an object, found {}", type_name(value)));
            return (None, check);
        };
        let name = required_string(fields, "name", "", &mut check);
        if let Some(name) = &name {
            marketplace_name(name, &mut check);
        }
        let owner = match fields.get("owner") {
            Some(Value::Object(owner)) => {
                for key in ["email", "url"] {
                    optional_string(owner, key, "owner.", &mut check);
                }
                required_string(owner, "name", "owner.", &mut check)
            }
            Some(other) => {
                check.error("owner", format!("expected an object, found {}", type_name(other)));
                None
            }
            None => {
                check.error("owner", "is required");
                None
            }
        };
        let metadata = match fields.get("metadata") {
            Some(Value::Object(m)) => Some(m),
            Some(other) => {
                check.error("metadata", format!("expected an object, found {}", type_name(other)));
                None
            }
            None => None,
        };
        let plugin_root = metadata.and_then(|m| optional_string(m, "pluginRoot", "metadata.", &mut check));
        if let Some(root) = &plugin_root
            && (!root.starts_with("./") && root != "." || has_parent(root))
        {
            check.error(
                "metadata.pluginRoot",
                format!("{root:?}: must be a relative path inside the marketplace (`./…`)"),
            );
        }
        let description = optional_string(fields, "description", "", &mut check)
            .or_else(|| metadata.and_then(|m| optional_string(m, "description", "metadata.", &mut check)));
        if description.is_none() {
            check.warn(
                "description",
                "No marketplace description provided. Adding a description helps users understand what this marketplace offers",
            );
        }
        optional_string(fields, "version", "", &mut check);
        optional_string(fields, "$schema", "", &mut check);
        if let Some(v) = fields.get("allowCrossMarketplaceDependenciesOn") {
            strings(v, "allowCrossMarketplaceDependenciesOn", &mut check);
        }
        if let Some(v) = fields.get("renames")
            && !v.is_object()
        {
            check.error("renames", format!("expected an object, found {}", type_name(v)));
        }
        for key in fields.keys().filter(|k| !TOP.contains(&k.as_str())) {
            check.warn(key.as_str(), format!("Unknown field '{key}'. Claude Code ignores it at load time."));
        }
        let mut plugins = Vec::new();
        match fields.get("plugins") {
            Some(Value::Array(items)) => {
                if items.is_empty() {
                    check.warn("plugins", "Marketplace has no plugins defined");
                }
                for (index, item) in items.iter().enumerate() {
                    if let Some(entry) = entry(file, index, item, plugin_root.as_deref(), &mut check) {
                        if plugins.iter().any(|p: &Entry| p.name == entry.name) {
                            check.error(
                                format!("plugins[{index}].name"),
                                format!("Duplicate plugin name {:?} found in marketplace", entry.name),
                            );
                        }
                        plugins.push(entry);
                    }
                }
            }
            Some(other) => check.error("plugins", format!("expected an array, found {}", type_name(other))),
            None => check.error("plugins", "is required"),
        }
        let marketplace = match (name, owner, check.errors.is_empty()) {
            (Some(name), Some(owner), true) => Some(Marketplace {
                file: file.to_path_buf(),
                root: Marketplace::root_of(file),
                name,
                owner,
                description,
                plugins,
            }),
            _ => None,
        };
        (marketplace, check)
    }

    /// The entry named `name`.
    pub fn entry(&self, name: &str) -> Option<&Entry> {
        self.plugins.iter().find(|e| e.name == name)
    }
}

/// Whether `name` can be one part of a plugin id: letters, digits, `.`, `_`, `-`, starting
/// with a letter or a digit.
pub fn valid_id_part(name: &str) -> bool {
    name.chars().next().is_some_and(|c| c.is_ascii_alphanumeric())
        && name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
}

fn kebab(name: &str) -> bool {
    name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
}

fn has_parent(path: &str) -> bool {
    path.split(['/', '\\']).any(|part| part == "..")
}

fn marketplace_name(name: &str, check: &mut Check) {
    if name.chars().any(char::is_whitespace) {
        check.error("name", "Marketplace name cannot contain spaces. Use kebab-case (e.g., \"my-marketplace\")");
    } else if !valid_id_part(name) {
        check.error(
            "name",
            format!("{name:?}: each part of a plugin id (plugin@marketplace) may use only letters, digits, \".\", \"_\" and \"-\", and must start with a letter or digit"),
        );
    }
    if RESERVED.contains(&name) {
        check.error("name", format!("{name:?} is reserved for Anthropic's official marketplaces"));
    }
    if ["org", "org-provisioned", "unknown"].contains(&name.to_ascii_lowercase().as_str()) {
        check.warn("name", format!("Marketplace name {name:?} is reserved in Claude Desktop"));
    }
}

fn required_string(fields: &Map<String, Value>, key: &str, prefix: &str, check: &mut Check) -> Option<String> {
    match fields.get(key) {
        None => {
            check.error(format!("{prefix}{key}"), "is required");
            None
        }
        Some(_) => optional_string(fields, key, prefix, check),
    }
}

fn optional_string(fields: &Map<String, Value>, key: &str, prefix: &str, check: &mut Check) -> Option<String> {
    match fields.get(key) {
        Some(Value::String(s)) => Some(s.clone()),
        Some(other) => {
            check.error(format!("{prefix}{key}"), format!("expected a string, found {}", type_name(other)));
            None
        }
        None => None,
    }
}

fn strings(v: &Value, field: &str, check: &mut Check) {
    match v {
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate().filter(|(_, item)| !item.is_string()) {
                check.error(format!("{field}[{i}]"), format!("expected a string, found {}", type_name(item)));
            }
        }
        other => check.error(field, format!("expected an array of strings, found {}", type_name(other))),
    }
}

#[path = "marketplace_entries.rs"]
mod entries;
use entries::entry;
pub use entries::{Entry, PluginSource, github_repo};

#[cfg(test)]
#[path = "marketplace_tests.rs"]
mod tests;
