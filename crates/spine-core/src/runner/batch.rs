//! Events about what the session holds rather than one call: InstructionsLoaded, once per
//! memory file when the session starts ([`Run::instructions_loaded`]; a conditional rule's
//! fires from `path_rules` when a tool touches a matching file); PostToolBatch, after
//! every call of one model reply has its result, before the next model request. Hooks see
//! each call as PreToolUse saw it (every shell tool is `Bash`) with the text the model receives; their contexts go after the batch's results, `continue: false`
//! ends the run, and a hook that fails closed is a warning (the results stand).

use serde_json::Value;
use spine_protocol::hook::{BatchCall, HookEventName, InstructionsLoaded, InstructionsLoadedInput, PostToolBatchInput};
use spine_protocol::message::{Message, ToolResultMessage};
use spine_protocol::tool::{ToolArguments, ToolCall};

use super::Run;
use super::call::RoundEnd;
use crate::hooks::events::ContextOutcome;
use crate::hooks::tool_view;

impl Run<'_> {
    /// Fires InstructionsLoaded for each memory file of the run, in prompt order.
    pub(super) async fn instructions_loaded(&self) {
        for file in &self.memory.files {
            let input = InstructionsLoadedInput {
                file_path: file.path.clone(),
                memory_type: file.kind.memory_type().to_owned(),
                load_reason: if file.imported_by.is_some() { "include" } else { "session_start" }.to_owned(),
                globs: None,
                trigger_file_path: None,
                parent_file_path: file.imported_by.clone(),
            };
            self.hooks.observe::<InstructionsLoaded>(&self.hook_ctx, input).await;
        }
    }

    /// Fires PostToolBatch for a round that ran to its end; its context messages, and the
    /// round's end when a hook stopped the run.
    pub(super) async fn post_tool_batch(
        &self,
        calls: &[ToolCall],
        results: &[ToolResultMessage],
    ) -> (Vec<Message>, Option<RoundEnd>) {
        let tool_calls = calls
            .iter()
            .filter_map(|call| {
                let result = results.iter().find(|r| r.tool_call_id == call.id)?;
                Some(self.batch_call(call, result))
            })
            .collect();
        let merged = self.hooks.post_tool_batch(&self.hook_ctx, PostToolBatchInput { tool_calls }).await;
        if let ContextOutcome::Failed(failure) = &merged.outcome {
            self.trace.warn(format!("PostToolBatch {failure}"), None);
        }
        let contexts = merged.contexts.into_iter().map(|c| Message::context(HookEventName::PostToolBatch, c)).collect();
        let end = merged.halt.map(|h| RoundEnd::Halted { stop_reason: h.stop_reason });
        (contexts, end)
    }

    fn batch_call(&self, call: &ToolCall, result: &ToolResultMessage) -> BatchCall {
        let tool_response = result.content.clone();
        let args = match &call.arguments {
            ToolArguments::Json(Value::Object(args)) => args.clone(),
            ToolArguments::Json(other) => {
                return BatchCall {
                    tool_name: crate::tool_names::current_name(&call.name).to_owned(),
                    tool_input: other.clone(),
                    tool_use_id: call.id.clone(),
                    tool_response,
                };
            }
            ToolArguments::Raw(text) => {
                return BatchCall {
                    tool_name: crate::tool_names::current_name(&call.name).to_owned(),
                    tool_input: Value::String(text.clone()),
                    tool_use_id: call.id.clone(),
                    tool_response,
                };
            }
        };
        let tools = &self.agent.tools;
        // A call under a former name (`Task`) is reported under the tool's current one.
        let name = crate::tool_names::current_name(&call.name);
        let command_argument = tools.lookup(name).and_then(|h| tools.tool(h).command_argument());
        let view = tool_view::view(name, command_argument, &args);
        BatchCall {
            tool_name: view.tool_name,
            tool_input: view.tool_input,
            tool_use_id: call.id.clone(),
            tool_response,
        }
    }
}
