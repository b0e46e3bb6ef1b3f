//! Session permission updates: the `updatedPermissions` of a PermissionRequest hook's allow,
//! applied to the running session (docs/hooks.md, "PermissionRequest").
//!
//! Contract:
//! - The changes live in [`SessionPermissions`], shared by every copy of a policy (the run's,
//!   its subagents', its redirect gates', the next prompts' of an interactive session); the mode
//!   is per agent ([`PermissionPolicy::with_mode`] gives a subagent its own).
//! - `addRules` appends rules to a list (`behavior`); `replaceRules` first removes every rule
//!   of that list the destination holds; `removeRules` removes the named rules the destination
//!   holds. What a destination holds: the rules added to it in this session, and the configured
//!   rules whose source is that destination ([`RuleOrigins`]: `userSettings`,
//!   `projectSettings`, `localSettings` for the settings files, `cliArg` for `--allowedTools`
//!   and `--disallowedTools`). Managed rules belong to no destination: no update removes them,
//!   and an added allow rule never beats a deny rule (the precedence table).
//! - With `allowManagedPermissionRulesOnly` ([`UpdateLimits::managed_rules_only`]) no update
//!   adds an allow rule: such an `addRules` or `replaceRules` is refused.
//! - `setMode` changes the mode; `bypassPermissions` is refused when
//!   `disableBypassPermissionsMode` is set ([`UpdateLimits::bypass_disabled_by`]).
//! - `addDirectories` and `removeDirectories` change the workspace roots
//!   ([`PermissionPolicy::workspace`]); the project directory is never removed.
//! - [`check_update`] is what makes an update invalid (a contract error of the hook): a rule
//!   that does not parse, a directory that is empty or, for `addDirectories`, not an existing
//!   directory. [`PermissionPolicy::apply_updates`] applies valid updates and says what became
//!   of each ([`AppliedUpdate`]); saving to the settings file a destination names is the
//!   caller's ([`PermissionStore`]).

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use spine_protocol::permission::PermissionMode;
use spine_protocol::permission_update::{AppliedUpdate, PermissionUpdate, RuleBehavior, RuleValue, UpdateDestination};

use super::policy::{PermissionPolicy, PermissionRules};
use super::rule::PermissionRule;
use crate::workspace::Workspace;

/// Saves a permission update to the settings file its destination names (spine-protocol's).
pub use spine_protocol::permission_store::PermissionStore;

/// The destination of each configured rule, by list and position (`None`: managed settings,
/// `--settings`, or unknown). Rules beyond the end of a list have none.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RuleOrigins {
    /// Of `allow` rules.
    pub allow: Vec<Option<UpdateDestination>>,
    /// Of `ask` rules.
    pub ask: Vec<Option<UpdateDestination>>,
    /// Of `deny` rules.
    pub deny: Vec<Option<UpdateDestination>>,
}

impl RuleOrigins {
    fn of(&self, behavior: RuleBehavior, index: usize) -> Option<UpdateDestination> {
        let list = match behavior {
            RuleBehavior::Allow => &self.allow,
            RuleBehavior::Ask => &self.ask,
            RuleBehavior::Deny => &self.deny,
        };
        list.get(index).copied().flatten()
    }
}

/// What session updates may not do, from the settings.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UpdateLimits {
    /// Where the configured rules came from.
    pub origins: RuleOrigins,
    /// The managed file that sets `allowManagedPermissionRulesOnly`: no allow rule is added.
    pub managed_rules_only: Option<String>,
    /// The file whose `disableBypassPermissionsMode` refuses `setMode: bypassPermissions`.
    pub bypass_disabled_by: Option<String>,
}

/// A rule an update added.
#[derive(Debug, Clone)]
struct AddedRule {
    behavior: RuleBehavior,
    destination: UpdateDestination,
    rule: PermissionRule,
}

#[derive(Debug, Default)]
struct SessionState {
    added: Vec<AddedRule>,
    /// Configured rules removed, by list and position.
    removed: Vec<(RuleBehavior, usize)>,
    /// The workspace after directory updates.
    workspace: Option<Arc<Workspace>>,
}

/// What the updates of a session changed (see the module contract).
#[derive(Debug, Default)]
pub struct SessionPermissions {
    state: Mutex<SessionState>,
}

impl SessionPermissions {
    fn state(&self) -> std::sync::MutexGuard<'_, SessionState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The rules in force: `base` without what was removed, then what was added; `None` when
    /// nothing changed.
    pub(super) fn effective(&self, base: &PermissionRules) -> Option<PermissionRules> {
        let state = self.state();
        if state.added.is_empty() && state.removed.is_empty() {
            return None;
        }
        let list = |behavior: RuleBehavior, rules: &[PermissionRule]| -> Vec<PermissionRule> {
            let kept = rules.iter().enumerate().filter(|(i, _)| !state.removed.contains(&(behavior, *i)));
            let added = state.added.iter().filter(|a| a.behavior == behavior).map(|a| &a.rule);
            kept.map(|(_, r)| r).chain(added).cloned().collect()
        };
        Some(PermissionRules {
            allow: list(RuleBehavior::Allow, &base.allow),
            ask: list(RuleBehavior::Ask, &base.ask),
            deny: list(RuleBehavior::Deny, &base.deny),
        })
    }
}

/// Whether an update is valid; the error names the field inside the update
/// (`rules[1]: invalid permission rule …`). Relative directories are against `cwd`.
pub fn check_update(update: &PermissionUpdate, cwd: &Path) -> Result<(), String> {
    match update {
        PermissionUpdate::AddRules { rules, .. }
        | PermissionUpdate::ReplaceRules { rules, .. }
        | PermissionUpdate::RemoveRules { rules, .. } => {
            for (i, value) in rules.iter().enumerate() {
                parse_value(value).map_err(|e| format!("rules[{i}]: {e}"))?;
            }
            Ok(())
        }
        PermissionUpdate::SetMode { .. } => Ok(()),
        PermissionUpdate::AddDirectories { directories, .. } => {
            for (i, dir) in directories.iter().enumerate() {
                let path = directory(dir, cwd).map_err(|e| format!("directories[{i}]: {e}"))?;
                if !path.is_dir() {
                    return Err(format!("directories[{i}]: {} is not an existing directory", path.display()));
                }
            }
            Ok(())
        }
        PermissionUpdate::RemoveDirectories { directories, .. } => {
            for (i, dir) in directories.iter().enumerate() {
                directory(dir, cwd).map_err(|e| format!("directories[{i}]: {e}"))?;
            }
            Ok(())
        }
    }
}

fn parse_value(value: &RuleValue) -> Result<PermissionRule, String> {
    if value.tool_name.trim().is_empty() {
        return Err("`toolName` is empty".to_owned());
    }
    PermissionRule::parse(&value.rule()).map_err(|e| e.to_string())
}

fn directory(dir: &str, cwd: &Path) -> Result<PathBuf, String> {
    if dir.trim().is_empty() || dir.contains('\0') {
        return Err(format!("`{}` is not a directory name", dir.escape_debug()));
    }
    Ok(Workspace::normalize(dir, cwd))
}

impl PermissionPolicy {
    /// The workspace in force: `base` (the agent's) unless directory updates changed it.
    pub fn workspace(&self, base: &Arc<Workspace>) -> Arc<Workspace> {
        self.session.state().workspace.clone().unwrap_or_else(|| Arc::clone(base))
    }

    /// Applies valid updates ([`check_update`]) to the session in order; what became of each.
    /// `base` is the agent's workspace, `cwd` what relative directories are against.
    pub fn apply_updates(&self, updates: &[PermissionUpdate], base: &Arc<Workspace>, cwd: &Path) -> Vec<AppliedUpdate> {
        updates.iter().map(|update| self.apply_one(update, base, cwd)).collect()
    }

    fn apply_one(&self, update: &PermissionUpdate, base: &Arc<Workspace>, cwd: &Path) -> AppliedUpdate {
        let result = match update {
            PermissionUpdate::AddRules { rules, behavior, destination } => {
                self.change_rules(rules, *behavior, *destination, Change::Add)
            }
            PermissionUpdate::ReplaceRules { rules, behavior, destination } => {
                self.change_rules(rules, *behavior, *destination, Change::Replace)
            }
            PermissionUpdate::RemoveRules { rules, behavior, destination } => {
                self.change_rules(rules, *behavior, *destination, Change::Remove)
            }
            PermissionUpdate::SetMode { mode, .. } => self.set_mode(*mode),
            PermissionUpdate::AddDirectories { directories, .. } => self.change_roots(directories, base, cwd, true),
            PermissionUpdate::RemoveDirectories { directories, .. } => self.change_roots(directories, base, cwd, false),
        };
        match result {
            Ok(note) => AppliedUpdate { update: update.clone(), applied: true, note },
            Err(why) => AppliedUpdate { update: update.clone(), applied: false, note: Some(why) },
        }
    }

    fn change_rules(
        &self,
        values: &[RuleValue],
        behavior: RuleBehavior,
        destination: UpdateDestination,
        change: Change,
    ) -> Result<Option<String>, String> {
        if behavior == RuleBehavior::Allow
            && change != Change::Remove
            && let Some(by) = &self.limits.managed_rules_only
        {
            return Err(format!(
                "`allowManagedPermissionRulesOnly` in {by}: only managed permission rules apply; no allow rule added"
            ));
        }
        let rules = values.iter().map(parse_value).collect::<Result<Vec<_>, _>>()?;
        let texts: Vec<String> = values.iter().map(RuleValue::rule).collect();
        let mut state = self.session.state();
        let base = match behavior {
            RuleBehavior::Allow => &self.rules.allow,
            RuleBehavior::Ask => &self.rules.ask,
            RuleBehavior::Deny => &self.rules.deny,
        };
        let held_by_destination = |i: usize, rule: &PermissionRule| {
            self.limits.origins.of(behavior, i) == Some(destination)
                && (change == Change::Replace || texts.iter().any(|t| t == rule.as_str()))
        };
        let mut removed = 0;
        if change != Change::Add {
            for (i, rule) in base.iter().enumerate() {
                if held_by_destination(i, rule) && !state.removed.contains(&(behavior, i)) {
                    state.removed.push((behavior, i));
                    removed += 1;
                }
            }
            let before = state.added.len();
            state.added.retain(|a| {
                !(a.behavior == behavior
                    && a.destination == destination
                    && (change == Change::Replace || texts.iter().any(|t| t == a.rule.as_str())))
            });
            removed += before - state.added.len();
        }
        if change != Change::Remove {
            for rule in rules {
                let known = state.added.iter().any(|a| {
                    a.behavior == behavior && a.destination == destination && a.rule.as_str() == rule.as_str()
                });
                if !known {
                    state.added.push(AddedRule { behavior, destination, rule });
                }
            }
        }
        Ok(match change {
            Change::Add => None,
            Change::Replace | Change::Remove => Some(format!("{removed} rule(s) removed")),
        })
    }

    fn set_mode(&self, mode: PermissionMode) -> Result<Option<String>, String> {
        if mode == PermissionMode::BypassPermissions
            && let Some(origin) = &self.limits.bypass_disabled_by
        {
            return Err(format!(
                "permission mode bypassPermissions is disabled by `permissions.disableBypassPermissionsMode` in {origin}"
            ));
        }
        let mut current = self.mode.lock().unwrap_or_else(PoisonError::into_inner);
        let before = *current;
        *current = mode;
        Ok((before != mode).then(|| format!("mode {before} → {mode}")))
    }

    fn change_roots(
        &self,
        directories: &[String],
        base: &Arc<Workspace>,
        cwd: &Path,
        add: bool,
    ) -> Result<Option<String>, String> {
        let mut state = self.session.state();
        let current = state.workspace.clone().unwrap_or_else(|| Arc::clone(base));
        let mut roots: Vec<PathBuf> = current.added_roots().map(Path::to_path_buf).collect();
        let mut notes = Vec::new();
        for dir in directories {
            let path = directory(dir, cwd)?;
            let path = path.canonicalize().unwrap_or(path);
            if add {
                if !roots.contains(&path) && path != current.root() {
                    roots.push(path);
                }
            } else if path == current.root() {
                notes.push(format!("{} is the project directory and stays", path.display()));
            } else if roots.contains(&path) {
                roots.retain(|r| r != &path);
            } else {
                notes.push(format!("{} is not a workspace root", path.display()));
            }
        }
        let workspace = Workspace::with_roots(current.root(), &roots).map_err(|e| format!("{e}"))?;
        state.workspace = Some(Arc::new(workspace));
        Ok((!notes.is_empty()).then(|| notes.join("; ")))
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Change {
    Add,
    Replace,
    Remove,
}

#[cfg(test)]
#[path = "session_tests.rs"]
mod tests;
