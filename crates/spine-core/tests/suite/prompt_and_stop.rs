//! UserPromptSubmit and Stop.

use std::sync::{Arc, Mutex};

use serde_json::json;
use spine_core::hooks::{HookContext, HookError, hook_fn};
use spine_protocol::hook::{
    HookOutput, PromptAction, Stop, StopAction, StopInput, UserPromptSubmit, UserPromptSubmitInput,
};
use spine_protocol::message::Message;
use spine_protocol::run::RunSubtype;

use crate::support::*;

#[tokio::test]
async fn user_prompt_submit_context_lands_after_the_user_message() {
    let mut h = Harness::new();
    h.hooks.on::<UserPromptSubmit>(
        "ctx",
        hook_fn(|_c: &HookContext, i: &UserPromptSubmitInput| {
            Ok(HookOutput::new(PromptAction::context(format!("hook context for {}", i.prompt))))
        }),
    );
    let (outcome, script, _log) = h.run("go", vec![text("done")]).await;
    let first = &script.requests()[0];
    assert_eq!(roles(first), vec!["system", "user", "context:UserPromptSubmit"]);
    assert_eq!(first[1], Message::user("go"));
    assert_eq!(first[2].text(), Some("hook context for go"));
    assert_eq!(outcome.result, "done");
}

#[tokio::test]
async fn user_prompt_block_erases_the_prompt_and_makes_no_model_request() {
    let mut h = Harness::new();
    h.hooks.on::<UserPromptSubmit>(
        "guard",
        hook_fn(|_c: &HookContext, _i: &UserPromptSubmitInput| {
            Ok(HookOutput::new(PromptAction::block("no secrets in prompts")))
        }),
    );
    let (outcome, script, _log) = h.run("my password is hunter2", vec![text("unused")]).await;
    assert_eq!(outcome.subtype, RunSubtype::Blocked);
    assert_eq!(outcome.result, "no secrets in prompts");
    assert!(script.requests().is_empty());
    assert!(!outcome.messages.iter().any(|m| m.text().is_some_and(|t| t.contains("hunter2"))), "prompt erased");
}

#[tokio::test]
async fn user_prompt_submit_hook_error_fails_the_run() {
    let mut h = Harness::new();
    h.hooks.on::<UserPromptSubmit>(
        "broken",
        hook_fn(|_c: &HookContext, _i: &UserPromptSubmitInput| Err(HookError::failed("crash"))),
    );
    let (outcome, script, _log) = h.run("go", vec![text("unused")]).await;
    assert_eq!(outcome.subtype, RunSubtype::ErrorDuringExecution);
    assert!(outcome.result.contains("UserPromptSubmit") && outcome.result.contains("broken"), "{}", outcome.result);
    assert!(script.requests().is_empty());
}

#[tokio::test]
async fn stop_force_continue_is_honoured_once_with_stop_hook_active_on_the_second_stop() {
    let mut h = Harness::new();
    let states = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&states);
    h.hooks.on::<Stop>(
        "verify",
        hook_fn(move |_c: &HookContext, i: &StopInput| {
            seen.lock().expect("states").push(i.stop_hook_active);
            Ok(HookOutput::new(StopAction::force_continue("verify completion")))
        }),
    );
    let (outcome, script, _log) = h.run("go", vec![text("premature"), text("verified")]).await;
    assert_eq!(outcome.subtype, RunSubtype::Success);
    assert_eq!(outcome.result, "verified");
    assert_eq!(outcome.num_turns, 2);
    assert_eq!(*states.lock().expect("states"), vec![false, true]);
    let transcript: Vec<_> = outcome.messages[1..].iter().map(|m| (m.role(), m.text().unwrap_or(""))).collect();
    assert_eq!(
        transcript,
        vec![("user", "go"), ("assistant", "premature"), ("user", "verify completion"), ("assistant", "verified")]
    );
    assert_eq!(script.requests().len(), 2);
    assert!(outcome.trace.entries().iter().any(
        |e| matches!(&e.record, spine_protocol::trace::TraceRecord::Warning(w) if w.message.contains("stripped"))
    ));
}

#[tokio::test]
async fn stop_force_continue_without_a_reason_is_a_contract_error() {
    let mut h = Harness::new();
    h.hooks.on::<Stop>(
        "empty",
        hook_fn(|_c: &HookContext, _i: &StopInput| Ok(HookOutput::new(StopAction::force_continue("  ")))),
    );
    let (outcome, _s, _log) = h.run("go", vec![text("answer"), text("unused")]).await;
    assert_eq!(outcome.subtype, RunSubtype::ErrorDuringExecution);
    assert!(outcome.result.contains("contract_error"), "{}", outcome.result);
    assert_ne!(outcome.result, "answer", "the candidate answer is not returned");
}

#[tokio::test]
async fn stop_hook_error_fails_the_run_and_withholds_the_answer() {
    let mut h = Harness::new();
    h.hooks.on::<Stop>("broken", hook_fn(|_c: &HookContext, _i: &StopInput| Err(HookError::failed("crash"))));
    let (outcome, _s, _log) = h.run("go", vec![text("candidate")]).await;
    assert_eq!(outcome.subtype, RunSubtype::ErrorDuringExecution);
    assert!(!outcome.result.contains("candidate"));
}

#[tokio::test]
async fn stop_context_is_placed_before_the_forced_user_message() {
    let mut h = Harness::new();
    h.hooks.on::<Stop>(
        "verify",
        hook_fn(|_c: &HookContext, i: &StopInput| {
            Ok(HookOutput::new(if i.stop_hook_active {
                StopAction::default()
            } else {
                StopAction::ForceContinue {
                    reason: "run the tests".into(),
                    additional_context: Some("tests live in t/".into()),
                }
            }))
        }),
    );
    let (outcome, script, _log) =
        h.run("go", vec![text("done?"), calls(&[("c1", "value", json!({"value": 1}))]), text("done.")]).await;
    assert_eq!(outcome.result, "done.");
    assert_eq!(roles(&script.requests()[1]), vec!["system", "user", "assistant", "context:Stop", "user"]);
}

#[tokio::test]
async fn reasoning_is_traced_and_kept_but_never_the_stop_hooks_answer_nor_the_result() {
    use spine_protocol::message::{AssistantMessage, ReasoningItem};
    use spine_protocol::trace::TraceRecord;
    let mut h = Harness::new();
    let answers = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&answers);
    h.hooks.on::<Stop>(
        "record",
        hook_fn(move |_c: &HookContext, i: &StopInput| {
            seen.lock().expect("answers").push(i.last_assistant_message.clone());
            Ok(HookOutput::new(StopAction::default()))
        }),
    );
    let reasoning = vec![
        ReasoningItem::Thinking { thinking: "SECRET-THOUGHT".into(), signature: "sig".into() },
        ReasoningItem::RedactedThinking { data: "opaque".into() },
    ];
    let reply =
        AssistantMessage { reasoning: reasoning.clone(), content: Some("The answer.".into()), tool_calls: vec![] };
    let (outcome, _script, _log) = h.run("go", vec![reply]).await;
    assert_eq!(outcome.result, "The answer.");
    assert_eq!(*answers.lock().expect("answers"), vec!["The answer.".to_owned()]);
    let Some(Message::Assistant(kept)) = outcome.messages.last() else { panic!("the last message is the reply") };
    assert_eq!(kept.reasoning, reasoning, "the transcript keeps the reasoning for the next request");
    let traced: Vec<Vec<String>> = outcome
        .trace
        .entries()
        .into_iter()
        .filter_map(|e| match e.record {
            TraceRecord::Model(m) => Some(m.reasoning),
            _ => None,
        })
        .collect();
    assert_eq!(traced, vec![vec!["SECRET-THOUGHT".to_owned()]]);
}
