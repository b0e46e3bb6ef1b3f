//! `memory_search {query}` (effect: read).
//!
//! Searches every memory entry and daily log for the query (phrase and token match, ranked as
//! the `search` module describes) and returns at most [`MAX_RESULTS`] results, best first:
//! `{query, results: [{key, path, score, snippets: [{line, text}]}], searched}`. Daily logs have
//! keys `daily/YYYY-MM-DD`. A query without letters or digits is a `validation_error`.

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value, json};
use spine_core::tool::{Projection, Tool, ToolContext};
use spine_protocol::tool::{Effect, ErrorCode, ToolError, ToolSpec};

use super::memory_list::markdown_files;
use super::search::Query;
use super::{DAILY_DIR, MEMORY_DIR, confine, relative};
use crate::args;

/// Results returned at most.
pub const MAX_RESULTS: usize = 10;

#[derive(Deserialize, JsonSchema)]
struct SearchArgs {
    /// Words or a phrase to find.
    query: String,
}

/// The `memory_search` tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct MemorySearchTool;

#[async_trait]
impl Tool for MemorySearchTool {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "memory_search".to_owned(),
            description: "Searches the workspace memory notes and daily logs (case-insensitive phrase and \
                          word match) and returns the best matches with line snippets."
                .to_owned(),
            input_schema: args::schema::<SearchArgs>(),
        }
    }

    fn effect(&self) -> Effect {
        Effect::Read
    }

    fn time_limit(&self) -> Option<std::time::Duration> {
        Some(crate::paths::FILE_TOOL_TIME_LIMIT)
    }

    async fn execute(&self, args: &Map<String, Value>, ctx: &ToolContext) -> Result<Value, ToolError> {
        let SearchArgs { query: text } = args::parse(args)?;
        let text = text.as_str();
        let Some(query) = Query::parse(text) else {
            return Err(ToolError::new(ErrorCode::ValidationError, "the query has no letters or digits to search for"));
        };
        let mut files = Vec::new();
        for (dir, prefix) in [(MEMORY_DIR, ""), (DAILY_DIR, "daily/")] {
            let dir = confine(ctx, dir)?;
            for (stem, _, _) in markdown_files(&ctx.workspace, &dir) {
                files.push((format!("{prefix}{stem}"), dir.join(format!("{stem}.md"))));
            }
        }
        let searched = files.len();
        let mut hits = Vec::new();
        for (key, path) in files {
            // Each file through the boundary: a symlinked entry may point anywhere.
            let Ok(path) = confine(ctx, &relative(ctx, &path)) else { continue };
            let Ok(bytes) = ctx.workspace.read_file(&path) else { continue };
            let Ok(content) = String::from_utf8(bytes) else { continue };
            if let Some(hit) = query.score(&key, &content) {
                hits.push((key, relative(ctx, &path), hit));
            }
        }
        hits.sort_by(|a, b| b.2.score.cmp(&a.2.score).then_with(|| a.0.cmp(&b.0)));
        hits.truncate(MAX_RESULTS);
        let results: Vec<Value> = hits
            .into_iter()
            .map(|(key, path, hit)| {
                let snippets: Vec<Value> =
                    hit.snippets.into_iter().map(|s| json!({"line": s.line, "text": s.text})).collect();
                json!({"key": key, "path": path, "score": hit.score, "snippets": snippets})
            })
            .collect();
        Ok(json!({"query": text, "results": results, "searched": searched}))
    }

    fn project(&self, response: &Value) -> Projection {
        let query = response.get("query").and_then(Value::as_str).unwrap_or("");
        let results = response.get("results").and_then(Value::as_array).cloned().unwrap_or_default();
        let searched = response.get("searched").and_then(Value::as_u64).unwrap_or(0);
        let mut lines = vec![match results.len() {
            0 => format!("No memory matches {query:?} ({searched} files searched)."),
            1 => format!("1 memory entry matches {query:?}:"),
            n => format!("{n} memory entries match {query:?}:"),
        }];
        for r in &results {
            lines.push(format!("- {} (score {})", r["key"].as_str().unwrap_or("?"), r["score"].as_u64().unwrap_or(0)));
            for s in r["snippets"].as_array().into_iter().flatten() {
                lines.push(format!("  L{}: {}", s["line"].as_u64().unwrap_or(0), s["text"].as_str().unwrap_or("")));
            }
        }
        let keys: Vec<Value> = results.iter().filter_map(|r| r.get("key").cloned()).collect();
        Projection::plain(lines.join("\n"))
            .with("result_count", results.len())
            .with("keys", keys)
            .with("searched", searched)
    }
}
