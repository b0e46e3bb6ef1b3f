//! Custom slash commands, as in Claude Code: Markdown files in `.claude/commands/` and
//! `.spine/commands/` of the project and of the user (`~/.claude/commands/`,
//! `$SPINE_HOME/commands/`). The command's name is the file's name without `.md`; files in
//! subfolders keep their plain name and show the folder in `/help` (`(project:frontend)`).
//! A project command replaces a user command of the same name; in one scope `.spine/` replaces
//! `.claude/`.
//!
//! The file may open with front matter: `description`, `argument-hint`, `allowed-tools` (a
//! rule or a list of rules, Claude Code's syntax) and `model` (shown, not applied). The body is
//! the prompt, expanded when the command is typed:
//!
//! - `$ARGUMENTS` is everything after the command's name; `$1`, `$2`… are its words (quotes
//!   group words, as in a shell). Without `$ARGUMENTS` or `$N` in the body, typed arguments are
//!   appended as `ARGUMENTS: …`.
//! - `@path` (after a space or at the start of a line) adds the file's content after the prompt.
//!   Files are read through the workspace boundary (a path out of every root, or through a
//!   symlink that leads out, is refused), and a `Read` deny rule that matches the file refuses
//!   it too: a command cannot read what the model may not.
//!
//! `allowed-tools` become allow rules for that prompt only. Those of a project's command apply
//! only when the project is trusted (as its settings' allow rules); otherwise they are ignored
//! and `/help` says so.
//!
//! The enabled plugins' commands join these ([`super::plugin_commands`]): `/plugin:command`,
//! also `/command` when no other command has that name ([`CustomCommand::alias`], [`find`]).

use std::path::{Path, PathBuf};

use serde::Deserialize;
use spine_core::permission::{PermissionPolicy, PermissionRule};
use spine_core::workspace::Workspace;

/// The most a command or a referenced file may hold.
const MAX_FILE_BYTES: u64 = 256 * 1024;

/// Where a command was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// The user's folders.
    User,
    /// The project's folders.
    Project,
    /// An enabled plugin's commands.
    Plugin,
}

impl Scope {
    fn as_str(self) -> &'static str {
        match self {
            Scope::User => "user",
            Scope::Project => "project",
            Scope::Plugin => "plugin",
        }
    }
}

/// One custom command.
#[derive(Debug, Clone, PartialEq)]
pub struct CustomCommand {
    /// Its name (typed after `/`).
    pub name: String,
    /// `description`, else the body's first line.
    pub description: String,
    /// `argument-hint`.
    pub argument_hint: Option<String>,
    /// `allowed-tools`, as written.
    pub allowed_tools: Vec<String>,
    /// Whether its `allowed-tools` apply (a user command, or a trusted project's).
    pub tools_apply: bool,
    /// The prompt before expansion.
    pub body: String,
    /// The file.
    pub path: PathBuf,
    /// User or project.
    pub scope: Scope,
    /// The subfolder under `commands/`, if any.
    pub namespace: Option<String>,
    /// The plugin that brings it (`name@marketplace`); its name is `<plugin>:<command>`.
    pub plugin: Option<String>,
    /// The other name it answers to: a plugin's command's own name (`command` of
    /// `plugin:command`), when no other command has it.
    pub alias: Option<String>,
}

impl CustomCommand {
    /// The `/help` line's origin: `(project)`, `(user:tools)`, `(plugin guard@market)`.
    pub fn origin(&self) -> String {
        match (&self.plugin, &self.namespace) {
            (Some(plugin), _) => format!("({} {plugin})", self.scope.as_str()),
            (None, Some(ns)) => format!("({}:{ns})", self.scope.as_str()),
            (None, None) => format!("({})", self.scope.as_str()),
        }
    }
}

/// The command typed as `/name`: the one of that name, else the plugin command whose alias it
/// is.
pub fn find<'a>(commands: &'a [CustomCommand], name: &str) -> Option<&'a CustomCommand> {
    commands.iter().find(|c| c.name == name).or_else(|| commands.iter().find(|c| c.alias.as_deref() == Some(name)))
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "kebab-case")]
struct FrontMatter {
    description: Option<String>,
    argument_hint: Option<String>,
    allowed_tools: Option<OneOrMany>,
    #[allow(dead_code)]
    model: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum OneOrMany {
    One(String),
    Many(Vec<String>),
}

impl OneOrMany {
    /// Rules as written: a list, or one string of rules (`Bash(git add:*), Read`) split at
    /// commas and whitespace outside parentheses.
    fn rules(self) -> Vec<String> {
        match self {
            OneOrMany::Many(v) => v.into_iter().map(|r| r.trim().to_owned()).filter(|r| !r.is_empty()).collect(),
            // Commas or whitespace outside parentheses, as skills' `allowed-tools`.
            OneOrMany::One(text) => spine_core::skills::meta::split_rules(&text),
        }
    }
}

/// The folders commands are read from, lowest precedence first.
pub fn command_dirs(project: &Path, spine_home: &Path, user_home: Option<&Path>) -> Vec<(PathBuf, Scope)> {
    let mut dirs = Vec::new();
    if let Some(home) = user_home {
        dirs.push((home.join(".claude").join("commands"), Scope::User));
    }
    dirs.push((spine_home.join("commands"), Scope::User));
    dirs.push((project.join(".claude").join("commands"), Scope::Project));
    dirs.push((project.join(".spine").join("commands"), Scope::Project));
    dirs
}

/// Reads every command of `dirs` (later folders replace earlier commands of the same name).
/// A file that cannot be read or has bad front matter is skipped with a warning naming it.
pub fn load(dirs: &[(PathBuf, Scope)], project_trusted: bool) -> (Vec<CustomCommand>, Vec<String>) {
    let mut commands: Vec<CustomCommand> = Vec::new();
    let mut warnings = Vec::new();
    for (dir, scope) in dirs {
        let mut files = Vec::new();
        collect(dir, 0, &mut files);
        files.sort();
        for file in files {
            match read_command(dir, &file, *scope, project_trusted) {
                Ok(command) => {
                    commands.retain(|c| c.name != command.name);
                    commands.push(command);
                }
                Err(e) => warnings.push(format!("custom command {} skipped: {e}", file.display())),
            }
        }
    }
    commands.sort_by(|a, b| a.name.cmp(&b.name));
    (commands, warnings)
}

/// The `.md` files under `dir`, two folder levels deep at most.
pub(super) fn collect(dir: &Path, depth: usize, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        let Ok(meta) = std::fs::metadata(&path) else { continue };
        if meta.is_dir() && depth < 2 {
            collect(&path, depth + 1, out);
        } else if meta.is_file() && path.extension().is_some_and(|e| e == "md") {
            out.push(path);
        }
    }
}

fn read_command(root: &Path, file: &Path, scope: Scope, project_trusted: bool) -> Result<CustomCommand, String> {
    let text = read_text(file)?;
    command_from_text(&text, root, file, scope, project_trusted)
}

/// A command file's text (refused when larger than the limit).
pub(super) fn read_text(file: &Path) -> Result<String, String> {
    let size = std::fs::metadata(file).map_err(|e| e.to_string())?.len();
    if size > MAX_FILE_BYTES {
        return Err(format!("larger than {} KB", MAX_FILE_BYTES / 1024));
    }
    std::fs::read_to_string(file).map_err(|e| e.to_string())
}

/// The command of `file` (under the commands folder `root`) from its `text`.
pub(super) fn command_from_text(
    text: &str,
    root: &Path,
    file: &Path,
    scope: Scope,
    project_trusted: bool,
) -> Result<CustomCommand, String> {
    let (meta, body) = spine_core::front_matter::parse::<FrontMatter>(text)?;
    let name = file.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    if name.is_empty() || name.contains(char::is_whitespace) {
        return Err("the file name is not a command name".to_owned());
    }
    let namespace = file
        .parent()
        .and_then(|p| p.strip_prefix(root).ok())
        .map(|p| p.to_string_lossy().replace('/', ":"))
        .filter(|ns| !ns.is_empty());
    let allowed_tools = meta.allowed_tools.map(OneOrMany::rules).unwrap_or_default();
    for rule in &allowed_tools {
        PermissionRule::parse(rule).map_err(|e| format!("allowed-tools: `{rule}`: {e}"))?;
    }
    let description = meta
        .description
        .unwrap_or_else(|| body.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or_default().to_owned());
    Ok(CustomCommand {
        name,
        description,
        argument_hint: meta.argument_hint,
        allowed_tools,
        tools_apply: scope != Scope::Project || project_trusted,
        body: body.to_owned(),
        path: file.to_path_buf(),
        scope,
        namespace,
        plugin: None,
        alias: None,
    })
}

/// Expands `command` with the typed `arguments`: placeholders, then `@file` references (read
/// through `workspace` and refused by `policy`'s Read deny rules).
pub fn expand(
    command: &CustomCommand,
    arguments: &str,
    workspace: &Workspace,
    cwd: &Path,
    policy: &PermissionPolicy,
) -> Result<String, String> {
    let words = shlex::split(arguments).ok_or_else(|| format!("unbalanced quotes in `{arguments}`"))?;
    let mut prompt = substitute(&command.body, arguments.trim(), &words);
    let files = attach_files(&prompt, workspace, cwd, policy)?;
    if !files.is_empty() {
        prompt = format!("{}\n\n{files}", prompt.trim_end());
    }
    Ok(prompt.trim_end().to_owned())
}

/// What UserPromptExpansion hooks receive for `command` typed with `arguments`: the command
/// line in `prompt` (as Claude Code sends it, under the command's full name), and where the
/// command comes from (`projectSettings`, `userSettings` or `plugin`, Claude Code's names).
pub fn expansion(command: &CustomCommand, arguments: &str) -> spine_protocol::hook::UserPromptExpansionInput {
    let arguments = arguments.trim();
    let typed =
        if arguments.is_empty() { format!("/{}", command.name) } else { format!("/{} {arguments}", command.name) };
    spine_protocol::hook::UserPromptExpansionInput {
        expansion_type: "slash_command".to_owned(),
        command_name: command.name.clone(),
        command_args: arguments.to_owned(),
        command_source: Some(
            match command.scope {
                Scope::Project => "projectSettings",
                Scope::User => "userSettings",
                Scope::Plugin => "plugin",
            }
            .to_owned(),
        ),
        prompt: typed,
    }
}

/// `$ARGUMENTS` and `$1`…`$9` replaced; arguments appended when the body names none.
pub fn substitute(body: &str, arguments: &str, words: &[String]) -> String {
    let mut out = String::with_capacity(body.len() + arguments.len());
    let mut used = false;
    let mut rest = body;
    while let Some(i) = rest.find('$') {
        out.push_str(&rest[..i]);
        let after = &rest[i + 1..];
        if let Some(tail) = after.strip_prefix("ARGUMENTS") {
            out.push_str(arguments);
            used = true;
            rest = tail;
        } else if let Some(d) = after.chars().next().filter(char::is_ascii_digit).filter(|d| *d != '0') {
            let n = d.to_digit(10).unwrap_or(0) as usize;
            out.push_str(words.get(n - 1).map(String::as_str).unwrap_or_default());
            used = true;
            rest = &after[1..];
        } else {
            out.push('$');
            rest = after;
        }
    }
    out.push_str(rest);
    if !used && !arguments.is_empty() {
        out = format!("{}\n\nARGUMENTS: {arguments}", out.trim_end());
    }
    out
}

/// The `@path` references of `text` (at the start of a line or after whitespace), each file's
/// content as a fenced block under its path.
fn attach_files(text: &str, workspace: &Workspace, cwd: &Path, policy: &PermissionPolicy) -> Result<String, String> {
    let mut blocks: Vec<String> = Vec::new();
    let mut seen: Vec<String> = Vec::new();
    for reference in file_references(text) {
        if seen.contains(&reference) {
            continue;
        }
        seen.push(reference.clone());
        let resolved = workspace.resolve(&reference, cwd).map_err(|e| format!("@{reference}: {e}"))?;
        if let Some(rule) = policy.read_denied_by(&resolved) {
            return Err(format!("@{reference}: reading it is denied by the rule {rule}"));
        }
        let bytes = workspace.read_file(&resolved).map_err(|e| format!("@{reference}: {e}"))?;
        if bytes.len() as u64 > MAX_FILE_BYTES {
            return Err(format!("@{reference}: larger than {} KB", MAX_FILE_BYTES / 1024));
        }
        let content = String::from_utf8_lossy(&bytes);
        blocks.push(format!("Contents of {reference}:\n```\n{}\n```", content.trim_end()));
    }
    Ok(blocks.join("\n\n"))
}

/// The paths named `@path` in `text`: `@` at the start or after whitespace, then a path of
/// non-space characters (trailing punctuation `.,;:!?)` is not part of it). E-mail addresses
/// (`a@b.c`) are not references.
pub fn file_references(text: &str) -> Vec<String> {
    let mut refs = Vec::new();
    let mut previous = ' ';
    for (i, c) in text.char_indices() {
        if c == '@' && previous.is_whitespace() {
            let rest = &text[i + 1..];
            let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
            let path = rest[..end].trim_end_matches(['.', ',', ';', ':', '!', '?', ')']);
            if !path.is_empty() {
                refs.push(path.to_owned());
            }
        }
        previous = c;
    }
    refs
}

/// The allow rules of `command` for one prompt (none when they do not apply).
pub fn allow_rules(command: &CustomCommand) -> Vec<PermissionRule> {
    if !command.tools_apply {
        return Vec::new();
    }
    command.allowed_tools.iter().filter_map(|r| PermissionRule::parse(r).ok()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(text: &str) -> Vec<String> {
        shlex::split(text).expect("balanced")
    }

    #[test]
    fn arguments_fill_dollar_arguments_and_positional_placeholders() {
        let body = "Fix issue #$1 with priority $2. Context: $ARGUMENTS";
        let args = "123 high \"two words\"";
        assert_eq!(
            substitute(body, args, &words(args)),
            "Fix issue #123 with priority high. Context: 123 high \"two words\""
        );
        assert_eq!(substitute("Say $3.", "a b \"c d\"", &words("a b \"c d\"")), "Say c d.", "quotes group words");
        assert_eq!(substitute("Cost: $5 and $0", "", &[]), "Cost:  and $0", "missing words are empty; $0 stays");
        assert_eq!(substitute("Price in $USD", "", &[]), "Price in $USD");
    }

    #[test]
    fn arguments_are_appended_when_the_body_has_no_placeholder() {
        assert_eq!(
            substitute("Review the diff.\n", "focus on tests", &words("focus on tests")),
            "Review the diff.\n\nARGUMENTS: focus on tests"
        );
        assert_eq!(substitute("Review the diff.", "", &[]), "Review the diff.");
    }

    #[test]
    fn file_references_start_a_word_and_drop_trailing_punctuation() {
        assert_eq!(file_references("Look at @src/main.rs, and @README.md."), vec!["src/main.rs", "README.md"]);
        assert_eq!(file_references("@first line\nmail me at me@example.com"), vec!["first"]);
        assert!(file_references("no refs @ here").is_empty());
    }

    #[test]
    fn allowed_tools_are_a_list_or_one_comma_separated_string_split_outside_parentheses() {
        let one = OneOrMany::One("Bash(git add:*), Bash(git commit:*), Read".into());
        assert_eq!(one.rules(), vec!["Bash(git add:*)", "Bash(git commit:*)", "Read"]);
        let paren = OneOrMany::One("Bash(echo a,b)".into());
        assert_eq!(paren.rules(), vec!["Bash(echo a,b)"]);
        assert_eq!(OneOrMany::Many(vec![" Read ".into()]).rules(), vec!["Read"]);
    }

    #[test]
    fn project_commands_replace_user_commands_and_their_tools_apply_only_when_trusted() {
        let dir = tempfile::tempdir().expect("tempdir");
        let (home, spine_home, project) = (dir.path().join("home"), dir.path().join("spine"), dir.path().join("p"));
        let write = |path: PathBuf, text: &str| {
            std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
            std::fs::write(path, text).expect("write");
        };
        write(home.join(".claude/commands/review.md"), "User review");
        write(home.join(".claude/commands/only-user.md"), "---\nallowed-tools: Bash(ls:*)\n---\nList");
        write(project.join(".claude/commands/review.md"), "---\ndescription: Project review\n---\nReview $ARGUMENTS");
        write(project.join(".spine/commands/ship.md"), "---\nallowed-tools: [\"Bash(git push:*)\"]\n---\nShip it");
        write(project.join(".claude/commands/frontend/component.md"), "Make a component");
        write(project.join(".claude/commands/bad.md"), "---\nallowed-tools: Bash(\n---\nx");
        let dirs = command_dirs(&project, &spine_home, Some(&home));
        let (commands, warnings) = load(&dirs, false);
        let names: Vec<&str> = commands.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, vec!["component", "only-user", "review", "ship"]);
        let review = commands.iter().find(|c| c.name == "review").expect("review");
        assert_eq!((review.description.as_str(), review.scope), ("Project review", Scope::Project));
        let component = commands.iter().find(|c| c.name == "component").expect("component");
        assert_eq!(component.origin(), "(project:frontend)");
        assert_eq!(component.description, "Make a component", "the first line without a description");
        let ship = commands.iter().find(|c| c.name == "ship").expect("ship");
        assert!(allow_rules(ship).is_empty(), "an untrusted project's allowed-tools do not apply");
        let only_user = commands.iter().find(|c| c.name == "only-user").expect("user");
        assert_eq!(allow_rules(only_user).len(), 1, "a user command's allowed-tools apply");
        assert!(
            warnings.len() == 1 && warnings[0].contains("bad.md") && warnings[0].contains("allowed-tools"),
            "{warnings:?}"
        );
        let (trusted, _) = load(&dirs, true);
        let ship = trusted.iter().find(|c| c.name == "ship").expect("ship");
        assert_eq!(allow_rules(ship).len(), 1);
    }
}
