//! `Grep {pattern, path?, glob?, output_mode?, -i?, -n?, -A?, -B?, -C?, head_limit?}`
//! (effect: read): regular-expression search over files, line by line.
//!
//! - Pattern: the `regex` crate's syntax (`-i`: case-insensitive). An invalid pattern is a
//!   `validation_error`.
//! - Files: `path` (a directory or one file, inside the workspace; default the working
//!   directory), walked as `walk` does (gitignore-aware, hidden files skipped),
//!   filtered by `glob` (same rules as Glob). Binary files (holding a NUL byte) are skipped.
//!   Each file is read through the race-free opener beneath the workspace root
//!   (`spine_core::workspace::open`); one that a swapped symlink leads out of is skipped.
//! - `output_mode`:
//!   - `files_with_matches` (default): matching files, newest modification first;
//!   - `content`: ripgrep-style lines `path:line:text` (`-n`, default on, adds line numbers),
//!     context lines `path-line-text` (`-A`/`-B`/`-C`; `-A`/`-B` override `-C`), groups apart
//!     separated by `--`; lines longer than [`MAX_LINE_CHARS`] are cut;
//!   - `count`: `path:N` per matching file (N = matching lines).
//! - `head_limit`: keeps the first N output lines (content), files (files_with_matches) or
//!   entries (count); when it cuts, `appliedLimit` is set (Claude Code's field).
//!
//! Response: Claude Code's `{"mode", "numFiles", "filenames", "totalFiles"?, "content"?,
//! "numLines"?, "totalLines"?, "numMatches"?, "appliedLimit"?}` plus spine's `"cwd"`:
//! `totalFiles` (files_with_matches) and `totalLines` (content) count before `head_limit`. As in
//! Claude Code, `filenames` are relative to the working directory when under it (absolute
//! otherwise); `cwd` is that directory (symlinks resolved), and the model reads the names joined
//! to it. `content` keeps absolute paths (what the model reads), where Claude Code's are
//! relative; in content mode `filenames` lists the files with matching lines (Claude Code's is
//! empty). The projection shows at most [`PROJECTION_CAP`] characters of content.

use std::path::{Path, PathBuf};

use async_trait::async_trait;
use regex::{Regex, RegexBuilder};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value, json};
use spine_core::tool::{Projection, Tool, ToolContext};
use spine_protocol::tool::{Effect, ErrorCode, ToolError, ToolSpec};
use tokio_util::sync::CancellationToken;

use crate::args::{self, Count};
use crate::output::truncate_line;
use crate::paths;
use crate::walk::{self, Found, PathGlob};
use spine_core::workspace::Workspace;

/// Longest line shown whole in content mode.
pub const MAX_LINE_CHARS: usize = 2000;
/// Most characters of results the projection shows.
pub const PROJECTION_CAP: usize = 30_000;

/// The `Grep` tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct GrepTool;

#[derive(Deserialize, JsonSchema)]
struct GrepArgs {
    /// The regular expression.
    pattern: String,
    /// A file or directory to search (default: the working directory).
    path: Option<String>,
    /// Only files matching this glob (e.g. "*.rs", "src/**/*.ts").
    glob: Option<String>,
    // No description: the tool's description explains the modes.
    output_mode: Option<Mode>,
    /// Case-insensitive.
    #[serde(rename = "-i")]
    case_insensitive: Option<bool>,
    /// Line numbers in content mode (default true).
    #[serde(rename = "-n")]
    line_numbers: Option<bool>,
    /// Lines after each match.
    #[serde(rename = "-A")]
    after: Option<Count>,
    /// Lines before each match.
    #[serde(rename = "-B")]
    before: Option<Count>,
    /// Lines around each match.
    #[serde(rename = "-C")]
    context: Option<Count>,
    /// Keep only the first N lines, files or entries.
    #[schemars(range(min = 1))]
    head_limit: Option<Count>,
}

// What Grep reports (no doc comment: it would become the schema's description of
// `output_mode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum Mode {
    Content,
    #[default]
    FilesWithMatches,
    Count,
}

impl Mode {
    fn as_str(self) -> &'static str {
        match self {
            Mode::Content => "content",
            Mode::FilesWithMatches => "files_with_matches",
            Mode::Count => "count",
        }
    }
}

/// A resolved search.
struct Search {
    regex: Regex,
    mode: Mode,
    line_numbers: bool,
    before: usize,
    after: usize,
}

/// One file's matches.
struct FileHits {
    found: Found,
    /// Matching lines.
    count: usize,
    /// Rendered lines (content mode only).
    lines: Vec<String>,
}

#[async_trait]
impl Tool for GrepTool {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "Grep".to_owned(),
            description: "Searches file contents with a regular expression (Rust regex \
                          syntax), skipping hidden, git-ignored and binary files. \
                          output_mode: \"files_with_matches\" (default), \"content\" (matching \
                          lines, with -n/-A/-B/-C) or \"count\". Filter files with `glob`."
                .to_owned(),
            input_schema: args::schema::<GrepArgs>(),
        }
    }

    fn effect(&self) -> Effect {
        Effect::Read
    }

    fn path_argument(&self) -> Option<&'static str> {
        Some("path")
    }

    fn time_limit(&self) -> Option<std::time::Duration> {
        Some(crate::paths::FILE_TOOL_TIME_LIMIT)
    }

    async fn execute(&self, args: &Map<String, Value>, ctx: &ToolContext) -> Result<Value, ToolError> {
        let a: GrepArgs = args::parse(args)?;
        let mode = a.output_mode.unwrap_or_default();
        let regex = RegexBuilder::new(&a.pattern)
            .case_insensitive(a.case_insensitive.unwrap_or(false))
            .build()
            .map_err(|e| ToolError::new(ErrorCode::ValidationError, format!("invalid regular expression: {e}")))?;
        let context = a.context.map(Count::get);
        let search = Search {
            regex,
            mode,
            line_numbers: a.line_numbers.unwrap_or(true),
            before: to_usize(a.before.map(Count::get).or(context)),
            after: to_usize(a.after.map(Count::get).or(context)),
        };
        let head_limit = a.head_limit.map(|n| to_usize(Some(n.get())));
        let glob = match a.glob.as_deref() {
            Some(g) => Some(
                PathGlob::new(g)
                    .map_err(|e| ToolError::new(ErrorCode::ValidationError, format!("invalid glob {g:?}: {e}")))?,
            ),
            None => None,
        };
        let path_arg = a.path.as_deref();
        let root = paths::confine_root(ctx, path_arg)?;
        if let Err(e) = ctx.workspace.kind(&root) {
            let shown = path_arg.map_or_else(|| ctx.cwd.clone(), PathBuf::from);
            return Err(paths::open_error(&shown.to_string_lossy(), e));
        }

        let with_context = search.before > 0 || search.after > 0;
        let cancel = ctx.cancel.clone();
        let workspace = ctx.workspace.clone();
        let hits = tokio::task::spawn_blocking(move || run(&workspace, &root, glob.as_ref(), &search, &cancel))
            .await
            .map_err(|e| ToolError::new(ErrorCode::RuntimeError, format!("search failed: {e}")))?;
        if ctx.cancel.is_cancelled() {
            return Err(ToolError::new(ErrorCode::Canceled, "Grep canceled"));
        }
        let base = paths::listing_base(ctx);
        let mut response = respond(mode, hits, head_limit, with_context, &base);
        if let Some(obj) = response.as_object_mut() {
            obj.insert("cwd".to_owned(), json!(base.to_string_lossy()));
        }
        Ok(response)
    }

    fn project(&self, response: &Value) -> Projection {
        let mode = response.get("mode").and_then(Value::as_str).unwrap_or("");
        let num_files = response.get("numFiles").and_then(Value::as_u64).unwrap_or(0);
        let limit = response.get("appliedLimit").and_then(Value::as_u64);
        let body = match mode {
            "content" | "count" => response.get("content").and_then(Value::as_str).unwrap_or("").to_owned(),
            _ => {
                let base = response.get("cwd").and_then(Value::as_str);
                response
                    .get("filenames")
                    .and_then(Value::as_array)
                    .map(|a| a.iter().filter_map(Value::as_str).map(|n| paths::shown_name(n, base)).collect::<Vec<_>>())
                    .unwrap_or_default()
                    .join("\n")
            }
        };
        let mut content = if body.is_empty() {
            match mode {
                "content" | "count" => "No matches found.".to_owned(),
                _ => "No files found.".to_owned(),
            }
        } else {
            let head = match mode {
                "content" => String::new(),
                "count" => {
                    let matches = response.get("numMatches").and_then(Value::as_u64).unwrap_or(0);
                    format!("Found {matches} matches in {num_files} files:\n")
                }
                _ => format!("Found {num_files} {}:\n", if num_files == 1 { "file" } else { "files" }),
            };
            format!("{head}{}", cap_lines(&body, PROJECTION_CAP))
        };
        if let Some(limit) = limit {
            content.push_str(&format!("\n[Showing the first {limit} results (head_limit).]"));
        }
        let mut projection = Projection::plain(content).with("mode", mode).with("num_files", num_files);
        if let Some(n) = response.get("numLines").and_then(Value::as_u64) {
            projection = projection.with("num_lines", n);
        }
        if let Some(limit) = limit {
            projection = projection.with("applied_limit", limit);
        }
        projection
    }
}

fn to_usize(n: Option<u64>) -> usize {
    n.map_or(0, |n| usize::try_from(n).unwrap_or(usize::MAX))
}

/// Walks and searches (blocking).
/// Every file is read through the race-free opener beneath the workspace root: one reached
/// through a symlink swapped in during the walk, leading out, is skipped.
fn run(
    workspace: &Workspace,
    root: &std::path::Path,
    glob: Option<&PathGlob>,
    search: &Search,
    cancel: &CancellationToken,
) -> Vec<FileHits> {
    let mut hits = Vec::new();
    for found in walk::files(root, glob, cancel) {
        if cancel.is_cancelled() {
            break;
        }
        let Ok(bytes) = workspace.read_file(&found.path) else {
            continue;
        };
        if bytes.contains(&0) {
            continue;
        }
        let text = String::from_utf8_lossy(&bytes);
        let display = found.path.to_string_lossy().into_owned();
        if let Some(h) = search_file(&text, &display, search) {
            hits.push(FileHits { found, count: h.0, lines: h.1 });
        }
    }
    hits
}

/// Searches one file's text: the matching-line count and, in content mode, its output lines.
fn search_file(text: &str, display: &str, search: &Search) -> Option<(usize, Vec<String>)> {
    let lines: Vec<&str> = text.lines().collect();
    let matched: Vec<bool> = lines.iter().map(|l| search.regex.is_match(l)).collect();
    let count = matched.iter().filter(|m| **m).count();
    if count == 0 {
        return None;
    }
    if search.mode != Mode::Content {
        return Some((count, Vec::new()));
    }
    let with_context = search.before > 0 || search.after > 0;
    let mut out = Vec::new();
    let mut printed_to: Option<usize> = None;
    for (m, _) in matched.iter().enumerate().filter(|(_, m)| **m) {
        let mut from = m.saturating_sub(search.before);
        let to = m.saturating_add(search.after).min(lines.len() - 1);
        if let Some(last) = printed_to {
            if from > last + 1 && with_context {
                out.push("--".to_owned());
            }
            from = from.max(last + 1);
        }
        if from > to {
            continue;
        }
        for i in from..=to {
            let sep = if matched[i] { ':' } else { '-' };
            let (line, _) = truncate_line(lines[i], MAX_LINE_CHARS);
            out.push(if search.line_numbers {
                format!("{display}{sep}{}{sep}{line}", i + 1)
            } else {
                format!("{display}{sep}{line}")
            });
        }
        printed_to = Some(to);
    }
    Some((count, out))
}

/// Builds the response of a mode from the hits (in path order); groups of different files
/// are separated by `--` when context lines are on, as ripgrep does. `filenames` are listed
/// relative to `base`.
fn respond(mode: Mode, mut hits: Vec<FileHits>, head_limit: Option<usize>, with_context: bool, base: &Path) -> Value {
    let mut applied = None;
    let mut limit = |len: usize| -> usize {
        match head_limit {
            Some(n) if n < len => {
                applied = Some(n);
                n
            }
            _ => len,
        }
    };
    match mode {
        Mode::FilesWithMatches => {
            walk::sort_newest_first_by(&mut hits, |h| &h.found);
            let keep = limit(hits.len());
            let filenames = names(&hits[..keep], base);
            let mut response = json!({
                "mode": mode.as_str(),
                "numFiles": filenames.len(),
                "filenames": filenames,
                "totalFiles": hits.len(),
            });
            set_limit(&mut response, applied);
            response
        }
        Mode::Content => {
            let filenames = names(&hits, base);
            let mut lines: Vec<String> = Vec::new();
            for h in &mut hits {
                if with_context && !lines.is_empty() {
                    lines.push("--".to_owned());
                }
                lines.append(&mut h.lines);
            }
            let total = lines.len();
            let keep = limit(total);
            lines.truncate(keep);
            let mut response = json!({
                "mode": mode.as_str(),
                "numFiles": filenames.len(),
                "filenames": filenames,
                "content": lines.join("\n"),
                "numLines": lines.len(),
                "totalLines": total,
            });
            set_limit(&mut response, applied);
            response
        }
        Mode::Count => {
            let keep = limit(hits.len());
            hits.truncate(keep);
            let filenames = names(&hits, base);
            let entries: Vec<String> =
                hits.iter().map(|h| format!("{}:{}", h.found.path.to_string_lossy(), h.count)).collect();
            let matches: usize = hits.iter().map(|h| h.count).sum();
            let mut response = json!({
                "mode": mode.as_str(),
                "numFiles": filenames.len(),
                "filenames": filenames,
                "content": entries.join("\n"),
                "numLines": entries.len(),
                "numMatches": matches,
            });
            set_limit(&mut response, applied);
            response
        }
    }
}

fn names(hits: &[FileHits], base: &Path) -> Vec<String> {
    hits.iter().map(|h| paths::listed_name(&h.found.path, base)).collect()
}

fn set_limit(response: &mut Value, applied: Option<usize>) {
    if let (Some(n), Some(obj)) = (applied, response.as_object_mut()) {
        obj.insert("appliedLimit".to_owned(), json!(n));
    }
}

/// The leading whole lines of `text` within `cap` characters, and a note of what was left.
fn cap_lines(text: &str, cap: usize) -> String {
    if text.chars().count() <= cap {
        return text.to_owned();
    }
    let mut kept = String::new();
    let mut used = 0;
    let mut shown = 0;
    let total = text.lines().count();
    for line in text.lines() {
        let n = line.chars().count() + 1;
        if used + n > cap && shown > 0 {
            break;
        }
        kept.push_str(line);
        kept.push('\n');
        used += n;
        shown += 1;
    }
    format!("{kept}[... {} more lines not shown; narrow the search or use head_limit]", total - shown)
}
