//! The verifier agents of `"type": "agent"` hooks (spine-hooks' [`HookAgents`]).
//!
//! Contract of [`Verifiers`]: each verification is a fresh [`Agent`] run over the run's own
//! tool registry and workspace, seeing only `Read`, `Glob` and `Grep` (allowed by rule, so it
//! never asks), with no hooks (a verifier's calls fire none, so a hook cannot recurse into
//! itself), no memory files, the hook's model (built as `--model` would build it) or the
//! session's, and at most [`VERIFIER_MAX_TURNS`] model requests. Nothing it does is written to
//! a transcript. Its final answer is the verification's text; a run that does not succeed is
//! an error naming how it ended.

use std::sync::Arc;

use async_trait::async_trait;
use spine_core::hooks::HookRegistry;
use spine_core::model::ModelClient;
use spine_core::permission::{DenyApprover, PermissionPolicy, PermissionRule, PermissionRules};
use spine_core::registry::ToolRegistry;
use spine_core::runner::request::RunRequest;
use spine_core::runner::{Agent, AgentConfig};
use spine_core::session::Transcript;
use spine_core::stages::review_tool_call::Visibility;
use spine_core::workspace::Workspace;
use spine_hooks::agent_hook::{HookAgents, VERIFIER_MAX_TURNS, VERIFIER_PROMPT, VerifyRequest};
use spine_hooks::prompt::HookModels;
use spine_protocol::permission::PermissionMode;
use spine_protocol::run::RunSubtype;

/// The tools a verifier sees.
const READ_ONLY: [&str; 3] = ["Read", "Glob", "Grep"];

/// Runs verifiers for the agent hooks of one assembled agent.
pub struct Verifiers {
    models: Arc<dyn HookModels>,
    tools: Arc<ToolRegistry>,
    workspace: Arc<Workspace>,
}

impl Verifiers {
    /// Verifiers over `tools` and `workspace`, asking the models of `models`.
    pub fn new(models: Arc<dyn HookModels>, tools: Arc<ToolRegistry>, workspace: Arc<Workspace>) -> Self {
        Verifiers { models, tools, workspace }
    }
}

#[async_trait]
impl HookAgents for Verifiers {
    async fn verify(&self, request: VerifyRequest<'_>) -> Result<String, String> {
        let model: Arc<dyn ModelClient> = self.models.model(request.model)?;
        let allow = READ_ONLY.iter().filter_map(|t| PermissionRule::parse(t).ok()).collect();
        let mut config = AgentConfig::new(Arc::clone(&self.workspace));
        config.max_turns = VERIFIER_MAX_TURNS;
        config.max_forced_continuations = 0;
        config.visibility = Visibility::Only(READ_ONLY.iter().map(|t| (*t).to_owned()).collect());
        config.turn.allowed_tool_names = READ_ONLY.iter().map(|t| (*t).to_owned()).collect();
        config.turn.agent_prompt = Some(VERIFIER_PROMPT.to_owned());
        let agent = Agent {
            model,
            tools: Arc::clone(&self.tools),
            hooks: Arc::new(HookRegistry::default()),
            policy: PermissionPolicy::new(
                PermissionRules { allow, ask: Vec::new(), deny: Vec::new() },
                PermissionMode::DontAsk,
                self.workspace.root().to_path_buf(),
            ),
            approver: Arc::new(DenyApprover),
            config,
        };
        let session_id = format!("{}-hook-verifier", request.session.session_id);
        let run = RunRequest::new(session_id, Transcript::discard(&request.session.transcript_path))
            .prompt(Some(request.prompt))
            .cancel(request.cancel);
        let outcome = agent.run(run).await;
        match outcome.subtype {
            RunSubtype::Success => Ok(outcome.result),
            other => Err(format!("it ended {other:?} after {} model requests: {}", outcome.num_turns, outcome.result)),
        }
    }
}
