//! PostToolUse: output rewrites chain (the next hook sees the rewrite, the last one wins); block
//! reasons and contexts concatenate; a hook failing closed replaces the result with
//! `hook_execution_error` (the tool's side effects did happen). `continue: false` is the wire
//! form of "prevent continuation".

use serde_json::Value;
use spine_protocol::hook::{HookEvent, PostToolUse, PostToolUseAction, PostToolUseInput, UpdatedOutput};
use spine_protocol::tool::{ErrorCode, ToolError};

use super::HookFailure;
use crate::hooks::engine::{Flow, Fold, HaltBy, HookRuntime};
use crate::hooks::registry::HookSpec;
use crate::hooks::{HookContext, HookError};
use crate::observer::RunEvent;

/// The merged outcome of PostToolUse.
#[derive(Debug, Clone, PartialEq)]
pub struct PostToolUseResult {
    /// The structured response after rewrites.
    pub response: Value,
    /// Set when the last rewrite replaced the text the model reads.
    pub text_override: Option<String>,
    /// Whether a hook replaced the structured response (the text is projected again).
    pub response_replaced: bool,
    /// Block reasons, for the model beside the result.
    pub block_reasons: Vec<String>,
    /// Context for the model, placed after the round's results.
    pub contexts: Vec<String>,
    /// A hook that failed closed: the model reads this error instead of the output.
    pub failure: Option<(ToolError, HookFailure)>,
    /// `continue: false`: prevent continuation.
    pub halt: Option<HaltBy>,
    /// The hooks' answers, in order (for the decision record).
    pub said: Vec<(String, &'static str)>,
}

struct PostFold {
    result: PostToolUseResult,
}

impl Fold<PostToolUse> for PostFold {
    fn answer(
        &mut self,
        hook: &HookSpec<PostToolUse>,
        action: PostToolUseAction,
        input: &mut PostToolUseInput,
    ) -> Result<Flow, HookError> {
        use spine_protocol::hook::Action as _;
        let r = &mut self.result;
        r.said.push((hook.id.clone(), action.decision()));
        r.contexts.extend(action.additional_context);
        r.block_reasons.extend(action.block_reason);
        match action.updated_output {
            Some(UpdatedOutput::Text(text)) => {
                input.tool_response = Value::String(text.clone());
                r.text_override = Some(text);
            }
            Some(UpdatedOutput::Structured(value)) => {
                input.tool_response = value.clone();
                r.response = value;
                r.response_replaced = true;
                r.text_override = None;
            }
            None => {}
        }
        Ok(Flow::Continue)
    }

    fn failure(&mut self, hook: &HookSpec<PostToolUse>, error: &HookError) -> Flow {
        self.result.said.push((hook.id.clone(), error.kind.as_str()));
        self.result.failure = Some((
            ToolError::new(ErrorCode::HookExecutionError, "PostToolUse hook failed"),
            HookFailure::new(PostToolUse::NAME, &hook.id, error),
        ));
        Flow::Stop
    }
}

impl HookRuntime {
    /// Fires PostToolUse after a successful call.
    pub async fn post_tool_use(&self, ctx: &HookContext, mut input: PostToolUseInput) -> PostToolUseResult {
        self.observer().on_event(&RunEvent::HookFired {
            event: PostToolUse::NAME,
            tool_name: Some(&input.tool_name),
            status: Some("ok"),
        });
        let ctx = HookContext { event: PostToolUse::NAME, ..ctx.clone() };
        let mut fold = PostFold {
            result: PostToolUseResult {
                response: input.tool_response.clone(),
                text_override: None,
                response_replaced: false,
                block_reasons: Vec::new(),
                contexts: Vec::new(),
                failure: None,
                halt: None,
                said: Vec::new(),
            },
        };
        if !self.registry().has::<PostToolUse>() {
            return fold.result;
        }
        let id = input.tool_use_id.clone();
        let d = self.dispatch::<PostToolUse, _>(&ctx, &mut input, &mut fold, Some(&id)).await;
        fold.result.halt = d.halt;
        fold.result
    }
}
