//! `spine sessions list|show|rm|prune`: the sessions kept in `$SPINE_HOME/projects/`
//! (see [`crate::sessions`] for where they live).
//!
//! - `list` summarises each transcript of the project (every project with `--all`), newest
//!   first by its last line's `timestamp` (the file's mtime when no line has one): id, start
//!   time, model, turns (assistant lines), cost (usage priced with `spine_models::pricing`;
//!   unknown — `null` — when a model has no price or no line reports usage), the first prompt
//!   and how the last run ended (`spine_result`). Each file is read once, line by line; a file
//!   that cannot be read or has lines that are not JSON is listed with an `error`, never fatal.
//! - `show ID` prints the conversation readably (JSON: the messages as `--resume` loads them).
//! - `rm ID` removes `<id>.jsonl`, `<id>.env` and the subagent transcripts `<id>/subagents/`;
//!   `prune --older-than DUR` removes the sessions
//!   whose last activity is older than `DUR` (`30d`, `12h`, `90m`).
//!
//! Only regular files named `<session id>.jsonl` / `<session id>.env` in real folders directly
//! under `projects/` are read or removed: symbolic links are never followed, and an id is
//! checked with `check_session_id` before it names a file (a bad or unknown id exits 2).

use std::fs::File;
use std::io::{BufRead, BufReader, IsTerminal};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Value, json};
use spine_core::session::{Transcript, check_session_id};
use spine_protocol::run::Usage;

use super::context;
use crate::cli::{OutputFormat, SessionsCommand};
use crate::error::{config, exit};
use crate::out;

/// Characters of the first prompt shown by `list`.
const PROMPT_CHARS: usize = 60;
/// Lines of a tool result shown by `show` without `--full`.
const RESULT_LINES: usize = 4;

/// Runs `spine sessions`.
pub fn sessions(command: SessionsCommand) -> anyhow::Result<u8> {
    let home = context::spine_home()?;
    match command {
        SessionsCommand::List(args) => {
            let summaries = if args.all {
                all_folders(&home)?.iter().flat_map(|f| summaries_in(f, None)).collect::<Vec<_>>()
            } else {
                let project = context::project_dir(args.cwd.as_ref())?;
                summaries_in(&crate::sessions::project_folder(&home, &project), Some(&project))
            };
            let mut summaries = summaries;
            summaries.sort_by(|a, b| b.last_ms.cmp(&a.last_ms).then_with(|| b.id.cmp(&a.id)));
            print_list(&summaries, args.output_format, args.all);
            Ok(exit::OK)
        }
        SessionsCommand::Show(args) => {
            let path = locate(&home, &args.id)?;
            show(&path, args.output_format, if args.full { Fold::Full } else { Fold::Folded })
        }
        SessionsCommand::Rm(args) => {
            let path = locate(&home, &args.id)?;
            for removed in remove_session(&path)? {
                let _ = out::line(format!("removed {}", removed.display()));
            }
            Ok(exit::OK)
        }
        SessionsCommand::Prune(args) => {
            let age = parse_duration(&args.older_than).ok_or_else(|| {
                config(format!("--older-than {:?}: expected a number and d, h or m (30d, 12h, 90m)", args.older_than))
            })?;
            let cutoff = epoch_ms(SystemTime::now().checked_sub(age).unwrap_or(SystemTime::UNIX_EPOCH));
            let folders = if args.all {
                all_folders(&home)?.into_iter().map(|f| (f, None)).collect::<Vec<_>>()
            } else {
                let project = context::project_dir(args.cwd.as_ref())?;
                vec![(crate::sessions::project_folder(&home, &project), Some(project))]
            };
            let mut count = 0usize;
            for (folder, project) in &folders {
                for summary in summaries_in(folder, project.as_deref()) {
                    if summary.last_ms >= cutoff {
                        continue;
                    }
                    count += 1;
                    if args.dry_run {
                        let _ = out::line(format!("would remove {} ({})", summary.path.display(), summary.last_text()));
                    } else {
                        for removed in remove_session(&summary.path)? {
                            let _ = out::line(format!("removed {}", removed.display()));
                        }
                    }
                }
            }
            if count == 0 {
                let _ = out::line(format!("no session older than {}", args.older_than));
            }
            Ok(exit::OK)
        }
    }
}

/// The transcript of `id`, or a usage error (exit 2) naming why there is none.
fn locate(home: &Path, id: &str) -> anyhow::Result<PathBuf> {
    check_session_id(id).map_err(|e| config(e.to_string()))?;
    let name = format!("{id}.jsonl");
    for folder in all_folders(home)? {
        let path = folder.join(&name);
        if std::fs::symlink_metadata(&path).is_ok_and(|m| m.file_type().is_file()) {
            return Ok(path);
        }
    }
    Err(config(format!("no session {id} in {}", home.join("projects").display())))
}

/// Every real folder directly under `$SPINE_HOME/projects` (symbolic links skipped).
fn all_folders(home: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let root = home.join("projects");
    let entries = match std::fs::read_dir(&root) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(config(format!("cannot read {}: {e}", root.display()))),
    };
    let mut folders: Vec<PathBuf> =
        entries.filter_map(Result::ok).filter(|e| e.file_type().is_ok_and(|t| t.is_dir())).map(|e| e.path()).collect();
    folders.sort();
    Ok(folders)
}

/// Removes a transcript and its `<id>.env`; returns what was removed.
fn remove_session(transcript: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let mut removed = Vec::new();
    let env = transcript.with_extension("env");
    for path in [transcript.to_path_buf(), env] {
        match std::fs::symlink_metadata(&path) {
            Ok(meta) if meta.file_type().is_file() => {
                std::fs::remove_file(&path).map_err(|e| anyhow::anyhow!("cannot remove {}: {e}", path.display()))?;
                removed.push(path);
            }
            Ok(_) | Err(_) => {}
        }
    }
    removed.extend(remove_subagent_transcripts(transcript)?);
    Ok(removed)
}

/// Removes `<id>/subagents/` (the session's subagent transcripts, docs/subagents.md), then
/// `<id>/` when nothing else is left in it; a symbolic link is never followed.
fn remove_subagent_transcripts(transcript: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let folder = transcript.with_extension("");
    let real_dir = |p: &Path| std::fs::symlink_metadata(p).is_ok_and(|m| m.file_type().is_dir());
    let subagents = folder.join("subagents");
    if !real_dir(&folder) || !real_dir(&subagents) {
        return Ok(Vec::new());
    }
    std::fs::remove_dir_all(&subagents).map_err(|e| anyhow::anyhow!("cannot remove {}: {e}", subagents.display()))?;
    // Not empty: something else lives there, and it stays.
    let _ = std::fs::remove_dir(&folder);
    Ok(vec![subagents])
}

/// One session as `list` shows it.
#[derive(Debug, Default)]
struct Summary {
    id: String,
    path: PathBuf,
    cwd: Option<String>,
    started: Option<String>,
    last: Option<String>,
    /// Last activity in milliseconds since the epoch (last timestamp, else mtime).
    last_ms: i64,
    model: Option<String>,
    turns: u64,
    cost: Option<f64>,
    /// Whether some assistant line had usage a price could not be found for.
    unpriced: bool,
    first_prompt: Option<String>,
    ended: Option<String>,
    error: Option<String>,
}

impl Summary {
    fn last_text(&self) -> String {
        self.last.clone().unwrap_or_else(|| "no timestamp".to_owned())
    }

    fn cost(&self) -> Option<f64> {
        if self.unpriced { None } else { self.cost }
    }

    fn json(&self) -> Value {
        json!({
            "session_id": self.id,
            "cwd": self.cwd,
            "started": self.started,
            "last_activity": self.last,
            "model": self.model,
            "turns": self.turns,
            "cost_usd": self.cost(),
            "first_prompt": self.first_prompt,
            "ended": self.ended,
            "error": self.error,
            "path": self.path,
        })
    }
}

/// The summaries of the sessions in `folder` (those of another directory left out when
/// `project` is given and the transcript names its `cwd`).
fn summaries_in(folder: &Path, project: Option<&Path>) -> Vec<Summary> {
    let Ok(entries) = std::fs::read_dir(folder) else { return Vec::new() };
    let mut out = Vec::new();
    for entry in entries.filter_map(Result::ok) {
        if !entry.file_type().is_ok_and(|t| t.is_file()) {
            continue;
        }
        let path = entry.path();
        let Some(id) = path.file_name().and_then(|n| n.to_str()).and_then(|n| n.strip_suffix(".jsonl")) else {
            continue;
        };
        if check_session_id(id).is_err() {
            continue;
        }
        let summary = summarise(id, &path);
        if let (Some(project), Some(cwd)) = (project, &summary.cwd)
            && Path::new(cwd) != project
        {
            continue;
        }
        out.push(summary);
    }
    out
}

/// Reads one transcript, line by line, into its summary.
fn summarise(id: &str, path: &Path) -> Summary {
    let mut s = Summary { id: id.to_owned(), path: path.to_path_buf(), ..Summary::default() };
    let mtime = std::fs::metadata(path).and_then(|m| m.modified()).unwrap_or(SystemTime::UNIX_EPOCH);
    s.last_ms = epoch_ms(mtime);
    let file = match File::open(path) {
        Ok(file) => file,
        Err(e) => {
            s.error = Some(format!("cannot read: {e}"));
            return s;
        }
    };
    let mut last_model = None;
    for (n, line) in BufReader::new(file).lines().enumerate() {
        let line = match line {
            Ok(line) => line,
            Err(e) => {
                s.error = Some(format!("cannot read line {}: {e}", n + 1));
                break;
            }
        };
        if line.trim().is_empty() {
            continue;
        }
        // A struct also deserializes from an array (by position): only objects are lines.
        let object = |raw: &str| raw.trim_start().starts_with('{');
        let Some(head) = Some(&line).filter(|l| object(l)).and_then(|l| serde_json::from_str::<LineHead<'_>>(l).ok())
        else {
            s.error.get_or_insert_with(|| format!("line {} is not a JSON object", n + 1));
            continue;
        };
        if let Some(ts) = text(head.timestamp) {
            s.started.get_or_insert_with(|| ts.clone());
            s.last = Some(ts);
        }
        if s.cwd.is_none() {
            s.cwd = text(head.cwd);
        }
        let message = || {
            head.message.filter(|m| object(m.get())).and_then(|m| serde_json::from_str::<MessageHead<'_>>(m.get()).ok())
        };
        match text(head.kind).as_deref() {
            Some("system") => match text(head.subtype).as_deref() {
                Some("spine_session_start") => {
                    if let Some(model) = text(head.model) {
                        s.model = Some(model);
                    }
                }
                Some("spine_result") => s.ended = text(head.result),
                _ => {}
            },
            Some("assistant") => {
                s.turns += 1;
                let Some(message) = message() else { continue };
                let model = text(message.model);
                if let Some(model) = &model {
                    last_model = Some(model.clone());
                }
                if let Some(usage) = message.usage.and_then(|u| usage_of(&serde_json::from_str(u.get()).ok()?)) {
                    match model.as_deref().and_then(spine_models::pricing::price) {
                        Some(price) => *s.cost.get_or_insert(0.0) += price.cost(&usage),
                        None => s.unpriced = true,
                    }
                }
            }
            Some("user") if s.first_prompt.is_none() => {
                if let Some(content) = message().and_then(|m| text(m.content)) {
                    s.first_prompt = Some(one_line(&content, PROMPT_CHARS));
                }
            }
            _ => {}
        }
    }
    if s.model.is_none() {
        s.model = last_model;
    }
    if let Some(ms) = s.last.as_deref().and_then(parse_timestamp_ms) {
        s.last_ms = ms;
    }
    s
}

/// The fields of a transcript line `list` reads; the others (the content of every message)
/// are skipped by the parser without being built. Each field is kept raw and read as a string
/// only when it is one, so a line with odd field types is still read.
#[derive(Debug, Deserialize)]
struct LineHead<'a> {
    #[serde(rename = "type", borrow, default)]
    kind: Option<&'a RawValue>,
    #[serde(borrow, default)]
    timestamp: Option<&'a RawValue>,
    #[serde(borrow, default)]
    cwd: Option<&'a RawValue>,
    #[serde(borrow, default)]
    subtype: Option<&'a RawValue>,
    #[serde(borrow, default)]
    model: Option<&'a RawValue>,
    #[serde(borrow, default)]
    result: Option<&'a RawValue>,
    #[serde(borrow, default)]
    message: Option<&'a RawValue>,
}

/// The fields of a line's `message` that `list` reads.
#[derive(Debug, Deserialize)]
struct MessageHead<'a> {
    #[serde(borrow, default)]
    model: Option<&'a RawValue>,
    #[serde(borrow, default)]
    usage: Option<&'a RawValue>,
    #[serde(borrow, default)]
    content: Option<&'a RawValue>,
}

/// A raw field as a string, when it is one.
fn text(raw: Option<&RawValue>) -> Option<String> {
    raw.filter(|r| r.get().starts_with('"')).and_then(|r| serde_json::from_str(r.get()).ok())
}

/// A transcript's `usage` (its `input_tokens` counts uncached input, as Claude Code's does).
fn usage_of(value: &Value) -> Option<Usage> {
    let field = |name: &str| value[name].as_u64().unwrap_or(0);
    value.as_object()?;
    let cached = field("cache_creation_input_tokens") + field("cache_read_input_tokens");
    Some(Usage {
        input_tokens: field("input_tokens") + cached,
        output_tokens: field("output_tokens"),
        cache_creation_input_tokens: field("cache_creation_input_tokens"),
        cache_read_input_tokens: field("cache_read_input_tokens"),
    })
}

fn print_list(summaries: &[Summary], format: OutputFormat, all: bool) {
    match format {
        OutputFormat::Json | OutputFormat::StreamJson => {
            let _ = out::line(Value::Array(summaries.iter().map(Summary::json).collect()));
        }
        OutputFormat::Text => {
            if summaries.is_empty() {
                let _ = out::line("no sessions");
                return;
            }
            for s in summaries {
                let cost = s.cost().map_or_else(|| "-".to_owned(), |c| format!("${c:.4}"));
                let mut line = format!(
                    "{}  {}  {}  {} turn{}  {}  {}",
                    s.id,
                    s.started.as_deref().unwrap_or("-"),
                    s.model.as_deref().unwrap_or("-"),
                    s.turns,
                    if s.turns == 1 { "" } else { "s" },
                    cost,
                    s.ended.as_deref().unwrap_or("-"),
                );
                if all {
                    line.push_str(&format!("  {}", s.cwd.as_deref().unwrap_or("-")));
                }
                if let Some(prompt) = &s.first_prompt {
                    line.push_str(&format!("  {prompt:?}"));
                }
                if let Some(error) = &s.error {
                    line.push_str(&format!("  [error: {error}]"));
                }
                if out::line(line) == out::Stdout::Closed {
                    return;
                }
            }
        }
    }
}

/// The most sessions the `--resume` picker offers.
const PICKER_SESSIONS: usize = 20;

/// `--resume` without an id, on a terminal: lists this project's sessions, newest first (the
/// first [`PICKER_SESSIONS`]), on stderr and reads the number of the one to resume from stdin.
/// `Ok(None)` when there is none or the answer picks none.
pub fn pick(home: &Path, project: &Path) -> anyhow::Result<Option<String>> {
    use std::io::Write;
    let mut summaries = summaries_in(&crate::sessions::project_folder(home, project), Some(project));
    summaries.sort_by(|a, b| b.last_ms.cmp(&a.last_ms).then_with(|| b.id.cmp(&a.id)));
    summaries.retain(|s| s.error.is_none());
    summaries.truncate(PICKER_SESSIONS);
    if summaries.is_empty() {
        return Ok(None);
    }
    let mut err = std::io::stderr().lock();
    for (n, s) in summaries.iter().enumerate() {
        let prompt = s.first_prompt.as_deref().unwrap_or("-");
        let _ = writeln!(
            err,
            "{:>3}) {}  {}  {} turn{}  {prompt}",
            n + 1,
            s.last.as_deref().unwrap_or("-"),
            s.model.as_deref().unwrap_or("-"),
            s.turns,
            if s.turns == 1 { "" } else { "s" },
        );
    }
    let _ = write!(err, "Resume which session? [1-{}] ", summaries.len());
    let _ = err.flush();
    drop(err);
    let mut answer = String::new();
    std::io::stdin().lock().read_line(&mut answer)?;
    Ok(answer
        .trim()
        .parse::<usize>()
        .ok()
        .and_then(|n| n.checked_sub(1))
        .and_then(|i| summaries.get(i))
        .map(|s| s.id.clone()))
}

/// How much of a tool result `show` prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fold {
    /// The first few lines.
    Folded,
    /// All of it.
    Full,
}

fn show(path: &Path, format: OutputFormat, fold: Fold) -> anyhow::Result<u8> {
    match format {
        OutputFormat::Json | OutputFormat::StreamJson => {
            let loaded = Transcript::load(path).map_err(|e| anyhow::anyhow!("{e}"))?;
            let _ = out::line(serde_json::to_string(&loaded.messages)?);
            Ok(exit::OK)
        }
        OutputFormat::Text => {
            let file = File::open(path).map_err(|e| anyhow::anyhow!("cannot read {}: {e}", path.display()))?;
            let dim = std::io::stdout().is_terminal();
            for (n, line) in BufReader::new(file).lines().enumerate() {
                let line = line.map_err(|e| anyhow::anyhow!("cannot read {}: {e}", path.display()))?;
                if line.trim().is_empty() {
                    continue;
                }
                let text = match serde_json::from_str::<Value>(&line) {
                    Ok(value) => render_line(&value, fold, dim),
                    Err(_) => Some(format!("[line {} is not JSON]", n + 1)),
                };
                if let Some(text) = text
                    && out::line(text) == out::Stdout::Closed
                {
                    break;
                }
            }
            Ok(exit::OK)
        }
    }
}

/// One transcript line as `show` prints it (`None`: nothing to show).
fn render_line(value: &Value, fold: Fold, dim: bool) -> Option<String> {
    let time = value["timestamp"].as_str().unwrap_or("");
    let content = &value["message"]["content"];
    match value["type"].as_str()? {
        "user" => match content {
            Value::String(text) => Some(format!("── user  {time}\n{text}")),
            Value::Array(blocks) => {
                let mut parts = Vec::new();
                for block in blocks {
                    match block["type"].as_str() {
                        Some("tool_result") => {
                            let text = block_text(&block["content"]);
                            let error = if block["is_error"].as_bool() == Some(true) { " (error)" } else { "" };
                            let name = value["toolName"].as_str().unwrap_or("tool");
                            parts.push(format!("  ← {name}{error}\n{}", indent(&folded(&text, fold))));
                        }
                        Some("text") => {
                            parts.push(format!("── user  {time}\n{}", block["text"].as_str().unwrap_or("")))
                        }
                        _ => {}
                    }
                }
                (!parts.is_empty()).then(|| parts.join("\n"))
            }
            _ => None,
        },
        "assistant" => {
            let model = value["message"]["model"].as_str().map(|m| format!("  ({m})")).unwrap_or_default();
            let mut parts = vec![format!("── assistant  {time}{model}")];
            for block in content.as_array().into_iter().flatten() {
                match block["type"].as_str() {
                    Some("text") => parts.push(block["text"].as_str().unwrap_or("").to_owned()),
                    Some("thinking") => {
                        let text = format!("✻ thinking: {}", block["thinking"].as_str().unwrap_or(""));
                        parts.push(if dim { format!("\x1b[2m{text}\x1b[0m") } else { text });
                    }
                    Some("redacted_thinking") => parts.push("✻ thinking (redacted)".to_owned()),
                    Some("tool_use") => {
                        let name = block["name"].as_str().unwrap_or("?");
                        parts.push(format!("  → {name}({})", main_argument(name, &block["input"])));
                    }
                    _ => {}
                }
            }
            Some(parts.join("\n"))
        }
        "attachment" => {
            let attachment = &value["attachment"];
            let event = attachment["hookEvent"].as_str().unwrap_or("hook");
            let text = block_text(&attachment["content"]);
            Some(format!("  [hook context: {event}] {}", text.trim_end()))
        }
        "system" => match value["subtype"].as_str() {
            Some("spine_session_start") => {
                Some(format!("── session started  {time}  ({})", value["model"].as_str().unwrap_or("?")))
            }
            Some("spine_result") => Some(format!("── ended: {}  {time}", value["result"].as_str().unwrap_or("?"))),
            Some("compact_boundary") => Some(format!("── conversation compacted  {time}")),
            Some("spine_deferred") | Some("spine_message") | Some(_) | None => {
                value["content"].as_str().map(|c| format!("  [system] {c}"))
            }
        },
        _ => None,
    }
}

/// The text of a content value: a string, or the text blocks of an array.
fn block_text(content: &Value) -> String {
    match content {
        Value::String(text) => text.clone(),
        Value::Array(items) => items
            .iter()
            .filter_map(|i| i.as_str().map(str::to_owned).or_else(|| i["text"].as_str().map(str::to_owned)))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

fn folded(text: &str, fold: Fold) -> String {
    let lines: Vec<&str> = text.lines().collect();
    match fold {
        Fold::Full => text.to_owned(),
        Fold::Folded if lines.len() <= RESULT_LINES => text.to_owned(),
        Fold::Folded => {
            format!("{}\n… {} more lines (--full)", lines[..RESULT_LINES].join("\n"), lines.len() - RESULT_LINES)
        }
    }
}

fn indent(text: &str) -> String {
    text.lines().map(|l| format!("    {l}")).collect::<Vec<_>>().join("\n")
}

/// The argument a tool call is known by: Bash's command, a file tool's path, a URL, a pattern.
fn main_argument(tool: &str, input: &Value) -> String {
    let key = match tool {
        "Bash" => "command",
        "Read" | "Write" | "Edit" | "MultiEdit" => "file_path",
        "NotebookEdit" => "notebook_path",
        "Glob" | "Grep" => "pattern",
        "WebFetch" => "url",
        "WebSearch" => "query",
        _ => "",
    };
    let text = input[key]
        .as_str()
        .map(str::to_owned)
        .or_else(|| input.as_object().and_then(|o| o.values().find_map(|v| v.as_str().map(str::to_owned))));
    one_line(&text.unwrap_or_default(), 80)
}

/// `text` on one line, cut to `max` characters with `…`.
fn one_line(text: &str, max: usize) -> String {
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() <= max {
        return flat;
    }
    let cut: String = flat.chars().take(max.saturating_sub(1)).collect();
    format!("{cut}…")
}

/// `30d`, `12h`, `90m` as a duration.
fn parse_duration(text: &str) -> Option<Duration> {
    let text = text.trim();
    let unit = text.chars().last()?;
    let number: u64 = text[..text.len() - unit.len_utf8()].parse().ok()?;
    let seconds = match unit {
        'd' => number.checked_mul(86_400)?,
        'h' => number.checked_mul(3_600)?,
        'm' => number.checked_mul(60)?,
        _ => return None,
    };
    Some(Duration::from_secs(seconds))
}

fn epoch_ms(time: SystemTime) -> i64 {
    match time.duration_since(SystemTime::UNIX_EPOCH) {
        Ok(d) => i64::try_from(d.as_millis()).unwrap_or(i64::MAX),
        Err(e) => -i64::try_from(e.duration().as_millis()).unwrap_or(i64::MAX),
    }
}

/// A UTC RFC 3339 timestamp (`2026-01-02T03:04:05.678Z`, as transcripts write it) in
/// milliseconds since the epoch; `None` for anything else.
fn parse_timestamp_ms(text: &str) -> Option<i64> {
    let text = text.strip_suffix('Z')?;
    let (date, clock) = text.split_once('T')?;
    let mut d = date.splitn(3, '-').map(|p| p.parse::<i64>().ok());
    let (year, month, day) = (d.next()??, d.next()??, d.next()??);
    let (hms, frac) = clock.split_once('.').unwrap_or((clock, "0"));
    let mut t = hms.splitn(3, ':').map(|p| p.parse::<i64>().ok());
    let (hour, minute, second) = (t.next()??, t.next()??, t.next()??);
    let frac_digits: String = frac.chars().take(3).collect();
    let millis = format!("{frac_digits:0<3}").parse::<i64>().ok()?;
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) {
        return None;
    }
    // Days from the civil date (Howard Hinnant's algorithm).
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    Some(((days * 24 + hour) * 60 + minute) * 60_000 + second * 1000 + millis)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_take_days_hours_and_minutes_only() {
        assert_eq!(parse_duration("30d"), Some(Duration::from_secs(30 * 86_400)));
        assert_eq!(parse_duration("12h"), Some(Duration::from_secs(12 * 3_600)));
        assert_eq!(parse_duration("90m"), Some(Duration::from_secs(90 * 60)));
        for bad in ["", "d", "30", "30s", "-1d", "1.5d", "30dd"] {
            assert_eq!(parse_duration(bad), None, "{bad}");
        }
    }

    #[test]
    fn transcript_timestamps_convert_to_epoch_milliseconds() {
        assert_eq!(parse_timestamp_ms("1970-01-01T00:00:00.000Z"), Some(0));
        assert_eq!(parse_timestamp_ms("2000-03-01T00:00:01.5Z"), Some(951_868_801_500));
        assert_eq!(parse_timestamp_ms("2026-12-01T10:47:01Z"), Some(1_796_122_021_000));
        assert_eq!(parse_timestamp_ms("2026-12-01T10:47:01+01:00"), None);
    }

    #[test]
    fn a_line_with_odd_field_types_is_read_leniently() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("s.jsonl");
        let lines = [
            json!({"type": "user", "timestamp": 5, "cwd": ["x"], "message": "not an object"}),
            json!({"type": "user", "message": {"content": [{"type": "text", "text": "blocks"}]}}),
            json!({"type": "user", "timestamp": "2026-01-01T00:00:00Z", "message": {"content": "the prompt"}}),
            json!({"type": "assistant", "message": {"model": 7, "usage": "none", "content": null}}),
            json!({"type": "assistant", "message": ["odd"]}),
            json!({"type": "system", "subtype": "spine_result", "result": {"odd": true}}),
            json!([1, 2]),
        ];
        std::fs::write(&path, lines.iter().map(|l| format!("{l}\n")).collect::<String>()).expect("write");
        let s = summarise("id", &path);
        assert_eq!(s.first_prompt.as_deref(), Some("the prompt"));
        assert_eq!(s.started.as_deref(), Some("2026-01-01T00:00:00Z"));
        assert_eq!(s.cwd, None);
        assert_eq!(s.turns, 2);
        assert_eq!((s.model.as_deref(), s.cost(), s.ended.as_deref()), (None, None, None));
        assert_eq!(s.error.as_deref(), Some("line 7 is not a JSON object"));
    }

    #[test]
    fn a_first_prompt_is_one_line_cut_with_an_ellipsis() {
        assert_eq!(one_line("a\n  b", 60), "a b");
        assert_eq!(one_line(&"x".repeat(70), 60).chars().count(), 60);
    }
}
