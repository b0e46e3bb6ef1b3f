//! A `"type": "prompt"` handler: `prompt` (required, `$ARGUMENTS` stands for the event's JSON
//! input), `model` (a model spec; absent: the session's model) and `continueOnBlock` (`false`:
//! a not-ok verdict also ends the run). Run by [`crate::prompt::PromptHook`].

use super::Diagnostics;
use super::handler::Fields;

/// A prompt handler, validated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromptConfig {
    /// The instructions for the model.
    pub prompt: String,
    /// The model spec, when the hook names one.
    pub model: Option<String>,
    /// Whether the run goes on after a not-ok verdict (default true).
    pub continue_on_block: bool,
}

pub(super) fn parse(diag: &mut Diagnostics<'_>, f: &Fields<'_>) -> Option<PromptConfig> {
    let prompt = match f.string(diag, "prompt") {
        Some(p) if !p.trim().is_empty() => p,
        Some(_) => {
            diag.error(f.at("prompt"), "empty prompt");
            return None;
        }
        None => {
            if f.get("prompt").is_none() {
                diag.error(f.at("prompt"), "missing (a prompt hook needs `prompt`)");
            }
            return None;
        }
    };
    let model = f.string(diag, "model").filter(|m| !m.trim().is_empty());
    let continue_on_block = f.boolean(diag, "continueOnBlock").unwrap_or(true);
    Some(PromptConfig { prompt, model, continue_on_block })
}
