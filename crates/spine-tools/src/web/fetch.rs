//! `WebFetch {url, prompt?}` (effect: network).
//!
//! GETs the URL (following the module's rules: http/https only, no userinfo, no private
//! networks unless allowed, bounded redirects each checked against the run's policy, size and
//! time limits) and turns the body into text for the model. The response mirrors Claude
//! Code's WebFetch fields (`code`, `codeText`, `bytes`, `result`, `durationMs`, `url`) plus
//! `final_url` (after redirects), `content_type`, `truncated` (body cut at the size limit or
//! text cut at the character cap) and `prompt`.
//!
//! `prompt` is not run through a second model as Claude Code does: it is handed back with the
//! text, so the model calling the tool applies it.
//!
//! Refusals are `permission_denied` before the refused URL is requested: a URL with userinfo
//! (`http://user@host/`), a non-public address (see [`super::address`]), a redirect hop the
//! context's [`UrlGate`](spine_core::tool::UrlGate) refuses.
//!
//! A status of 400 or more is a tool error carrying the response: 404 and 410 are
//! `not_found`, the others `runtime_error` (the message holds the start of the body).

use std::time::Instant;

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value, json};
use spine_core::tool::{Projection, Tool, ToolContext};
use spine_protocol::tool::{Effect, ErrorCode, ToolError, ToolSpec};

use super::{LazyClient, WebOptions, cap_chars, get_following, http_url, read_capped, refuse_userinfo};
use crate::args;

/// Characters of an error page quoted in the error message.
const ERROR_BODY_CHARS: usize = 2_000;
/// The `Accept` header of a fetch.
const ACCEPT: &str = "text/html,application/xhtml+xml,text/plain;q=0.9,application/json;q=0.9,*/*;q=0.8";
/// Wrap width of converted HTML.
const HTML_WIDTH: usize = 100;

#[derive(Deserialize, JsonSchema)]
struct FetchArgs {
    /// The URL to fetch.
    url: String,
    /// What to extract from the page.
    prompt: Option<String>,
}

/// The `WebFetch` tool.
#[derive(Debug)]
pub struct WebFetchTool {
    client: LazyClient,
}

impl WebFetchTool {
    /// The tool with these limits.
    pub fn new(options: WebOptions) -> Self {
        WebFetchTool { client: LazyClient::new(options) }
    }
}

/// What kind of body a content type announces.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum BodyKind {
    Html,
    Text,
    Binary,
}

fn body_kind(content_type: &str, body: &[u8]) -> BodyKind {
    let mime = content_type.split(';').next().unwrap_or("").trim().to_ascii_lowercase();
    match mime.as_str() {
        "text/html" | "application/xhtml+xml" => BodyKind::Html,
        "" => {
            // No type: sniff the start.
            let head = String::from_utf8_lossy(&body[..body.len().min(512)]).to_ascii_lowercase();
            if head.contains("<html") || head.contains("<!doctype html") {
                BodyKind::Html
            } else if std::str::from_utf8(&body[..body.len().min(4096)]).is_ok() {
                BodyKind::Text
            } else {
                BodyKind::Binary
            }
        }
        m if m.starts_with("text/")
            || m.ends_with("+json")
            || m.ends_with("+xml")
            || matches!(
                m,
                "application/json" | "application/xml" | "application/javascript" | "application/x-ndjson"
            ) =>
        {
            BodyKind::Text
        }
        _ => BodyKind::Binary,
    }
}

/// Converts HTML to text (off the async threads: large pages take a while).
async fn html_to_text(body: Vec<u8>) -> Result<String, ToolError> {
    tokio::task::spawn_blocking(move || {
        html2text::config::plain().allow_width_overflow().string_from_read(&body[..], HTML_WIDTH)
    })
    .await
    .map_err(|e| ToolError::new(ErrorCode::RuntimeError, format!("HTML conversion failed: {e}")))?
    .map_err(|e| ToolError::new(ErrorCode::RuntimeError, format!("HTML conversion failed: {e}")))
}

#[async_trait]
impl Tool for WebFetchTool {
    fn spec(&self) -> ToolSpec {
        let o = self.client.options();
        ToolSpec {
            name: "WebFetch".to_owned(),
            description: format!(
                "Fetches a URL (http or https) and returns its content as text: HTML is converted to \
                 readable text, text and JSON are returned as they are. Bodies over {} MiB are cut, \
                 and the text is capped at {} characters. prompt (optional) says what to look for; \
                 it is returned with the text.",
                o.max_bytes / (1024 * 1024),
                o.text_chars
            ),
            input_schema: args::schema::<FetchArgs>(),
        }
    }

    fn effect(&self) -> Effect {
        Effect::Network
    }

    async fn execute(&self, args: &Map<String, Value>, ctx: &ToolContext) -> Result<Value, ToolError> {
        let FetchArgs { url: raw_url, prompt } = args::parse(args)?;
        let (raw_url, prompt) = (raw_url.as_str(), prompt.as_deref());
        let url = http_url(raw_url)?;
        refuse_userinfo(&url)?;
        let client = self.client.get()?;
        let options = self.client.options();
        let started = Instant::now();
        let gate = ctx.url_gate.as_deref();
        let fetched = async {
            let (response, final_url) = get_following(client, &url, ACCEPT, options, gate).await?;
            let status = response.status();
            let content_type = response
                .headers()
                .get(reqwest::header::CONTENT_TYPE)
                .and_then(|v| v.to_str().ok())
                .unwrap_or("")
                .to_owned();
            let (body, cut) = read_capped(&final_url, response, options.max_bytes, options).await?;
            Ok::<_, ToolError>((status, final_url.to_string(), content_type, body, cut))
        };
        let (status, final_url, content_type, body, body_cut) = tokio::select! {
            r = fetched => r?,
            () = ctx.cancel.cancelled() => {
                return Err(ToolError::new(ErrorCode::Canceled, "the run was canceled during the fetch"));
            }
        };
        let bytes = body.len();
        let kind = body_kind(&content_type, &body);
        let mut text = match kind {
            BodyKind::Html => html_to_text(body).await?,
            BodyKind::Text => String::from_utf8_lossy(&body).into_owned(),
            BodyKind::Binary => String::new(),
        };
        let text_cut = cap_chars(&mut text, options.text_chars);
        let response = json!({
            "url": raw_url,
            "final_url": final_url,
            "code": status.as_u16(),
            "codeText": status.canonical_reason().unwrap_or(""),
            "content_type": content_type,
            "bytes": bytes,
            "truncated": body_cut || text_cut,
            "body_truncated": body_cut,
            "binary": kind == BodyKind::Binary,
            "durationMs": u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
            "result": text,
            "prompt": prompt,
        });
        if status.is_client_error() || status.is_server_error() {
            let code = if matches!(status.as_u16(), 404 | 410) { ErrorCode::NotFound } else { ErrorCode::RuntimeError };
            let mut excerpt = text.clone();
            cap_chars(&mut excerpt, ERROR_BODY_CHARS);
            let mut message = format!("GET {final_url} returned HTTP {status}");
            if !excerpt.trim().is_empty() {
                message.push('\n');
                message.push_str(excerpt.trim());
            }
            return Err(ToolError::new(code, message).with_response(response));
        }
        Ok(response)
    }

    fn project(&self, response: &Value) -> Projection {
        let field = |k: &str| response.get(k).cloned().unwrap_or(Value::Null);
        let final_url = response.get("final_url").and_then(Value::as_str).unwrap_or("");
        let code = response.get("code").and_then(Value::as_u64).unwrap_or(0);
        let content_type = response.get("content_type").and_then(Value::as_str).unwrap_or("");
        let bytes = response.get("bytes").and_then(Value::as_u64).unwrap_or(0);
        let shown_type = if content_type.is_empty() { "no content type" } else { content_type };
        let mut content = format!("Fetched {final_url} (HTTP {code}, {shown_type}, {bytes} bytes).");
        if response.get("body_truncated").and_then(Value::as_bool).unwrap_or(false) {
            content.push_str(&format!(" The body was cut at {bytes} bytes."));
        } else if response.get("truncated").and_then(Value::as_bool).unwrap_or(false) {
            content.push_str(" The text was cut.");
        }
        if response.get("binary").and_then(Value::as_bool).unwrap_or(false) {
            content.push_str(" It is not text, so no content is shown.");
        }
        if let Some(prompt) = response.get("prompt").and_then(Value::as_str) {
            content.push_str(&format!("\nPrompt: {prompt}"));
        }
        if let Some(text) = response.get("result").and_then(Value::as_str).filter(|t| !t.trim().is_empty()) {
            content.push_str("\n\n");
            content.push_str(text.trim_end());
        }
        Projection::plain(content)
            .with("status", field("code"))
            .with("content_type", field("content_type"))
            .with("bytes", field("bytes"))
            .with("truncated", field("truncated"))
            .with("final_url", field("final_url"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_types_choose_html_text_or_binary() {
        assert_eq!(body_kind("text/html; charset=utf-8", b""), BodyKind::Html);
        assert_eq!(body_kind("application/json", b"{}"), BodyKind::Text);
        assert_eq!(body_kind("application/vnd.api+json", b"{}"), BodyKind::Text);
        assert_eq!(body_kind("image/png", b"\x89PNG"), BodyKind::Binary);
        assert_eq!(body_kind("", b"<!DOCTYPE html><html>"), BodyKind::Html);
        assert_eq!(body_kind("", b"plain words"), BodyKind::Text);
    }
}
