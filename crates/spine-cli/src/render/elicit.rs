//! The terminal's answer to an MCP elicitation no hook answered (the terminal approver's
//! `elicit`): the server's message, then
//!
//! - a form: `[a]nswer / [d]ecline / [c]ancel`; to answer, one prompt per property of the
//!   requested schema, in the schema's order — text, numbers, integers, yes/no, a choice of
//!   an `enum` (or of `oneOf`/`anyOf` constants, with their titles), several choices of an
//!   array of those (comma-separated); anything else is read as JSON, else as text;
//! - a URL: the page, then `[a]ccept (opened it) / [d]ecline / [c]ancel`.
//!
//! # Contract
//!
//! - Enter takes the property's `default`, skips an optional property, and asks again for a
//!   required one. A choice is its number or its value. Each value is checked against its
//!   property's schema (`jsonschema`) and asked again with the reason; the whole answer is
//!   checked against the requested schema before it is accepted (else: retry, decline or
//!   cancel).
//! - A canceled turn (Ctrl-C) or an unreadable terminal is a `cancel`; an unrecognised first
//!   answer is a `decline` (fail closed).

use std::io::Write;

use serde_json::{Map, Value};
use spine_core::CancellationToken;
use spine_core::elicitation::{ElicitAction, ElicitationAnswer, ElicitationMode, ElicitationRequest};

/// Where answers come from: each call shows `prompt` and reads one line (the terminal, or a
/// script in tests). An `Err` ends the elicitation with `cancel`.
pub(super) trait Lines {
    /// Shows `prompt` and reads one line.
    fn line(&mut self, prompt: &str) -> Result<String, String>;
    /// Shows a line of information.
    fn say(&mut self, text: &str);
}

/// The terminal: questions on stderr, answers from stdin; a canceled turn stops the wait.
pub(super) struct Terminal {
    /// The running prompt's cancellation.
    pub(super) cancel: CancellationToken,
}

impl Lines for Terminal {
    fn line(&mut self, prompt: &str) -> Result<String, String> {
        super::approver::prompt(prompt, &self.cancel)
    }
    fn say(&mut self, text: &str) {
        let _ = writeln!(std::io::stderr().lock(), "{text}");
    }
}

/// Asks the whole elicitation.
pub(super) fn ask(request: &ElicitationRequest, lines: &mut dyn Lines) -> ElicitationAnswer {
    match &request.mode {
        ElicitationMode::Url { url, .. } => {
            lines
                .say(&format!("MCP server `{}` asks you to open a page: {}\n  {url}", request.server, request.message));
            match lines.line("[a]ccept (opened it) / [d]ecline / [c]ancel: ") {
                Ok(line) => match first_word(&line).as_str() {
                    "a" | "accept" | "y" | "yes" => ElicitationAnswer { action: ElicitAction::Accept, content: None },
                    "c" | "cancel" => ElicitationAnswer::cancel(),
                    _ => ElicitationAnswer::decline(),
                },
                Err(_) => ElicitationAnswer::cancel(),
            }
        }
        ElicitationMode::Form { requested_schema } => {
            lines.say(&format!("MCP server `{}` asks: {}", request.server, request.message));
            match form(requested_schema, lines) {
                Ok(answer) => answer,
                Err(_) => ElicitationAnswer::cancel(),
            }
        }
    }
}

fn first_word(line: &str) -> String {
    line.split_whitespace().next().unwrap_or("").to_ascii_lowercase()
}

/// The form: answer, decline or cancel; then the fields until the answer matches the schema.
fn form(schema: &Value, lines: &mut dyn Lines) -> Result<ElicitationAnswer, String> {
    let mut question = "[a]nswer / [d]ecline / [c]ancel: ";
    loop {
        match first_word(&lines.line(question)?).as_str() {
            "a" | "answer" | "y" | "yes" | "r" | "retry" => {}
            "c" | "cancel" => return Ok(ElicitationAnswer::cancel()),
            _ => return Ok(ElicitationAnswer::decline()),
        }
        let content = fields(schema, lines)?;
        let errors = match jsonschema::validator_for(schema) {
            Ok(validator) => validator.iter_errors(&Value::Object(content.clone())).map(|e| e.to_string()).collect(),
            Err(e) => vec![format!("the server's schema does not compile: {e}")],
        };
        if errors.is_empty() {
            return Ok(ElicitationAnswer::accept(content));
        }
        lines.say(&format!("  The answer does not match what the server asks: {}", errors.join("; ")));
        question = "[r]etry / [d]ecline / [c]ancel: ";
    }
}

/// One prompt per property.
fn fields(schema: &Value, lines: &mut dyn Lines) -> Result<Map<String, Value>, String> {
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut content = Map::new();
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else { return Ok(content) };
    for (name, property) in properties {
        if let Some(value) = field(name, property, required.contains(&name.as_str()), lines)? {
            content.insert(name.clone(), value);
        }
    }
    Ok(content)
}

/// What a property takes.
enum Kind {
    Text,
    Number,
    Integer,
    Boolean,
    /// One of these values (with their labels).
    Choice(Vec<(Value, String)>),
    /// Several of these values.
    Choices(Vec<(Value, String)>),
    Json,
}

fn kind(property: &Value) -> Kind {
    if let Some(options) = options(property) {
        return Kind::Choice(options);
    }
    match property.get("type").and_then(Value::as_str) {
        Some("string") => Kind::Text,
        Some("number") => Kind::Number,
        Some("integer") => Kind::Integer,
        Some("boolean") => Kind::Boolean,
        Some("array") => match property.get("items").and_then(options) {
            Some(options) => Kind::Choices(options),
            None => Kind::Json,
        },
        _ => Kind::Json,
    }
}

/// The values of an `enum` (labelled by `enumNames` when given) or of `oneOf`/`anyOf`
/// constants (labelled by their `title`).
fn options(schema: &Value) -> Option<Vec<(Value, String)>> {
    if let Some(values) = schema.get("enum").and_then(Value::as_array) {
        let names = schema.get("enumNames").and_then(Value::as_array);
        return Some(
            values
                .iter()
                .enumerate()
                .map(|(i, v)| {
                    let label =
                        names.and_then(|n| n.get(i)).and_then(Value::as_str).map_or_else(|| text(v), str::to_owned);
                    (v.clone(), label)
                })
                .collect(),
        );
    }
    let alternatives = schema.get("oneOf").or_else(|| schema.get("anyOf")).and_then(Value::as_array)?;
    let consts: Vec<(Value, String)> = alternatives
        .iter()
        .filter_map(|a| {
            let value = a.get("const")?;
            Some((value.clone(), a.get("title").and_then(Value::as_str).map_or_else(|| text(value), str::to_owned)))
        })
        .collect();
    (consts.len() == alternatives.len() && !consts.is_empty()).then_some(consts)
}

fn text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Asks one property until its value is valid; `None` when an optional one is skipped.
fn field(name: &str, property: &Value, required: bool, lines: &mut dyn Lines) -> Result<Option<Value>, String> {
    let kind = kind(property);
    let default = property.get("default");
    let title = property.get("title").and_then(Value::as_str).unwrap_or(name);
    let what = match &kind {
        Kind::Text => "text",
        Kind::Number => "number",
        Kind::Integer => "whole number",
        Kind::Boolean => "y/n",
        Kind::Choice(_) => "a number or a value",
        Kind::Choices(_) => "numbers or values, comma-separated",
        Kind::Json => "JSON",
    };
    if let Some(description) = property.get("description").and_then(Value::as_str) {
        lines.say(&format!("  {title} — {description}"));
    }
    if let Kind::Choice(options) | Kind::Choices(options) = &kind {
        let list: Vec<String> =
            options.iter().enumerate().map(|(i, (_, label))| format!("{}) {label}", i + 1)).collect();
        lines.say(&format!("    {}", list.join("  ")));
    }
    // A default is shown as the user would type it: a choice by its label.
    let label = |value: &Value| match &kind {
        Kind::Choice(options) | Kind::Choices(options) => {
            options.iter().find(|(v, _)| v == value).map_or_else(|| text(value), |(_, label)| label.clone())
        }
        _ => text(value),
    };
    let enter = match (default, required) {
        (Some(Value::Array(items)), _) => {
            format!("[Enter: {}]", items.iter().map(label).collect::<Vec<_>>().join(", "))
        }
        (Some(d), _) => format!("[Enter: {}]", label(d)),
        (None, true) => "(required)".to_owned(),
        (None, false) => "[Enter: skip]".to_owned(),
    };
    let question = format!("  {name} ({what}) {enter}: ");
    let validator = jsonschema::validator_for(property).ok();
    loop {
        let line = lines.line(&question)?;
        let line = line.trim_end_matches(['\n', '\r']);
        let value = if line.trim().is_empty() {
            match (default, required) {
                (Some(d), _) => d.clone(),
                (None, false) => return Ok(None),
                (None, true) => {
                    lines.say("  This field is required.");
                    continue;
                }
            }
        } else {
            match parse(&kind, line) {
                Ok(value) => value,
                Err(why) => {
                    lines.say(&format!("  {why}"));
                    continue;
                }
            }
        };
        match validator.as_ref().map(|v| v.iter_errors(&value).map(|e| e.to_string()).collect::<Vec<_>>()) {
            Some(errors) if !errors.is_empty() => lines.say(&format!("  {}", errors.join("; "))),
            _ => return Ok(Some(value)),
        }
    }
}

/// The value a typed line means for a property of `kind`.
fn parse(kind: &Kind, line: &str) -> Result<Value, String> {
    let word = line.trim();
    match kind {
        Kind::Text => Ok(Value::String(line.to_owned())),
        Kind::Number => word
            .parse::<f64>()
            .ok()
            .and_then(serde_json::Number::from_f64)
            .map(Value::Number)
            .ok_or("Type a number.".into()),
        Kind::Integer => word.parse::<i64>().map(Value::from).map_err(|_| "Type a whole number.".into()),
        Kind::Boolean => match word.to_ascii_lowercase().as_str() {
            "y" | "yes" | "true" => Ok(Value::Bool(true)),
            "n" | "no" | "false" => Ok(Value::Bool(false)),
            _ => Err("Type y or n.".into()),
        },
        Kind::Choice(options) => choose(options, word),
        Kind::Choices(options) => {
            word.split(',').map(|w| choose(options, w.trim())).collect::<Result<Vec<_>, _>>().map(Value::Array)
        }
        Kind::Json => Ok(serde_json::from_str(word).unwrap_or_else(|_| Value::String(line.to_owned()))),
    }
}

/// A choice by its number, its value or its label.
fn choose(options: &[(Value, String)], word: &str) -> Result<Value, String> {
    if let Some((value, _)) = word.parse::<usize>().ok().and_then(|n| n.checked_sub(1)).and_then(|i| options.get(i)) {
        return Ok(value.clone());
    }
    options
        .iter()
        .find(|(value, label)| text(value) == word || label.eq_ignore_ascii_case(word))
        .map(|(value, _)| value.clone())
        .ok_or_else(|| format!("Type a number from 1 to {}, or one of the values.", options.len()))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// Answers from a list; records what was shown.
    struct Script {
        answers: std::vec::IntoIter<&'static str>,
        shown: Vec<String>,
    }

    impl Lines for Script {
        fn line(&mut self, prompt: &str) -> Result<String, String> {
            self.shown.push(prompt.to_owned());
            self.answers.next().map(str::to_owned).ok_or_else(|| "no more answers".to_owned())
        }
        fn say(&mut self, text: &str) {
            self.shown.push(text.to_owned());
        }
    }

    fn run(schema: Value, answers: Vec<&'static str>) -> (ElicitationAnswer, Vec<String>) {
        let request = ElicitationRequest {
            server: "srv".into(),
            message: "Who are you?".into(),
            mode: ElicitationMode::Form { requested_schema: schema },
        };
        let mut script = Script { answers: answers.into_iter(), shown: Vec::new() };
        let answer = ask(&request, &mut script);
        (answer, script.shown)
    }

    fn schema() -> Value {
        json!({"type": "object", "required": ["name"], "properties": {
            "name": {"type": "string", "title": "Name"},
            "age": {"type": "integer", "minimum": 0, "maximum": 150},
            "ok": {"type": "boolean"},
            "color": {"type": "string", "enum": ["red", "green"], "default": "red"},
            "hero": {"type": "string", "default": "h1",
                "oneOf": [{"const": "h1", "title": "Superman"}, {"const": "h2", "title": "Batman"}]},
            "tags": {"type": "array", "items": {"type": "string", "enum": ["a", "b", "c"]}}
        }})
    }

    #[test]
    fn each_field_is_asked_in_order_typed_and_checked_and_enter_takes_the_default_or_skips() {
        let (answer, shown) = run(schema(), vec!["a", "", "Ada", "two", "200", "36", "y", "", "2", "1, c"]);
        assert_eq!(answer.action, ElicitAction::Accept);
        let expected = json!({"name": "Ada", "age": 36, "ok": true, "color": "red", "hero": "h2", "tags": ["a", "c"]});
        assert_eq!(answer.content.map(Value::Object), Some(expected));
        let shown = shown.join("\n");
        assert!(shown.contains("MCP server `srv` asks: Who are you?"), "{shown}");
        assert!(shown.contains("This field is required."), "{shown}");
        assert!(shown.contains("Type a whole number."), "{shown}");
        assert!(shown.contains("1) Superman  2) Batman"), "{shown}");
        assert!(shown.contains("    1) red  2) green\n  color (a number or a value) [Enter: red]: "), "{shown}");
        assert!(shown.contains("  name (text) (required): "), "{shown}");
        assert!(shown.contains("  hero (a number or a value) [Enter: Superman]: "), "{shown}");
    }

    #[test]
    fn decline_cancel_and_an_unreadable_terminal_are_answers_too() {
        assert_eq!(run(schema(), vec!["d"]).0, ElicitationAnswer::decline());
        assert_eq!(run(schema(), vec!["whatever"]).0, ElicitationAnswer::decline(), "fails closed");
        assert_eq!(run(schema(), vec!["c"]).0, ElicitationAnswer::cancel());
        assert_eq!(run(schema(), vec!["a", "Ada"]).0, ElicitationAnswer::cancel(), "the terminal went away");
    }

    #[test]
    fn an_answer_that_does_not_match_the_whole_schema_can_be_retried() {
        let schema = json!({"type": "object", "properties": {"a": {"type": "string"}}, "minProperties": 1});
        let (answer, shown) = run(schema, vec!["a", "", "r", "x"]);
        assert_eq!(answer.content.map(Value::Object), Some(json!({"a": "x"})));
        assert!(shown.iter().any(|s| s.contains("does not match what the server asks")), "{shown:?}");
    }

    #[test]
    fn a_url_is_shown_and_accepting_sends_no_content() {
        let request = ElicitationRequest {
            server: "srv".into(),
            message: "Sign in".into(),
            mode: ElicitationMode::Url { url: "https://example.com/auth".into(), elicitation_id: "e1".into() },
        };
        let mut script = Script { answers: vec!["a"].into_iter(), shown: Vec::new() };
        let answer = ask(&request, &mut script);
        assert_eq!((answer.action, answer.content), (ElicitAction::Accept, None));
        assert!(script.shown[0].contains("https://example.com/auth"));
    }
}
