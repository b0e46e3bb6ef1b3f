//! `memory_append_daily {text}` (effect: write).
//!
//! Appends `text` to today's log, `.spine/memory/daily/YYYY-MM-DD.md` (the date in UTC), under
//! a `## HH:MM:SS UTC` heading; a new log starts with a `# YYYY-MM-DD` title. The response is
//! `{date, path, time, bytes}` (`bytes`: the log's size after the append).

use async_trait::async_trait;
use serde_json::{Map, Value, json};
use spine_core::tool::{Projection, Tool, ToolContext};
use spine_protocol::tool::{Effect, ErrorCode, ToolError, ToolSpec};
use tokio::io::AsyncWriteExt;

use super::{DAILY_DIR, check_size, confine, relative};
use crate::{args, paths};

/// The `memory_append_daily` tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct MemoryAppendDailyTool;

#[async_trait]
impl Tool for MemoryAppendDailyTool {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "memory_append_daily".to_owned(),
            description: "Appends a timestamped note to today's daily log in the workspace memory \
                          (.spine/memory/daily/YYYY-MM-DD.md, UTC)."
                .to_owned(),
            input_schema: json!({
                "type": "object",
                "properties": {"text": {"type": "string", "description": "The note (Markdown)."}},
                "required": ["text"],
                "additionalProperties": false
            }),
        }
    }

    fn effect(&self) -> Effect {
        Effect::Write
    }

    async fn execute(&self, args: &Map<String, Value>, ctx: &ToolContext) -> Result<Value, ToolError> {
        let text = args::string(args, "text")?;
        if text.trim().is_empty() {
            return Err(ToolError::new(ErrorCode::ValidationError, "the text is empty"));
        }
        check_size("text", text)?;
        let now = time::OffsetDateTime::now_utc();
        let date = format!("{:04}-{:02}-{:02}", now.year(), u8::from(now.month()), now.day());
        let clock = format!("{:02}:{:02}:{:02}", now.hour(), now.minute(), now.second());
        let path = confine(ctx, &format!("{DAILY_DIR}/{date}.md"))?;
        if let Some(parent) = path.parent() {
            tokio::fs::create_dir_all(parent).await.map_err(|e| paths::io_error(parent, &e))?;
        }
        let mut file = tokio::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .await
            .map_err(|e| paths::io_error(&path, &e))?;
        let existing = file.metadata().await.map(|m| m.len()).unwrap_or(0);
        let mut entry = String::new();
        if existing == 0 {
            entry.push_str(&format!("# {date}\n\n"));
        }
        entry.push_str(&format!("## {clock} UTC\n\n{}\n\n", text.trim_end()));
        file.write_all(entry.as_bytes()).await.map_err(|e| paths::io_error(&path, &e))?;
        file.flush().await.map_err(|e| paths::io_error(&path, &e))?;
        Ok(json!({
            "date": date,
            "time": format!("{clock} UTC"),
            "path": relative(ctx, &path),
            "bytes": existing + entry.len() as u64,
        }))
    }

    fn project(&self, response: &Value) -> Projection {
        let date = response.get("date").and_then(Value::as_str).unwrap_or("?");
        let time = response.get("time").and_then(Value::as_str).unwrap_or("?");
        Projection::plain(format!("Appended a note to the daily log of {date} at {time}."))
            .with("date", date)
            .with("path", response.get("path").cloned().unwrap_or(Value::Null))
            .with("bytes", response.get("bytes").cloned().unwrap_or(Value::Null))
    }
}
