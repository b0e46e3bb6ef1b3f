//! What the driven-session flags of `spine run` (`args.host`, the Agent SDKs' flags) do to the
//! session's agent and model; shared by `spine run`, the interactive session and a
//! stream-json session through [`crate::session_open`].
//!
//! Contract — every problem is a configuration error naming the flag (exit status 2), found
//! before the first prompt ([`HostChoices::of`] checks the flags before anything starts;
//! assembly applies [`HostChoices::session_choices`]):
//! - `--system-prompt-file` / `--append-system-prompt-file`: the file's text (relative paths
//!   from the directory spine was started in), exactly as `--system-prompt` /
//!   `--append-system-prompt` would give it.
//! - `--effort`, `--thinking`, `--max-thinking-tokens`: one [`ReasoningFlags`] (see
//!   [`thinking_mode`]) applied to the model as its wire takes it (spine-models'
//!   `anthropic::reasoning`; OpenAI gets the effort alone); hooks read `effort` as the flag's
//!   word.
//! - `--fallback-model A[,B…]`: the models that take over when the current one is overloaded
//!   or unavailable ([`spine_agent::model::session_model`]); one naming the main model is
//!   refused.
//! - `--max-budget-usd USD`: a number greater than 0; the session's budget
//!   ([`spine_core::runner::budget`]).
//! - `--json-schema SCHEMA`: inline JSON (or, when the text is not JSON, a file holding it),
//!   a valid JSON Schema of an object; the `StructuredOutput` tool and its rule
//!   ([`spine_core::runner::structured`]).
//! - `--fork-session`: [`fork`].

pub(crate) mod fork;

use std::path::Path;

use serde_json::Value;
use spine_core::model_reasoning::{EffortLevel, ReasoningFlags, ThinkingMode};

use crate::cli::{EffortFlag, HostArgs, RunArgs, ThinkingFlag};
use crate::error::config;

/// The host flags of a session, read and checked.
#[derive(Debug, Clone, Default)]
pub(crate) struct HostChoices {
    /// `--system-prompt`, or the text of `--system-prompt-file`.
    pub(crate) system_prompt: Option<String>,
    /// `--append-system-prompt`, or the text of `--append-system-prompt-file`.
    pub(crate) append_system_prompt: Option<String>,
    reasoning: ReasoningFlags,
    fallbacks: Vec<String>,
    budget: Option<f64>,
    schema: Option<Value>,
}

impl HostChoices {
    /// Reads and checks the flags of `args` (the prompt files are read here).
    pub(crate) fn of(args: &RunArgs) -> anyhow::Result<HostChoices> {
        let host = &args.host;
        let launch = std::env::current_dir().unwrap_or_default();
        let system_prompt = match &host.system_prompt_file {
            Some(path) => Some(read_prompt("--system-prompt-file", &launch.join(path))?),
            None => args.system_prompt.clone(),
        };
        let append_system_prompt = match &host.append_system_prompt_file {
            Some(path) => Some(read_prompt("--append-system-prompt-file", &launch.join(path))?),
            None => args.append_system_prompt.clone(),
        };
        Ok(HostChoices {
            system_prompt,
            append_system_prompt,
            reasoning: reasoning_flags(host),
            fallbacks: fallbacks(host.fallback_model.as_deref())?,
            budget: budget(host.max_budget_usd)?,
            schema: host.json_schema.as_deref().map(|text| schema(text, &launch)).transpose()?,
        })
    }

    /// What assembly applies to the agent: the reasoning flags, the fallback models, the
    /// budget and the schema ([`spine_agent::SessionChoices`]).
    pub(crate) fn session_choices(&self) -> spine_agent::SessionChoices {
        spine_agent::SessionChoices {
            reasoning: self.reasoning,
            fallbacks: self.fallbacks.clone(),
            budget_usd: self.budget,
            schema: self.schema.clone(),
        }
    }
}

fn read_prompt(flag: &str, path: &Path) -> anyhow::Result<String> {
    std::fs::read_to_string(path).map_err(|e| config(format!("{flag} {}: {e}", path.display())))
}

/// `--effort`, `--thinking` and `--max-thinking-tokens` as one value.
pub(crate) fn reasoning_flags(host: &HostArgs) -> ReasoningFlags {
    let effort = host.effort.map(|e| match e {
        EffortFlag::Low => EffortLevel::Low,
        EffortFlag::Medium => EffortLevel::Medium,
        EffortFlag::High => EffortLevel::High,
        EffortFlag::Xhigh => EffortLevel::XHigh,
        EffortFlag::Max => EffortLevel::Max,
    });
    ReasoningFlags { effort, thinking: thinking_mode(host.thinking, host.max_thinking_tokens) }
}

/// The thinking mode of `--thinking` and `--max-thinking-tokens`: `disabled`, or a budget of
/// 0, turns thinking off; `adaptive` and `enabled` keep the budget (used where the model
/// takes one); a budget alone is `enabled` with it; neither leaves the settings' choice.
pub(crate) fn thinking_mode(thinking: Option<ThinkingFlag>, budget: Option<u32>) -> Option<ThinkingMode> {
    match (thinking, budget) {
        (Some(ThinkingFlag::Disabled), _) | (_, Some(0)) => Some(ThinkingMode::Disabled),
        (Some(ThinkingFlag::Adaptive), budget_tokens) => Some(ThinkingMode::Adaptive { budget_tokens }),
        (Some(ThinkingFlag::Enabled), budget_tokens) => Some(ThinkingMode::Enabled { budget_tokens }),
        (None, Some(n)) => Some(ThinkingMode::Enabled { budget_tokens: Some(n) }),
        (None, None) => None,
    }
}

/// `--fallback-model`: comma-separated model specs, in order.
fn fallbacks(flag: Option<&str>) -> anyhow::Result<Vec<String>> {
    let Some(text) = flag else { return Ok(Vec::new()) };
    let specs: Vec<String> = text.split(',').map(str::trim).filter(|s| !s.is_empty()).map(str::to_owned).collect();
    if specs.is_empty() {
        return Err(config("--fallback-model: no model named"));
    }
    Ok(specs)
}

/// `--max-budget-usd`: a finite number greater than 0.
fn budget(flag: Option<f64>) -> anyhow::Result<Option<f64>> {
    match flag {
        Some(usd) if !(usd.is_finite() && usd > 0.0) => {
            Err(config(format!("--max-budget-usd: must be a number greater than 0, got {usd}")))
        }
        other => Ok(other),
    }
}

/// `--json-schema`: the schema, inline or from a file, compiled once to check it.
fn schema(text: &str, launch: &Path) -> anyhow::Result<Value> {
    let value = match serde_json::from_str::<Value>(text) {
        Ok(value) => value,
        Err(json_error) => {
            let path = launch.join(text);
            let file = std::fs::read_to_string(&path)
                .map_err(|_| config(format!("--json-schema: not JSON ({json_error}), and not a file either")))?;
            serde_json::from_str(&file)
                .map_err(|e| config(format!("--json-schema {}: not JSON: {e}", path.display())))?
        }
    };
    jsonschema::validator_for(&value).map_err(|e| config(format!("--json-schema: not a valid JSON Schema: {e}")))?;
    Ok(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_zero_budget_or_disabled_turns_thinking_off_and_a_budget_alone_enables_it() {
        assert_eq!(thinking_mode(None, None), None);
        assert_eq!(thinking_mode(None, Some(0)), Some(ThinkingMode::Disabled));
        assert_eq!(thinking_mode(Some(ThinkingFlag::Enabled), Some(0)), Some(ThinkingMode::Disabled));
        assert_eq!(thinking_mode(Some(ThinkingFlag::Disabled), Some(5000)), Some(ThinkingMode::Disabled));
        assert_eq!(thinking_mode(None, Some(5000)), Some(ThinkingMode::Enabled { budget_tokens: Some(5000) }));
        assert_eq!(
            thinking_mode(Some(ThinkingFlag::Adaptive), Some(3000)),
            Some(ThinkingMode::Adaptive { budget_tokens: Some(3000) })
        );
        assert_eq!(
            thinking_mode(Some(ThinkingFlag::Enabled), None),
            Some(ThinkingMode::Enabled { budget_tokens: None })
        );
    }

    #[test]
    fn a_budget_must_be_a_finite_number_greater_than_zero() {
        assert!(budget(Some(0.0)).is_err());
        assert!(budget(Some(-1.0)).is_err());
        assert!(budget(Some(f64::NAN)).is_err());
        assert!(budget(Some(f64::INFINITY)).is_err());
        assert_eq!(budget(Some(0.25)).ok().flatten(), Some(0.25));
        assert_eq!(budget(None).ok().flatten(), None);
    }

    #[test]
    fn fallback_models_are_comma_separated_in_order() {
        assert_eq!(fallbacks(Some("sonnet, haiku,")).ok(), Some(vec!["sonnet".to_owned(), "haiku".to_owned()]));
        assert!(fallbacks(Some(" , ")).is_err());
        assert_eq!(fallbacks(None).ok(), Some(Vec::new()));
    }

    #[test]
    fn a_schema_is_inline_json_or_a_file_and_must_compile() {
        let dir = tempfile::tempdir().expect("tempdir");
        assert_eq!(schema(r#"{"type":"object"}"#, dir.path()).ok(), Some(serde_json::json!({"type": "object"})));
        std::fs::write(dir.path().join("s.json"), r#"{"type":"object","required":["a"]}"#).expect("write");
        assert!(schema("s.json", dir.path()).is_ok());
        let bad = schema(r#"{"type": 12}"#, dir.path()).expect_err("not a schema").to_string();
        assert!(bad.starts_with("--json-schema: not a valid JSON Schema"), "{bad}");
        let missing = schema("nope.json", dir.path()).expect_err("no file").to_string();
        assert!(missing.contains("not JSON") && missing.contains("not a file"), "{missing}");
    }
}
