//! `spine sessions show ID`: a session's conversation, readable.
//!
//! Contract: the transcript is found by [`Folder::holding`] (a regular `<id>.jsonl` in a real
//! folder, reached without a link; a bad or unknown id is exit 2). Text reads it through its
//! folder's descriptor and prints each message with its role and time: text, tool calls as
//! `→ Tool(main argument)`, tool results as `← Tool` folded to their first [`RESULT_LINES`]
//! lines (all with `--full`), hook contexts, thinking (dimmed where stdout may carry colour,
//! `crate::colour`), compactions and the end of each run; a line that is not JSON is marked,
//! never fatal. JSON prints the messages as `--resume` loads them (`Transcript::load`, by the
//! path just checked).

use std::io::{BufRead, BufReader};
use std::path::Path;

use serde_json::Value;
use spine_core::session::Transcript;

use super::folders::Folder;
use super::summary::one_line;
use crate::cli::{OutputFormat, SessionsShowArgs};
use crate::error::exit;
use crate::out;

/// Lines of a tool result shown by `show` without `--full`.
const RESULT_LINES: usize = 4;

/// How much of a tool result `show` prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fold {
    /// The first few lines.
    Folded,
    /// All of it.
    Full,
}

/// Runs `spine sessions show ID`.
pub(super) fn show(home: &Path, args: SessionsShowArgs) -> anyhow::Result<u8> {
    let folder = Folder::holding(home, &args.id)?;
    let name = format!("{}.jsonl", args.id);
    let path = folder.path().join(&name);
    let fold = if args.full { Fold::Full } else { Fold::Folded };
    match args.output_format {
        OutputFormat::Json | OutputFormat::StreamJson => {
            let loaded = Transcript::load(&path).map_err(|e| anyhow::anyhow!("{e}"))?;
            let _ = out::line(serde_json::to_string(&loaded.messages)?);
            Ok(exit::OK)
        }
        OutputFormat::Text => {
            let cannot = |e: std::io::Error| anyhow::anyhow!("cannot read {}: {e}", path.display());
            let file = folder
                .open_file(&name)
                .map_err(cannot)?
                .ok_or_else(|| anyhow::anyhow!("cannot read {}: not a regular file", path.display()))?;
            // Dimmed only where stdout may carry colour (a terminal, not `NO_COLOR`).
            let dim = crate::colour::Colour::detect().stdout;
            for (n, line) in BufReader::new(file).lines().enumerate() {
                let line = line.map_err(cannot)?;
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
