//! Claude Code's "async form": a hook that prints `{"async": true}` (optionally with
//! `"asyncTimeout": <ms>`) goes to the background.
//!
//! Contract:
//! - [`parse`]: a text is the async form when it is one JSON object whose `async` is `true`;
//!   `asyncTimeout` is then its time limit in milliseconds, counted from that line (absent, not
//!   a positive number: the hook's `timeout` applies).
//! - [`split`]: a command hook's stdout whose first line (up to the first newline, or the whole
//!   text) is the async form is that form plus the rest of stdout, which is the hook's late
//!   answer, read as any stdout; other stdout is left whole.
//! - [`FirstLine`]: watches stdout as it arrives and reports the async form as soon as the first
//!   line is complete (or, before any newline, as soon as what arrived is the async form); a
//!   first line that is anything else is never reported.
//! - A whole JSON answer in the async form (an HTTP body, a persistent hook's line) is "no
//!   opinion": the hook's server goes on by itself (see [`super::answer::parse`]).

use std::time::Duration;

use serde_json::Value;

/// A hook's announcement that it goes on in the background.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AsyncForm {
    /// `asyncTimeout`: its time limit from the announcement on.
    pub timeout: Option<Duration>,
}

/// Characters of a first line looked at, at most: a longer line is not the async form.
const FIRST_LINE_CAP: usize = 4096;

/// The async form, if `text` is one.
pub fn parse(text: &str) -> Option<AsyncForm> {
    let text = text.trim();
    if !text.starts_with('{') || !text.contains("async") {
        return None;
    }
    let Ok(Value::Object(map)) = serde_json::from_str::<Value>(text) else {
        return None;
    };
    of_object(&map)
}

/// The async form, if `map` is one.
pub fn of_object(map: &serde_json::Map<String, Value>) -> Option<AsyncForm> {
    if map.get("async") != Some(&Value::Bool(true)) {
        return None;
    }
    let timeout = map
        .get("asyncTimeout")
        .and_then(Value::as_f64)
        .filter(|ms| ms.is_finite() && *ms > 0.0)
        .map(|ms| Duration::from_secs_f64(ms.min(86_400_000.0) / 1000.0));
    Some(AsyncForm { timeout })
}

/// The async form of stdout's first line and the rest of stdout, or `None` and all of it.
pub fn split(stdout: &str) -> (Option<AsyncForm>, &str) {
    let (first, rest) = match stdout.split_once('\n') {
        Some((first, rest)) => (first, rest),
        None => (stdout, ""),
    };
    match parse(first) {
        Some(form) => (Some(form), rest),
        None => (None, stdout),
    }
}

/// Watches a hook's stdout for the async form on its first line.
#[derive(Debug, Default)]
pub struct FirstLine {
    seen: String,
    decided: bool,
}

impl FirstLine {
    /// Takes the next chunk of stdout; returns the async form the first time it is recognised.
    pub fn push(&mut self, chunk: &str) -> Option<AsyncForm> {
        if self.decided {
            return None;
        }
        let room = FIRST_LINE_CAP.saturating_sub(self.seen.len());
        let take = chunk.char_indices().map(|(i, _)| i).find(|i| *i >= room).unwrap_or(chunk.len());
        self.seen.push_str(&chunk[..take]);
        if let Some((first, _)) = self.seen.split_once('\n') {
            self.decided = true;
            return parse(first);
        }
        if self.seen.len() >= FIRST_LINE_CAP {
            self.decided = true;
            return None;
        }
        let form = parse(&self.seen);
        self.decided = form.is_some();
        form
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_async_form_is_an_object_whose_async_is_true_with_an_optional_time_limit_in_ms() {
        assert_eq!(parse(r#"{"async": true}"#), Some(AsyncForm { timeout: None }));
        assert_eq!(
            parse(r#" {"async":true,"asyncTimeout":1500} "#),
            Some(AsyncForm { timeout: Some(Duration::from_millis(1500)) })
        );
        assert_eq!(parse(r#"{"async": true, "asyncTimeout": 0}"#), Some(AsyncForm { timeout: None }));
        assert_eq!(parse(r#"{"async": false}"#), None);
        assert_eq!(parse(r#"{"decision": "block"}"#), None);
        assert_eq!(parse("async"), None);
    }

    #[test]
    fn only_a_first_line_in_the_async_form_splits_stdout() {
        let (form, rest) = split("{\"async\": true}\n{\"decision\": \"block\"}\n");
        assert!(form.is_some());
        assert_eq!(rest, "{\"decision\": \"block\"}\n");
        assert_eq!(split("{\"async\": true}"), (Some(AsyncForm { timeout: None }), ""));
        let pretty = "{\n  \"async\": true\n}\n";
        assert_eq!(split(pretty), (None, pretty), "a pretty-printed answer is not the form");
        assert_eq!(split("hello\n{\"async\": true}\n"), (None, "hello\n{\"async\": true}\n"));
    }

    #[test]
    fn the_first_line_is_recognised_as_it_arrives_and_only_once() {
        let mut watch = FirstLine::default();
        assert_eq!(watch.push("{\"asy"), None);
        assert_eq!(watch.push("nc\": tr"), None);
        assert_eq!(watch.push("ue}"), Some(AsyncForm { timeout: None }), "complete without a newline");
        assert_eq!(watch.push("\n{\"async\": true}\n"), None);
        let mut other = FirstLine::default();
        assert_eq!(other.push("{\"decision\": \"block\"}\n{\"async\": true}\n"), None);
        assert_eq!(other.push("{\"async\": true}\n"), None, "decided on the first line");
    }
}
