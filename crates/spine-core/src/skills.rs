//! Skills: catalogs of `<name>/SKILL.md` directories, selection by reference, loading.
//!
//! Roots come in order `system`, `live` (both active) and `curated` (inactive: listed, never
//! loaded). `SKILL.md` may open with YAML front matter (`---` … `---`) giving `name` and
//! `description`; the name defaults to the directory's. Names are `[A-Za-z0-9._-]+`. A name
//! already taken by an earlier root is shadowed; unreadable or invalid skills are skipped and
//! reported as [`SkillIssue`]s (the caller records them in the trace).
//!
//! Selection scans user and assistant messages (never tool output or hook context, so fetched
//! content cannot load skills) for `[$name](…)` links and inline `$name` not preceded by a word
//! character or `/`; the names are de-duplicated and kept only when active. A subagent's
//! preloaded skills (its definition's `skills`) come first, whatever the messages say
//! ([`select_with`]).
//!
//! Files inside a skill are read through the skill directory's boundary.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use regex::Regex;
use serde::{Deserialize, Serialize};
use spine_protocol::message::Message;
use thiserror::Error;

use crate::workspace::Workspace;
use crate::workspace::open::OpenError;

/// The kind of a skill root (spine-protocol's, shared with spine-settings).
pub use spine_protocol::skill_root::SkillRootKind;

/// A directory of skills.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SkillRoot {
    /// The directory.
    pub path: PathBuf,
    /// Its kind.
    pub kind: SkillRootKind,
}

/// A skill in a catalog.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SkillEntry {
    /// From the front matter's `name`, else the directory's name; `$name` selects it.
    pub name: String,
    /// The description (front matter).
    pub description: String,
    /// Its root's kind.
    pub source_kind: SkillRootKind,
    /// Whether it can be selected.
    pub active: bool,
    /// The skill's directory.
    pub root_path: PathBuf,
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
}

#[derive(Debug, Default, Deserialize)]
struct FrontMatter {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    description: Option<String>,
}

fn valid_name(name: &str) -> bool {
    !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
}

/// The front matter of a SKILL.md text.
fn front_matter(text: &str) -> Result<FrontMatter, String> {
    crate::front_matter::parse::<FrontMatter>(text).map(|(meta, _)| meta)
}

impl SkillCatalog {
    /// Scans roots in order; returns the catalog and the skills that were skipped.
    pub fn scan(roots: &[SkillRoot]) -> (SkillCatalog, Vec<SkillIssue>) {
        let mut entries: Vec<SkillEntry> = Vec::new();
        let mut issues = Vec::new();
        let mut ordered = roots.to_vec();
        ordered.sort_by_key(|r| r.kind);
        for root in &ordered {
            let Ok(dir) = std::fs::read_dir(&root.path) else { continue };
            let mut dirs: Vec<PathBuf> =
                dir.filter_map(Result::ok).map(|e| e.path()).filter(|p| p.join("SKILL.md").is_file()).collect();
            dirs.sort();
            for skill_dir in dirs {
                let dir_name = skill_dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
                // SKILL.md is read race-free beneath its skill directory, as `read_file` does.
                let text = match read_skill_md(&skill_dir) {
                    Ok(t) => t,
                    Err(reason) => {
                        issues.push(SkillIssue { name: dir_name, reason: format!("unreadable SKILL.md: {reason}") });
                        continue;
                    }
                };
                let fm = match front_matter(&text) {
                    Ok(fm) => fm,
                    Err(reason) => {
                        issues.push(SkillIssue { name: dir_name, reason });
                        continue;
                    }
                };
                let name = fm.name.unwrap_or(dir_name);
                if !valid_name(&name) {
                    issues.push(SkillIssue {
                        name,
                        reason: "invalid skill name (use letters, digits, `.`, `_`, `-`)".into(),
                    });
                    continue;
                }
                if entries.iter().any(|e| e.name == name) {
                    issues.push(SkillIssue {
                        name,
                        reason: format!("shadowed by an earlier root ({})", root.path.display()),
                    });
                    continue;
                }
                entries.push(SkillEntry {
                    name,
                    description: fm.description.unwrap_or_default().trim().to_owned(),
                    source_kind: root.kind,
                    active: root.kind.active(),
                    root_path: skill_dir,
                });
            }
        }
        (SkillCatalog { entries }, issues)
    }

    /// Every entry, in catalog order (system, live, curated; then name).
    pub fn entries(&self) -> &[SkillEntry] {
        &self.entries
    }

    /// The active entries.
    pub fn active(&self) -> impl Iterator<Item = &SkillEntry> {
        self.entries.iter().filter(|e| e.active)
    }

    /// An entry by name.
    pub fn get(&self, name: &str) -> Option<&SkillEntry> {
        self.entries.iter().find(|e| e.name == name)
    }

    /// Loads an active skill: SKILL.md and the list of its other files.
    pub fn load(&self, name: &str) -> Result<LoadedSkill, SkillError> {
        let entry = self.get(name).ok_or_else(|| SkillError::NotFound(name.to_owned()))?;
        if !entry.active {
            return Err(SkillError::Inactive(name.to_owned()));
        }
        let skill_md = self.read_file(name, "SKILL.md")?;
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

/// A skill directory's SKILL.md, opened beneath that directory (a SKILL.md symlink leading
/// out of it is refused).
fn read_skill_md(skill_dir: &Path) -> Result<String, String> {
    let boundary = Workspace::new(skill_dir).map_err(|e| e.to_string())?;
    let bytes = boundary.read_file(Path::new("SKILL.md")).map_err(|e| e.to_string())?;
    String::from_utf8(bytes).map_err(|e| e.to_string())
}

fn link_re() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| Regex::new(r"\[\$([A-Za-z0-9._-]+)\]\([^)]*\)").unwrap_or_else(|_| unreachable!("valid regex")))
}

fn inline_re() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| Regex::new(r"(?:^|[^\w/])\$([A-Za-z0-9._-]+)").unwrap_or_else(|_| unreachable!("valid regex")))
}

/// The skill names referenced by user and assistant messages, de-duplicated, in order of first
/// reference. Trailing dots (sentence punctuation) are not part of a name.
pub fn referenced_names(messages: &[Message]) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for m in messages {
        let text = match m {
            Message::User { content, .. } => content.as_str(),
            Message::Assistant(a) => a.content.as_deref().unwrap_or(""),
            Message::System { .. } | Message::Tool(_) | Message::Context(_) => continue,
        };
        if !text.contains('$') {
            continue;
        }
        for caps in link_re().captures_iter(text).chain(inline_re().captures_iter(text)) {
            if let Some(m) = caps.get(1) {
                let name = m.as_str().trim_end_matches('.');
                if !name.is_empty() && !names.iter().any(|n| n == name) {
                    names.push(name.to_owned());
                }
            }
        }
    }
    names
}

/// The outcome of selecting skills for a turn.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Selection {
    /// Every referenced name.
    pub requested: Vec<String>,
    /// The active skills loaded.
    pub selected: Vec<LoadedSkill>,
    /// Referenced names that were not loaded, and why.
    pub skipped: Vec<SkillIssue>,
}

/// Selects and loads the skills a transcript references.
pub fn select(catalog: &SkillCatalog, messages: &[Message]) -> Selection {
    select_with(catalog, &[], messages)
}

/// Selects and loads the `preloaded` skills (a subagent definition's `skills`), then those the
/// transcript references and `preloaded` does not name.
pub fn select_with(catalog: &SkillCatalog, preloaded: &[String], messages: &[Message]) -> Selection {
    let mut requested: Vec<String> = Vec::new();
    for name in preloaded.iter().cloned().chain(referenced_names(messages)) {
        if !requested.contains(&name) {
            requested.push(name);
        }
    }
    let mut selection = Selection { requested: requested.clone(), ..Default::default() };
    for name in requested {
        match catalog.load(&name) {
            Ok(skill) => selection.selected.push(skill),
            Err(e) => selection.skipped.push(SkillIssue { name, reason: e.to_string() }),
        }
    }
    selection
}

#[cfg(test)]
mod tests {
    use super::*;

    fn skill(root: &Path, dir: &str, md: &str) {
        std::fs::create_dir_all(root.join(dir)).expect("mkdir");
        std::fs::write(root.join(dir).join("SKILL.md"), md).expect("write");
    }

    #[test]
    fn references_are_links_or_inline_dollar_names_not_after_word_chars_or_slashes() {
        let m = [
            Message::user("use $portable-notes. and [$deploy](skills/deploy) and a$b and /$c and $portable-notes"),
            Message::Tool(spine_protocol::message::ToolResultMessage {
                tool_call_id: "x".into(),
                name: "t".into(),
                content: "$fromtool".into(),
                error_code: None,
                images: Vec::new(),
            }),
        ];
        assert_eq!(referenced_names(&m), vec!["deploy", "portable-notes"]);
    }

    #[test]
    fn catalog_orders_roots_reads_front_matter_and_keeps_curated_inactive() {
        let dir = tempfile::tempdir().expect("tmp");
        let (sys, live, cur) = (dir.path().join("sys"), dir.path().join("live"), dir.path().join("cur"));
        skill(
            &live,
            "notes",
            "---\nname: portable-notes\ndescription: >\n  Keep notes\n  portable.\n---\nWrite notes in Markdown.\n",
        );
        skill(&sys, "deploy", "Deploy with care.\n");
        skill(&cur, "draft", "---\ndescription: not yet\n---\nbody\n");
        skill(&live, "bad name", "x");
        skill(&live, "broken", "---\nname: [unclosed\n---\n");
        let roots = [
            SkillRoot { path: cur, kind: SkillRootKind::Curated },
            SkillRoot { path: live, kind: SkillRootKind::Live },
            SkillRoot { path: sys, kind: SkillRootKind::System },
        ];
        let (catalog, issues) = SkillCatalog::scan(&roots);
        let names: Vec<(&str, bool)> = catalog.entries().iter().map(|e| (e.name.as_str(), e.active)).collect();
        assert_eq!(names, vec![("deploy", true), ("portable-notes", true), ("draft", false)]);
        assert_eq!(catalog.get("portable-notes").map(|e| e.description.as_str()), Some("Keep notes portable."));
        assert_eq!(issues.len(), 2, "{issues:?}");

        let selection = select(&catalog, &[Message::user("follow $portable-notes and $draft and $unknown")]);
        assert_eq!(selection.selected.len(), 1);
        assert!(selection.selected[0].skill_md.contains("Write notes in Markdown."));
        assert_eq!(selection.skipped.iter().map(|s| s.name.as_str()).collect::<Vec<_>>(), ["draft", "unknown"]);
    }

    #[test]
    fn preloaded_skills_are_selected_first_without_a_reference_and_once() {
        let dir = tempfile::tempdir().expect("tmp");
        skill(dir.path(), "a", "Skill A.");
        skill(dir.path(), "b", "Skill B.");
        let (catalog, _) =
            SkillCatalog::scan(&[SkillRoot { path: dir.path().to_path_buf(), kind: SkillRootKind::Live }]);
        let preloaded = ["b".to_owned(), "gone".to_owned()];
        let selection = select_with(&catalog, &preloaded, &[Message::user("use $a and $b")]);
        let names: Vec<&str> = selection.selected.iter().map(|l| l.entry.name.as_str()).collect();
        assert_eq!(names, ["b", "a"]);
        assert_eq!(selection.skipped.iter().map(|s| s.name.as_str()).collect::<Vec<_>>(), ["gone"]);
    }

    #[test]
    fn skill_files_are_read_through_the_skill_boundary() {
        let dir = tempfile::tempdir().expect("tmp");
        skill(dir.path(), "s", "body");
        std::fs::write(dir.path().join("s/ref.md"), "reference").expect("write");
        std::fs::write(dir.path().join("secret.txt"), "secret").expect("write");
        let (catalog, _) =
            SkillCatalog::scan(&[SkillRoot { path: dir.path().to_path_buf(), kind: SkillRootKind::Live }]);
        assert_eq!(catalog.read_file("s", "ref.md"), Ok("reference".into()));
        assert!(matches!(catalog.read_file("s", "../secret.txt"), Err(SkillError::InvalidFileReference { .. })));
        assert!(matches!(catalog.read_file("s", "/etc/passwd"), Err(SkillError::InvalidFileReference { .. })));
        assert_eq!(catalog.load("s").map(|l| l.files), Ok(vec!["ref.md".to_owned()]));
    }

    #[test]
    fn skill_md_symlinked_out_of_its_skill_directory_is_refused_at_scan() {
        let dir = tempfile::tempdir().expect("tmp");
        let outside = tempfile::tempdir().expect("tmp");
        std::fs::write(outside.path().join("SKILL.md"), "---\nname: stolen\n---\nsecret").expect("write");
        std::fs::create_dir(dir.path().join("s")).expect("mkdir");
        std::os::unix::fs::symlink(outside.path().join("SKILL.md"), dir.path().join("s/SKILL.md")).expect("link");
        let (catalog, issues) =
            SkillCatalog::scan(&[SkillRoot { path: dir.path().to_path_buf(), kind: SkillRootKind::Live }]);
        assert!(catalog.entries().is_empty());
        assert!(issues.iter().any(|i| i.reason.contains("outside the workspace")), "{issues:?}");
    }
}
