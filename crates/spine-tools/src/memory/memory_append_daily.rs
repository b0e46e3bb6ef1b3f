//! `memory_append_daily {text}` (effect: write).
//!
//! Appends `text` to today's log, `.spine/memory/daily/YYYY-MM-DD.md` (the date in UTC), under
//! a `## HH:MM:SS UTC` heading; a new log starts with a `# YYYY-MM-DD` title. The response is
//! `{date, path, time, bytes}` (`bytes`: the log's size after the append).

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value, json};
use spine_core::tool::{Projection, Tool, ToolContext};
use spine_core::workspace::open::OpenFor;
use spine_protocol::tool::{Effect, ErrorCode, ToolError, ToolSpec};
use std::io::Write;

use super::{DAILY_DIR, check_size, confine, relative};
use crate::{args, paths};

#[derive(Deserialize, JsonSchema)]
struct AppendArgs {
    /// The note (Markdown).
    text: String,
}

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
            input_schema: args::schema::<AppendArgs>(),
        }
    }

    fn effect(&self) -> Effect {
        Effect::Write
    }

    fn time_limit(&self) -> Option<std::time::Duration> {
        Some(crate::paths::FILE_TOOL_TIME_LIMIT)
    }

    async fn execute(&self, args: &Map<String, Value>, ctx: &ToolContext) -> Result<Value, ToolError> {
        let AppendArgs { text } = args::parse(args)?;
        let text = text.as_str();
        if text.trim().is_empty() {
            return Err(ToolError::new(ErrorCode::ValidationError, "the text is empty"));
        }
        check_size("text", text)?;
        let now = time::OffsetDateTime::now_utc();
        let date = format!("{:04}-{:02}-{:02}", now.year(), u8::from(now.month()), now.day());
        let clock = format!("{:02}:{:02}:{:02}", now.hour(), now.minute(), now.second());
        let path = confine(ctx, &format!("{DAILY_DIR}/{date}.md"))?;
        let (date_c, clock_c) = (date.clone(), clock.clone());
        let workspace = ctx.workspace.clone();
        let (file_path, shown, body) = (path.clone(), relative(ctx, &path), text.trim_end().to_owned());
        let (existing, entry_len) = paths::blocking(move || {
            let fail = |e| paths::open_error(&shown, e);
            let (mut file, _) = workspace.open_file(&file_path, OpenFor::Append).map_err(fail)?;
            let io = |e: std::io::Error| ToolError::new(ErrorCode::RuntimeError, format!("{shown}: {e}"));
            let existing = file.metadata().map(|m| m.len()).map_err(io)?;
            let mut entry = String::new();
            if existing == 0 {
                entry.push_str(&format!("# {date_c}\n\n"));
            }
            entry.push_str(&format!("## {clock_c} UTC\n\n{body}\n\n"));
            file.write_all(entry.as_bytes()).map_err(io)?;
            Ok((existing, entry.len() as u64))
        })
        .await?;
        Ok(json!({
            "date": date,
            "time": format!("{clock} UTC"),
            "path": relative(ctx, &path),
            "bytes": existing + entry_len,
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
