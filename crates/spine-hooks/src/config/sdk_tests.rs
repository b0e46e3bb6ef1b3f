//! [`HookConfig::from_sdk`]: the shapes the SDKs send, and what is refused with its path.

use std::time::Duration;

use serde_json::json;

use super::*;

fn errors(hooks: Value) -> Vec<(String, String)> {
    let error = HookConfig::from_sdk(&hooks).expect_err("invalid");
    error.errors.into_iter().map(|e| (e.path, e.reason)).collect()
}

#[test]
fn null_or_empty_hooks_are_no_hooks() {
    for hooks in [json!(null), json!({}), json!({"PreToolUse": null}), json!({"PreToolUse": []})] {
        let config = HookConfig::from_sdk(&hooks).expect("valid");
        assert!(config.groups.is_empty() && config.warnings.is_empty(), "{hooks}");
    }
}

#[test]
fn each_matcher_is_a_group_and_each_callback_id_a_handler_in_the_hosts_order() {
    let hooks = json!({
        "PreToolUse": [
            {"matcher": "Bash", "hookCallbackIds": ["hook_0", "hook_1"], "timeout": 30},
            {"matcher": null, "hookCallbackIds": ["hook_2"]}
        ],
        "Stop": [{"hookCallbackIds": ["hook_3"]}]
    });
    let config = HookConfig::from_sdk(&hooks).expect("valid");
    let shape: Vec<(HookEventName, &str, Option<&str>, Vec<&str>)> = config
        .groups
        .iter()
        .map(|g| {
            let ids = g.handlers.iter().map(|h| h.path.as_str()).collect();
            (g.event, g.path.as_str(), g.matcher_text.as_deref(), ids)
        })
        .collect();
    assert_eq!(
        shape,
        [
            (
                HookEventName::PreToolUse,
                "initialize.hooks.PreToolUse[0]",
                Some("Bash"),
                vec![
                    "initialize.hooks.PreToolUse[0].hookCallbackIds[0]",
                    "initialize.hooks.PreToolUse[0].hookCallbackIds[1]"
                ]
            ),
            (
                HookEventName::PreToolUse,
                "initialize.hooks.PreToolUse[1]",
                None,
                vec!["initialize.hooks.PreToolUse[1].hookCallbackIds[0]"]
            ),
            (
                HookEventName::Stop,
                "initialize.hooks.Stop[0]",
                None,
                vec!["initialize.hooks.Stop[0].hookCallbackIds[0]"]
            ),
        ]
    );
    let first = &config.groups[0];
    assert!(first.matcher.matches(Some("Bash")) && !first.matcher.matches(Some("Read")));
    assert!(config.groups[1].matcher.matches(Some("Read")), "a null matcher matches every tool");
    assert!(config.groups.iter().all(|g| g.origin == Origin::Sdk && !g.sequential));
    let handler = &first.handlers[1];
    assert_eq!(handler.handler, Handler::Callback { id: "hook_1".into() });
    assert_eq!(handler.handler.kind(), spine_protocol::hook::HookKind::Callback);
    assert_eq!(handler.handler.dedup_key(), "callback:hook_1");
    assert_eq!((handler.timeout, handler.run), (Duration::from_secs(30), RunMode::Blocking));
    let default = &config.groups[1].handlers[0];
    assert_eq!(default.timeout, Duration::from_secs_f64(DEFAULT_TIMEOUT_SECS), "no timeout: the default");
}

#[test]
fn on_failure_continue_fails_open_any_other_value_closed_and_absent_open() {
    let policy = |on_failure: Value| {
        let hooks = json!({"PreToolUse": [{"hookCallbackIds": ["hook_0"], "onFailure": on_failure}]});
        HookConfig::from_sdk(&hooks).expect("valid").groups[0].handlers[0].on_failure
    };
    assert_eq!(policy(json!("continue")), FailurePolicy::Open);
    assert_eq!(policy(json!(null)), FailurePolicy::Open);
    assert_eq!(policy(json!("block")), FailurePolicy::Closed);
    assert_eq!(policy(json!("anything")), FailurePolicy::Closed);
    assert_eq!(policy(json!(false)), FailurePolicy::Closed);
    let absent = HookConfig::from_sdk(&json!({"PreToolUse": [{"hookCallbackIds": ["hook_0"]}]})).expect("valid");
    assert_eq!(absent.groups[0].handlers[0].on_failure, FailurePolicy::Open);
}

#[test]
fn malformed_values_are_errors_naming_their_json_path_all_collected() {
    let found = errors(json!({
        "PreToolUse": [
            {"matcher": "Bash", "hookCallbackIds": ["hook_0", 7, ""], "timeout": -1},
            {"matcher": 3, "hookCallbackIds": "hook_1"},
            {"timeout": 0},
            "hook_2"
        ],
        "PostToolUse": {"hookCallbackIds": ["hook_3"]},
        "Stop": [{"matcher": "(", "hookCallbackIds": ["hook_4"], "timeout": "30"}]
    }));
    let paths: Vec<&str> = found.iter().map(|(p, _)| p.as_str()).collect();
    assert_eq!(
        paths,
        [
            "initialize.hooks.PreToolUse[0].timeout",
            "initialize.hooks.PreToolUse[0].hookCallbackIds[1]",
            "initialize.hooks.PreToolUse[0].hookCallbackIds[2]",
            "initialize.hooks.PreToolUse[1].matcher",
            "initialize.hooks.PreToolUse[1].hookCallbackIds",
            "initialize.hooks.PreToolUse[2].timeout",
            "initialize.hooks.PreToolUse[2].hookCallbackIds",
            "initialize.hooks.PreToolUse[3]",
            "initialize.hooks.PostToolUse",
            "initialize.hooks.Stop[0].matcher",
            "initialize.hooks.Stop[0].timeout",
        ]
    );
    assert_eq!(found[0].1, "expected a positive number of seconds, found -1");
    assert_eq!(found[1].1, "expected a string, found a number");
    assert_eq!(found[2].1, "empty callback id");
    assert!(found[6].1.starts_with("missing"), "{}", found[6].1);
    let whole = HookConfig::from_sdk(&json!(["hook_0"])).expect_err("not an object");
    assert_eq!(whole.errors[0].path, "initialize.hooks");
    assert!(whole.to_string().starts_with("the SDK host: initialize.hooks: "), "{whole}");
}

#[test]
fn an_event_spine_does_not_fire_and_an_unknown_field_are_warnings() {
    let hooks = json!({
        "TeammateIdle": [{"hookCallbackIds": ["hook_0"]}],
        "EventOfTheFuture": [{"hookCallbackIds": ["hook_1"]}],
        "PreToolUsee": [{"hookCallbackIds": ["hook_2"]}],
        "PreToolUse": [{"hookCallbackIds": ["hook_3"], "priority": 1}]
    });
    let config = HookConfig::from_sdk(&hooks).expect("valid: warnings only");
    let warned: Vec<&str> = config.warnings.iter().map(|w| w.path.as_str()).collect();
    assert_eq!(
        warned,
        [
            "initialize.hooks.TeammateIdle",
            "initialize.hooks.EventOfTheFuture",
            "initialize.hooks.PreToolUsee",
            "initialize.hooks.PreToolUse[0].priority"
        ]
    );
    assert!(config.warnings[..3].iter().all(|w| w.message.ends_with("its callbacks will not run")), "{config:?}");
    assert!(config.warnings[2].message.contains("did you mean `PreToolUse`"), "{}", config.warnings[2]);
    assert_eq!(config.warnings[0].origin, "the SDK host");
    assert_eq!(config.groups.len(), 1, "only the event spine fires");
}

#[test]
fn appended_to_the_settings_callbacks_run_unless_managed_settings_disable_every_hook() {
    let sdk = HookConfig::from_sdk(&json!({"PreToolUse": [{"hookCallbackIds": ["hook_0"]}]})).expect("valid");
    let mut settings = HookConfig {
        disabled_by: Some("~/.claude/settings.json".into()),
        disabled_spares_managed: true,
        managed_only_by: Some("/etc/claude-code/managed-settings.json (managed)".into()),
        ..HookConfig::default()
    };
    settings.extend(sdk.clone());
    assert_eq!(settings.handler_count(), 1, "a user's disableAllHooks and allowManagedHooksOnly spare them");
    assert!(settings.disabled_message().is_some_and(|m| m.contains("but the SDK host's callbacks")));
    let mut managed_off = HookConfig {
        disabled_by: Some("/etc/claude-code/managed-settings.json (managed)".into()),
        disabled_spares_managed: false,
        ..HookConfig::default()
    };
    managed_off.extend(sdk);
    assert_eq!(managed_off.handler_count(), 0);
    assert!(managed_off.not_run(&managed_off.groups[0]).is_some_and(|why| why.contains("disableAllHooks")));
}
