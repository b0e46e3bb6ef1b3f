//! Slash commands of an interactive session: a line that starts with `/` and a name. The
//! built-in ones are [`Builtin`]; any other name is looked up among the custom commands.
//! A line starting with `/` followed by a space or another `/` (a path, `//comment`) is a
//! prompt, not a command.

/// A built-in command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Builtin {
    /// `/help`: the commands.
    Help,
    /// `/clear`: a new session (SessionEnd `clear`, then SessionStart `clear` on the next prompt).
    Clear,
    /// `/compact [instructions]`: summarise the conversation now.
    Compact(Option<String>),
    /// `/model [spec]`: show or change the model.
    Model(Option<String>),
    /// `/cost`: tokens and cost so far.
    Cost,
    /// `/permissions [forget N | remove RULE]`: the rules in force and what approvals remember,
    /// or forget one of those (the rest of the line).
    Permissions(Option<String>),
    /// `/hooks`: the configured hooks.
    Hooks,
    /// `/resume [id]`: continue another session of this project.
    Resume(Option<String>),
    /// `/exit` (or `/quit`).
    Exit,
}

/// What a line is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Line {
    /// A prompt for the model.
    Prompt(String),
    /// A built-in command.
    Builtin(Builtin),
    /// Another command name, with the rest of the line.
    Other {
        /// The name, without `/`.
        name: String,
        /// Everything after the name, trimmed.
        arguments: String,
    },
}

/// What a typed line is.
pub fn parse(line: &str) -> Line {
    let trimmed = line.trim();
    let Some(rest) = trimmed.strip_prefix('/') else { return Line::Prompt(line.to_owned()) };
    let (name, arguments) = rest.split_once(char::is_whitespace).map_or((rest, ""), |(n, a)| (n, a.trim()));
    if name.is_empty() || name.contains('/') {
        return Line::Prompt(line.to_owned());
    }
    let argument = (!arguments.is_empty()).then(|| arguments.to_owned());
    Line::Builtin(match name {
        "help" | "?" => Builtin::Help,
        "clear" | "reset" | "new" => Builtin::Clear,
        "compact" => Builtin::Compact(argument),
        "model" => Builtin::Model(argument),
        "cost" | "usage" => Builtin::Cost,
        "permissions" | "allowed-tools" => Builtin::Permissions(argument),
        "hooks" => Builtin::Hooks,
        "resume" => Builtin::Resume(argument),
        "exit" | "quit" => Builtin::Exit,
        _ => return Line::Other { name: name.to_owned(), arguments: arguments.to_owned() },
    })
}

/// The built-in commands for `/help`.
pub const HELP: &[(&str, &str)] = &[
    ("/help", "this list"),
    ("/clear", "start a new session (the current one stays in `spine sessions list`)"),
    ("/compact [instructions]", "summarise the conversation now, keeping what the instructions ask for"),
    ("/model [spec]", "show the model, or switch to another (anthropic:…, openai:…, scripted:…)"),
    ("/cost", "tokens and cost of this session so far"),
    ("/permissions", "the permission mode, the rules in force and what approvals remember"),
    ("/permissions forget N", "forget what an \"always\" answer remembered (also: remove RULE)"),
    ("/hooks", "the configured hooks"),
    ("/resume [id]", "continue another session of this project (a list without an id)"),
    ("/exit", "leave (also Ctrl-D, or Ctrl-C twice on an empty line)"),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_slash_and_a_name_is_a_command_and_anything_else_a_prompt() {
        assert_eq!(parse("/help"), Line::Builtin(Builtin::Help));
        assert_eq!(
            parse("  /compact keep the API decisions "),
            Line::Builtin(Builtin::Compact(Some("keep the API decisions".into())))
        );
        assert_eq!(parse("/compact"), Line::Builtin(Builtin::Compact(None)));
        assert_eq!(
            parse("/model anthropic:claude-sonnet-5"),
            Line::Builtin(Builtin::Model(Some("anthropic:claude-sonnet-5".into())))
        );
        assert_eq!(parse("/quit"), Line::Builtin(Builtin::Exit));
        assert_eq!(parse("/permissions"), Line::Builtin(Builtin::Permissions(None)));
        assert_eq!(parse("/permissions forget 2"), Line::Builtin(Builtin::Permissions(Some("forget 2".into()))));
        assert_eq!(
            parse("/fix-issue 123 high"),
            Line::Other { name: "fix-issue".into(), arguments: "123 high".into() }
        );
        assert_eq!(parse("/usr/bin is where?"), Line::Prompt("/usr/bin is where?".into()), "a path is a prompt");
        assert_eq!(parse("/ alone"), Line::Prompt("/ alone".into()));
        assert_eq!(parse("explain /help"), Line::Prompt("explain /help".into()));
    }
}
