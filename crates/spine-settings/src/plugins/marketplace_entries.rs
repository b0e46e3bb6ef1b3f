//! The entries of a marketplace's catalog (`plugins[i]`): their fields and sources, checked
//! (see the `marketplace` module contract).

use std::path::Path;

use serde_json::{Map, Value};

use super::{Check, ENTRY_ONLY, has_parent, kebab, optional_string, required_string, strings, valid_id_part};
use crate::plugins::Manifest;
use crate::source::type_name;

/// Where an entry's plugin comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PluginSource {
    /// A directory of the marketplace (`./plugins/x`, `.`), relative to its root.
    Path(String),
    /// A git repository: `github` (`url` is `https://github.com/<repo>.git`), `url`, `git`,
    /// or `git-subdir` (`subdir` is the plugin's directory in it).
    Git {
        /// The source's type as written.
        kind: String,
        /// What git clones.
        url: String,
        /// `ref`: a branch or a tag.
        git_ref: Option<String>,
        /// `sha`: the commit to check out.
        sha: Option<String>,
        /// `path` of a `git-subdir` source.
        subdir: Option<String>,
    },
    /// `npm`, `archive` or `command`: Claude Code's, not installed by spine.
    Other(String),
}

/// One entry of `plugins`.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    /// Its position in `plugins`.
    pub index: usize,
    /// `name` (the `name` of `name@marketplace`).
    pub name: String,
    /// `source`.
    pub source: PluginSource,
    /// `strict` (default true: the plugin's own `plugin.json` is the authority).
    pub strict: bool,
    /// `version`.
    pub version: Option<String>,
    /// `description`.
    pub description: Option<String>,
    /// The entry as written.
    pub fields: Map<String, Value>,
}

impl Entry {
    /// The entry's manifest fields: the entry without the marketplace's own fields.
    pub fn manifest_fields(&self) -> Map<String, Value> {
        self.fields
            .iter()
            .filter(|(k, _)| !ENTRY_ONLY.contains(&k.as_str()))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect()
    }
}

/// One entry of `plugins`, checked; `None` when it cannot be used.
pub(super) fn entry(
    file: &Path,
    index: usize,
    item: &Value,
    plugin_root: Option<&str>,
    check: &mut Check,
) -> Option<Entry> {
    let at = format!("plugins[{index}]");
    let Value::Object(fields) = item else {
        check.error(at, format!("expected an object, found {}", type_name(item)));
        return None;
    };
    let errors_before = check.errors.len();
    let name = required_string(fields, "name", &format!("{at}."), check);
    if let Some(name) = &name {
        if name.chars().any(char::is_whitespace) {
            check
                .error(format!("{at}.name"), "Plugin name cannot contain spaces. Use kebab-case (e.g., \"my-plugin\")");
        } else if !valid_id_part(name) {
            check.error(format!("{at}.name"), format!("{name:?}: each part of a plugin id may use only letters, digits, \".\", \"_\" and \"-\", and must start with a letter or digit"));
        } else if !kebab(name) {
            check.warn(format!("{at}.name"), format!("Plugin name {name:?} is not kebab-case"));
        }
    }
    let source = match fields.get("source") {
        Some(v) => plugin_source(v, plugin_root, &format!("{at}.source"), check),
        None => {
            check.error(format!("{at}.source"), "is required");
            None
        }
    };
    let strict = match fields.get("strict") {
        Some(Value::Bool(b)) => *b,
        Some(other) => {
            check.error(format!("{at}.strict"), format!("expected true or false, found {}", type_name(other)));
            true
        }
        None => true,
    };
    optional_string(fields, "category", &format!("{at}."), check);
    if let Some(tags) = fields.get("tags") {
        strings(tags, &format!("{at}.tags"), check);
    }
    let mut manifest: Map<String, Value> =
        fields.iter().filter(|(k, _)| !ENTRY_ONLY.contains(&k.as_str())).map(|(k, v)| (k.clone(), v.clone())).collect();
    if name.is_none() {
        manifest.insert("name".to_owned(), Value::String("entry".to_owned()));
    }
    match Manifest::parse(file, &Value::Object(manifest)) {
        Ok(read) => {
            let prefix = format!("{}: ", file.display());
            for warning in read.warnings {
                check.warn(at.clone(), warning.strip_prefix(&prefix).unwrap_or(&warning).to_owned());
            }
        }
        Err(e) if e.field == "name" => {}
        Err(e) => check.error(format!("{at}.{}", e.field), e.reason),
    }
    if check.errors.len() > errors_before {
        return None;
    }
    let text = |key: &str| fields.get(key).and_then(Value::as_str).map(str::to_owned);
    Some(Entry {
        index,
        name: name?,
        source: source?,
        strict,
        version: text("version"),
        description: text("description"),
        fields: fields.clone(),
    })
}

fn plugin_source(v: &Value, plugin_root: Option<&str>, at: &str, check: &mut Check) -> Option<PluginSource> {
    let fields = match v {
        Value::String(path) => return relative_source(path, plugin_root, at, check),
        Value::Object(fields) => fields,
        other => {
            check.error(at, format!("expected a path or a source object, found {}", type_name(other)));
            return None;
        }
    };
    let kind = match fields.get("source") {
        Some(Value::String(kind)) => kind.clone(),
        _ => {
            check.error(
                format!("{at}.source"),
                "expected the source's type (github, url, git, git-subdir, npm, archive, command)",
            );
            return None;
        }
    };
    let field = |key: &str, check: &mut Check| optional_string(fields, key, &format!("{at}."), check);
    let git_ref = field("ref", check);
    let sha = field("sha", check);
    if let Some(sha) = &sha
        && !(sha.len() == 40 && sha.chars().all(|c| c.is_ascii_hexdigit()))
    {
        check.error(format!("{at}.sha"), format!("{sha:?}: expected a full 40-character commit SHA"));
    }
    let git = |url: String, subdir: Option<String>| PluginSource::Git {
        kind: kind.clone(),
        url,
        git_ref: git_ref.clone(),
        sha: sha.clone(),
        subdir,
    };
    match kind.as_str() {
        "github" => match field("repo", check) {
            Some(repo) if github_repo(&repo) => Some(git(format!("https://github.com/{repo}.git"), None)),
            Some(repo) => {
                check.error(format!("{at}.repo"), format!("{repo:?}: expected a GitHub repository as owner/repo"));
                None
            }
            None => {
                check.error(format!("{at}.repo"), "is required");
                None
            }
        },
        "url" | "git" | "git-subdir" => {
            let url = field("url", check);
            let subdir = match kind.as_str() {
                "git-subdir" => match field("path", check) {
                    Some(path) if !has_parent(&path) && !path.starts_with('/') => Some(path),
                    Some(path) => {
                        check.error(
                            format!("{at}.path"),
                            format!("{path:?}: must stay inside the repository (no `..`)"),
                        );
                        return None;
                    }
                    None => {
                        check.error(format!("{at}.path"), "is required");
                        return None;
                    }
                },
                _ => None,
            };
            match url {
                Some(url) if !url.is_empty() => Some(git(url, subdir)),
                _ => {
                    check.error(format!("{at}.url"), "is required");
                    None
                }
            }
        }
        "npm" | "archive" | "command" => Some(PluginSource::Other(kind)),
        other => {
            check.error(format!("{at}.source"), format!("unknown source type {other:?}"));
            None
        }
    }
}

fn relative_source(path: &str, plugin_root: Option<&str>, at: &str, check: &mut Check) -> Option<PluginSource> {
    if has_parent(path) {
        check.error(
            at,
            format!("Path contains \"..\": {path}. Plugin source paths are resolved relative to the marketplace root (the directory containing .claude-plugin/); they cannot leave it"),
        );
        return None;
    }
    if path == "." || path.starts_with("./") {
        return Some(PluginSource::Path(path.to_owned()));
    }
    let bare = !path.is_empty() && !path.contains(['/', '\\']) && !path.starts_with('.');
    match (bare, plugin_root) {
        (true, Some(root)) => Some(PluginSource::Path(format!("{}/{path}", root.trim_end_matches('/')))),
        (true, None) => {
            check.error(at, format!("Bare source name {path:?} requires metadata.pluginRoot. Use \"./relative/path\", or set metadata.pluginRoot"));
            None
        }
        (false, _) => {
            check.error(
                at,
                format!("{path:?}: a plugin's path must start with \"./\" (relative to the marketplace root)"),
            );
            None
        }
    }
}

/// Whether `repo` is GitHub's `owner/repo`.
pub fn github_repo(repo: &str) -> bool {
    let Some((owner, name)) = repo.split_once('/') else { return false };
    let owner_ok = owner.chars().next().is_some_and(|c| c.is_ascii_alphanumeric())
        && owner.chars().last().is_some_and(|c| c.is_ascii_alphanumeric())
        && owner.chars().all(|c| c.is_ascii_alphanumeric() || c == '-');
    let name_ok = !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'));
    owner_ok && name_ok
}
