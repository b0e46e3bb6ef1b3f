//! One transcript read into the summary `spine sessions list` shows, and `--resume`'s picker.
//!
//! Contract: [`summarise`] reads an opened transcript once, line by line, without building the
//! content of any message ([`LineHead`] keeps each field raw and reads it as a string only
//! when it is one). It never fails: a file that cannot be read, or a line that is not a JSON
//! object, gives a summary with an `error` (the first one), and the other lines still count.
//! The summary holds the id, the `cwd`, the first and last `timestamp` (last activity in
//! milliseconds: the last timestamp, else the file's mtime), the model (the last
//! `spine_session_start`'s, else the last assistant line's), the turns (assistant lines), the
//! cost (each assistant `usage` priced with `spine_models::pricing`; unknown when some model
//! has no price or no line reports usage), the first prompt on one line and how the last run
//! ended (`spine_result`).

use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::time::SystemTime;

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Value, json};
use spine_protocol::run::Usage;

/// Characters of the first prompt shown by `list`.
const PROMPT_CHARS: usize = 60;

/// One session as `list` shows it.
#[derive(Debug, Default)]
pub(super) struct Summary {
    pub(super) id: String,
    pub(super) path: PathBuf,
    pub(super) cwd: Option<String>,
    pub(super) started: Option<String>,
    pub(super) last: Option<String>,
    /// Last activity in milliseconds since the epoch (last timestamp, else mtime).
    pub(super) last_ms: i64,
    pub(super) model: Option<String>,
    pub(super) turns: u64,
    pub(super) cost: Option<f64>,
    /// Whether some assistant line had usage a price could not be found for.
    pub(super) unpriced: bool,
    pub(super) first_prompt: Option<String>,
    pub(super) ended: Option<String>,
    pub(super) error: Option<String>,
}

impl Summary {
    pub(super) fn last_text(&self) -> String {
        self.last.clone().unwrap_or_else(|| "no timestamp".to_owned())
    }

    pub(super) fn cost(&self) -> Option<f64> {
        if self.unpriced { None } else { self.cost }
    }

    pub(super) fn json(&self) -> Value {
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

/// Reads one transcript, line by line, into its summary: `file` is the opened `path` (the path
/// is only shown), or why it could not be opened.
pub(super) fn summarise(id: &str, path: PathBuf, file: std::io::Result<File>) -> Summary {
    let mut s = Summary { id: id.to_owned(), path, ..Summary::default() };
    let file = match file {
        Ok(file) => file,
        Err(e) => {
            s.error = Some(format!("cannot read: {e}"));
            return s;
        }
    };
    let mtime = file.metadata().and_then(|m| m.modified()).unwrap_or(SystemTime::UNIX_EPOCH);
    s.last_ms = epoch_ms(mtime);
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
                    match model.as_deref().and_then(spine_agent::models::pricing::price) {
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

/// `text` on one line, cut to `max` characters with `…`.
pub(super) fn one_line(text: &str, max: usize) -> String {
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() <= max {
        return flat;
    }
    let cut: String = flat.chars().take(max.saturating_sub(1)).collect();
    format!("{cut}…")
}

pub(super) fn epoch_ms(time: SystemTime) -> i64 {
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
        let s = summarise("id", path.clone(), File::open(&path));
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
