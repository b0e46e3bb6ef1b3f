//! Skills: catalogs of `<name>/SKILL.md` directories, as spine, Claude Code and Codex lay
//! them out; the listing the model reads, the `Skill` tool's invocation, what an active skill
//! restricts, and the seed's selection by `$name`.
//!
//! Roots come in order `system`, `live` (both active) and `curated` (inactive: listed, never
//! loaded); then the enabled plugins' skills ([`PluginSkills`]). `SKILL.md` may open with YAML
//! front matter ([`meta`]). A skill's name is its front matter's `name` when that is a valid
//! name (`[A-Za-z0-9._-]+`), else its directory's; the other one, when valid, is its
//! [`SkillMeta::alias`] (Claude Code invokes a skill by either). A plugin's skill is named
//! `<plugin>:<name>` (the front matter's `name`, else its directory's, else — for a plugin
//! that is one skill — the plugin directory's). Without a `description`, the first non-blank
//! line of the body describes the skill (what Claude Code 2.1.328 lists). A name already taken
//! by an earlier root is shadowed; unreadable or invalid skills are skipped and reported as
//! [`SkillIssue`]s (the caller records them in the trace); front matter spine does not apply
//! is reported in [`SkillCatalog::notes`].
//!
//! Files inside a skill are read through the skill directory's boundary.
//!
//! Modules: [`meta`] (the front matter), `select` (`$name` references), `listing` (the
//! budgeted listing), `render` (an invocation's text), `invoke` (the `Skill` tool's lookup
//! and refusals), `active` (what an active skill restricts, and its model).

mod active;
mod invoke;
mod listing;
pub mod meta;
mod render;
mod select;
#[cfg(test)]
mod tests;

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use spine_protocol::parse_memo::{ParseMemo, Stamp};
use thiserror::Error;

use crate::workspace::Workspace;
use crate::workspace::open::OpenError;

pub use active::{ActiveSkill, ActiveSkills, SkillModels};
pub use invoke::{Invocation, InvokeError, Invoker, SkillSession};
pub use listing::{
    BUDGET_FRACTION, CHARS_PER_TOKEN, DEFAULT_CONTEXT_WINDOW, DESCRIPTION_CAP, LISTING_HEADING, Listing, listing,
    listing_budget,
};
pub use meta::SkillMeta;
pub use render::{SkillVars, render, split_words, substitute};
pub use select::{Selection, referenced_names, select, select_with};
/// The kind of a skill root (spine-protocol's, shared with spine-settings).
pub use spine_protocol::skill_root::SkillRootKind;

/// The name of the tool that loads a skill (Claude Code's).
pub const SKILL_TOOL: &str = "Skill";

/// A directory of skills.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SkillRoot {
    /// The directory.
    pub path: PathBuf,
    /// Its kind.
    pub kind: SkillRootKind,
}

/// Where an enabled plugin's skills are: a directory of `<name>/SKILL.md` skills, or one skill.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PluginSkills {
    /// The plugin's name (the skills' namespace).
    pub plugin: String,
    /// The plugin's directory (`${CLAUDE_PLUGIN_ROOT}`).
    pub root: PathBuf,
    /// The plugin's data directory (`${CLAUDE_PLUGIN_DATA}`).
    pub data: PathBuf,
    /// The directory.
    pub dir: PathBuf,
    /// Whether `dir` is one skill (its `SKILL.md` directly inside).
    pub single: bool,
}

/// The plugin a skill came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PluginOrigin {
    /// The plugin's name.
    pub name: String,
    /// Its directory.
    pub root: PathBuf,
    /// Its data directory.
    pub data: PathBuf,
}

/// A skill in a catalog.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SkillEntry {
    /// Its name (see the module documentation); `$name`, `/name` and `Skill` select it.
    pub name: String,
    /// The description (front matter, else the body's first line).
    pub description: String,
    /// Its root's kind (a plugin's skills count as `system`: the user enabled the plugin).
    pub source_kind: SkillRootKind,
    /// Whether it can be selected.
    pub active: bool,
    /// The skill's directory.
    pub root_path: PathBuf,
    /// The rest of its front matter.
    #[serde(default)]
    pub meta: SkillMeta,
    /// The plugin it came from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plugin: Option<PluginOrigin>,
}

/// A loaded skill.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LoadedSkill {
    /// Where it was found and whether it is active.
    pub entry: SkillEntry,
    /// The SKILL.md text.
    pub skill_md: String,
    /// The other files of the skill, relative to its directory.
    pub files: Vec<String>,
}

/// A skill that was skipped while scanning, or not loaded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SkillIssue {
    /// The skill (or directory) name.
    pub name: String,
    /// Why.
    pub reason: String,
}

/// Skill errors.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum SkillError {
    /// No such skill.
    #[error("skill `{0}` not found")]
    NotFound(String),
    /// The skill is in an inactive catalog.
    #[error("skill `{0}` is not active")]
    Inactive(String),
    /// A file reference leaves the skill's directory.
    #[error("invalid file reference `{path}` in skill `{name}`: {reason}")]
    InvalidFileReference {
        /// The skill.
        name: String,
        /// The path asked for.
        path: String,
        /// Why.
        reason: String,
    },
    /// The file could not be read.
    #[error("cannot read {path}: {reason}")]
    Read {
        /// The file.
        path: String,
        /// Why.
        reason: String,
    },
}

/// The skills of a run, scanned once.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SkillCatalog {
    entries: Vec<SkillEntry>,
    notes: Vec<SkillIssue>,
}

/// Whether `name` is a skill name.
pub fn valid_name(name: &str) -> bool {
    !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
}

/// A skill directory's `SKILL.md` split into its front matter's fields and its body.
fn split(text: &str) -> Result<(Map<String, Value>, &str), String> {
    crate::front_matter::parse::<Map<String, Value>>(text)
}

impl SkillCatalog {
    /// Scans roots in order; returns the catalog and the skills that were skipped.
    pub fn scan(roots: &[SkillRoot]) -> (SkillCatalog, Vec<SkillIssue>) {
        Self::scan_all(roots, &[], &ParseMemo::disabled())
    }

    /// Scans roots in order, then the plugins' skills; returns the catalog and the skills that
    /// were skipped. What a SKILL.md gave is remembered in `memo` while the file is unchanged.
    pub fn scan_all(
        roots: &[SkillRoot],
        plugins: &[PluginSkills],
        memo: &ParseMemo,
    ) -> (SkillCatalog, Vec<SkillIssue>) {
        let mut catalog = SkillCatalog::default();
        let mut issues = Vec::new();
        let mut ordered = roots.to_vec();
        ordered.sort_by_key(|r| r.kind);
        for root in &ordered {
            for dir in skill_dirs(&root.path, memo) {
                catalog.add(&dir, root.kind, None, &root.path, &mut issues, memo);
            }
        }
        for plugin in plugins {
            let origin =
                PluginOrigin { name: plugin.plugin.clone(), root: plugin.root.clone(), data: plugin.data.clone() };
            let dirs = if plugin.single { vec![plugin.dir.clone()] } else { skill_dirs(&plugin.dir, memo) };
            for dir in dirs {
                catalog.add(&dir, SkillRootKind::System, Some(&origin), &plugin.dir, &mut issues, memo);
            }
        }
        (catalog, issues)
    }

    /// Reads the skill in `skill_dir` (found under `root`) into the catalog, or an issue.
    fn add(
        &mut self,
        skill_dir: &Path,
        kind: SkillRootKind,
        plugin: Option<&PluginOrigin>,
        root: &Path,
        issues: &mut Vec<SkillIssue>,
        memo: &ParseMemo,
    ) {
        let dir_name = skill_dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let file = skill_dir.join("SKILL.md");
        // One `lstat` says whether there is a SKILL.md and stamps it for the memo; a link is
        // followed (and its skill read each time).
        let stamp = std::fs::symlink_metadata(&file).ok().and_then(|meta| match meta.file_type().is_symlink() {
            true => file.is_file().then_some(None),
            false => Stamp::from_metadata(&meta).filter(Stamp::is_file).map(Some),
        });
        // A candidate directory without a SKILL.md is no skill.
        let Some(stamp) = stamp else { return };
        let read = memo.get_or_parse_stamped("skill.v1", &file, stamp, "", || (read_skill(skill_dir), true));
        let (parsed, first_line) = match read {
            Ok(read) => read,
            Err(reason) => {
                issues.push(SkillIssue { name: dir_name, reason });
                return;
            }
        };
        let own = parsed.name.filter(|n| valid_name(n));
        let Some(base) = own.clone().or_else(|| valid_name(&dir_name).then(|| dir_name.clone())) else {
            let reason = "invalid skill name (use letters, digits, `.`, `_`, `-`)".to_owned();
            issues.push(SkillIssue { name: dir_name, reason });
            return;
        };
        let scoped = |n: &str| match plugin {
            Some(p) => format!("{}:{n}", p.name),
            None => n.to_owned(),
        };
        let name = scoped(&base);
        if self.entries.iter().any(|e| e.name == name) {
            let reason = format!("shadowed by an earlier root ({})", root.display());
            issues.push(SkillIssue { name, reason });
            return;
        }
        // A name wins over an earlier skill's alias.
        for earlier in self.entries.iter_mut().filter(|e| e.meta.alias.as_deref() == Some(name.as_str())) {
            earlier.meta.alias = None;
        }
        let mut meta = parsed.meta;
        meta.alias = (own.is_some() && valid_name(&dir_name) && dir_name != base)
            .then(|| scoped(&dir_name))
            .filter(|alias| self.get(alias).is_none());
        for field in &meta.unsupported {
            let reason = format!("front matter `{field}` is not supported and is ignored");
            self.notes.push(SkillIssue { name: name.clone(), reason });
        }
        let description = parsed.description.unwrap_or(first_line);
        self.entries.push(SkillEntry {
            name,
            description: description.split_whitespace().collect::<Vec<_>>().join(" "),
            source_kind: kind,
            active: kind.active(),
            root_path: skill_dir.to_path_buf(),
            meta,
            plugin: plugin.cloned(),
        });
    }

    /// Every entry, in catalog order (system, live, curated, plugins; then name).
    pub fn entries(&self) -> &[SkillEntry] {
        &self.entries
    }

    /// Front matter the skills set that spine does not apply (one line each).
    pub fn notes(&self) -> &[SkillIssue] {
        &self.notes
    }

    /// The active entries.
    pub fn active(&self) -> impl Iterator<Item = &SkillEntry> {
        self.entries.iter().filter(|e| e.active)
    }

    /// The active entries the model may load (not `disable-model-invocation`).
    pub fn model_invocable(&self) -> impl Iterator<Item = &SkillEntry> {
        self.active().filter(|e| !e.meta.disable_model_invocation)
    }

    /// An entry by name, else by alias.
    pub fn get(&self, name: &str) -> Option<&SkillEntry> {
        self.entries
            .iter()
            .find(|e| e.name == name)
            .or_else(|| self.entries.iter().find(|e| e.meta.alias.as_deref() == Some(name)))
    }

    /// An entry as typed or asked for: [`get`](Self::get), else the one plugin skill whose own
    /// name is `name` (`review` for `tools:review`) when no other plugin has one of that name.
    pub fn find(&self, name: &str) -> Option<&SkillEntry> {
        let name = name.trim().trim_start_matches('/');
        self.get(name).or_else(|| {
            let suffix = format!(":{name}");
            let mut plugin_skills = self.entries.iter().filter(|e| e.plugin.is_some() && e.name.ends_with(&suffix));
            match (plugin_skills.next(), plugin_skills.next()) {
                (Some(one), None) => Some(one),
                _ => None,
            }
        })
    }

    /// Loads an active skill: SKILL.md and the list of its other files.
    pub fn load(&self, name: &str) -> Result<LoadedSkill, SkillError> {
        let entry = self.get(name).ok_or_else(|| SkillError::NotFound(name.to_owned()))?;
        if !entry.active {
            return Err(SkillError::Inactive(name.to_owned()));
        }
        let skill_md = self.read_file(&entry.name, "SKILL.md")?;
        let mut files = Vec::new();
        let walker = ignore::WalkBuilder::new(&entry.root_path).standard_filters(true).build();
        for e in walker.filter_map(Result::ok) {
            if e.file_type().is_some_and(|t| t.is_file())
                && let Ok(rel) = e.path().strip_prefix(&entry.root_path)
            {
                let rel = rel.to_string_lossy().into_owned();
                if rel != "SKILL.md" {
                    files.push(rel);
                }
            }
        }
        files.sort();
        Ok(LoadedSkill { entry: entry.clone(), skill_md, files })
    }

    /// The body of an active skill's `SKILL.md`: the text after its front matter.
    pub fn body(&self, name: &str) -> Result<String, SkillError> {
        let entry = self.get(name).ok_or_else(|| SkillError::NotFound(name.to_owned()))?;
        if !entry.active {
            return Err(SkillError::Inactive(name.to_owned()));
        }
        let text = self.read_file(&entry.name, "SKILL.md")?;
        split(&text)
            .map(|(_, body)| body.to_owned())
            .map_err(|reason| SkillError::Read { path: entry.root_path.join("SKILL.md").display().to_string(), reason })
    }

    /// Reads a file of a skill, confined to the skill's directory.
    pub fn read_file(&self, name: &str, relative_path: &str) -> Result<String, SkillError> {
        let entry = self.get(name).ok_or_else(|| SkillError::NotFound(name.to_owned()))?;
        let invalid = |reason: String| SkillError::InvalidFileReference {
            name: name.to_owned(),
            path: relative_path.to_owned(),
            reason,
        };
        if Path::new(relative_path).is_absolute() {
            return Err(invalid("absolute paths are not allowed".into()));
        }
        let boundary = Workspace::new(&entry.root_path).map_err(|e| invalid(e.to_string()))?;
        let path = boundary.resolve(relative_path, boundary.root()).map_err(|e| invalid(e.to_string()))?;
        // The race-free open is the enforcement: a symlink swapped in after `resolve` cannot
        // lead out of the skill's directory.
        let bytes = boundary.read_file(&path).map_err(|e| match e {
            OpenError::Escape { .. } => invalid(e.to_string()),
            other => SkillError::Read { path: path.display().to_string(), reason: other.to_string() },
        })?;
        String::from_utf8(bytes)
            .map_err(|e| SkillError::Read { path: path.display().to_string(), reason: e.to_string() })
    }
}

/// The entries of `root` that may be skill directories (directories and links to be followed;
/// [`SkillCatalog::add`] skips those without a `SKILL.md`), in name order. The listing is
/// remembered in `memo` while `root` is unchanged: its names, and so their types, change only
/// with it. A missing root costs one `lstat`, as the listing did.
fn skill_dirs(root: &Path, memo: &ParseMemo) -> Vec<PathBuf> {
    let Ok(meta) = std::fs::symlink_metadata(root) else { return Vec::new() };
    memo.get_or_parse_stamped("skill-dirs.v1", root, Stamp::from_metadata(&meta), "", || (candidates(root), true))
}

/// The directories and links in `root`, in name order (a listing's own file type spares a
/// `stat` per entry).
fn candidates(root: &Path) -> Vec<PathBuf> {
    let Ok(dir) = std::fs::read_dir(root) else { return Vec::new() };
    let mut dirs: Vec<PathBuf> = dir
        .filter_map(Result::ok)
        .filter(|e| e.file_type().map_or(true, |kind| kind.is_dir() || kind.is_symlink()))
        .map(|e| e.path())
        .collect();
    dirs.sort();
    dirs
}

/// A skill directory's SKILL.md read: its front matter's fields, and the body's first
/// non-blank line; an error is the issue's reason.
fn read_skill(skill_dir: &Path) -> Result<(meta::Parsed, String), String> {
    // SKILL.md is read race-free beneath its skill directory, as `read_file` does.
    let text = read_skill_md(skill_dir).map_err(|reason| format!("unreadable SKILL.md: {reason}"))?;
    let (fields, body) = split(&text)?;
    let parsed = meta::read(&fields)?;
    let first_line = body.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or_default().to_owned();
    Ok((parsed, first_line))
}

/// A skill directory's SKILL.md, opened beneath that directory (a SKILL.md symlink leading
/// out of it is refused).
fn read_skill_md(skill_dir: &Path) -> Result<String, String> {
    let bytes = crate::workspace::open::read_beneath(skill_dir, Path::new("SKILL.md")).map_err(|e| e.to_string())?;
    String::from_utf8(bytes).map_err(|e| e.to_string())
}
