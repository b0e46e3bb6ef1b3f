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
//!    `tools` (the tools of its `mcpServers` added) and `disallowedTools`, never the parent's
//!    own servers' tools, `Agent` only when the definition lists it and the depth allows;
//! 3. the child run: its own transcript (`<session>/subagents/agent-<id>.jsonl`, sidechain
//!    lines), a cancel token that is a child of the parent's, a trace nested under this call,
//!    and the parent's observer, which gets the child's events as `RunEvent::Subagent` naming
//!    this call (`observer::SubagentObserver`);
//! 4. when it starts, the definition's own servers (inline `mcpServers`) start and their tools
//!    join its registry only (a server that fails is a warning); they stop when it ends;
//! 5. its final answer is the call's response (Claude Code's `Agent` response shape); its usage
//!    is added to the parent's; a parent with a report collector (a worker assignment) reports
//!    the child's start and end as `subagent` progress.
//!
//! A background call (`run_in_background: true`, or a definition's `background: true`) prepares
//! the same child and hands it to `runner/background.rs`, which answers at once.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use futures_util::future::BoxFuture;
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
use crate::observer::{RunEvent, RunObserver, SubagentObserver, SubagentOrigin};
use crate::reports::ReportCollector;
use crate::session::Transcript;
use crate::stages::execute::{Executed, Execution};
use crate::stages::prepare_turn::AgentProfile;
use crate::stages::review_tool_call::Visibility;
use crate::subagents::{
    AGENT_TOOL, AgentIdentity, GENERAL_PURPOSE, GENERAL_PURPOSE_PROMPT, OneAtATime, SubagentDefinition,
    SubagentServers, Subagents, narrower_mode,
};
use crate::tool::Args;
use crate::tool_names::same_tool;
use crate::trace::Trace;

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
    /// its `execute` stage; a background call answers as soon as the child is launched.
    pub(super) async fn delegate(&self, call: &ToolCall, args: &Args) -> Execution {
        let started = Instant::now();
        let executed = match self.prepare_child(call, args) {
            Err(error) => Executed::Failed(error),
            Ok(child) if child.background => self.launch(child),
            Ok(child) => self.run_child(child).await,
        };
        let ok = matches!(executed, Executed::Completed(_));
        self.trace.stage(StageName::Execute, Some(&call.id), started, fields! { "tool_name" => call.name, "ok" => ok });
        Execution { executed, duration: started.elapsed() }
    }

    /// The child of `call`: its definition, agent and run request (see the module
    /// documentation); an unknown type or a depth over the limit is the call's error.
    fn prepare_child(&self, call: &ToolCall, args: &Args) -> Result<Child, ToolError> {
        let Some(subagents) = self.agent.config.subagents.as_deref() else {
            return Err(ToolError::new(ErrorCode::ToolNotAllowed, "this agent has no subagents"));
        };
        let text = |key: &str| args.get(key).and_then(Value::as_str).unwrap_or_default().to_owned();
        // Filled in by `AgentTool::normalize`; a call prepared elsewhere may lack it.
        let agent_type = args.get("subagent_type").and_then(Value::as_str).unwrap_or(GENERAL_PURPOSE).to_owned();
        let Some(definition) = subagents.find(&agent_type) else {
            return Err(ToolError::new(
                ErrorCode::InvalidArguments,
                format!("unknown subagent_type `{agent_type}`; the known agent types are: {}", subagents.known()),
            ));
        };
        let depth = self.depth() + 1;
        if depth > subagents.max_depth {
            return Err(ToolError::new(
                ErrorCode::ToolNotAllowed,
                format!("subagents may nest {} deep at most (subagents.max_depth)", subagents.max_depth),
            ));
        }
        let identity = Arc::new(AgentIdentity::new(&definition.name));
        let agent = self.child_agent(definition, subagents, depth);
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
            .observer(Arc::new(SubagentObserver::new(
                Arc::clone(&self.observer),
                SubagentOrigin {
                    parent_tool_use_id: call.id.clone(),
                    agent_id: identity.agent_id.clone(),
                    agent_type: identity.agent_type.clone(),
                    description: text("description"),
                },
            )))
            .trace(self.trace.nested(tag))
            .env_file(self.hook_ctx.session.env_file.clone())
            .progress(self.progress.clone())
            .skill_limits(self.active_skill_limits())
            .subagent(Some(SubagentRun {
                identity: Arc::clone(&identity),
                depth,
                parent_tool_use_id: call.id.clone(),
                session_transcript,
            }));
        let asked = args.get("run_in_background").and_then(Value::as_bool) == Some(true);
        Ok(Child {
            start: ChildStart {
                agent,
                request,
                servers: definition.servers.clone(),
                disallowed: definition.disallowed_tools.clone(),
                source: definition.source.clone(),
                warn: Warn { trace: self.trace.clone(), observer: Arc::clone(&self.observer) },
            },
            about: ChildAbout {
                identity,
                call_id: call.id.clone(),
                description: text("description"),
                prompt: text("prompt"),
                path,
                reports: self.reports.clone(),
            },
            background: (asked || definition.background) && self.may_background,
        })
    }

    /// A foreground child: runs it and answers the call with its answer.
    async fn run_child(&self, child: Child) -> Executed {
        let Child { start, about, .. } = child;
        about.report("started", Some(about.description.clone()), None);
        let started = Instant::now();
        let outcome = start.run().await;
        self.add_delegated_usage(&outcome.model_usage);
        about.report(progress_event(outcome.subtype), None, Some(outcome.result.clone()));
        match outcome.subtype {
            RunSubtype::Success => Executed::Completed(agent_response(&about, &outcome, started)),
            RunSubtype::Canceled => Executed::Canceled,
            RunSubtype::ErrorMaxTurns
            | RunSubtype::ErrorMaxBudgetUsd
            | RunSubtype::ErrorDuringExecution
            | RunSubtype::Blocked
            | RunSubtype::Deferred => {
                Executed::Failed(ToolError::new(ErrorCode::RuntimeError, without_answer(&about.identity, &outcome)))
            }
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
            .filter(|n| !parent.config.own_tools.iter().any(|own| own == n))
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
        // A definition's own effort is what its hooks read, not the session's `--effort`.
        if definition.effort.is_some() && effort == definition.effort {
            config.effort_flag = None;
        }
        config.operator_state = None;
        config.own_tools = Vec::new();
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
        Warn { trace: self.trace.clone(), observer: Arc::clone(&self.observer) }.say(text);
    }

    /// The child's transcript at `path`: a sidechain file when this run records one (a failure
    /// to open it is a warning, the child runs without), else none.
    fn child_transcript(&self, path: &Path, agent_id: &str) -> Transcript {
        if !self.transcript.is_recording() {
            return Transcript::discard(path);
        }
        Transcript::open_sidechain(path, agent_id).unwrap_or_else(|e| {
            self.trace.warn(format!("could not open the subagent transcript {}: {e}", path.display()), None);
            Transcript::discard(path)
        })
    }

    /// Adds a child's usage to what this run reports.
    pub(super) fn add_delegated_usage(&self, usage: &std::collections::BTreeMap<String, ModelUsage>) {
        let mut delegated = match self.delegated_usage.lock() {
            Ok(g) => g,
            Err(poisoned) => poisoned.into_inner(),
        };
        for (model, u) in usage {
            delegated.entry(model.clone()).or_default().merge(u);
        }
    }
}

/// A prepared child: what runs, what is known of it, and whether it runs in the background.
pub(super) struct Child {
    pub(super) start: ChildStart,
    pub(super) about: ChildAbout,
    pub(super) background: bool,
}

/// What runs: the child's agent (the parent's tools) and request, and its definition's own
/// servers, started when it runs. Owns everything, so a background child outlives the call.
pub(super) struct ChildStart {
    agent: Agent,
    request: RunRequest,
    servers: Option<Arc<dyn SubagentServers>>,
    disallowed: Vec<String>,
    source: PathBuf,
    warn: Warn,
}

/// What is known of a child: who it is, the call that started it, where its transcript is.
pub(super) struct ChildAbout {
    pub(super) identity: Arc<AgentIdentity>,
    pub(super) call_id: String,
    pub(super) description: String,
    pub(super) prompt: String,
    pub(super) path: PathBuf,
    reports: Option<Arc<ReportCollector>>,
}

/// Where warnings about a child go: the parent's trace and observer.
#[derive(Clone)]
struct Warn {
    trace: Trace,
    observer: Arc<dyn RunObserver>,
}

impl Warn {
    fn say(&self, text: String) {
        self.trace.warn(text.clone(), None);
        self.observer.on_event(&RunEvent::Warning { text: &text });
    }
}

impl ChildStart {
    /// Starts the definition's own servers (their tools join the child's registry only), runs
    /// the child, stops them (also when it failed or was canceled). Boxed: a child run is a run inside a run, so its future cannot be
    /// part of the parent's by value.
    pub(super) fn run(self) -> BoxFuture<'static, RunOutcome> {
        Box::pin(async move {
            let ChildStart { mut agent, request, servers, disallowed, source, warn } = self;
            let Some(servers) = servers else { return agent.run(request).await };
            // Canceled while its servers start: it ends at once, without them.
            let cancel = request.cancel.clone();
            let started = tokio::select! {
                started = servers.start() => started,
                () = cancel.cancelled() => return agent.run(request).await,
            };
            for warning in started.warnings {
                warn.say(format!("agent definition {}: {warning}", source.display()));
            }
            let mut own = Vec::new();
            for tool in started.tools {
                let name = tool.spec().name;
                if agent.tools.lookup(&name).is_some() {
                    warn.say(format!(
                        "agent definition {}: `mcpServers`: tool {name} skipped: the session has a tool of that name",
                        source.display()
                    ));
                } else if !disallowed.iter().any(|d| same_tool(d, &name)) {
                    own.push(tool);
                }
            }
            let names: Vec<String> = own.iter().map(|t| t.spec().name).collect();
            match agent.tools.extended(own) {
                Ok(registry) => {
                    agent.tools = Arc::new(registry);
                    // A child's visibility is always a list (`child_agent`): its own tools join it.
                    if let Visibility::Only(visible) = &mut agent.config.visibility {
                        visible.extend(names.iter().cloned());
                    }
                    agent.config.turn.allowed_tool_names.extend(names.iter().cloned());
                    agent.config.own_tools = names;
                }
                Err(e) => warn.say(format!("agent definition {}: `mcpServers` tools not added: {e}", source.display())),
            }
            let outcome = agent.run(request).await;
            started.running.stop().await;
            outcome
        })
    }
}

impl ChildAbout {
    /// A `subagent` progress report, when the parent reports (a worker assignment).
    pub(super) fn report(&self, event: &str, description: Option<String>, result: Option<String>) {
        if let Some(reports) = &self.reports {
            reports.subagent(SubagentProgress {
                event: event.to_owned(),
                call_id: self.call_id.clone(),
                agent_id: self.identity.agent_id.clone(),
                agent_type: self.identity.agent_type.clone(),
                description,
                result,
            });
        }
    }
}

/// The progress event of a child's end.
pub(super) fn progress_event(subtype: RunSubtype) -> &'static str {
    match subtype {
        RunSubtype::Success => "completed",
        RunSubtype::Canceled => "canceled",
        RunSubtype::ErrorMaxTurns
        | RunSubtype::ErrorMaxBudgetUsd
        | RunSubtype::ErrorDuringExecution
        | RunSubtype::Blocked
        | RunSubtype::Deferred => "failed",
    }
}

/// Why a child that did not answer failed.
pub(super) fn without_answer(identity: &AgentIdentity, outcome: &RunOutcome) -> String {
    format!(
        "the {} subagent ended without an answer ({}): {}",
        identity.agent_type,
        json!(outcome.subtype).as_str().unwrap_or_default(),
        outcome.result
    )
}

/// `<session>/subagents/agent-<id>.jsonl` beside the session's transcript `<session>.jsonl`.
pub fn subagent_transcript_path(session_transcript: &std::path::Path, agent_id: &str) -> PathBuf {
    session_transcript.with_extension("").join("subagents").join(format!("agent-{agent_id}.jsonl"))
}

/// The tool calls a child made.
pub(super) fn tool_uses(outcome: &RunOutcome) -> usize {
    outcome.messages.iter().filter(|m| matches!(m, Message::Tool(_))).count()
}

/// A child's input plus output tokens, when usage was reported.
pub(super) fn tokens(outcome: &RunOutcome) -> Option<u64> {
    outcome.usage.map(|u| u.input_tokens + u.output_tokens)
}

/// Milliseconds since `started`.
pub(super) fn millis_since(started: Instant) -> u64 {
    u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX)
}

/// The call's response, in Claude Code's `Agent` shape.
fn agent_response(about: &ChildAbout, outcome: &RunOutcome, started: Instant) -> Value {
    json!({
        "status": "completed",
        "agentId": about.identity.agent_id,
        "agentType": about.identity.agent_type,
        "content": [{"type": "text", "text": outcome.result}],
        "totalDurationMs": millis_since(started),
        "totalTokens": tokens(outcome),
        "totalToolUseCount": tool_uses(outcome),
        "usage": outcome.usage,
        "totalCostUsd": outcome.total_cost_usd,
        "agentTranscriptPath": about.path,
        "prompt": about.prompt,
    })
}
