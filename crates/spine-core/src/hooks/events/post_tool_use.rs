//! PostToolUse: output rewrites chain (the next hook sees the rewrite, the last one wins); block
//! reasons and contexts concatenate; a hook failing closed replaces the result with
//! [`HookFailure::tool_error`] (the tool's side effects did happen) and discards the rewrites.
//! `continue: false` is the wire form of "prevent continuation".

use serde_json::Value;
use spine_protocol::hook::{HookEvent, PostToolUse, PostToolUseAction, PostToolUseInput, UpdatedOutput};

use super::{HookFailure, Merged};
use crate::hooks::engine::{Flow, Fold, HookRuntime};
use crate::hooks::registry::HookSpec;
use crate::hooks::{HookContext, HookError};
use crate::observer::RunEvent;

/// What the PostToolUse hooks did to a tool's output.
#[derive(Debug, Clone, PartialEq)]
pub enum PostToolUseOutcome {
    /// No rewrite: the model reads the tool's own projection.
    Unchanged,
    /// The last rewrite replaced the structured response; the model reads its projection.
    Rewritten(Value),
    /// The last rewrite replaced the text the model reads.
    TextRewritten {
        /// What the model reads.
        text: String,
        /// A structured response an earlier hook put in the tool's place, if one did.
        response: Option<Value>,
    },
    /// A hook failed closed or broke the contract: the model reads
    /// [`HookFailure::tool_error`] instead of the output.
    Failed(HookFailure),
}

impl PostToolUseOutcome {
    /// The structured response after the rewrites: the replacement, or `original`. `None`
    /// after a failure.
    pub fn response(self, original: Value) -> Option<Value> {
        match self {
            PostToolUseOutcome::Unchanged | PostToolUseOutcome::TextRewritten { response: None, .. } => Some(original),
            PostToolUseOutcome::Rewritten(response)
            | PostToolUseOutcome::TextRewritten { response: Some(response), .. } => Some(response),
            PostToolUseOutcome::Failed(_) => None,
        }
    }

    /// Folds one rewrite into the outcome (the later replaces the earlier).
    fn rewrite(self, update: UpdatedOutput) -> Self {
        match (self, update) {
            (failed @ PostToolUseOutcome::Failed(_), _) => failed,
            (PostToolUseOutcome::Unchanged, UpdatedOutput::Text(text)) => {
                PostToolUseOutcome::TextRewritten { text, response: None }
            }
            (PostToolUseOutcome::Rewritten(response), UpdatedOutput::Text(text)) => {
                PostToolUseOutcome::TextRewritten { text, response: Some(response) }
            }
            (PostToolUseOutcome::TextRewritten { response, .. }, UpdatedOutput::Text(text)) => {
                PostToolUseOutcome::TextRewritten { text, response }
            }
            (
                PostToolUseOutcome::Unchanged
                | PostToolUseOutcome::Rewritten(_)
                | PostToolUseOutcome::TextRewritten { .. },
                UpdatedOutput::Structured(value),
            ) => PostToolUseOutcome::Rewritten(value),
        }
    }
}

struct PostFold {
    outcome: PostToolUseOutcome,
    contexts: Vec<String>,
    block_reasons: Vec<String>,
}

impl Fold<PostToolUse> for PostFold {
    fn answer(
        &mut self,
        _hook: &HookSpec<PostToolUse>,
        action: PostToolUseAction,
        input: &mut PostToolUseInput,
    ) -> Result<Flow, HookError> {
        self.contexts.extend(action.additional_context);
        self.block_reasons.extend(action.block_reason);
        if let Some(update) = action.updated_output {
            input.tool_response = match &update {
                UpdatedOutput::Text(text) => Value::String(text.clone()),
                UpdatedOutput::Structured(value) => value.clone(),
            };
            let outcome = std::mem::replace(&mut self.outcome, PostToolUseOutcome::Unchanged);
            self.outcome = outcome.rewrite(update);
        }
        Ok(Flow::Continue)
    }

    fn failure(&mut self, hook: &HookSpec<PostToolUse>, error: &HookError) -> Flow {
        self.outcome = PostToolUseOutcome::Failed(HookFailure::new(PostToolUse::NAME, &hook.id, error));
        Flow::ShortCircuit
    }
}

impl HookRuntime {
    /// Fires PostToolUse after a successful call.
    pub async fn post_tool_use(&self, ctx: &HookContext, mut input: PostToolUseInput) -> Merged<PostToolUseOutcome> {
        self.observer().on_event(&RunEvent::HookFired {
            event: PostToolUse::NAME,
            tool_name: Some(&input.tool_name),
            status: Some("ok"),
        });
        if !self.registry().has::<PostToolUse>() {
            return Merged::alone(PostToolUseOutcome::Unchanged);
        }
        let ctx = HookContext { event: PostToolUse::NAME, ..ctx.clone() };
        let mut fold =
            PostFold { outcome: PostToolUseOutcome::Unchanged, contexts: Vec::new(), block_reasons: Vec::new() };
        let id = input.tool_use_id.clone();
        let d = self.dispatch::<PostToolUse, _>(&ctx, &mut input, &mut fold, Some(&id)).await;
        Merged { block_reasons: fold.block_reasons, ..Merged::new(fold.outcome, fold.contexts, d) }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn text(t: &str) -> UpdatedOutput {
        UpdatedOutput::Text(t.into())
    }

    #[test]
    fn the_later_rewrite_replaces_the_earlier_and_text_keeps_an_earlier_structured_response() {
        let original = json!({"stdout": "a"});
        let structured = UpdatedOutput::Structured(json!({"stdout": "b"}));
        let text_only = PostToolUseOutcome::Unchanged.rewrite(text("t"));
        assert_eq!(text_only, PostToolUseOutcome::TextRewritten { text: "t".into(), response: None });
        assert_eq!(text_only.response(original.clone()), Some(original.clone()));
        let both = PostToolUseOutcome::Unchanged.rewrite(structured.clone()).rewrite(text("t"));
        assert_eq!(
            both,
            PostToolUseOutcome::TextRewritten { text: "t".into(), response: Some(json!({"stdout": "b"})) }
        );
        let back = PostToolUseOutcome::Unchanged.rewrite(text("t")).rewrite(structured);
        assert_eq!(back, PostToolUseOutcome::Rewritten(json!({"stdout": "b"})));
        assert_eq!(back.response(original.clone()), Some(json!({"stdout": "b"})));
        assert_eq!(PostToolUseOutcome::Unchanged.response(original.clone()), Some(original));
    }
}
