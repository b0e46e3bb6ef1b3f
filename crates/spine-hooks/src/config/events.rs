//! Event names in settings: the ones spine fires (its `HookEventName`), the ones Claude Code
//! has and spine does not fire (skipped with a warning), and typos (errors with a suggestion).

use spine_protocol::hook::HookEventName;

/// Claude Code 2.1 events spine does not fire, with why. With the events spine fires
/// ([`HookEventName::ALL`]) these are Claude Code's 33 (a test compares them with the schema
/// recorded from 2.1.328).
const CLAUDE_ONLY: &[(&str, &str)] = &[
    ("MessageDisplay", "spine does not let hooks rewrite displayed messages"),
    ("TaskCreated", "spine has no task tools"),
    ("TaskCompleted", "spine has no task tools"),
    ("TeammateIdle", "spine has no agent teams"),
    (
        "DirectoryAdded",
        "spine has no /add-dir command; directories come from --add-dir, additionalDirectories and a PermissionRequest hook's addDirectories, for which Claude Code does not fire it either",
    ),
    ("WorktreeCreate", "spine does not create worktrees"),
    ("WorktreeRemove", "spine does not create worktrees"),
];

/// Why a Claude Code event is not fired by spine, or `None` when the name is not one.
pub fn unsupported_event(name: &str) -> Option<String> {
    CLAUDE_ONLY
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(n, why)| format!("spine does not fire the Claude Code event `{n}` ({why})"))
}

/// What a name that is no event of spine's or Claude Code's means: an error naming the
/// nearest event when it is a near miss of one, else the warning to show (a settings file
/// written for a newer Claude Code).
pub(crate) fn unknown_event(name: &str) -> Result<String, String> {
    let known = HookEventName::ALL.iter().map(|e| e.as_str()).chain(CLAUDE_ONLY.iter().map(|(n, _)| *n));
    match spine_settings::unknown::near_miss(name, known) {
        Some(nearest) => Err(format!("unknown hook event `{name}` (did you mean `{nearest}`?)")),
        None => {
            Ok(format!("unknown hook event `{name}` ignored (written for a newer version?); its hooks will not run"))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_near_miss_of_an_event_is_an_error_and_any_other_name_a_warning() {
        assert!(unknown_event("PreToolUsee").is_err_and(|e| e.contains("did you mean `PreToolUse`")));
        assert!(unknown_event("pretooluse").is_err_and(|e| e.contains("did you mean `PreToolUse`")));
        assert!(unknown_event("PostModelSwich").is_err_and(|e| e.contains("did you mean `PostModelSwitch`")));
        assert!(unknown_event("EventOfTheFuture").is_ok_and(|w| w.contains("will not run")));
    }

    #[test]
    fn claude_codes_33_events_are_each_fired_or_warned_about() {
        let path =
            concat!(env!("CARGO_MANIFEST_DIR"), "/../spine-cli/tests/fixtures/claude-code-2.1.328/hook-schema.json");
        let schema: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(path).expect("schema")).expect("json");
        let mut recorded: Vec<&str> =
            schema["events"].as_array().expect("events").iter().filter_map(|e| e.as_str()).collect();
        let mut known: Vec<&str> =
            HookEventName::ALL.iter().map(|e| e.as_str()).chain(CLAUDE_ONLY.iter().map(|(n, _)| *n)).collect();
        recorded.sort_unstable();
        known.sort_unstable();
        assert_eq!(known, recorded);
        assert_eq!(recorded.len(), 33);
        assert!(unsupported_event("TeammateIdle").is_some());
        assert!(unsupported_event("SubagentStop").is_none(), "spine fires SubagentStop");
    }
}
