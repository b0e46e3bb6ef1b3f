//! Tests of [`super`]: how each front matter field is read.

use super::*;
use serde_json::json;

fn file(fields: Value) -> Result<(AgentFile, Vec<String>), DefinitionError> {
    let map = fields.as_object().cloned().unwrap_or_default();
    read_fields(&map, Origin::File { body: "Body.\n", path: Path::new("/p/a.md") })
}

#[test]
fn disallowed_tools_read_as_a_list_or_a_comma_string() {
    let (a, _) = file(json!({"name": "a", "description": "d", "disallowedTools": "Bash, Write"})).expect("ok");
    assert_eq!(a.disallowed_tools, ["Bash", "Write"]);
    let (b, _) = file(json!({"name": "a", "description": "d", "disallowedTools": ["Bash"]})).expect("ok");
    assert_eq!(b.disallowed_tools, ["Bash"]);
    let err = file(json!({"name": "a", "description": "d", "disallowedTools": ["Bash", 3]})).expect_err("bad");
    assert_eq!(err.path(), "disallowedTools[1]");
    let rule = file(json!({"name": "a", "description": "d", "disallowedTools": "Bash(rm *)"})).expect_err("rule");
    assert!(rule.to_string().contains("`disallowedTools`"), "{rule}");
}

#[test]
fn fields_spine_does_not_apply_are_one_warning_each_naming_the_field_and_why() {
    let fields = json!({"name": "a", "description": "d", "memory": "project", "isolation": "worktree",
        "color": "blue"});
    let (_, warnings) = file(fields).expect("never an error");
    assert_eq!(warnings.len(), NOT_APPLIED.len(), "{warnings:?}");
    assert!(warnings.iter().any(|w| w.starts_with("`memory` is not applied: ")), "{warnings:?}");
    assert!(warnings.iter().any(|w| w.starts_with("`isolation` is not applied: ")), "{warnings:?}");
    assert!(!warnings.iter().any(|w| w.contains("color")), "color is display only");
}

#[test]
fn background_is_applied_as_a_boolean_without_a_warning() {
    let (a, warnings) = file(json!({"name": "a", "description": "d", "background": true})).expect("ok");
    assert!(a.background && warnings.is_empty(), "{warnings:?}");
    let (b, _) = file(json!({"name": "a", "description": "d", "background": false})).expect("ok");
    assert!(!b.background);
    let (c, _) = file(json!({"name": "a", "description": "d"})).expect("ok");
    assert!(!c.background, "absent: the foreground");
    let err = file(json!({"name": "a", "description": "d", "background": "yes"})).expect_err("a string");
    assert_eq!(err.path(), "background");
}

#[test]
fn inline_mcp_servers_are_kept_in_list_or_map_form_beside_the_named_ones() {
    let server = json!({"command": "python3", "args": ["s.py"], "env": {"K": "v"}});
    let (listed, warnings) = file(json!({"name": "a", "description": "d",
        "mcpServers": ["peer", {"own": server}]}))
    .expect("ok");
    assert!(warnings.is_empty(), "{warnings:?}");
    assert_eq!(listed.mcp_servers, ["peer"]);
    assert_eq!(listed.inline_mcp_servers, [("own".to_owned(), server.clone())]);
    let (mapped, _) = file(json!({"name": "a", "description": "d", "mcpServers": {"own": server}})).expect("ok");
    assert!(mapped.mcp_servers.is_empty());
    assert_eq!(mapped.inline_mcp_servers, [("own".to_owned(), server)]);
    let err = file(json!({"name": "a", "description": "d", "mcpServers": [{"own": "python3 s.py"}]}))
        .expect_err("a config is an object");
    assert_eq!(err.path(), "mcpServers[0].own");
}

#[test]
fn hooks_skills_mcp_servers_and_effort_are_read_as_claude_code_writes_them() {
    let fields = json!({"name": "a", "description": "d", "hooks": {"Stop": []}, "skills": "notes, deploy",
        "mcpServers": ["peer", {"inline": {"command": "x"}}], "effort": "medium"});
    let (a, warnings) = file(fields).expect("ok");
    assert_eq!(a.hooks, Some(json!({"Stop": []})));
    assert_eq!(a.skills, ["notes", "deploy"]);
    assert_eq!(a.mcp_servers, ["peer"]);
    assert_eq!(a.inline_mcp_servers.len(), 1);
    assert_eq!(a.effort, Some(ReasoningEffort::Medium));
    assert!(warnings.is_empty(), "{warnings:?}");
    let (listed, _) = file(json!({"name": "a", "description": "d", "skills": ["x"]})).expect("ok");
    assert_eq!(listed.skills, ["x"]);
}

#[test]
fn a_malformed_hooks_skills_mcp_servers_or_effort_names_its_field() {
    let err = |extra: Value| {
        let mut fields = json!({"name": "a", "description": "d"});
        if let (Some(f), Some(e)) = (fields.as_object_mut(), extra.as_object()) {
            f.extend(e.clone());
        }
        file(fields).expect_err("malformed").path().to_owned()
    };
    assert_eq!(err(json!({"hooks": ["PreToolUse"]})), "hooks");
    assert_eq!(err(json!({"skills": ["a", 1]})), "skills[1]");
    assert_eq!(err(json!({"mcpServers": "peer"})), "mcpServers");
    assert_eq!(err(json!({"background": 1})), "background");
    assert_eq!(err(json!({"mcpServers": ["peer", 2]})), "mcpServers[1]");
    assert_eq!(err(json!({"effort": true})), "effort");
}

#[test]
fn effort_above_high_is_sent_as_high_and_a_number_or_unknown_level_is_ignored_with_a_warning() {
    let effort = |value: Value| {
        let (a, warnings) = file(json!({"name": "a", "description": "d", "effort": value})).expect("ok");
        (a.effort, warnings.len())
    };
    assert_eq!(effort(json!("low")), (Some(ReasoningEffort::Low), 0));
    assert_eq!(effort(json!("high")), (Some(ReasoningEffort::High), 0));
    assert_eq!(effort(json!("max")), (Some(ReasoningEffort::High), 1));
    assert_eq!(effort(json!("xhigh")), (Some(ReasoningEffort::High), 1));
    assert_eq!(effort(json!(3)), (None, 1));
    assert_eq!(effort(json!("ultra")), (None, 1));
}

#[test]
fn an_unknown_key_is_a_warning_naming_it() {
    let (_, warnings) = file(json!({"name": "a", "description": "d", "futureField": 1})).expect("ok");
    assert_eq!(warnings, ["unknown field `futureField` ignored"]);
}

#[test]
fn an_unknown_permission_mode_is_ignored_with_a_warning() {
    let (a, warnings) = file(json!({"name": "a", "description": "d", "permissionMode": "auto"})).expect("ok");
    assert_eq!(a.permission_mode, None, "the parent's mode applies");
    assert!(warnings[0].contains("`permissionMode`"), "{warnings:?}");
}

#[test]
fn an_agents_entry_takes_its_name_from_the_key_and_needs_a_prompt() {
    let map = json!({"description": "d", "prompt": "Review.", "tools": ["Read"], "maxTurns": 2});
    let map = map.as_object().cloned().unwrap_or_default();
    let (a, warnings) = read_fields(&map, Origin::Flag { name: "reviewer" }).expect("ok");
    assert_eq!((a.name.as_str(), a.prompt.as_str(), a.max_turns), ("reviewer", "Review.", Some(2)));
    assert_eq!(a.source, PathBuf::from("--agents"));
    assert!(warnings.is_empty(), "{warnings:?}");
    let map = json!({"description": "d"}).as_object().cloned().unwrap_or_default();
    assert_eq!(read_fields(&map, Origin::Flag { name: "x" }).expect_err("no prompt").path(), "prompt");
}
