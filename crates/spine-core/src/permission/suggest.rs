//! The `permission_suggestions` of a PermissionRequest input: what an "always" answer would
//! store for the call, in Claude Code's shape.
//!
//! Contract of [`permission_suggestions`]:
//! - the call's covering rules ([`covering_rules`], what the terminal approver remembers and
//!   saves on "always": `Bash(npm test:*)`, one rule per simple command of a compound command,
//!   `Edit(./src/lib.rs)` for a file edit) as one `{"type": "addRules", "behavior": "allow",
//!   "destination": "localSettings"}` entry — the approver's "always for this project" writes
//!   the project's local settings file. No entry when no rule narrower than the whole tool
//!   exists (an opaque command, or one whose rule would hold a wildcard the user did not see,
//!   `'*'`), as the approver then offers no "always". Interpreters, shells, wrappers and
//!   run/exec subcommands are offered their exact command only (`Bash(python3 -c print(1))`,
//!   `Bash(npm run build)`), never a prefix ([`super::exact`]).
//! - for each path of the call outside the workspace, its directory (the path itself when it
//!   is a directory, else its parent) in one `{"type": "addDirectories", "destination":
//!   "session"}` entry, as Claude Code suggests. A run refuses such a call before any question
//!   (the workspace boundary, docs/permissions.md), so this entry appears where a
//!   PermissionRequest fires without the policy (`spine hooks test`).

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};
use spine_protocol::permission_update::{PermissionUpdate, RuleBehavior, RuleValue, UpdateDestination};

use super::narrow::covering_rules;
use crate::workspace::{BoundaryError, Workspace};

/// The suggestions for a call of `tool_name` with `args`, whose tool touches `paths`
/// ([`crate::tool::Tool::workspace_paths`]); see the module contract.
pub fn permission_suggestions(
    tool_name: &str,
    args: &Map<String, Value>,
    workspace: &Workspace,
    cwd: &Path,
    paths: &[String],
) -> Vec<PermissionUpdate> {
    let mut out = Vec::new();
    if let Some(rules) = covering_rules(tool_name, args, workspace.root()).filter(|r| !r.is_empty()) {
        out.push(PermissionUpdate::AddRules {
            rules: rules.iter().map(|r| RuleValue::from_rule(r)).collect(),
            behavior: RuleBehavior::Allow,
            destination: UpdateDestination::LocalSettings,
        });
    }
    let mut directories: Vec<String> = Vec::new();
    for path in paths {
        let Err(BoundaryError::Outside { .. }) = workspace.resolve(path, cwd) else {
            continue;
        };
        let normal = Workspace::normalize(path, cwd);
        let dir = if normal.is_dir() { normal } else { normal.parent().map_or(normal.clone(), PathBuf::from) };
        let dir = dir.display().to_string();
        if !directories.contains(&dir) {
            directories.push(dir);
        }
    }
    if !directories.is_empty() {
        out.push(PermissionUpdate::AddDirectories { directories, destination: UpdateDestination::Session });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn args(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn a_shell_call_is_offered_its_covering_rules_for_the_local_settings() {
        let dir = tempfile::tempdir().expect("tempdir");
        let ws = Workspace::new(dir.path()).expect("workspace");
        let got = permission_suggestions("Bash", &args(json!({"command": "npm test --watch"})), &ws, ws.root(), &[]);
        assert_eq!(
            serde_json::to_value(&got).expect("ser"),
            json!([{"type": "addRules", "rules": [{"toolName": "Bash", "ruleContent": "npm test:*"}],
                    "behavior": "allow", "destination": "localSettings"}])
        );
        let both =
            permission_suggestions("Bash", &args(json!({"command": "npm test && git status"})), &ws, ws.root(), &[]);
        let PermissionUpdate::AddRules { rules, .. } = &both[0] else { panic!("{both:?}") };
        assert_eq!(rules.iter().map(RuleValue::rule).collect::<Vec<_>>(), ["Bash(npm test:*)", "Bash(git status:*)"]);
    }

    #[test]
    fn an_opaque_command_is_offered_nothing() {
        let dir = tempfile::tempdir().expect("tempdir");
        let ws = Workspace::new(dir.path()).expect("workspace");
        assert!(
            permission_suggestions("Bash", &args(json!({"command": "eval \"$X\""})), &ws, ws.root(), &[]).is_empty()
        );
    }

    fn offered_rules(command: &str) -> Vec<String> {
        let dir = tempfile::tempdir().expect("tempdir");
        let ws = Workspace::new(dir.path()).expect("workspace");
        permission_suggestions("Bash", &args(json!({"command": command})), &ws, ws.root(), &[])
            .iter()
            .flat_map(|u| match u {
                PermissionUpdate::AddRules { rules, .. } => rules.iter().map(RuleValue::rule).collect(),
                _ => Vec::new(),
            })
            .collect()
    }

    #[test]
    fn a_command_whose_rule_would_hold_a_literal_star_is_offered_no_rule() {
        for command in ["'*'", "git '*'", "python3 -c 'print(\"*\")'"] {
            assert!(offered_rules(command).is_empty(), "{command}: {:?}", offered_rules(command));
        }
    }

    #[test]
    fn an_interpreter_wrapper_or_run_subcommand_is_offered_its_exact_command_only() {
        assert_eq!(offered_rules("python3 -c 'print(1)'"), ["Bash(python3 -c print(1))"]);
        assert_eq!(offered_rules("bash -c 'npm test'"), ["Bash(bash -c npm test)", "Bash(npm test:*)"]);
        assert_eq!(offered_rules("npm run build"), ["Bash(npm run build)"]);
        assert_eq!(offered_rules("sudo ls"), ["Bash(sudo ls)", "Bash(ls:*)"]);
        assert!(offered_rules("bash /dev/stdin <<< 'rm victim'").is_empty(), "a script on stdin is opaque");
    }

    #[test]
    fn a_path_outside_the_workspace_is_offered_its_directory_for_the_session() {
        let dir = tempfile::tempdir().expect("tempdir");
        let outside = tempfile::tempdir().expect("tempdir");
        let ws = Workspace::new(dir.path()).expect("workspace");
        let file = outside.path().join("new.txt").display().to_string();
        let inside = dir.path().join("a.txt").display().to_string();
        let got = permission_suggestions(
            "Write",
            &args(json!({"file_path": file, "content": "x"})),
            &ws,
            ws.root(),
            &[file.clone(), inside],
        );
        let outside_dir = outside.path().display().to_string();
        assert_eq!(
            serde_json::to_value(&got[1]).expect("ser"),
            json!({"type": "addDirectories", "directories": [outside_dir], "destination": "session"})
        );
        assert_eq!(got.len(), 2, "{got:?}");
    }
}
