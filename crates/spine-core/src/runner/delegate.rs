//! An `Agent` call (or one of its former name `Task`), after it passed PreToolUse and the
//! permission step: the child run that takes the place of the `execute` stage.
//!
//! 1. the definition of `subagent_type` (absent: `general-purpose`; unknown →
//!    `invalid_arguments`, listing the known types), and the depth limit;
//! 2. the child agent: the parent's tools, rules and approver; the session's hooks, then the
//!    definition's own (`HookRegistry::scoped`); the definition's prompt, model (with its
//!    `effort` when the model takes one — else a warning), turn limit, preloaded `skills` and
//!    (stricter) mode — a wider one is ignored with a warning; the subagent profile (no
//!    operator layers); its visible tools within the parent's, narrowed by the definition's
//!    `tools` (the tools of its `mcpServers` added) and `disallowedTools`, `Agent` only when
//!    the definition lists it and the depth allows;
//! 3. the child run: its own transcript (`<session>/subagents/agent-<id>.jsonl`, sidechain
//!    lines), a cancel token that is a child of the parent's, a trace nested under this call;
//! 4. its final answer is the call's response (Claude Code's `Agent` response shape); its usage
//!    is added to the parent's; a parent with a report collector (a worker assignment) reports
//!    the child's start and end as `subagent` progress.

use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Instant;

use serde_json::{Value, json};
use spine_protocol::message::Message;
use spine_protocol::report::SubagentProgress;
use spine_protocol::run::{ModelUsage, RunSubtype};
use spine_protocol::tool::{ErrorCode, ToolCall, ToolError};
use spine_protocol::trace::{StageName, SubagentTag};

use super::request::{RunOutcome, RunRequest, SubagentRun};
use super::{Agent, Run};
use crate::fields;
use crate::hooks::HookRegistry;
use crate::observer::{NullObserver, RunEvent};
use crate::session::Transcript;
use crate::stages::execute::{Executed, Execution};
use crate::stages::prepare_turn::AgentProfile;
use crate::stages::review_tool_call::Visibility;
use crate::subagents::{
    AGENT_TOOL, AgentIdentity, GENERAL_PURPOSE, GENERAL_PURPOSE_PROMPT, OneAtATime, SubagentDefinition, Subagents,
    narrower_mode,
};
use crate::tool::Args;
use crate::tool_names::same_tool;

impl Run<'_> {
    /// Whether `call` is a delegation this run performs itself: a call of the `Agent` tool,
    /// by its name or its former name `Task`.
    pub(super) fn is_delegation(&self, call: &ToolCall) -> bool {
        let tools = &self.agent.tools;
        self.agent.config.subagents.is_some()
            && tools.lookup(&call.name).is_some_and(|h| tools.spec(h).name == AGENT_TOOL)
    }

    /// How deep this run is: 0 for the main agent.
    pub(super) fn depth(&self) -> u32 {
        self.subagent.as_ref().map_or(0, |s| s.depth)
    }

    /// Runs a permitted `Agent` call as a child run (see the module documentation), recorded as
    /// its `execute` stage.
    pub(super) async fn delegate(&self, call: &ToolCall, args: &Args) -> Execution {
        let started = Instant::now();
        let executed = self.child_run(call, args).await;
        let ok = matches!(executed, Executed::Completed(_));
        self.trace.stage(StageName::Execute, Some(&call.id), started, fields! { "tool_name" => call.name, "ok" => ok });
        Execution { executed, duration: started.elapsed() }
    }

    async fn child_run(&self, call: &ToolCall, args: &Args) -> Executed {
        let Some(subagents) = self.agent.config.subagents.as_deref() else {
            return Executed::Failed(ToolError::new(ErrorCode::ToolNotAllowed, "this agent has no subagents"));
        };
        let text = |key: &str| args.get(key).and_then(Value::as_str).unwrap_or_default().to_owned();
        // Filled in by `AgentTool::normalize`; a call prepared elsewhere may lack it.
        let agent_type = args.get("subagent_type").and_then(Value::as_str).unwrap_or(GENERAL_PURPOSE).to_owned();
        let Some(definition) = subagents.find(&agent_type) else {
            return Executed::Failed(ToolError::new(
                ErrorCode::InvalidArguments,
                format!("unknown subagent_type `{agent_type}`; the known agent types are: {}", subagents.known()),
            ));
        };
        let depth = self.depth() + 1;
        if depth > subagents.max_depth {
            return Executed::Failed(ToolError::new(
                ErrorCode::ToolNotAllowed,
                format!("subagents may nest {} deep at most (subagents.max_depth)", subagents.max_depth),
            ));
        }
        let identity = Arc::new(AgentIdentity::new(&definition.name));
        let child = self.child_agent(definition, subagents, depth);
        let session_transcript = match &self.subagent {
            Some(parent) => parent.session_transcript.clone(),
            None => self.transcript.path().to_path_buf(),
        };
        let path = subagent_transcript_path(&session_transcript, &identity.agent_id);
        let transcript = self.child_transcript(&path, &identity.agent_id);
        let tag = SubagentTag {
            agent_id: identity.agent_id.clone(),
            agent_type: identity.agent_type.clone(),
            parent_tool_use_id: call.id.clone(),
            parent_agent_id: self.subagent.as_ref().map(|s| s.identity.agent_id.clone()),
            depth,
            seq: 0,
        };
        let request = RunRequest::new(self.hook_ctx.session.session_id.clone(), transcript)
            .prompt(Some(text("prompt")))
            .cancel(self.cancel.child_token())
            .observer(Arc::new(NullObserver))
            .trace(self.trace.nested(tag))
            .env_file(self.hook_ctx.session.env_file.clone())
            .progress(self.progress.clone())
            .subagent(Some(SubagentRun {
                identity: Arc::clone(&identity),
                depth,
                parent_tool_use_id: call.id.clone(),
                session_transcript,
            }));
        self.report_child(call, &identity, "started", Some(text("description")), None);
        let started = Instant::now();
        let outcome = run_boxed(&child, request).await;
        self.add_delegated_usage(&outcome.model_usage);
        let event = match outcome.subtype {
            RunSubtype::Success => "completed",
            RunSubtype::Canceled => "canceled",
            RunSubtype::ErrorMaxTurns
            | RunSubtype::ErrorDuringExecution
            | RunSubtype::Blocked
            | RunSubtype::Deferred => "failed",
        };
        self.report_child(call, &identity, event, None, Some(outcome.result.clone()));
        match outcome.subtype {
            RunSubtype::Success => {
                Executed::Completed(agent_response(&identity, &outcome, started, &path, &text("prompt")))
            }
            RunSubtype::Canceled => Executed::Canceled,
            RunSubtype::ErrorMaxTurns
            | RunSubtype::ErrorDuringExecution
            | RunSubtype::Blocked
            | RunSubtype::Deferred => Executed::Failed(ToolError::new(
                ErrorCode::RuntimeError,
                format!(
                    "the {} subagent ended without an answer ({}): {}",
                    identity.agent_type,
                    json!(outcome.subtype).as_str().unwrap_or_default(),
                    outcome.result
                ),
            )),
        }
    }

    /// The child's agent: see the module documentation.
    fn child_agent(&self, definition: &SubagentDefinition, subagents: &Subagents, depth: u32) -> Agent {
        let parent = self.agent;
        let model = definition.model.clone().unwrap_or_else(|| Arc::clone(&parent.model));
        let (model, effort) = match definition.effort {
            None => (model, parent.config.effort),
            Some(effort) => match model.with_reasoning_effort(effort) {
                Some(with_effort) => (with_effort, Some(effort)),
                None => {
                    self.warn_child(format!(
                        "agent definition {}: `effort` not applied: the model {} takes no reasoning effort \
                         (spine sends one to OpenAI chat completions and Responses models)",
                        definition.source.display(),
                        model.model()
                    ));
                    (model, parent.config.effort)
                }
            },
        };
        let mut names: Vec<String> = parent
            .tools
            .names()
            .filter(|n| self.visibility.allows(n) && definition.allows_tool(n))
            .map(str::to_owned)
            .collect();
        if !(definition.may_delegate() && depth < subagents.max_depth) {
            names.retain(|n| !same_tool(n, AGENT_TOOL));
        }
        let mut config = parent.config.clone();
        // The child's shell starts where the parent's is, and is its own from then on.
        config.cwd = self.cwd();
        config.max_turns = definition.max_turns.unwrap_or(config.max_turns);
        config.visibility = Visibility::Only(names.clone());
        config.turn.allowed_tool_names = names;
        config.turn.profile = AgentProfile::from(definition.name.as_str());
        config.turn.is_subagent = true;
        config.turn.agent_prompt = Some(match definition.prompt.trim() {
            "" => GENERAL_PURPOSE_PROMPT.to_owned(),
            body => body.to_owned(),
        });
        config.turn.model_context.likely_model = Some(model.model().to_owned());
        config.turn.preloaded_skills = definition.skills.clone();
        config.effort = effort;
        config.operator_state = None;
        // A deferral would end the child alone; it asks instead.
        config.allow_defer = false;
        let parent_mode = parent.policy.mode();
        let mode = definition.permission_mode.map_or(parent_mode, |m| narrower_mode(parent_mode, m));
        if let Some(wider) = definition.permission_mode.filter(|m| *m != mode) {
            self.warn_child(format!(
                "agent definition {}: `permissionMode` {} is wider than the parent's {}; the parent's applies",
                definition.source.display(),
                wider.as_str(),
                parent_mode.as_str()
            ));
        }
        // The session's hooks, then the definition's own; never the parent definition's.
        let hooks = match &definition.hooks {
            Some(own) => Arc::new(HookRegistry::scoped(&parent.hooks, own)),
            None => HookRegistry::session(&parent.hooks),
        };
        Agent {
            model,
            tools: Arc::clone(&parent.tools),
            hooks,
            policy: parent.policy.with_mode(mode),
            approver: Arc::new(OneAtATime::new(Arc::clone(&parent.approver), Arc::clone(&self.approvals))),
            config,
        }
    }

    /// A warning about a subagent being started, in the trace and to the observer.
    fn warn_child(&self, text: String) {
        self.trace.warn(text.clone(), None);
        self.observer.on_event(&RunEvent::Warning { text: &text });
    }

    /// The child's transcript at `path`: a sidechain file when this run records one (a failure
    /// to open it is a warning, the child runs without), else none.
    fn child_transcript(&self, path: &std::path::Path, agent_id: &str) -> Transcript {
        if !self.transcript.is_recording() {
            return Transcript::discard(path);
        }
        Transcript::open_sidechain(path, agent_id).unwrap_or_else(|e| {
            self.trace.warn(format!("could not open the subagent transcript {}: {e}", path.display()), None);
            Transcript::discard(path)
        })
    }

    /// A `subagent` progress report, when this run reports (a worker assignment).
    fn report_child(
        &self,
        call: &ToolCall,
        identity: &AgentIdentity,
        event: &str,
        description: Option<String>,
        result: Option<String>,
    ) {
        if let Some(reports) = &self.reports {
            reports.subagent(SubagentProgress {
                event: event.to_owned(),
                call_id: call.id.clone(),
                agent_id: identity.agent_id.clone(),
                agent_type: identity.agent_type.clone(),
                description,
                result,
            });
        }
    }

    /// Adds a child's usage to what this run reports.
    fn add_delegated_usage(&self, usage: &std::collections::BTreeMap<String, ModelUsage>) {
        let mut delegated = match self.delegated_usage.lock() {
            Ok(g) => g,
            Err(poisoned) => poisoned.into_inner(),
        };
        for (model, u) in usage {
            delegated.entry(model.clone()).or_default().merge(u);
        }
    }
}

/// A run behind a box: a child run is a run inside a run, so its future cannot be part of the
/// parent's by value.
fn run_boxed<'a>(agent: &'a Agent, request: RunRequest) -> Pin<Box<dyn Future<Output = RunOutcome> + Send + 'a>> {
    Box::pin(agent.run(request))
}

/// `<session>/subagents/agent-<id>.jsonl` beside the session's transcript `<session>.jsonl`.
pub fn subagent_transcript_path(session_transcript: &std::path::Path, agent_id: &str) -> PathBuf {
    session_transcript.with_extension("").join("subagents").join(format!("agent-{agent_id}.jsonl"))
}

/// The call's response, in Claude Code's `Agent` shape.
fn agent_response(
    identity: &AgentIdentity,
    outcome: &RunOutcome,
    started: Instant,
    path: &std::path::Path,
    prompt: &str,
) -> Value {
    let tool_uses = outcome.messages.iter().filter(|m| matches!(m, Message::Tool(_))).count();
    let tokens = outcome.usage.map(|u| u.input_tokens + u.output_tokens);
    json!({
        "status": "completed",
        "agentId": identity.agent_id,
        "agentType": identity.agent_type,
        "content": [{"type": "text", "text": outcome.result}],
        "totalDurationMs": u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
        "totalTokens": tokens,
        "totalToolUseCount": tool_uses,
        "usage": outcome.usage,
        "totalCostUsd": outcome.total_cost_usd,
        "agentTranscriptPath": path,
        "prompt": prompt,
    })
}
