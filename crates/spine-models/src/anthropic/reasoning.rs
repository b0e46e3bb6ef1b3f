//! What the Messages API receives for the session's reasoning flags (`--effort`, `--thinking`,
//! `--max-thinking-tokens`), by model, as Claude Code 2.1 sends it:
//!
//! | model | thinking | effort (`output_config.effort`) |
//! | --- | --- | --- |
//! | Claude 3 (but 3.7 Sonnet), Claude 2 | not sent | not sent |
//! | 3.7 Sonnet, the 4 models before 4.6 (Sonnet 4.5, Haiku 4.5, Opus 4.5…) | `enabled` with a budget (`adaptive` becomes `enabled`) | Opus 4.5 only, at most `high` |
//! | Sonnet 4.6 | `adaptive` (a budget becomes `adaptive` too) | at most `high` |
//! | Opus 4.6 | `adaptive` | every level but `xhigh` (sent as `high`) |
//! | Opus 4.7 and later, every 5 model, Fable, other ids (proxies) | `adaptive` | every level |
//!
//! `disabled` is sent as `{"type": "disabled"}` to every model that thinks. A budget is
//! `--max-thinking-tokens` (at least 1024, the API's minimum: smaller ones are raised to it),
//! else the settings' `thinking_budget_tokens`, else [`DEFAULT_FLAG_BUDGET`].

use spine_core::model_reasoning::{EffortLevel, ReasoningFlags, ThinkingMode};

use super::{AnthropicOptions, Thinking};

/// The budget of `--thinking enabled` (or `adaptive` on a model that takes only a budget)
/// without `--max-thinking-tokens` or a `thinking_budget_tokens` setting.
pub const DEFAULT_FLAG_BUDGET: u32 = 10_000;

/// The API's smallest thinking budget.
const MIN_BUDGET: u32 = 1024;

/// How a model thinks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Thinks {
    /// Not at all.
    Never,
    /// With a budget.
    Budget,
    /// Adaptively.
    Adaptive,
}

/// A Claude model id's family and version: `claude-opus-4-6` is (`opus`, 4, 6),
/// `claude-3-7-sonnet-20250219` (`sonnet`, 3, 7), `claude-sonnet-4-20250514` (`sonnet`, 4, 0).
fn version(model: &str) -> Option<(&str, u32, u32)> {
    let rest = model.strip_prefix("claude-")?;
    let mut family = None;
    let mut numbers = Vec::new();
    for part in rest.split('-') {
        match part.parse::<u32>() {
            // A date (`20250514`) ends the version.
            Ok(_) if part.len() > 2 => break,
            Ok(n) => numbers.push(n),
            Err(_) if family.is_none() => family = Some(part),
            Err(_) => break,
        }
    }
    Some((family?, *numbers.first()?, numbers.get(1).copied().unwrap_or(0)))
}

fn thinks(model: &str) -> Thinks {
    match version(model) {
        None if model.starts_with("claude-") && !model.starts_with("claude-fable") => Thinks::Budget,
        None => Thinks::Adaptive,
        Some((_, major, minor)) if major < 3 || (major == 3 && minor < 7) => Thinks::Never,
        Some((_, major, minor)) if major == 3 || (major == 4 && minor < 6) => Thinks::Budget,
        Some(_) => Thinks::Adaptive,
    }
}

/// The effort `model` is sent for `level`, if any.
fn effort_for(model: &str, level: EffortLevel) -> Option<EffortLevel> {
    let capped = |ceiling: EffortLevel| Some(level.min(ceiling));
    match version(model) {
        None if model.starts_with("claude-") && !model.starts_with("claude-fable") => None,
        None => Some(level),
        Some(("opus", 4, 5)) | Some(("sonnet", 4, 6)) => capped(EffortLevel::High),
        Some(("opus", 4, 6)) if level == EffortLevel::XHigh => Some(EffortLevel::High),
        Some((_, major, minor)) if major >= 5 || (major == 4 && minor >= 6) => Some(level),
        Some(_) => None,
    }
}

/// The thinking field for `mode` on a model that thinks as `thinks`; `settings_budget` is the
/// budget the settings gave.
fn thinking_for(thinks: Thinks, mode: ThinkingMode, settings_budget: Option<u32>) -> Option<Thinking> {
    let budget = |given: Option<u32>| given.or(settings_budget).unwrap_or(DEFAULT_FLAG_BUDGET).max(MIN_BUDGET);
    match (thinks, mode) {
        (Thinks::Never, _) => None,
        (_, ThinkingMode::Disabled) => Some(Thinking::Disabled),
        (Thinks::Adaptive, ThinkingMode::Adaptive { .. } | ThinkingMode::Enabled { .. }) => Some(Thinking::Adaptive),
        (Thinks::Budget, ThinkingMode::Adaptive { budget_tokens } | ThinkingMode::Enabled { budget_tokens }) => {
            Some(Thinking::Enabled { budget_tokens: budget(budget_tokens) })
        }
    }
}

impl AnthropicOptions {
    /// These options with `flags` applied for `model` (see the module documentation); `None`
    /// when they change nothing.
    pub(super) fn with_flags(&self, model: &str, flags: &ReasoningFlags) -> Option<AnthropicOptions> {
        let mut options = self.clone();
        if let Some(mode) = flags.thinking {
            let settings_budget = match self.thinking {
                Some(Thinking::Enabled { budget_tokens }) => Some(budget_tokens),
                _ => None,
            };
            options.thinking = thinking_for(thinks(model), mode, settings_budget);
        }
        if let Some(level) = flags.effort {
            options.effort = effort_for(model, level);
        }
        (options.thinking != self.thinking || options.effort != self.effort).then_some(options)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn model_ids_parse_to_family_and_version() {
        assert_eq!(version("claude-opus-4-6"), Some(("opus", 4, 6)));
        assert_eq!(version("claude-3-7-sonnet-20250219"), Some(("sonnet", 3, 7)));
        assert_eq!(version("claude-sonnet-4-20250514"), Some(("sonnet", 4, 0)));
        assert_eq!(version("claude-opus-5"), Some(("opus", 5, 0)));
        assert_eq!(version("claude-haiku-4-5-20251001"), Some(("haiku", 4, 5)));
        assert_eq!(version("my-proxy-model"), None);
    }

    #[test]
    fn thinking_follows_what_each_model_takes() {
        let enabled = ThinkingMode::Enabled { budget_tokens: Some(5000) };
        assert_eq!(thinking_for(thinks("claude-3-5-haiku-20241022"), enabled, None), None);
        assert_eq!(
            thinking_for(thinks("claude-sonnet-4-5"), enabled, None),
            Some(Thinking::Enabled { budget_tokens: 5000 })
        );
        assert_eq!(thinking_for(thinks("claude-opus-4-6"), enabled, None), Some(Thinking::Adaptive));
        assert_eq!(thinking_for(thinks("my-proxy-model"), enabled, None), Some(Thinking::Adaptive));
        let adaptive = ThinkingMode::Adaptive { budget_tokens: None };
        assert_eq!(
            thinking_for(thinks("claude-haiku-4-5"), adaptive, Some(3000)),
            Some(Thinking::Enabled { budget_tokens: 3000 })
        );
        assert_eq!(
            thinking_for(thinks("claude-sonnet-4-5"), adaptive, None),
            Some(Thinking::Enabled { budget_tokens: DEFAULT_FLAG_BUDGET })
        );
        assert_eq!(
            thinking_for(thinks("claude-sonnet-4-5"), ThinkingMode::Enabled { budget_tokens: Some(500) }, None),
            Some(Thinking::Enabled { budget_tokens: 1024 }),
            "below the API's minimum: raised to it"
        );
        assert_eq!(thinking_for(thinks("claude-sonnet-5"), ThinkingMode::Disabled, None), Some(Thinking::Disabled));
    }

    #[test]
    fn effort_is_capped_per_model_and_not_sent_to_models_without_it() {
        use EffortLevel::*;
        assert_eq!(effort_for("claude-sonnet-4-5", High), None);
        assert_eq!(effort_for("claude-haiku-4-5", Low), None);
        assert_eq!(effort_for("claude-opus-4-5", Max), Some(High));
        assert_eq!(effort_for("claude-sonnet-4-6", XHigh), Some(High));
        assert_eq!(effort_for("claude-opus-4-6", Max), Some(Max));
        assert_eq!(effort_for("claude-opus-4-6", XHigh), Some(High));
        assert_eq!(effort_for("claude-opus-4-7", XHigh), Some(XHigh));
        assert_eq!(effort_for("claude-sonnet-5", Low), Some(Low));
        assert_eq!(effort_for("claude-fable-5-1", Max), Some(Max));
        assert_eq!(effort_for("my-proxy-model", Medium), Some(Medium));
    }
}
