//! The hook registry: hooks per event, in groups, built once and frozen.
//!
//! A [`HookGroup`] shares one matcher. Its hooks run as a chain (each sees the input as
//! rewritten by the one before; in-process hooks) or concurrently (external hooks of one
//! matcher group; answers merged in configuration order, never completion order). Order of
//! groups: in-process hooks in registration order, then external groups in settings order,
//! whatever order they were added in.

use std::any::Any;
use std::sync::Arc;

use spine_protocol::hook::{EventVisitor, HookEvent, HookEventName, HookKind, visit_event};

use super::matcher::{Matcher, MatcherError};
use super::{FailurePolicy, Hook};
use crate::permission::rule::PermissionRule;

/// How the hooks of a group run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum GroupMode {
    /// One after another; each sees the previous one's rewrite.
    #[default]
    Chain,
    /// All at once on the same input; answers merged in configuration order.
    Concurrent,
}

/// Whether the run waits for a hook.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RunMode {
    /// The run waits for the answer.
    #[default]
    Blocking,
    /// Runs in the background; its additional context reaches the model on the next turn and
    /// its decisions are ignored.
    Background,
}

/// One registered hook with its metadata.
pub struct HookSpec<E: HookEvent> {
    /// Its id in traces and log lines (a name, or the command).
    pub id: String,
    /// Where it came from: `rust`, or the settings file.
    pub source: String,
    /// Its kind, for listings and records.
    pub kind: HookKind,
    /// What its failure means.
    pub on_failure: FailurePolicy,
    /// An `if` rule in permission-rule syntax; the hook runs only for calls it matches (and
    /// never on events without a tool call).
    pub condition: Option<PermissionRule>,
    /// Hooks with the same key run once per firing (the same command declared twice).
    pub dedup_key: Option<String>,
    /// Blocking or background.
    pub run: RunMode,
    /// Shown (with `-v`) while the hook runs (`statusMessage`).
    pub status_message: Option<String>,
    /// What answers the event.
    pub hook: Arc<dyn Hook<E>>,
}

impl<E: HookEvent> Clone for HookSpec<E> {
    fn clone(&self) -> Self {
        HookSpec {
            id: self.id.clone(),
            source: self.source.clone(),
            kind: self.kind,
            on_failure: self.on_failure,
            condition: self.condition.clone(),
            dedup_key: self.dedup_key.clone(),
            run: self.run,
            status_message: self.status_message.clone(),
            hook: Arc::clone(&self.hook),
        }
    }
}

impl<E: HookEvent> HookSpec<E> {
    /// An in-process hook: fails closed, blocking, no condition.
    pub fn new(id: impl Into<String>, hook: impl Hook<E>) -> Self {
        HookSpec {
            id: id.into(),
            source: "rust".to_owned(),
            kind: HookKind::Rust,
            on_failure: FailurePolicy::Closed,
            condition: None,
            dedup_key: None,
            run: RunMode::Blocking,
            status_message: None,
            hook: Arc::new(hook),
        }
    }

    /// Sets the failure policy.
    pub fn on_failure(mut self, policy: FailurePolicy) -> Self {
        self.on_failure = policy;
        self
    }

    /// Sets the `if` rule.
    pub fn when(mut self, rule: PermissionRule) -> Self {
        self.condition = Some(rule);
        self
    }

    /// Runs the hook in the background.
    pub fn background(mut self) -> Self {
        self.run = RunMode::Background;
        self
    }
}

/// Hooks sharing a matcher.
pub struct HookGroup<E: HookEvent> {
    /// Which firings the group's hooks see (tool name, source, trigger…).
    pub matcher: Matcher,
    /// Chain or concurrent.
    pub mode: GroupMode,
    /// The hooks, in configuration order.
    pub hooks: Vec<HookSpec<E>>,
}

impl<E: HookEvent> Clone for HookGroup<E> {
    fn clone(&self) -> Self {
        HookGroup { matcher: self.matcher.clone(), mode: self.mode, hooks: self.hooks.clone() }
    }
}

type Slots = Vec<Option<Box<dyn Any + Send + Sync>>>;

fn empty_slots() -> Slots {
    HookEventName::ALL.iter().map(|_| None).collect()
}

fn slot_mut<E: HookEvent>(slots: &mut Slots) -> &mut Vec<HookGroup<E>> {
    let slot = &mut slots[E::NAME as usize];
    if slot.is_none() {
        *slot = Some(Box::new(Vec::<HookGroup<E>>::new()));
    }
    match slot.as_mut().and_then(|b| b.downcast_mut::<Vec<HookGroup<E>>>()) {
        Some(v) => v,
        None => unreachable!("hook slot {} holds groups of its own event type", E::NAME),
    }
}

/// Collects hooks before freezing them into a [`HookRegistry`].
pub struct HookRegistryBuilder {
    in_process: Slots,
    external: Slots,
}

impl Default for HookRegistryBuilder {
    fn default() -> Self {
        HookRegistryBuilder { in_process: empty_slots(), external: empty_slots() }
    }
}

impl HookRegistryBuilder {
    /// An empty builder.
    pub fn new() -> Self {
        Self::default()
    }

    /// Registers an in-process hook for every firing of `E`.
    pub fn on<E: HookEvent>(&mut self, id: impl Into<String>, hook: impl Hook<E>) -> &mut Self {
        self.add(Matcher::All, HookSpec::new(id, hook))
    }

    /// Registers an in-process hook behind a matcher (settings syntax).
    pub fn on_matching<E: HookEvent>(
        &mut self,
        matcher: &str,
        id: impl Into<String>,
        hook: impl Hook<E>,
    ) -> Result<&mut Self, MatcherError> {
        let matcher = Matcher::parse(matcher)?;
        Ok(self.add(matcher, HookSpec::new(id, hook)))
    }

    /// Registers an in-process hook with full metadata.
    pub fn add<E: HookEvent>(&mut self, matcher: Matcher, spec: HookSpec<E>) -> &mut Self {
        slot_mut::<E>(&mut self.in_process).push(HookGroup { matcher, mode: GroupMode::Chain, hooks: vec![spec] });
        self
    }

    /// Adds an external group (after every in-process hook, in the order added).
    pub fn add_group<E: HookEvent>(&mut self, group: HookGroup<E>) -> &mut Self {
        slot_mut::<E>(&mut self.external).push(group);
        self
    }

    /// Freezes the registry: per event, in-process groups first, then external groups.
    pub fn build(mut self) -> HookRegistry {
        let mut slots = empty_slots();
        for name in HookEventName::ALL {
            let i = *name as usize;
            let parts = Concat { first: self.in_process[i].take(), second: self.external[i].take() };
            slots[i] = visit_event(*name, parts);
        }
        HookRegistry { slots, session: None }
    }
}

/// Concatenates the in-process and external groups of one event (the visitor recovers the
/// event's concrete type from its name).
struct Concat {
    first: Option<Box<dyn Any + Send + Sync>>,
    second: Option<Box<dyn Any + Send + Sync>>,
}

impl EventVisitor for Concat {
    type Output = Option<Box<dyn Any + Send + Sync>>;
    fn visit<E: HookEvent>(self) -> Self::Output {
        let mut groups: Vec<HookGroup<E>> = Vec::new();
        for part in [self.first, self.second].into_iter().flatten() {
            if let Ok(v) = part.downcast::<Vec<HookGroup<E>>>() {
                groups.extend(*v);
            }
        }
        if groups.is_empty() { None } else { Some(Box::new(groups)) }
    }
}

/// Per event, the groups of `first` then those of `second` (cloned: the hooks are shared).
struct Layered<'a> {
    first: &'a HookRegistry,
    second: &'a HookRegistry,
}

impl EventVisitor for Layered<'_> {
    type Output = Option<Box<dyn Any + Send + Sync>>;
    fn visit<E: HookEvent>(self) -> Self::Output {
        let groups: Vec<HookGroup<E>> =
            self.first.groups::<E>().iter().chain(self.second.groups::<E>()).cloned().collect();
        if groups.is_empty() { None } else { Some(Box::new(groups)) }
    }
}

/// The frozen hooks of a run.
pub struct HookRegistry {
    slots: Slots,
    /// The session's registry this one extends ([`HookRegistry::scoped`]).
    session: Option<Arc<HookRegistry>>,
}

impl Default for HookRegistry {
    fn default() -> Self {
        HookRegistryBuilder::new().build()
    }
}

impl HookRegistry {
    /// The groups of event `E`, in order.
    pub fn groups<E: HookEvent>(&self) -> &[HookGroup<E>] {
        self.slots[E::NAME as usize]
            .as_ref()
            .and_then(|b| b.downcast_ref::<Vec<HookGroup<E>>>())
            .map(Vec::as_slice)
            .unwrap_or(&[])
    }

    /// Whether event `E` has any hook.
    pub fn has<E: HookEvent>(&self) -> bool {
        !self.groups::<E>().is_empty()
    }

    /// Whether no event has a hook.
    pub fn is_empty(&self) -> bool {
        self.slots.iter().all(Option::is_none)
    }

    /// The registry of a subagent whose definition brings hooks of its own: per event, the
    /// groups of the session's registry (that of `parent`, see [`HookRegistry::session`]), then
    /// those of `own`. The hooks themselves are shared, not rebuilt.
    pub fn scoped(parent: &Arc<HookRegistry>, own: &HookRegistry) -> HookRegistry {
        let session = HookRegistry::session(parent);
        let mut slots = empty_slots();
        for name in HookEventName::ALL {
            slots[*name as usize] = visit_event(*name, Layered { first: &session, second: own });
        }
        HookRegistry { slots, session: Some(session) }
    }

    /// The session's registry: the one a scoped registry extends, else `this` itself.
    pub fn session(this: &Arc<HookRegistry>) -> Arc<HookRegistry> {
        this.session.clone().unwrap_or_else(|| Arc::clone(this))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hooks::hook_fn;
    use spine_protocol::hook::{HookOutput, PreToolUse, PreToolUseAction, Stop, StopAction, SubagentStop};

    fn allow() -> Result<HookOutput<StopAction>, crate::hooks::HookError> {
        Ok(HookOutput::new(StopAction::Allow { additional_context: None }))
    }

    fn ids<E: HookEvent>(registry: &HookRegistry) -> Vec<String> {
        registry.groups::<E>().iter().flat_map(|g| g.hooks.iter().map(|h| h.id.clone())).collect()
    }

    #[test]
    fn a_scoped_registry_runs_the_session_hooks_then_the_definitions_and_remembers_the_session() {
        let mut session = HookRegistryBuilder::new();
        session.on::<PreToolUse>("session", hook_fn(|_, _| Ok(HookOutput::new(PreToolUseAction::default()))));
        session.on::<Stop>("session-stop", hook_fn(|_, _| allow()));
        let session = Arc::new(session.build());
        let mut own = HookRegistryBuilder::new();
        own.on::<PreToolUse>("own", hook_fn(|_, _| Ok(HookOutput::new(PreToolUseAction::default()))));
        own.on::<SubagentStop>("own-stop", hook_fn(|_, _| allow()));
        let own = own.build();
        let scoped = Arc::new(HookRegistry::scoped(&session, &own));
        assert_eq!(ids::<PreToolUse>(&scoped), ["session", "own"]);
        assert_eq!(ids::<Stop>(&scoped), ["session-stop"]);
        assert_eq!(ids::<SubagentStop>(&scoped), ["own-stop"]);
        assert!(Arc::ptr_eq(&HookRegistry::session(&scoped), &session), "a grandchild starts from the session's");
        let nested = HookRegistry::scoped(&scoped, &HookRegistry::default());
        assert_eq!(ids::<PreToolUse>(&nested), ["session"], "never the parent definition's hooks");
        assert!(HookRegistry::default().is_empty() && !own.is_empty());
    }
}
