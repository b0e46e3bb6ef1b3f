//! `spine trace html TRACE.jsonl -o trace.html`: the trace as one self-contained page.
//!
//! The page is `assets/trace.html` with `assets/trace.css` and `assets/trace.js` inlined and
//! the data — the [`Summary`] header and every entry — embedded as JSON in a
//! `<script type="application/json">`. It names no external URL, so it opens offline and
//! fetches nothing. The embedded JSON has `<`, `>`, `&` and the two JavaScript line separators
//! written as `\uXXXX` escapes, so no text of the trace (a prompt holding `</script>`, say) can
//! end the script element; the page's script writes every value with `textContent`, never as
//! markup.

use std::path::{Path, PathBuf};

use serde_json::json;
use spine_protocol::trace::TraceEntry;

use super::read_entries;
use super::summary::Summary;
use crate::cli::TraceHtmlArgs;
use crate::error::{config, exit};
use crate::out;

const TEMPLATE: &str = include_str!("../../../assets/trace.html");
const STYLE: &str = include_str!("../../../assets/trace.css");
const SCRIPT: &str = include_str!("../../../assets/trace.js");

/// Runs `spine trace html`: writes the page and prints its path.
pub fn html(args: TraceHtmlArgs) -> anyhow::Result<u8> {
    let entries = read_entries(&args.file)?;
    let output = args.output.unwrap_or_else(|| default_output(&args.file));
    let title = args.file.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    std::fs::write(&output, page(&entries, &title)).map_err(|e| config(format!("{}: {e}", output.display())))?;
    let _ = out::line(output.display());
    Ok(exit::OK)
}

/// `trace.jsonl` → `trace.html`, beside it.
fn default_output(file: &Path) -> PathBuf {
    file.with_extension("html")
}

/// The page for `entries`, titled after `title` (the trace file's name).
pub fn page(entries: &[TraceEntry], title: &str) -> String {
    let data = json!({ "summary": Summary::of(entries), "entries": entries });
    let data = script_json(&serde_json::to_string(&data).unwrap_or_else(|_| "{}".to_owned()));
    let mut out = String::with_capacity(TEMPLATE.len() + STYLE.len() + SCRIPT.len() + data.len());
    let mut rest = TEMPLATE;
    while let Some(start) = rest.find("{{") {
        let Some(len) = rest[start..].find("}}") else { break };
        out.push_str(&rest[..start]);
        match &rest[start + 2..start + len] {
            "STYLE" => out.push_str(STYLE),
            "SCRIPT" => out.push_str(SCRIPT),
            "DATA" => out.push_str(&data),
            "TITLE" => out.push_str(&html_text(title)),
            other => {
                out.push_str("{{");
                out.push_str(other);
                out.push_str("}}");
            }
        }
        rest = &rest[start + len + 2..];
    }
    out.push_str(rest);
    out
}

/// JSON text made safe inside a `<script>` element: every `<`, `>` and `&` (which JSON only
/// has inside strings) and U+2028/U+2029 become `\uXXXX` escapes of the same string.
pub fn script_json(json: &str) -> String {
    let mut out = String::with_capacity(json.len() + json.len() / 16);
    for c in json.chars() {
        match c {
            '<' => out.push_str("\\u003c"),
            '>' => out.push_str("\\u003e"),
            '&' => out.push_str("\\u0026"),
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            c => out.push(c),
        }
    }
    out
}

/// Text for an HTML text node.
fn html_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entries() -> Vec<TraceEntry> {
        [
            r#"{"seq":0,"t_us":0,"kind":"run_start","session_id":"s1","model":"m","prompt":"say </script><script>alert(1)</script> & \u2028 done","started_at":"2026-12-01T10:00:00.000Z"}"#,
            r#"{"seq":1,"t_us":9,"kind":"run_end","subtype":"success","num_turns":0}"#,
        ]
        .iter()
        .map(|l| serde_json::from_str(l).expect(l))
        .collect()
    }

    #[test]
    fn the_embedded_data_cannot_close_its_script_element_and_reads_back_unchanged() {
        let page = page(&entries(), "t</title>.jsonl");
        assert_eq!(page.matches("</script>").count(), page.matches("<script").count(), "only the page's own");
        assert!(!page.contains("alert(1)</script>"));
        assert!(page.contains("<title>spine trace · t&lt;/title&gt;.jsonl</title>"), "the title is text");
        let start = page.find(r#"<script type="application/json" id="trace-data">"#).expect("data element");
        let body = &page[start..];
        let json = &body[body.find('>').map_or(0, |i| i + 1)..body.find("</script>").unwrap_or(0)];
        let data: serde_json::Value = serde_json::from_str(json).expect("valid JSON");
        assert_eq!(data["entries"][0]["prompt"], "say </script><script>alert(1)</script> & \u{2028} done");
        assert_eq!(data["summary"]["session_id"], "s1");
    }

    #[test]
    fn the_page_names_no_external_url() {
        let page = page(&entries(), "t.jsonl");
        for needle in ["http:", "https:", "src=\"//", "href=\"//", "url(", "@import"] {
            assert!(!page.contains(needle), "{needle} in the page");
        }
    }
}
