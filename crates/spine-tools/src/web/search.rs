//! `WebSearch {query, allowed_domains?, blocked_domains?}` (effect: network).
//!
//! Queries a SearXNG-compatible JSON endpoint — the tool's `search_url` (settings
//! `web.search_url`) — with `GET <search_url>?q=<query>&format=json` and reads
//! `results: [{title, url, content}]`. Results outside `allowed_domains` or inside
//! `blocked_domains` (a domain matches itself and its subdomains) are dropped; at most
//! [`MAX_RESULTS`] are kept, in the engine's order. The response has Claude Code's shape,
//! `{query, results: [{tool_use_id, content: [{title, url, snippet}]}], durationSeconds}`: one
//! search, its hits under the call's id. The projection also reads results that are hits
//! themselves, or text (Claude Code's commentary entries), as a PostToolUse hook may write them.
//!
//! The endpoint comes from settings, not from the model: its redirects are followed without the
//! permission gate, but with the scheme, userinfo and private-network checks of [`super`]. A
//! search engine on this machine (`http://127.0.0.1:8888/search`) therefore needs
//! `web.allow_private_networks: true`.
//!
//! Without a configured endpoint every call is a `validation_error` saying how to configure
//! one. A non-2xx answer or a body that is not the expected JSON is a `runtime_error`.

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value, json};
use spine_core::tool::{Projection, Tool, ToolContext};
use spine_protocol::tool::{Effect, ErrorCode, ToolError, ToolSpec};

use super::{LazyClient, WebOptions, get_following, http_url, read_capped};
use crate::args;

/// Results kept at most.
pub const MAX_RESULTS: usize = 10;
/// Characters of a result's snippet.
const SNIPPET_CHARS: usize = 300;

/// The `WebSearch` tool.
#[derive(Debug)]
pub struct WebSearchTool {
    search_url: Option<String>,
    client: LazyClient,
}

impl WebSearchTool {
    /// The tool against a SearXNG-compatible endpoint (`None`: not configured).
    pub fn new(search_url: Option<String>, options: WebOptions) -> Self {
        WebSearchTool { search_url: search_url.filter(|u| !u.trim().is_empty()), client: LazyClient::new(options) }
    }
}

#[derive(Deserialize, JsonSchema)]
struct SearchArgs {
    /// The search query.
    #[schemars(length(min = 1))]
    query: String,
    /// Only results from these domains.
    allowed_domains: Option<Vec<String>>,
    /// Never results from these domains.
    blocked_domains: Option<Vec<String>>,
}

/// Domains as matched: trimmed, lower-case, without a leading `*.` or `.`; empty ones dropped.
fn domains(list: Option<&[String]>) -> Vec<String> {
    list.unwrap_or_default()
        .iter()
        .map(|d| d.trim().trim_start_matches("*.").trim_start_matches('.').to_ascii_lowercase())
        .filter(|d| !d.is_empty())
        .collect()
}

fn host_matches(host: &str, domain: &str) -> bool {
    host == domain || host.strip_suffix(domain).is_some_and(|rest| rest.ends_with('.'))
}

#[async_trait]
impl Tool for WebSearchTool {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "WebSearch".to_owned(),
            description: format!(
                "Searches the web and returns up to {MAX_RESULTS} results (title, URL, snippet). \
                 allowed_domains / blocked_domains filter the results by site."
            ),
            input_schema: args::schema::<SearchArgs>(),
        }
    }

    fn effect(&self) -> Effect {
        Effect::Network
    }

    async fn execute(&self, args: &Map<String, Value>, ctx: &ToolContext) -> Result<Value, ToolError> {
        let started = std::time::Instant::now();
        let SearchArgs { query, allowed_domains, blocked_domains } = args::parse(args)?;
        let query = query.as_str();
        let Some(endpoint) = &self.search_url else {
            return Err(ToolError::new(
                ErrorCode::ValidationError,
                "WebSearch is not configured: set `web.search_url` in settings to a SearXNG-compatible \
                 JSON endpoint (e.g. http://127.0.0.1:8888/search, which also needs \
                 `web.allow_private_networks: true`)",
            ));
        };
        let mut url = http_url(endpoint)?;
        url.query_pairs_mut().append_pair("q", query).append_pair("format", "json");
        let allowed = domains(allowed_domains.as_deref());
        let blocked = domains(blocked_domains.as_deref());
        let client = self.client.get()?;
        let options = self.client.options();
        let fetched = async {
            let (response, final_url) = get_following(client, &url, "application/json", options, None).await?;
            let status = response.status();
            let (body, _) = read_capped(&final_url, response, options.max_bytes, options).await?;
            Ok::<_, ToolError>((status, body))
        };
        let (status, body) = tokio::select! {
            r = fetched => r?,
            () = ctx.cancel.cancelled() => {
                return Err(ToolError::new(ErrorCode::Canceled, "the run was canceled during the search"));
            }
        };
        if !status.is_success() {
            return Err(ToolError::new(ErrorCode::RuntimeError, format!("the search endpoint answered HTTP {status}")));
        }
        let parsed: Value = serde_json::from_slice(&body).map_err(|e| {
            ToolError::new(ErrorCode::RuntimeError, format!("the search endpoint did not answer JSON: {e}"))
        })?;
        let Some(raw) = parsed.get("results").and_then(Value::as_array) else {
            return Err(ToolError::new(ErrorCode::RuntimeError, "the search endpoint's answer has no `results` list"));
        };
        let mut results = Vec::new();
        for r in raw {
            let Some(link) = r.get("url").and_then(Value::as_str) else { continue };
            let host = reqwest::Url::parse(link)
                .ok()
                .and_then(|u| u.host_str().map(str::to_ascii_lowercase))
                .unwrap_or_default();
            if !allowed.is_empty() && !allowed.iter().any(|d| host_matches(&host, d)) {
                continue;
            }
            if blocked.iter().any(|d| host_matches(&host, d)) {
                continue;
            }
            let mut snippet = r.get("content").and_then(Value::as_str).unwrap_or("").trim().to_owned();
            super::cap_chars(&mut snippet, SNIPPET_CHARS);
            results.push(json!({
                "title": r.get("title").and_then(Value::as_str).unwrap_or("").trim(),
                "url": link,
                "snippet": snippet,
            }));
            if results.len() == MAX_RESULTS {
                break;
            }
        }
        Ok(json!({
            "query": query,
            "results": [{"tool_use_id": ctx.call_id, "content": results}],
            "durationSeconds": started.elapsed().as_secs_f64(),
        }))
    }

    fn project(&self, response: &Value) -> Projection {
        let query = response.get("query").and_then(Value::as_str).unwrap_or("");
        let entries = response.get("results").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
        // Hits, whether grouped under a search (`content`) or listed themselves.
        let results: Vec<&Value> = entries
            .iter()
            .flat_map(|e| match e.get("content").and_then(Value::as_array) {
                Some(hits) => hits.iter().collect(),
                None if e.is_object() => vec![e],
                None => Vec::new(),
            })
            .collect();
        let notes: Vec<&str> = entries.iter().filter_map(Value::as_str).filter(|t| !t.trim().is_empty()).collect();
        let mut lines = vec![if results.is_empty() {
            format!("No web results for {query:?}.")
        } else {
            format!("Web results for {query:?}:")
        }];
        for (i, r) in results.iter().enumerate() {
            lines.push(format!(
                "{}. {}\n   {}",
                i + 1,
                r["title"].as_str().unwrap_or(""),
                r["url"].as_str().unwrap_or("")
            ));
            if let Some(s) = r["snippet"].as_str().filter(|s| !s.is_empty()) {
                lines.push(format!("   {s}"));
            }
        }
        lines.extend(notes.iter().map(|t| t.trim().to_owned()));
        let urls: Vec<Value> = results.iter().filter_map(|r| r.get("url").cloned()).collect();
        Projection::plain(lines.join("\n")).with("result_count", results.len()).with("urls", urls)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_domain_matches_itself_and_its_subdomains_only() {
        assert!(host_matches("docs.rs", "docs.rs"));
        assert!(host_matches("www.docs.rs", "docs.rs"));
        assert!(!host_matches("notdocs.rs", "docs.rs"));
    }
}
