//! How a tool call looks to hooks (docs/hooks.md, "Every shell tool is Bash to hooks").
//!
//! A guard on `Bash` must hold whichever tool the model uses to run a command. So every tool
//! that runs a command line ([`Tool::command_argument`]: `Bash`, `exec_command`,
//! `process_exec`, and `write_stdin`, whose text goes to a running program's input) is `Bash` to
//! hooks, as Codex reports its own exec tool:
//! - `tool_name` is `Bash`, `tool_input.command` holds the command line (for `write_stdin`, the
//!   text written; its own arguments stay beside it), `spine_tool_name` names the real tool;
//! - matchers see `Bash`, and a matcher naming the real tool matches too
//!   ([`HookEvent::matcher_alias`]); `if` rules see `Bash` and the command;
//! - a rewrite (`updatedInput`) whose `command` changed goes back to the tool's own argument
//!   ([`unview`]) before it is re-validated against the tool's schema.
//!
//! [`Tool::command_argument`]: crate::tool::Tool::command_argument
//! [`HookEvent::matcher_alias`]: spine_protocol::hook::HookEvent::matcher_alias

use serde_json::{Map, Value};

/// The name every command-running tool has for hooks.
pub const SHELL_TOOL: &str = "Bash";

/// A tool call as hooks see it.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolView {
    /// `Bash` for every tool that runs a command line, else the tool's name.
    pub tool_name: String,
    /// The arguments; with `command` holding the command line for shell tools.
    pub tool_input: Value,
    /// The tool's own name when it differs from `tool_name`.
    pub spine_tool_name: Option<String>,
}

/// The view of a call of tool `name` whose command line (if any) is argument `command_argument`.
pub fn view(name: &str, command_argument: Option<&str>, args: &Map<String, Value>) -> ToolView {
    match command_argument {
        Some(key) if name != SHELL_TOOL => {
            let mut input = args.clone();
            if key != "command" {
                let line = args.get(key).cloned().unwrap_or_else(|| Value::String(String::new()));
                input.insert("command".to_owned(), line);
            }
            ToolView {
                tool_name: SHELL_TOOL.to_owned(),
                tool_input: Value::Object(input),
                spine_tool_name: Some(name.to_owned()),
            }
        }
        _ => ToolView { tool_name: name.to_owned(), tool_input: Value::Object(args.clone()), spine_tool_name: None },
    }
}

/// Takes a hook's replacement arguments back to the tool's own: for a tool whose command line
/// is not called `command`, a changed `command` replaces that argument; an unchanged one is
/// dropped (the tool's own argument, possibly rewritten, stands).
pub fn unview(command_argument: Option<&str>, before: &Map<String, Value>, update: &mut Map<String, Value>) {
    let Some(key) = command_argument.filter(|k| *k != "command") else { return };
    let Some(command) = update.remove("command") else { return };
    if before.get(key) != Some(&command) {
        update.insert(key.to_owned(), command);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn args(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn shell_tools_are_bash_with_the_command_line_in_command() {
        let exec = view("exec_command", Some("command"), &args(json!({"command": "rm -rf x", "pty": true})));
        assert_eq!(exec.tool_name, "Bash");
        assert_eq!(exec.tool_input, json!({"command": "rm -rf x", "pty": true}));
        assert_eq!(exec.spine_tool_name.as_deref(), Some("exec_command"));
        let stdin = view("write_stdin", Some("text"), &args(json!({"command_run_id": "r1", "text": "rm x\n"})));
        assert_eq!(stdin.tool_input["command"], "rm x\n");
        assert_eq!(stdin.tool_input["text"], "rm x\n");
        let bash = view("Bash", Some("command"), &args(json!({"command": "ls"})));
        assert_eq!((bash.tool_name.as_str(), bash.spine_tool_name), ("Bash", None));
        let read = view("Read", None, &args(json!({"file_path": "/a"})));
        assert_eq!((read.tool_name.as_str(), read.spine_tool_name), ("Read", None));
    }

    #[test]
    fn a_rewritten_command_goes_back_to_the_tools_own_argument() {
        let before = args(json!({"command_run_id": "r1", "text": "rm x\n"}));
        let mut changed = args(json!({"command_run_id": "r1", "text": "rm x\n", "command": "echo safe\n"}));
        unview(Some("text"), &before, &mut changed);
        assert_eq!(Value::Object(changed), json!({"command_run_id": "r1", "text": "echo safe\n"}));
        let mut text_only = args(json!({"command_run_id": "r1", "text": "ls\n", "command": "rm x\n"}));
        unview(Some("text"), &before, &mut text_only);
        assert_eq!(Value::Object(text_only), json!({"command_run_id": "r1", "text": "ls\n"}));
        let mut exec = args(json!({"command": "ls"}));
        unview(Some("command"), &args(json!({"command": "rm"})), &mut exec);
        assert_eq!(Value::Object(exec), json!({"command": "ls"}));
    }
}
