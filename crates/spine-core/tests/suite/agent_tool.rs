//! The `Agent` tool under Claude Code 2.x's name and its former name `Task`
//! (`spine_core::tool_names`): a call of either runs the subagent as an `Agent` call, and a
//! hook matcher, an `if` rule, a permission rule or a visible-tool list naming `Task` names it.

use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use spine_core::hooks::{HookContext, HookSpec, hook_fn};
use spine_core::permission::PermissionRule;
use spine_core::registry::ToolRegistryBuilder;
use spine_core::stages::review_tool_call::Visibility;
use spine_core::subagents::{AGENT_TOOL, AgentTool, SubagentDefinition, TASK_TOOL};
use spine_protocol::hook::{HookOutput, PreToolUse, PreToolUseAction, PreToolUseInput};
use spine_protocol::run::RunSubtype;
use spine_protocol::tool::{ErrorCode, ToolArguments, ToolCall};

use crate::support::*;

fn call(agent_type: &str) -> Value {
    json!({"description": "d", "prompt": "p", "subagent_type": agent_type})
}

/// Records the `tool_name` of every PreToolUse input a hook with `matcher` receives.
fn record_matching(h: &mut Harness, matcher: &str) -> Arc<Mutex<Vec<String>>> {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let keep = Arc::clone(&seen);
    h.hooks
        .on_matching::<PreToolUse>(
            matcher,
            format!("seen-{matcher}"),
            hook_fn(move |_c: &HookContext, i: &PreToolUseInput| {
                keep.lock().expect("seen").push(i.tool_name.clone());
                Ok(HookOutput::new(PreToolUseAction::default()))
            }),
        )
        .expect("matcher");
    seen
}

#[tokio::test]
async fn a_task_call_runs_the_subagent_as_an_agent_call() {
    let child = Script::new(vec![text("child answer")]);
    let mut h = with_subagents(vec![definition("helper", child)]);
    let seen = record_matching(&mut h, "*");
    let args = json!({"description": "d", "prompt": "p", "subagent_type": "helper"});
    let (outcome, _parent, _log) = h.run("go", vec![calls(&[("t1", TASK_TOOL, args)]), text("done")]).await;
    assert_eq!(outcome.subtype, RunSubtype::Success, "{}", outcome.result);
    let r = results(&outcome.messages);
    assert_eq!((r[0].name.as_str(), r[0].content.as_str(), r[0].error_code), (AGENT_TOOL, "child answer", None));
    assert_eq!(*seen.lock().expect("seen"), [AGENT_TOOL], "hooks see Claude Code's name");
}

#[tokio::test]
async fn a_hook_matcher_naming_task_matches_an_agent_call_whose_tool_name_stays_agent() {
    let child = Script::new(vec![text("a"), text("b")]);
    let mut h = with_subagents(vec![definition("helper", child)]);
    let listed = record_matching(&mut h, "Task");
    let regex = record_matching(&mut h, "^Task$");
    let current = record_matching(&mut h, "Agent");
    let other = record_matching(&mut h, "Bash");
    let turn = calls(&[("t1", AGENT_TOOL, json!({"description": "d", "prompt": "p", "subagent_type": "helper"}))]);
    let turn2 = calls(&[("t2", TASK_TOOL, json!({"description": "d", "prompt": "p", "subagent_type": "helper"}))]);
    let (outcome, _parent, _log) = h.run("go", vec![turn, turn2, text("done")]).await;
    assert_eq!(outcome.subtype, RunSubtype::Success, "{}", outcome.result);
    for seen in [listed, regex, current] {
        assert_eq!(*seen.lock().expect("seen"), [AGENT_TOOL, AGENT_TOOL]);
    }
    assert!(other.lock().expect("seen").is_empty());
}

#[tokio::test]
async fn an_if_rule_naming_task_of_an_agent_type_selects_the_agent_call() {
    let child = Script::new(vec![text("unused")]);
    let mut h = with_subagents(vec![definition("reviewer", child)]);
    let rule = PermissionRule::parse("Task(reviewer)").expect("rule");
    h.hooks.add(
        spine_core::hooks::Matcher::All,
        HookSpec::<PreToolUse>::new(
            "block-reviewer",
            hook_fn(|_c: &HookContext, _i: &PreToolUseInput| {
                Ok(HookOutput::new(PreToolUseAction::Block { reason: "no review".into(), additional_context: None }))
            }),
        )
        .when(rule),
    );
    let (outcome, _parent, _log) =
        h.run("go", vec![calls(&[("t1", AGENT_TOOL, call("reviewer"))]), text("done")]).await;
    assert_eq!(results(&outcome.messages)[0].error_code, Some(ErrorCode::HookBlocked));
}

#[tokio::test]
async fn a_deny_rule_naming_task_of_an_agent_type_stops_the_agent_call() {
    let reviewer = Script::new(vec![text("reviewed")]);
    let helper = Script::new(vec![text("helped")]);
    let mut h = with_subagents(vec![definition("reviewer", reviewer), definition("helper", helper)]);
    h.deny = vec!["Task(reviewer)"];
    let turn = calls(&[("t1", AGENT_TOOL, call("reviewer")), ("t2", AGENT_TOOL, call("helper"))]);
    let (outcome, _parent, _log) = h.run("go", vec![turn, text("done")]).await;
    let r = results(&outcome.messages);
    assert_eq!(r[0].error_code, Some(ErrorCode::PermissionDenied), "{}", r[0].content);
    assert_eq!((r[1].content.as_str(), r[1].error_code), ("helped", None));
}

#[tokio::test]
async fn a_call_without_subagent_type_runs_general_purpose() {
    let child = Script::new(vec![text("general answer")]);
    let mut general = SubagentDefinition::general_purpose();
    general.model = Some(child);
    let h = with_subagents(vec![general]);
    let args = json!({"description": "d", "prompt": "p", "model": "haiku", "isolation": "worktree"});
    let (outcome, _parent, _log) = h.run("go", vec![calls(&[("t1", AGENT_TOOL, args)]), text("done")]).await;
    let r = results(&outcome.messages);
    assert_eq!((r[0].content.as_str(), r[0].error_code), ("general answer", None), "ignored fields are no error");
}

#[tokio::test]
async fn disallowed_tools_remove_a_tool_from_the_subagent() {
    let child = Script::new(vec![calls(&[("k1", "value", json!({"value": 1}))]), text("tried")]);
    let mut narrowed = definition("narrowed", child.clone());
    narrowed.disallowed_tools = vec!["value".to_owned()];
    let h = with_subagents(vec![narrowed]);
    let (outcome, _parent, log) = h.run("go", vec![calls(&[("t1", AGENT_TOOL, call("narrowed"))]), text("done")]).await;
    assert_eq!(outcome.subtype, RunSubtype::Success, "{}", outcome.result);
    assert_eq!(results(&child.requests()[1])[0].error_code, Some(ErrorCode::ToolNotAllowed));
    assert!(log.take().is_empty(), "the tool did not run");
}

#[tokio::test]
async fn a_resumed_deferred_task_call_still_runs_the_subagent() {
    let child = Script::new(vec![text("resumed answer")]);
    let h = with_subagents(vec![definition("helper", child)]);
    let deferred = ToolCall {
        id: "t1".into(),
        name: TASK_TOOL.into(),
        arguments: ToolArguments::Json(json!({"description": "d", "prompt": "p", "subagent_type": "helper"})),
    };
    let history = vec![
        spine_protocol::message::Message::user("go"),
        spine_protocol::message::Message::Assistant(calls(&[(
            "t1",
            TASK_TOOL,
            json!({"description": "d", "prompt": "p", "subagent_type": "helper"}),
        )])),
    ];
    let parent = Script::new(vec![text("done")]);
    let (outcome, _log) = h.run_with("", parent, Some(deferred), history).await;
    assert_eq!(outcome.subtype, RunSubtype::Success, "{}", outcome.result);
    let r = results(&outcome.messages);
    assert_eq!((r[0].content.as_str(), r[0].error_code), ("resumed answer", None));
}

#[test]
fn the_registry_and_visible_tool_lists_find_agent_by_its_former_name() {
    let mut builder = ToolRegistryBuilder::new();
    builder.register(AgentTool);
    let tools = builder.build().expect("tools");
    assert_eq!(tools.lookup(TASK_TOOL), tools.lookup(AGENT_TOOL));
    assert!(tools.lookup(AGENT_TOOL).is_some());
    let visible = Visibility::Only(vec![TASK_TOOL.to_owned()]);
    assert!(visible.allows(AGENT_TOOL) && !visible.allows("Bash"));
}
