//! Installing a marketplace entry's plugin into the store's cache ([`install`]) and recording
//! installations ([`record`], [`forget`]).
//!
//! Contract:
//! - The entry's `source` is resolved: a path inside the marketplace (after links are resolved;
//!   one leaving the marketplace is refused), or a git repository cloned into a scratch
//!   directory of the store (`ref`, and `sha` checked out when given; `git-subdir`'s `path`
//!   inside it). `npm`, `archive` and `command` sources are refused with a message saying so.
//! - The version is the first of: `plugin.json`'s `version`, the entry's `version`, the first
//!   12 digits of the commit (the clone's, or the marketplace's work tree's when it is one),
//!   else `unknown-` and a digest of the copied content (Claude Code writes `unknown`; the
//!   digest makes a changed local plugin a new version).
//! - The plugin is copied ([`super::copy`]) with its effective manifest ([`super::strict`])
//!   into a scratch directory, checked ([`super::Manifest::read`]), then renamed to
//!   `cache/<marketplace>/<plugin>/<version>/`. A version directory that exists is never
//!   changed: installing that version again uses it as it is. So an update is a new
//!   directory, and a session that loaded the old one is unaffected.
//! - [`record`] keeps one installation per scope (and project, for project and local scopes)
//!   and an install's first `installedAt`.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::git::{Git, GitError};
use super::manifest::MANIFEST as MANIFEST_FILE;
use super::marketplace::{Entry, Marketplace, PluginSource};
use super::settings_file::InstallScope;
use super::store::{Install, Installed, Store, path_component};
use super::{Manifest, PluginError, copy, strict};

/// Why a plugin was not installed.
#[derive(Debug, thiserror::Error)]
pub enum InstallError {
    /// A file of the marketplace or the plugin is wrong (names the file and the field).
    #[error(transparent)]
    Plugin(#[from] PluginError),
    /// git failed (names the source).
    #[error(transparent)]
    Git(#[from] GitError),
    /// The entry cannot be installed by spine.
    #[error("{0}")]
    Refused(String),
}

/// A plugin copied into the cache.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Copied {
    /// The version directory's name.
    pub version: String,
    /// `cache/<marketplace>/<plugin>/<version>/`.
    pub install_path: PathBuf,
    /// The commit the copy came from, when it came from git.
    pub sha: Option<String>,
    /// Whether this install made the directory (false: that version was there already).
    pub fresh: bool,
    /// Links that were not copied.
    pub skipped: Vec<String>,
    /// The copy's `defaultEnabled`.
    pub default_enabled: Option<bool>,
}

/// A scratch directory of the store, removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new(store: &Store, purpose: &str) -> Result<Scratch, PluginError> {
        let nanos =
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0);
        let dir = store.dir.join(".tmp").join(format!("{purpose}-{}-{nanos}", std::process::id()));
        std::fs::create_dir_all(&dir)
            .map_err(|e| PluginError::new(&dir, "(directory)", format!("cannot create a scratch directory: {e}")))?;
        Ok(Scratch(dir))
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
        // The scratch area itself, when nothing else is in it.
        if let Some(parent) = self.0.parent() {
            let _ = std::fs::remove_dir(parent);
        }
    }
}

/// Copies `entry`'s plugin of `marketplace` into `store`'s cache (see the module contract).
pub fn install(store: &Store, git: &Git, marketplace: &Marketplace, entry: &Entry) -> Result<Copied, InstallError> {
    let scratch = Scratch::new(store, &path_component(&entry.name))?;
    let id = format!("{}@{}", entry.name, marketplace.name);
    let (plugin_dir, boundary, sha) = resolve(git, marketplace, entry, &scratch.0)?;
    let manifest_file = plugin_dir.join(MANIFEST_FILE);
    let own = match std::fs::read_to_string(&manifest_file) {
        Ok(text) => {
            let value: Value = serde_json::from_str(&text)
                .map_err(|e| PluginError::new(&manifest_file, "(file)", format!("not valid JSON: {e}")))?;
            Manifest::parse(&manifest_file, &value)?;
            value.as_object().cloned()
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(PluginError::new(&manifest_file, "(file)", e.to_string()).into()),
    };
    let mut effective = strict::effective(entry, own.as_ref(), &plugin_dir, &marketplace.file)?;
    let text = |map: Option<&Map<String, Value>>| {
        map.and_then(|m| m.get("version")).and_then(Value::as_str).map(str::to_owned)
    };
    let mut version = text(own.as_ref())
        .or_else(|| text(effective.as_ref().map(|e| &e.manifest)))
        .or_else(|| entry.version.clone())
        .or_else(|| sha.as_ref().map(|s| s[..12].to_owned()));
    if let (Some(made), Some(v)) = (effective.as_mut(), version.as_ref()) {
        made.manifest.entry("version").or_insert_with(|| Value::String(v.clone()));
    }

    let copy_dir = scratch.0.join("copy");
    let skipped = copy::copy_plugin(&plugin_dir, &boundary, &copy_dir)?;
    if let Some(made) = &effective {
        write_json(&copy_dir.join(MANIFEST_FILE), &Value::Object(made.manifest.clone()))?;
        for (rel, value) in &made.files {
            write_json(&copy_dir.join(rel), value)?;
        }
    }
    let read = Manifest::read(&copy_dir).map_err(|e| {
        InstallError::Refused(format!(
            "{id}: the installed copy does not load: {}: {}: {}",
            MANIFEST_FILE, e.field, e.reason
        ))
    })?;
    let version = match version.take() {
        Some(v) => v,
        None => format!("unknown-{}", copy::digest(&copy_dir)?),
    };
    let install_path = store.cache_dir(&marketplace.name, &entry.name, &version);
    let mut copied = Copied {
        version,
        install_path: install_path.clone(),
        sha,
        fresh: false,
        skipped,
        default_enabled: read.manifest.default_enabled,
    };
    if install_path.exists() {
        return Ok(copied);
    }
    let parent = install_path.parent().unwrap_or(&store.dir);
    std::fs::create_dir_all(parent)
        .map_err(|e| PluginError::new(parent, "(directory)", format!("cannot create the cache directory: {e}")))?;
    match std::fs::rename(&copy_dir, &install_path) {
        Ok(()) => copied.fresh = true,
        // Another install made the same version meanwhile: it is the same content.
        Err(_) if install_path.exists() => {}
        Err(e) => {
            return Err(PluginError::new(
                &install_path,
                "(directory)",
                format!("cannot move the copy into place: {e}"),
            )
            .into());
        }
    }
    Ok(copied)
}

/// The plugin's directory, the boundary its links may reach, and its commit.
fn resolve(
    git: &Git,
    marketplace: &Marketplace,
    entry: &Entry,
    scratch: &Path,
) -> Result<(PathBuf, PathBuf, Option<String>), InstallError> {
    let field = format!("plugins[{}].source", entry.index);
    match &entry.source {
        PluginSource::Path(rel) => {
            let root = marketplace.root.canonicalize().map_err(|e| {
                PluginError::new(&marketplace.root, "(directory)", format!("cannot open the marketplace: {e}"))
            })?;
            let joined = root.join(rel);
            let dir = joined.canonicalize().map_err(|_| {
                PluginError::new(
                    &marketplace.file,
                    &field,
                    format!("plugin directory not found at path: {rel}. Check that the marketplace entry has the correct path"),
                )
            })?;
            if !dir.starts_with(&root) {
                return Err(PluginError::new(
                    &marketplace.file,
                    &field,
                    format!("{rel:?} leads outside the marketplace"),
                )
                .into());
            }
            if !dir.is_dir() {
                return Err(PluginError::new(&marketplace.file, &field, format!("{rel:?} is not a directory")).into());
            }
            let sha = git.head(&root);
            Ok((dir, root, sha))
        }
        PluginSource::Git { url, git_ref, sha, subdir, .. } => {
            let clone = scratch.join("source");
            match sha {
                Some(sha) => git.clone_at(url, git_ref.as_deref(), sha, &clone)?,
                None => git.clone(url, git_ref.as_deref(), &clone)?,
            }
            let root = clone
                .canonicalize()
                .map_err(|e| PluginError::new(&clone, "(directory)", format!("cannot open the clone: {e}")))?;
            let head = git.head(&root);
            let dir = match subdir {
                Some(sub) => root.join(sub).canonicalize().map_err(|_| {
                    PluginError::new(&marketplace.file, &format!("{field}.path"), format!("{sub:?} is not in {url}"))
                })?,
                None => root.clone(),
            };
            if !dir.starts_with(&root) || !dir.is_dir() {
                return Err(PluginError::new(
                    &marketplace.file,
                    &format!("{field}.path"),
                    "must be a directory inside the repository",
                )
                .into());
            }
            Ok((dir, root, head))
        }
        PluginSource::Other(kind) => Err(InstallError::Refused(format!(
            "{}@{}: spine does not install plugins from {kind:?} sources (only marketplace paths and git repositories); {}: {field}",
            entry.name,
            marketplace.name,
            marketplace.file.display()
        ))),
    }
}

fn write_json(path: &Path, value: &Value) -> Result<(), PluginError> {
    let fail = |e: std::io::Error| PluginError::new(path, "(file)", format!("cannot write: {e}"));
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(fail)?;
    }
    let text = serde_json::to_string_pretty(value).map_err(|e| PluginError::new(path, "(file)", e.to_string()))?;
    // The copy may hold a link here (kept because it pointed inside the plugin): replace it.
    let _ = std::fs::remove_file(path);
    std::fs::write(path, text + "\n").map_err(fail)
}

/// Whether `install` is the installation of `scope` for `project` (any project for `user`).
pub fn same_place(install: &Install, scope: InstallScope, project: &Path) -> bool {
    install.scope == scope.as_str() && (scope == InstallScope::User || install.project_path.as_deref() == Some(project))
}

/// Records `copied` as `id`'s installation of `scope` (for `project`, unless user), at `now`;
/// the previous one of that scope is replaced, keeping its `installedAt`.
pub fn record(installed: &mut Installed, id: &str, scope: InstallScope, project: &Path, copied: &Copied, now: &str) {
    let list = installed.plugins.entry(id.to_owned()).or_default();
    let previous = list.iter().position(|i| same_place(i, scope, project));
    let (installed_at, extra) = match previous.map(|i| list.remove(i)) {
        Some(old) => (old.installed_at, old.extra),
        None => (now.to_owned(), Map::new()),
    };
    let install = Install {
        scope: scope.as_str().to_owned(),
        install_path: copied.install_path.clone(),
        version: copied.version.clone(),
        project_path: (scope != InstallScope::User).then(|| project.to_path_buf()),
        installed_at,
        last_updated: now.to_owned(),
        git_commit_sha: copied.sha.clone(),
        extra,
    };
    list.insert(previous.unwrap_or(list.len()), install);
}

/// Removes `id`'s installation of `scope` for `project`; the removed one, if there was one.
pub fn forget(installed: &mut Installed, id: &str, scope: InstallScope, project: &Path) -> Option<Install> {
    let list = installed.plugins.get_mut(id)?;
    let at = list.iter().position(|i| same_place(i, scope, project))?;
    let removed = list.remove(at);
    if list.is_empty() {
        installed.plugins.remove(id);
    }
    Some(removed)
}

#[cfg(test)]
#[path = "install_tests.rs"]
mod tests;
