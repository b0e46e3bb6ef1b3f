//! The tool sets a run may offer: every spine tool (the default), or only the tools Claude Code
//! 2.1 has, for agents written against Claude Code.
//!
//! Contract: [`ToolSetName::offers`] says whether a tool of that name belongs to the set. The
//! `claude` set is the names of [`CLAUDE_CODE_TOOLS`] (recorded from Claude Code 2.1.328, in
//! `crates/spine-cli/tests/fixtures/claude-code-2.1.328/tools-offered.json`; a test compares),
//! their former names ([`crate::tool_names`]) and MCP tools (`mcp__<server>__<tool>`, which
//! Claude Code offers too). A tool outside the set is left out of the run's registry by the
//! assembler, so the model is not offered it and a call of it is an `unknown_tool`.
//!
//! Plain vocabulary, here so that settings and the engine share it; spine-core re-exports it
//! as `spine_core::tool_set`.

use std::fmt;
use std::str::FromStr;

/// The tools Claude Code 2.1.328 offers in `-p` mode, loaded and deferred (its internal
/// `DeferredToolPlaceholder` left out).
pub const CLAUDE_CODE_TOOLS: &[&str] = &[
    "Agent",
    "Bash",
    "Edit",
    "Glob",
    "Grep",
    "ListAgents",
    "Read",
    "ReportFindings",
    "ScheduleWakeup",
    "Skill",
    "ToolSearch",
    "Workflow",
    "Write",
    "CronCreate",
    "CronDelete",
    "CronList",
    "EnterWorktree",
    "ExitWorktree",
    "Monitor",
    "NotebookEdit",
    "SendMessage",
    "TaskStop",
    "WebFetch",
    "WebSearch",
];

/// Which tools a run offers (`--tool-set`, the `tool_set` setting).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ToolSetName {
    /// Every tool: Claude Code's and spine's own (command runs, processes, memory,
    /// `calculator`).
    #[default]
    Spine,
    /// Only the tools Claude Code has, and MCP tools.
    Claude,
}

impl ToolSetName {
    /// Every name, as written in settings and on the command line.
    pub const NAMES: [&'static str; 2] = ["spine", "claude"];

    /// Whether the set holds the tool named `name`.
    pub fn offers(self, name: &str) -> bool {
        match self {
            ToolSetName::Spine => true,
            ToolSetName::Claude => {
                CLAUDE_CODE_TOOLS.contains(&crate::tool_names::current_name(name)) || name.starts_with("mcp__")
            }
        }
    }

    /// The name as written (`spine`, `claude`).
    pub fn as_str(self) -> &'static str {
        match self {
            ToolSetName::Spine => "spine",
            ToolSetName::Claude => "claude",
        }
    }
}

impl fmt::Display for ToolSetName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for ToolSetName {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "spine" => Ok(ToolSetName::Spine),
            "claude" => Ok(ToolSetName::Claude),
            other => Err(format!("unknown tool set `{other}` (expected one of: {})", Self::NAMES.join(", "))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_claude_set_is_claude_codes_tools_their_former_names_and_mcp_tools() {
        let claude = ToolSetName::Claude;
        for name in ["Read", "Write", "Edit", "Glob", "Grep", "Bash", "Agent", "Task", "WebFetch", "mcp__srv__echo"] {
            assert!(claude.offers(name), "{name}");
        }
        for name in ["exec_command", "write_stdin", "process_exec", "memory_store", "calculator", "command_run_list"] {
            assert!(!claude.offers(name), "{name}");
            assert!(ToolSetName::Spine.offers(name), "{name}");
        }
    }

    #[test]
    fn the_claude_set_is_the_one_claude_code_2_1_328_offers() {
        let path =
            concat!(env!("CARGO_MANIFEST_DIR"), "/../spine-cli/tests/fixtures/claude-code-2.1.328/tools-offered.json");
        let recorded: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(path).expect("the recording")).expect("JSON");
        let mut names: Vec<&str> = ["tools", "deferred"]
            .iter()
            .flat_map(|k| recorded[k].as_array().into_iter().flatten())
            .filter_map(serde_json::Value::as_str)
            .filter(|n| *n != "DeferredToolPlaceholder")
            .collect();
        let mut ours = CLAUDE_CODE_TOOLS.to_vec();
        names.sort_unstable();
        ours.sort_unstable();
        assert_eq!(ours, names);
    }

    #[test]
    fn tool_set_names_parse_and_print() {
        for name in ToolSetName::NAMES {
            assert_eq!(name.parse::<ToolSetName>().map(|s| s.to_string()).as_deref(), Ok(name));
        }
        assert!("all".parse::<ToolSetName>().is_err_and(|e| e.contains("spine, claude")));
    }
}
