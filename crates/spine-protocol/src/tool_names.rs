//! Claude Code's renamed tools: a tool's former name still names it wherever a user or a model
//! may have written it (Claude Code 2.x renamed `Task` to `Agent`).
//!
//! Contract: one table ([`RENAMED`]) and one rule — two names name the same tool when their
//! current names are equal ([`same_tool`]); a tool is offered, run, traced and shown to hooks
//! under its current name only. The places that apply the rule:
//! - the runner: a model's call of a former name runs as a call of the current name
//!   (spine-core's `runner/call.rs`), so hooks, rules, the trace and the result see `Agent`;
//! - the registry (spine-core's `ToolRegistry::lookup`): `--tools Task` or an assignment's
//!   allowed tools `["Task"]` still name the tool;
//! - visible-tool lists (spine-core's `Visibility::allows`) and an agent definition's `tools` /
//!   `disallowedTools`;
//! - permission rules and hook `if` rules: `Task(reviewer)` matches an `Agent` call;
//! - hook matchers of tool events: a matcher `Task` matches an `Agent` call, whose input's
//!   `tool_name` stays `Agent` (the hook engine).
//!
//! Plain vocabulary, here so that settings and the engine share it; spine-core re-exports it
//! as `spine_core::tool_names`.

/// Renamed tools: `(former name, current name)`.
pub const RENAMED: &[(&str, &str)] = &[("Task", "Agent")];

/// The current name of the tool `name` names: `Agent` for `Task`, else `name` itself.
pub fn current_name(name: &str) -> &str {
    RENAMED.iter().find(|(former, _)| *former == name).map_or(name, |(_, current)| current)
}

/// The former names of the tool whose current name is `name` (`Task` for `Agent`).
pub fn former_names(name: &str) -> impl Iterator<Item = &'static str> + '_ {
    RENAMED.iter().filter(move |(_, current)| *current == name).map(|(former, _)| *former)
}

/// Every name of the tool `name` names, `name` first: `Agent, Task` for either of them.
pub fn names_of<'a>(name: &'a str) -> impl Iterator<Item = &'a str> + 'a {
    let current = current_name(name);
    let formers = former_names(current).filter(move |former| *former != name).map(|former| -> &'a str { former });
    std::iter::once(name).chain((current != name).then_some(current)).chain(formers)
}

/// Whether `a` and `b` name the same tool.
pub fn same_tool(a: &str, b: &str) -> bool {
    current_name(a) == current_name(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn task_is_the_former_name_of_agent() {
        assert_eq!(current_name("Task"), "Agent");
        assert_eq!(current_name("Agent"), "Agent");
        assert_eq!(current_name("Bash"), "Bash");
        assert_eq!(former_names("Agent").collect::<Vec<_>>(), ["Task"]);
        assert!(former_names("Task").next().is_none(), "only a current name has former ones");
    }

    #[test]
    fn every_name_of_a_renamed_tool_names_it_and_others_name_only_themselves() {
        assert_eq!(names_of("Agent").collect::<Vec<_>>(), ["Agent", "Task"]);
        assert_eq!(names_of("Task").collect::<Vec<_>>(), ["Task", "Agent"]);
        assert_eq!(names_of("Read").collect::<Vec<_>>(), ["Read"]);
        assert!(same_tool("Task", "Agent") && same_tool("Agent", "Task") && same_tool("Agent", "Agent"));
        assert!(!same_tool("Task", "Bash"));
    }
}
