//! Event names in settings: the ones spine fires (its `HookEventName`), the ones Claude Code
//! has and spine does not fire (skipped with a warning), and typos (errors with a suggestion).

use spine_protocol::hook::HookEventName;

/// Claude Code events spine does not fire, with why.
const CLAUDE_ONLY: &[(&str, &str)] = &[
    ("Setup", "spine has no --init/--maintenance phase"),
    ("InstructionsLoaded", "spine does not load CLAUDE.md files"),
    ("UserPromptExpansion", "spine has no slash commands"),
    ("MessageDisplay", "spine does not render assistant messages"),
    ("PermissionDenied", "spine has no auto-mode classifier"),
    ("PostToolBatch", "spine has no per-batch hook (use PostToolUse)"),
    ("TaskCreated", "spine has no task tools"),
    ("TaskCompleted", "spine has no task tools"),
    ("StopFailure", "spine reports model errors as a failed run"),
    ("TeammateIdle", "spine has no agent teams"),
    ("ConfigChange", "spine reads settings once per run"),
    ("CwdChanged", "spine's working directory does not change during a run"),
    (
        "DirectoryAdded",
        "spine adds directories only before a run starts (--add-dir, additionalDirectories), never during one",
    ),
    ("FileChanged", "spine does not watch files"),
    ("WorktreeCreate", "spine does not create worktrees"),
    ("WorktreeRemove", "spine does not create worktrees"),
    ("Elicitation", "spine does not forward MCP elicitations"),
    ("ElicitationResult", "spine does not forward MCP elicitations"),
];

/// Why a Claude Code event is not fired by spine, or `None` when the name is not one.
pub fn unsupported_event(name: &str) -> Option<String> {
    CLAUDE_ONLY
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(n, why)| format!("spine does not fire the Claude Code event `{n}` ({why})"))
}

/// The error text for a name that is no event at all, with the nearest known name.
pub(crate) fn unknown_event_reason(name: &str) -> String {
    let known = HookEventName::ALL.iter().map(|e| e.as_str()).chain(CLAUDE_ONLY.iter().map(|(n, _)| *n));
    let best = known
        .map(|k| (distance(&name.to_ascii_lowercase(), &k.to_ascii_lowercase()), k))
        .min_by_key(|(d, _)| *d)
        .filter(|(d, _)| *d <= 3);
    match best {
        Some((_, k)) => format!("unknown hook event `{name}` (did you mean `{k}`?)"),
        None => {
            let names: Vec<&str> = HookEventName::ALL.iter().map(|e| e.as_str()).collect();
            format!("unknown hook event `{name}` (spine fires {})", names.join(", "))
        }
    }
}

/// Levenshtein distance, for suggestions.
fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != *cb)).min(row[j] + 1).min(cur + 1);
            prev = cur;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typos_get_the_nearest_event_name() {
        assert!(unknown_event_reason("PreToolUsee").contains("did you mean `PreToolUse`"));
        assert!(unknown_event_reason("pretooluse").contains("did you mean `PreToolUse`"));
        assert!(unknown_event_reason("Banana").contains("spine fires SessionStart"));
    }

    #[test]
    fn claude_only_events_are_recognised() {
        assert!(unsupported_event("TeammateIdle").is_some());
        assert!(unsupported_event("SubagentStop").is_none(), "spine fires SubagentStop");
        assert!(unsupported_event("PreToolUse").is_none());
    }
}
