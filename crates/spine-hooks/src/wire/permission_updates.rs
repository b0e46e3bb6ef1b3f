//! `hookSpecificOutput.decision.updatedPermissions` of a PermissionRequest allow: Claude Code's
//! permission updates ([`PermissionUpdate`]).
//!
//! Contract of `read`: the value is a list; each entry an object with a `type` (`addRules`,
//! `replaceRules`, `removeRules`, `setMode`, `addDirectories`, `removeDirectories`) and a
//! `destination` (`userSettings`, `projectSettings`, `localSettings`, `session`, `cliArg`), and
//! per type `rules` (a list of `{toolName, ruleContent?}` strings) with `behavior` (`allow`,
//! `deny`, `ask`), `mode` (a mode spine implements), or `directories` (a list of strings).
//! Anything else is a contract error naming the field
//! (`decision.updatedPermissions[1].destination`). Other keys of an entry are ignored, as
//! Claude Code's schema strips them. What the rules and directories mean is checked when the
//! answer is folded (spine-core's `check_update`).

use serde_json::{Map, Value};
use spine_core::hooks::HookError;
use spine_protocol::permission::PermissionMode;
use spine_protocol::permission_update::{PermissionUpdate, RuleBehavior, RuleValue, UpdateDestination};
use spine_settings::type_name;

use super::answer::Answer;

const FIELD: &str = "decision.updatedPermissions";

/// Reads the list (see the module contract).
pub(crate) fn read(answer: &Answer, value: Value) -> Result<Vec<PermissionUpdate>, HookError> {
    let Value::Array(entries) = value else {
        return Err(answer.violation(format!("`{FIELD}` must be a list, found {}", type_name(&value))));
    };
    entries
        .into_iter()
        .enumerate()
        .map(|(i, entry)| entry_of(entry, &format!("{FIELD}[{i}]")).map_err(|e| answer.violation(e)))
        .collect()
}

/// Reads a list of permission updates found at `field` of another message (the Agent SDK's
/// `updatedPermissions` of a `can_use_tool` answer): the same shapes as `read`'s; the error
/// names the failing entry's path.
pub fn read_list(value: Value, field: &str) -> Result<Vec<PermissionUpdate>, String> {
    let Value::Array(entries) = value else {
        return Err(format!("`{field}` must be a list, found {}", type_name(&value)));
    };
    entries.into_iter().enumerate().map(|(i, entry)| entry_of(entry, &format!("{field}[{i}]"))).collect()
}

fn entry_of(entry: Value, at: &str) -> Result<PermissionUpdate, String> {
    let Value::Object(mut map) = entry else {
        return Err(format!("`{at}` must be an object, found {}", type_name(&entry)));
    };
    let kind = string(&mut map, at, "type")?;
    let destination = string(&mut map, at, "destination")?;
    let destination = UpdateDestination::parse(&destination).ok_or_else(|| {
        let all: Vec<&str> = UpdateDestination::ALL.iter().map(|d| d.as_str()).collect();
        format!("`{at}.destination` must be one of {}, found `{destination}`", all.join(", "))
    })?;
    Ok(match kind.as_str() {
        "addRules" | "replaceRules" | "removeRules" => {
            let rules = rules(&mut map, at)?;
            let behavior = string(&mut map, at, "behavior")?;
            let behavior = RuleBehavior::parse(&behavior)
                .ok_or_else(|| format!("`{at}.behavior` must be allow, deny or ask, found `{behavior}`"))?;
            match kind.as_str() {
                "addRules" => PermissionUpdate::AddRules { rules, behavior, destination },
                "replaceRules" => PermissionUpdate::ReplaceRules { rules, behavior, destination },
                _ => PermissionUpdate::RemoveRules { rules, behavior, destination },
            }
        }
        "setMode" => {
            let mode = string(&mut map, at, "mode")?;
            let mode = mode.parse::<PermissionMode>().map_err(|e| format!("`{at}.mode`: {e}"))?;
            PermissionUpdate::SetMode { mode, destination }
        }
        "addDirectories" | "removeDirectories" => {
            let directories = strings(&mut map, at, "directories")?;
            match kind.as_str() {
                "addDirectories" => PermissionUpdate::AddDirectories { directories, destination },
                _ => PermissionUpdate::RemoveDirectories { directories, destination },
            }
        }
        other => {
            return Err(format!(
                "`{at}.type` must be addRules, replaceRules, removeRules, setMode, addDirectories or \
                 removeDirectories, found `{other}`"
            ));
        }
    })
}

fn string(map: &mut Map<String, Value>, at: &str, key: &str) -> Result<String, String> {
    match map.remove(key) {
        Some(Value::String(s)) => Ok(s),
        None | Some(Value::Null) => Err(format!("`{at}.{key}` is missing")),
        Some(other) => Err(format!("`{at}.{key}` must be a string, found {}", type_name(&other))),
    }
}

fn strings(map: &mut Map<String, Value>, at: &str, key: &str) -> Result<Vec<String>, String> {
    let Some(Value::Array(items)) = map.remove(key) else {
        return Err(format!("`{at}.{key}` must be a list of strings"));
    };
    items
        .into_iter()
        .enumerate()
        .map(|(i, item)| match item {
            Value::String(s) => Ok(s),
            other => Err(format!("`{at}.{key}[{i}]` must be a string, found {}", type_name(&other))),
        })
        .collect()
}

fn rules(map: &mut Map<String, Value>, at: &str) -> Result<Vec<RuleValue>, String> {
    let Some(Value::Array(items)) = map.remove("rules") else {
        return Err(format!("`{at}.rules` must be a list of {{toolName, ruleContent}} objects"));
    };
    items
        .into_iter()
        .enumerate()
        .map(|(i, item)| {
            let at = format!("{at}.rules[{i}]");
            let Value::Object(mut rule) = item else {
                return Err(format!("`{at}` must be an object {{toolName, ruleContent}}, found {}", type_name(&item)));
            };
            let tool_name = string(&mut rule, &at, "toolName")?;
            let rule_content = match rule.remove("ruleContent") {
                None | Some(Value::Null) => None,
                Some(Value::String(s)) => Some(s),
                Some(other) => return Err(format!("`{at}.ruleContent` must be a string, found {}", type_name(&other))),
            };
            Ok(RuleValue { tool_name, rule_content })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn entry(v: Value) -> Result<PermissionUpdate, String> {
        entry_of(v, FIELD)
    }

    #[test]
    fn every_claude_code_update_shape_reads() {
        for wire in [
            json!({"type": "addRules", "rules": [{"toolName": "Bash", "ruleContent": "npm test:*"}], "behavior": "allow", "destination": "localSettings"}),
            json!({"type": "replaceRules", "rules": [{"toolName": "Write"}], "behavior": "deny", "destination": "projectSettings"}),
            json!({"type": "removeRules", "rules": [], "behavior": "ask", "destination": "userSettings"}),
            json!({"type": "setMode", "mode": "acceptEdits", "destination": "session"}),
            json!({"type": "addDirectories", "directories": ["/x"], "destination": "cliArg"}),
            json!({"type": "removeDirectories", "directories": [], "destination": "session"}),
        ] {
            let update = entry(wire.clone()).expect("reads");
            assert_eq!(serde_json::to_value(&update).expect("ser"), wire);
        }
    }

    #[test]
    fn an_invalid_update_names_its_field() {
        let cases = [
            (json!("addRules"), "`decision.updatedPermissions` must be an object"),
            (
                json!({"type": "addRules", "destination": "nowhere"}),
                "`decision.updatedPermissions.destination` must be one of",
            ),
            (json!({"type": "grant", "destination": "session"}), "`decision.updatedPermissions.type` must be addRules"),
            (
                json!({"type": "addRules", "destination": "session", "behavior": "allow"}),
                "`decision.updatedPermissions.rules` must be a list",
            ),
            (
                json!({"type": "addRules", "destination": "session", "behavior": "maybe", "rules": []}),
                "`decision.updatedPermissions.behavior` must be allow, deny or ask",
            ),
            (
                json!({"type": "addRules", "destination": "session", "behavior": "allow", "rules": [{"toolName": 3}]}),
                "`decision.updatedPermissions.rules[0].toolName` must be a string",
            ),
            (
                json!({"type": "setMode", "destination": "session", "mode": "auto"}),
                "`decision.updatedPermissions.mode`: unknown permission mode `auto`",
            ),
            (
                json!({"type": "addDirectories", "destination": "session", "directories": ["/a", 1]}),
                "`decision.updatedPermissions.directories[1]` must be a string",
            ),
        ];
        for (wire, expected) in cases {
            let err = entry(wire.clone()).expect_err("invalid");
            assert!(err.starts_with(expected), "{wire}: {err}");
        }
    }
}
