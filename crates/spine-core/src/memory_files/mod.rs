//! Memory files: the `CLAUDE.md` family Claude Code loads into every session, read once per run
//! and shown to the model as the prompt layer "Memory Files" (see
//! [`prepare_turn`](crate::stages::prepare_turn)).
//!
//! What is loaded, in this order (outer first, so nearer files come later and can refine):
//! 1. the user's file `~/.claude/CLAUDE.md` (home from the caller, `HOME` in `spine run`);
//! 2. the user's rule files `~/.claude/rules/**/*.md` ([`rules`]);
//! 3. from the repository root (the nearest ancestor of the working directory holding `.git`,
//!    else the working directory itself) down to the working directory, in each directory:
//!    `CLAUDE.md`, `CLAUDE.local.md`, `.claude/CLAUDE.md`, `AGENTS.md`;
//! 4. the project's rule files `.claude/rules/**/*.md` of the workspace root. A rule file whose
//!    front matter sets `paths:` is conditional: it is kept aside ([`MemoryFiles::conditional`],
//!    see [`conditional`]) and shown when a tool first touches a matching file ([`triggers`]).
//!
//! Each file is followed by its `@path` imports, depth first, as Claude Code resolves them: an
//! `@` at the start of a line or after whitespace, the path up to the next whitespace (`\ `
//! escapes a space, a `#fragment` is dropped); relative to the importing file's directory,
//! `~/` from home, or absolute. `@` inside code spans and fenced code blocks is not an import.
//! Imports go at most [`MAX_IMPORT_HOPS`] hops deep; a file already loaded is not loaded again
//! (this cuts cycles); an import that is missing, a directory or not UTF-8 text is skipped with
//! a warning.
//!
//! The boundary: project files and their imports are read through the workspace boundary (the
//! race-free opener of [`workspace::open`](crate::workspace::open)); one outside the workspace
//! is skipped with a warning. Only the user's file and the imports reached from it may be
//! outside the workspace.
//!
//! Sizes: each file is cut at [`FILE_CAP`] bytes (with a marker and a warning); once
//! [`TOTAL_CAP`] bytes are loaded, further files are skipped with a warning.

use std::collections::HashSet;
use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

use crate::workspace::Workspace;
use crate::workspace::open::OpenFor;

pub use imports::imports;

/// Bytes kept of each memory file (Claude Code warns about files over 40,000 characters).
pub const FILE_CAP: usize = 40_000;
/// Bytes of memory files loaded in all; later files are skipped.
pub const TOTAL_CAP: usize = 200_000;
/// How many `@path` hops are followed from a memory file (Claude Code's limit).
pub const MAX_IMPORT_HOPS: usize = 5;
/// The project files looked for in every directory from the repository root to the working
/// directory, in this order.
pub const PROJECT_FILE_NAMES: [&str; 4] = ["CLAUDE.md", "CLAUDE.local.md", ".claude/CLAUDE.md", "AGENTS.md"];
/// The user's memory file, relative to home.
pub const USER_FILE: &str = ".claude/CLAUDE.md";

/// Whether a run loads memory files, and from which home.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum MemorySources {
    /// No memory files (the default of a bare `AgentConfig`: library users and tests opt in).
    #[default]
    Off,
    /// The user's file under `home` (none when `None`) and the project's files.
    Load {
        /// The user's home directory.
        home: Option<PathBuf>,
    },
}

/// Whose file it is, as Claude Code's `memory_type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemoryKind {
    /// `~/.claude/CLAUDE.md`: the user's instructions for every project.
    User,
    /// `CLAUDE.md`, `.claude/CLAUDE.md`, `AGENTS.md`: the project's, checked in.
    Project,
    /// `CLAUDE.local.md`: the user's own for this project, not checked in.
    Local,
}

impl MemoryKind {
    /// The name in the trace (`user`, `project`, `local`).
    pub fn as_str(self) -> &'static str {
        match self {
            MemoryKind::User => "user",
            MemoryKind::Project => "project",
            MemoryKind::Local => "local",
        }
    }

    /// Claude Code's `memory_type` of InstructionsLoaded (`User`, `Project`, `Local`).
    pub fn memory_type(self) -> &'static str {
        match self {
            MemoryKind::User => "User",
            MemoryKind::Project => "Project",
            MemoryKind::Local => "Local",
        }
    }

    /// The description shown to the model after the path (Claude Code's wording).
    fn description(self) -> &'static str {
        match self {
            MemoryKind::User => "user's private global instructions for all projects",
            MemoryKind::Project => "project instructions, checked into the codebase",
            MemoryKind::Local => "user's private project instructions, not checked in",
        }
    }
}

/// One loaded memory file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemoryFile {
    /// The file's path (symlinks resolved).
    pub path: PathBuf,
    /// Whose file it is; an import has its importer's kind.
    pub kind: MemoryKind,
    /// The text kept (at most [`FILE_CAP`] bytes, then a marker).
    pub content: String,
    /// The file's size in bytes as read (up to one byte past the cap).
    pub bytes: usize,
    /// Whether the text was cut at [`FILE_CAP`].
    pub truncated: bool,
    /// The file whose `@path` imported this one.
    pub imported_by: Option<PathBuf>,
}

/// The memory files of a run, in prompt order, and the conditional rules kept aside.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct MemoryFiles {
    /// Each file, followed by its imports.
    pub files: Vec<MemoryFile>,
    /// The rule files with `paths:` globs (the user's, then the project's, in path order).
    pub conditional: Vec<conditional::ConditionalRule>,
}

/// The opening line of the layer.
pub const PREAMBLE: &str = "Instructions from the user's and the project's memory files are shown below. \
Follow them: they override the defaults above.";

impl MemoryFiles {
    /// Whether nothing was loaded.
    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }

    /// The body of the "Memory Files" layer: the preamble, then `Contents of PATH (whose):`
    /// and the text, per file; empty when no file was loaded.
    pub fn render(&self) -> String {
        if self.files.is_empty() {
            return String::new();
        }
        let mut parts = vec![PREAMBLE.to_owned()];
        for f in &self.files {
            parts.push(format!("Contents of {} ({}):\n\n{}", f.path.display(), f.kind.description(), f.content.trim()));
        }
        parts.join("\n\n")
    }

    /// The files for the `prepare_turn` trace entry: `{path, kind, bytes}`, plus
    /// `imported_by` and `truncated` when they apply.
    pub fn trace_value(&self) -> Value {
        Value::Array(
            self.files
                .iter()
                .map(|f| {
                    let mut m = Map::new();
                    m.insert("path".into(), json!(f.path));
                    m.insert("kind".into(), json!(f.kind.as_str()));
                    m.insert("bytes".into(), json!(f.bytes));
                    if let Some(by) = &f.imported_by {
                        m.insert("imported_by".into(), json!(by));
                    }
                    if f.truncated {
                        m.insert("truncated".into(), json!(true));
                    }
                    Value::Object(m)
                })
                .collect(),
        )
    }
}

/// Where a file may be read from: through the workspace boundary, or anywhere (the user's
/// file and what it imports).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Reach {
    Workspace,
    Anywhere,
}

/// Loads the memory files of a run (see the module documentation). Returns the files and the
/// warnings to record (missing imports, files outside the workspace, cut or skipped files).
pub fn load(sources: &MemorySources, workspace: &Workspace, cwd: &Path) -> (MemoryFiles, Vec<String>) {
    let home = match sources {
        MemorySources::Off => return (MemoryFiles::default(), Vec::new()),
        MemorySources::Load { home } => home.as_deref(),
    };
    let mut loader = Loader::new(workspace, home);
    if let Some(home) = home {
        loader.root(&home.join(USER_FILE), MemoryKind::User, Reach::Anywhere);
        // Claude Code matches the user's rules against paths relative to the working directory.
        loader.rules(&home.join(rules::RULES_DIR), MemoryKind::User, Reach::Anywhere, cwd);
    }
    for dir in project_dirs(cwd) {
        for name in PROJECT_FILE_NAMES {
            let kind = if name == "CLAUDE.local.md" { MemoryKind::Local } else { MemoryKind::Project };
            loader.root(&dir.join(name), kind, Reach::Workspace);
        }
    }
    let root = workspace.root();
    loader.rules(&root.join(rules::RULES_DIR), MemoryKind::Project, Reach::Workspace, root);
    (MemoryFiles { files: loader.out, conditional: loader.conditional }, loader.warnings)
}

/// The directories searched for project files: from the repository root (nearest ancestor
/// with `.git`, else `cwd`) down to `cwd`.
pub fn project_dirs(cwd: &Path) -> Vec<PathBuf> {
    let root = cwd.ancestors().find(|d| d.join(".git").exists()).unwrap_or(cwd);
    let mut dirs: Vec<PathBuf> = cwd.ancestors().take_while(|d| *d != root).map(Path::to_path_buf).collect();
    dirs.push(root.to_path_buf());
    dirs.reverse();
    dirs
}

struct Loader<'a> {
    workspace: &'a Workspace,
    home: Option<&'a Path>,
    /// Files already loaded (resolved paths): each loads once, which also cuts cycles.
    seen: HashSet<PathBuf>,
    total: usize,
    out: Vec<MemoryFile>,
    conditional: Vec<conditional::ConditionalRule>,
    warnings: Vec<String>,
}

/// A file to read: where it was named, whose it is, how far from its root file.
struct Wanted<'p> {
    path: &'p Path,
    kind: MemoryKind,
    reach: Reach,
    hops: usize,
    imported_by: Option<&'p Path>,
}

impl<'a> Loader<'a> {
    fn new(workspace: &'a Workspace, home: Option<&'a Path>) -> Self {
        let (out, conditional, warnings) = (Vec::new(), Vec::new(), Vec::new());
        Loader { workspace, home, seen: HashSet::new(), total: 0, out, conditional, warnings }
    }

    /// A file looked for by name: silently absent, else loaded with its imports.
    fn root(&mut self, path: &Path, kind: MemoryKind, reach: Reach) {
        if std::fs::metadata(path).is_err() {
            return;
        }
        self.file(Wanted { path, kind, reach, hops: 0, imported_by: None });
    }

    /// Loads a file, then follows its imports.
    fn file(&mut self, wanted: Wanted<'_>) {
        let (kind, reach, hops) = (wanted.kind, wanted.reach, wanted.hops);
        if let Some((resolved, imports)) = self.keep(wanted) {
            self.follow(&resolved, imports, kind, reach, hops);
        }
    }

    /// Resolves, reads and keeps one file: its resolved path and its imports, or `None` when it
    /// was skipped (already loaded, outside its reach, unreadable, over the total cap).
    fn keep(&mut self, wanted: Wanted<'_>) -> Option<(PathBuf, Vec<String>)> {
        let Wanted { path, kind, reach, imported_by, .. } = wanted;
        let named = path.to_string_lossy();
        let located = match reach {
            Reach::Workspace => self.workspace.resolve(&named, self.workspace.root()),
            Reach::Anywhere => Workspace::resolve_links(&named, Path::new("/")),
        };
        let resolved =
            located.map_err(|e| self.warnings.push(format!("memory file {} skipped: {e}", path.display()))).ok()?;
        if !self.seen.insert(resolved.clone()) {
            return None;
        }
        if self.total >= TOTAL_CAP {
            let why = format!("memory files already hold {TOTAL_CAP} bytes");
            self.warnings.push(format!("memory file {} skipped: {why}", resolved.display()));
            return None;
        }
        let bytes = self
            .read(&resolved, reach)
            .map_err(|reason| {
                let from = imported_by.map(|p| format!(" (imported by {})", p.display())).unwrap_or_default();
                self.warnings.push(format!("memory file {}{from} skipped: {reason}", path.display()));
            })
            .ok()?;
        let size = bytes.len();
        let Some((text, truncated)) = cut(bytes) else {
            self.warnings.push(format!("memory file {} skipped: not UTF-8 text", resolved.display()));
            return None;
        };
        if truncated {
            self.warnings.push(format!("memory file {} cut at {FILE_CAP} bytes", resolved.display()));
        }
        self.total += text.len();
        let imports = imports(&text);
        let content = if truncated { format!("{text}\n[memory file truncated at {FILE_CAP} bytes]") } else { text };
        self.out.push(MemoryFile {
            path: resolved.clone(),
            kind,
            content,
            bytes: size,
            truncated,
            imported_by: imported_by.map(Path::to_path_buf),
        });
        Some((resolved, imports))
    }

    /// Loads the imports of `importer` (at `hops` from its root file), in order.
    fn follow(&mut self, importer: &Path, imports: Vec<String>, kind: MemoryKind, reach: Reach, hops: usize) {
        let dir = importer.parent().unwrap_or(Path::new("/")).to_path_buf();
        for import in imports {
            let skipped = |why: String| format!("memory import @{import} in {} {why}", importer.display());
            let Some(target) = self.import_path(&import, &dir) else {
                self.warnings.push(skipped("skipped: no home directory for `~/`".to_owned()));
                continue;
            };
            if hops + 1 > MAX_IMPORT_HOPS {
                self.warnings.push(skipped(format!("not followed: imports go at most {MAX_IMPORT_HOPS} hops deep")));
                continue;
            }
            if std::fs::metadata(&target).is_err() {
                self.warnings.push(skipped(format!("skipped: {} not found", target.display())));
                continue;
            }
            self.file(Wanted { path: &target, kind, reach, hops: hops + 1, imported_by: Some(importer) });
        }
    }

    /// Reads up to one byte past the cap, through the boundary when the file must be inside.
    fn read(&self, resolved: &Path, reach: Reach) -> Result<Vec<u8>, String> {
        let file = match reach {
            Reach::Workspace => {
                self.workspace.open_file(resolved, OpenFor::Read).map(|(f, _)| f).map_err(|e| e.to_string())?
            }
            Reach::Anywhere => {
                let f = File::open(resolved).map_err(|e| e.to_string())?;
                let meta = f.metadata().map_err(|e| e.to_string())?;
                if !meta.is_file() {
                    return Err(format!("{} is not a regular file", resolved.display()));
                }
                f
            }
        };
        let mut bytes = Vec::new();
        file.take(FILE_CAP as u64 + 1).read_to_end(&mut bytes).map_err(|e| e.to_string())?;
        Ok(bytes)
    }

    /// Where `@import` in a file of `dir` points: `~/` from home, absolute, else relative to
    /// `dir`. `None` for `~/` without a home.
    fn import_path(&self, import: &str, dir: &Path) -> Option<PathBuf> {
        let joined = if let Some(rest) = import.strip_prefix("~/") {
            self.home?.join(rest)
        } else if Path::new(import).is_absolute() {
            PathBuf::from(import)
        } else {
            dir.join(import)
        };
        Some(Workspace::normalize(&joined.to_string_lossy(), dir))
    }
}

/// The text of a file cut at [`FILE_CAP`] bytes (on a character boundary) and whether it was
/// cut; `None` when it is not UTF-8 (an incomplete character at the cut is allowed).
fn cut(bytes: Vec<u8>) -> Option<(String, bool)> {
    if bytes.len() <= FILE_CAP {
        return String::from_utf8(bytes).ok().map(|t| (t, false));
    }
    let head = &bytes[..FILE_CAP];
    let valid = match std::str::from_utf8(head) {
        Ok(t) => t,
        // An error within the last 3 bytes is a character cut by the cap; anything else is not text.
        Err(e) if e.error_len().is_none() => std::str::from_utf8(&head[..e.valid_up_to()]).ok()?,
        Err(_) => return None,
    };
    Some((valid.to_owned(), true))
}

pub mod conditional;
mod imports;
pub mod rules;
pub mod triggers;

#[cfg(test)]
mod tests;
