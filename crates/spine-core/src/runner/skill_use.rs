//! The skills a run loads: a `Skill` call that succeeded (or the user's `/name`, given with
//! [`RunRequest::invoked_skill`](super::RunRequest::invoked_skill)) makes its skill active for
//! the rest of the run (`skills::ActiveSkills`).
//!
//! Contract:
//! - The skill's `allowed-tools` and `disallowed-tools` become one more refusal in the
//!   permission step ([`Run::skill_refusal`], called from `permit`): a call they do not allow
//!   is denied with a reason naming the skill (source `skill`), after the rules, hooks and
//!   mode had their say and before anyone is asked; the rules of the list never allow
//!   anything by themselves.
//! - The skill's `model` serves the run's later requests ([`Run::model`]) when the agent's
//!   [`SkillModels`](crate::skills::SkillModels) builds it; otherwise a warning says in one
//!   line why the run keeps its model. A note says when it switches.
//! - A subagent started while skills are active starts with their restrictions (not their
//!   model: a subagent runs its definition's model, or the session's).

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use serde_json::Value;
use spine_protocol::permission::{DecisionSource, PermissionBehavior, PermissionDecision};
use spine_protocol::tool::ToolCall;

use super::Run;
use crate::model::ModelClient;
use crate::observer::RunEvent;
use crate::permission::CallFacts;
use crate::registry::PreparedCall;
use crate::skills::{ActiveSkill, ActiveSkills, SKILL_TOOL};
use crate::tool::Args;

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Run<'_> {
    /// After a call that succeeded: a `Skill` call's skill becomes active.
    pub(super) fn skill_invoked(&self, call: &ToolCall, args: &Args) {
        if call.name != SKILL_TOOL {
            return;
        }
        if let Some(name) = args.get("skill").and_then(Value::as_str) {
            self.activate_skill(name, Some(&call.id));
        }
    }

    /// Makes the skill `name` active for the rest of the run (see the module documentation),
    /// recorded as a `skills` stage entry (`call_id`: the `Skill` call's; none for the user's
    /// `/name`).
    pub(super) fn activate_skill(&self, name: &str, call_id: Option<&str>) {
        let started = std::time::Instant::now();
        let Some(entry) = self.skills.find(name) else { return };
        let (skill, problems) = ActiveSkill::of(entry, &self.skill_session.vars);
        for problem in problems {
            self.skill_warning(problem);
        }
        lock(&self.active_skills).activate(skill);
        let fields = crate::fields! {
            "activated" => entry.name,
            "allowed_tools" => entry.meta.allowed_tools,
            "disallowed_tools" => entry.meta.disallowed_tools,
            "model" => entry.meta.model(),
        };
        self.trace.stage(spine_protocol::trace::StageName::Skills, call_id, started, fields);
        if let Some(spec) = entry.meta.model() {
            let current = self.model();
            let built = match &self.agent.config.skill_models {
                Some(models) => models.model(spec, entry.source_kind),
                None => Err("this agent was built without a way to switch models".to_owned()),
            };
            match built {
                Ok(model) => {
                    let text = format!("skill `{}`: the rest of this run uses the model {}", entry.name, model.model());
                    self.trace.warn(text.clone(), None);
                    self.observer.on_event(&RunEvent::Note { text: &text });
                    *lock(&self.skill_model) = Some(model);
                }
                Err(why) => self.skill_warning(format!(
                    "skill `{}` asks for the model `{spec}`, not used ({why}); the run keeps {}",
                    entry.name,
                    current.model()
                )),
            }
        }
    }

    fn skill_warning(&self, text: String) {
        self.trace.warn(text.clone(), None);
        self.observer.on_event(&RunEvent::Warning { text: &text });
    }

    /// The model of the run's next request: an active skill's, else the agent's.
    pub(super) fn model(&self) -> Arc<dyn ModelClient> {
        lock(&self.skill_model).clone().unwrap_or_else(|| Arc::clone(&self.agent.model))
    }

    /// The restrictions of the skills active now (what a subagent starts with).
    pub(super) fn active_skill_limits(&self) -> ActiveSkills {
        lock(&self.active_skills).clone()
    }

    /// Starts the run with `limits` active (a subagent's, from its parent).
    pub(super) fn inherit_skill_limits(&self, limits: ActiveSkills) {
        *lock(&self.active_skills) = limits;
    }

    /// The refusal of a call an active skill does not allow, or `None`.
    pub(super) fn skill_refusal(&self, call: &PreparedCall, args: &Args) -> Option<PermissionDecision> {
        let skills = lock(&self.active_skills);
        if skills.unrestricted() {
            return None;
        }
        let cwd = self.cwd();
        let effect = self.agent.tools.effect(call.handle);
        let facts = CallFacts { cwd: Some(&cwd), ..CallFacts::new(&call.name, effect, args) };
        let (skill, reason) = skills.refusal(&facts, self.agent.policy.project_dir())?;
        Some(PermissionDecision::new(PermissionBehavior::Deny, DecisionSource::Skill { skill }, reason))
    }
}
