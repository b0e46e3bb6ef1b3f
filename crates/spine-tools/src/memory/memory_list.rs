//! `memory_list {}` (effect: read).
//!
//! The entries of `.spine/memory/` (`{key, bytes, modified}`, sorted by key) and the daily logs
//! (`{date, bytes}`, newest first). A workspace without memory lists nothing.

use std::path::Path;

use async_trait::async_trait;
use serde_json::{Map, Value, json};
use spine_core::tool::{Projection, Tool, ToolContext};
use spine_core::workspace::Workspace;
use spine_core::workspace::open::OpenFor;
use spine_protocol::tool::{Effect, ToolError, ToolSpec};

use super::{DAILY_DIR, MEMORY_DIR, confine};
use crate::args::{self, NoArgs};

/// The `memory_list` tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct MemoryListTool;

#[async_trait]
impl Tool for MemoryListTool {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "memory_list".to_owned(),
            description: "Lists the workspace memory notes (keys and sizes) and daily logs.".to_owned(),
            input_schema: args::schema::<NoArgs>(),
        }
    }

    fn effect(&self) -> Effect {
        Effect::Read
    }

    fn time_limit(&self) -> Option<std::time::Duration> {
        Some(crate::paths::FILE_TOOL_TIME_LIMIT)
    }

    async fn execute(&self, _args: &Map<String, Value>, ctx: &ToolContext) -> Result<Value, ToolError> {
        let mut entries: Vec<Value> = markdown_files(&ctx.workspace, &confine(ctx, MEMORY_DIR)?)
            .into_iter()
            .map(|(stem, bytes, modified)| json!({"key": stem, "bytes": bytes, "modified": modified}))
            .collect();
        entries.sort_by(|a, b| a["key"].as_str().cmp(&b["key"].as_str()));
        let mut daily: Vec<Value> = markdown_files(&ctx.workspace, &confine(ctx, DAILY_DIR)?)
            .into_iter()
            .map(|(stem, bytes, _)| json!({"date": stem, "bytes": bytes}))
            .collect();
        daily.sort_by(|a, b| b["date"].as_str().cmp(&a["date"].as_str()));
        Ok(json!({"entries": entries, "daily": daily}))
    }

    fn project(&self, response: &Value) -> Projection {
        let entries = response.get("entries").and_then(Value::as_array).cloned().unwrap_or_default();
        let daily = response.get("daily").and_then(Value::as_array).cloned().unwrap_or_default();
        let mut lines = Vec::new();
        if entries.is_empty() {
            lines.push("No memory entries.".to_owned());
        } else {
            lines.push(match entries.len() {
                1 => "1 memory entry:".to_owned(),
                n => format!("{n} memory entries:"),
            });
            for e in &entries {
                lines.push(format!(
                    "- {} ({} bytes)",
                    e["key"].as_str().unwrap_or("?"),
                    e["bytes"].as_u64().unwrap_or(0)
                ));
            }
        }
        if !daily.is_empty() {
            let dates: Vec<&str> = daily.iter().filter_map(|d| d["date"].as_str()).collect();
            lines.push(format!("Daily logs: {}", dates.join(", ")));
        }
        Projection::plain(lines.join("\n")).with("entry_count", entries.len()).with("daily_count", daily.len())
    }
}

/// The `*.md` regular files directly in `dir`: stem, size, modification time (RFC 3339).
/// The listing and each file's metadata go through the race-free opener beneath the
/// workspace root (a symlinked entry leading out is left out).
pub(crate) fn markdown_files(workspace: &Workspace, dir: &Path) -> Vec<(String, u64, String)> {
    let Ok(entries) = workspace.list_dir(dir) else {
        return Vec::new();
    };
    entries
        .into_iter()
        .filter_map(|(name, _)| {
            let path = dir.join(&name);
            if path.extension().and_then(|x| x.to_str()) != Some("md") {
                return None;
            }
            let (file, _) = workspace.open_file(&path, OpenFor::Read).ok()?;
            let meta = file.metadata().ok()?;
            let stem = path.file_stem()?.to_string_lossy().into_owned();
            let modified = meta
                .modified()
                .ok()
                .map(time::OffsetDateTime::from)
                .and_then(|t| t.format(&time::format_description::well_known::Rfc3339).ok())
                .unwrap_or_default();
            Some((stem, meta.len(), modified))
        })
        .collect()
}
