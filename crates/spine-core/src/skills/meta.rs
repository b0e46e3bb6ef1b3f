//! A `SKILL.md`'s front matter, read as Claude Code and Codex read it.
//!
//! Contract of [`read`]:
//! - `name` and `description` are strings (a number or boolean is written as text);
//!   `when_to_use` is appended to the description in the listing.
//! - `allowed-tools` and `disallowed-tools` are permission rules in Claude Code's syntax: a
//!   YAML list, or one string of rules separated by commas or whitespace outside parentheses
//!   (`Bash(git add *) Bash(git commit *), Read`). An empty value is no list.
//! - `disable-model-invocation` and `user-invocable` take `true`/`false`, `yes`/`no`,
//!   `on`/`off`, `1`/`0` in any letter case (Claude Code 2.1.218's forms); anything else is an
//!   error naming the field.
//! - `arguments` is a YAML list or a whitespace-separated string of names (a name of digits
//!   only is dropped, as `$0` already means the first argument).
//! - `model`, `argument-hint` are strings.
//! - Claude Code's fields spine reads but does not apply (`context`, `agent`, `background`,
//!   `hooks`, `paths`, `shell`, `effort`) are listed in [`SkillMeta::unsupported`] so the
//!   caller can say so; the Agent Skills fields Claude Code ignores too (`license`,
//!   `compatibility`, `metadata`, `version`) and unknown fields are ignored.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// Claude Code's front matter fields spine reads but does not apply.
pub const UNSUPPORTED_FIELDS: &[&str] = &["context", "agent", "background", "hooks", "paths", "shell", "effort"];

/// What a skill's front matter says beyond its name and description.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SkillMeta {
    /// The other name the skill answers to: its directory's, when the front matter names it
    /// otherwise (Claude Code invokes a skill by either).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alias: Option<String>,
    /// `when_to_use`: appended to the description in the listing (` - ` between).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub when_to_use: Option<String>,
    /// `allowed-tools`, as written: while the skill is active, only calls these rules cover
    /// may run (spine's narrowing; see `skills::active`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allowed_tools: Option<Vec<String>>,
    /// `disallowed-tools`, as written: while the skill is active, calls these rules match are
    /// refused.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub disallowed_tools: Vec<String>,
    /// `model`: the model of the rest of the run once the skill is active (`inherit`: none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// `disable-model-invocation`: the model may not load it (not listed; `Skill` refuses it).
    #[serde(default)]
    pub disable_model_invocation: bool,
    /// `user-invocable` (default true): whether the user may run it as `/name`.
    #[serde(default = "yes")]
    pub user_invocable: bool,
    /// `argument-hint`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub argument_hint: Option<String>,
    /// `arguments`: the names of `$name` placeholders, by position.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub arguments: Vec<String>,
    /// The fields of [`UNSUPPORTED_FIELDS`] the front matter sets.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unsupported: Vec<String>,
}

fn yes() -> bool {
    true
}

impl Default for SkillMeta {
    fn default() -> Self {
        SkillMeta {
            alias: None,
            when_to_use: None,
            allowed_tools: None,
            disallowed_tools: Vec::new(),
            model: None,
            disable_model_invocation: false,
            user_invocable: true,
            argument_hint: None,
            arguments: Vec::new(),
            unsupported: Vec::new(),
        }
    }
}

impl SkillMeta {
    /// The model the skill asks for, unless it says `inherit`.
    pub fn model(&self) -> Option<&str> {
        self.model.as_deref().map(str::trim).filter(|m| !m.is_empty() && *m != "inherit")
    }
}

/// The front matter read: the name and description it gives, and the rest.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Parsed {
    /// `name`.
    pub name: Option<String>,
    /// `description`.
    pub description: Option<String>,
    /// Everything else.
    pub meta: SkillMeta,
}

/// Reads the front matter's fields (see the module documentation); an error names the field.
pub fn read(fields: &Map<String, Value>) -> Result<Parsed, String> {
    let mut parsed = Parsed::default();
    for (key, value) in fields {
        let field = |e: String| format!("front matter `{key}`: {e}");
        match key.as_str() {
            "name" => parsed.name = text(value).map_err(field)?,
            "description" => parsed.description = text(value).map_err(field)?,
            "when_to_use" => parsed.meta.when_to_use = text(value).map_err(field)?,
            "model" => parsed.meta.model = text(value).map_err(field)?,
            "argument-hint" => parsed.meta.argument_hint = text(value).map_err(field)?,
            "allowed-tools" => {
                parsed.meta.allowed_tools = Some(rules(value).map_err(field)?).filter(|r| !r.is_empty());
            }
            "disallowed-tools" => parsed.meta.disallowed_tools = rules(value).map_err(field)?,
            "disable-model-invocation" => parsed.meta.disable_model_invocation = flag(value).map_err(field)?,
            "user-invocable" => parsed.meta.user_invocable = flag(value).map_err(field)?,
            "arguments" => parsed.meta.arguments = names(value).map_err(field)?,
            other if UNSUPPORTED_FIELDS.contains(&other) && !value.is_null() => {
                parsed.meta.unsupported.push(other.to_owned());
            }
            _ => {}
        }
    }
    Ok(parsed)
}

/// A text field: a string, or a number or boolean written as text; `null` is none.
fn text(value: &Value) -> Result<Option<String>, String> {
    match value {
        Value::Null => Ok(None),
        Value::String(s) => Ok(Some(s.trim().to_owned()).filter(|s| !s.is_empty())),
        Value::Number(n) => Ok(Some(n.to_string())),
        Value::Bool(b) => Ok(Some(b.to_string())),
        Value::Array(_) | Value::Object(_) => Err("expected a string".to_owned()),
    }
}

/// A boolean in any of Claude Code's forms.
fn flag(value: &Value) -> Result<bool, String> {
    let word = match value {
        Value::Bool(b) => return Ok(*b),
        Value::Number(n) => n.to_string(),
        Value::String(s) => s.trim().to_ascii_lowercase(),
        Value::Null | Value::Array(_) | Value::Object(_) => String::new(),
    };
    match word.as_str() {
        "true" | "yes" | "on" | "1" => Ok(true),
        "false" | "no" | "off" | "0" => Ok(false),
        _ => Err(format!("expected true or false (or yes/no, on/off, 1/0), found {value}")),
    }
}

/// Permission rules: a list, or one string split at commas and whitespace outside parentheses.
fn rules(value: &Value) -> Result<Vec<String>, String> {
    match value {
        Value::Null => Ok(Vec::new()),
        Value::String(s) => Ok(split_rules(s)),
        Value::Array(items) => {
            let mut out = Vec::new();
            for item in items {
                match item {
                    Value::String(s) => out.extend(split_rules(s)),
                    other => return Err(format!("expected a rule (a string), found {other}")),
                }
            }
            Ok(out)
        }
        other => Err(format!("expected a string or a list of rules, found {other}")),
    }
}

/// `text` split at commas and whitespace outside parentheses.
pub fn split_rules(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let (mut depth, mut current) = (0usize, String::new());
    for c in text.chars() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                out.push(std::mem::take(&mut current));
                continue;
            }
            c if c.is_whitespace() && depth == 0 => {
                out.push(std::mem::take(&mut current));
                continue;
            }
            _ => {}
        }
        current.push(c);
    }
    out.push(current);
    out.into_iter().map(|r| r.trim().to_owned()).filter(|r| !r.is_empty()).collect()
}

/// Argument names: a list or a whitespace-separated string; names of digits only dropped.
fn names(value: &Value) -> Result<Vec<String>, String> {
    let all: Vec<String> = match value {
        Value::Null => Vec::new(),
        Value::String(s) => s.split_whitespace().map(str::to_owned).collect(),
        Value::Array(items) => items.iter().filter_map(|v| v.as_str().map(|s| s.trim().to_owned())).collect(),
        other => return Err(format!("expected a string or a list of names, found {other}")),
    };
    Ok(all.into_iter().filter(|n| !n.is_empty() && !n.chars().all(|c| c.is_ascii_digit())).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parse(v: Value) -> Result<Parsed, String> {
        read(v.as_object().expect("object"))
    }

    #[test]
    fn rules_are_a_list_or_a_string_split_outside_parentheses() {
        assert_eq!(
            split_rules("Bash(git add *) Bash(git commit *), Read"),
            ["Bash(git add *)", "Bash(git commit *)", "Read"]
        );
        assert_eq!(split_rules("Read Grep"), ["Read", "Grep"]);
        let p =
            parse(json!({"allowed-tools": ["Read", "Bash(echo a, b)"], "disallowed-tools": "WebFetch"})).expect("ok");
        assert_eq!(p.meta.allowed_tools, Some(vec!["Read".to_owned(), "Bash(echo a, b)".to_owned()]));
        assert_eq!(p.meta.disallowed_tools, ["WebFetch"]);
        assert_eq!(parse(json!({"allowed-tools": ""})).expect("ok").meta.allowed_tools, None, "empty is no list");
    }

    #[test]
    fn booleans_take_claude_codes_forms_and_refuse_others() {
        for (v, want) in [(json!("yes"), true), (json!("Off"), false), (json!(1), true), (json!(true), true)] {
            let p = parse(json!({"disable-model-invocation": v.clone()})).expect("ok");
            assert_eq!(p.meta.disable_model_invocation, want, "{v}");
        }
        assert!(parse(json!({"user-invocable": "maybe"})).is_err_and(|e| e.contains("user-invocable")));
        assert!(SkillMeta::default().user_invocable);
    }

    #[test]
    fn unsupported_fields_are_listed_and_inherit_is_no_model() {
        let p =
            parse(json!({"context": "fork", "agent": "Explore", "license": "MIT", "model": "inherit"})).expect("ok");
        assert_eq!(p.meta.unsupported, ["context", "agent"]);
        assert_eq!(p.meta.model(), None);
        let p = parse(json!({"arguments": "issue 0 branch", "model": "haiku"})).expect("ok");
        assert_eq!(
            (&p.meta.arguments[..], p.meta.model()),
            (&["issue".to_owned(), "branch".to_owned()][..], Some("haiku"))
        );
    }
}
