//! Agent definitions: the agent types an `Agent` call may start, from markdown files with YAML
//! front matter, as Claude Code reads them, and from `--agents` ([`crate::agent_flags`]).
//!
//! ```markdown
//! ---
//! name: reviewer
//! description: Reviews a diff for bugs
//! tools: Read, Grep, Glob        # or a YAML list; absent: the parent's tools
//! disallowedTools: Bash          # removed even when `tools` allows them
//! model: inherit                 # or a model spec (sonnet, anthropic:…, scripted:FILE)
//! maxTurns: 8                    # absent: the parent's limit (max_turns too)
//! permissionMode: plan           # applied only when stricter than the parent's
//! skills: [notes]                # preloaded into its prompt
//! mcpServers: [github]           # configured servers whose tools it gets besides `tools`,
//!                                # or inline ones of its own: [{own: {command: ./srv}}]
//! effort: high                   # the reasoning effort of its model requests
//! background: true               # the `Agent` call answers at once; a notification follows
//! hooks:                         # run after the session's, while it runs (Stop = SubagentStop)
//!   PreToolUse: [{matcher: Bash, hooks: [{type: command, command: ./check.sh}]}]
//! ---
//! You review diffs. …            # the body: the subagent's prompt
//! ```
//!
//! The fields, and which ones are applied, warned about or ignored: [`crate::agent_def`].
//!
//! Sources, highest precedence first (the first definition of a name wins): `--agents`, then
//! the directories `<project>/.spine/agents/`, `<project>/.claude/agents/` (project), the
//! settings' `subagents.directories` (later sources first), `$SPINE_HOME/agents/`,
//! `~/.claude/agents/` (user), then the enabled plugins' agents, named `<plugin>:<name>`
//! ([`crate::agent_plugins`]), then the built-in `general-purpose`. A file that cannot be used
//! is skipped with a warning naming the file and the field.
//!
//! Trust: a definition only narrows what the agent may do — its tools are a subset of the
//! parent's, its mode applies only when stricter, and the parent's hooks and permission rules
//! (from the trusted sources only) govern every call it makes — so the project's own agent
//! directories are read in an untrusted project too. The fields that run code, `hooks` and
//! inline `mcpServers`, are not applied for a definition of an untrusted project
//! ([`crate::agent_scope`]).
//! `subagents.directories` from an untrusted project's settings is withheld by spine-settings
//! (it could point anywhere on disk).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::{Map, Value};
use spine_core::hooks::HookRegistry;
use spine_core::model::ModelClient;
use spine_core::subagents::{DEFAULT_MAX_CONCURRENT, DEFAULT_MAX_DEPTH, SubagentDefinition, Subagents};
use spine_settings::Settings;

pub use crate::agent_def::AgentFile;
use crate::agent_def::{DefinitionError, Origin, read_fields};
use crate::agent_flags::{AgentFlagError, parse_agents_flag};
use crate::agent_scope::{self, Scope};

/// The largest definition file read (bigger ones are skipped with a warning).
pub(crate) const MAX_FILE_BYTES: u64 = 1024 * 1024;

/// The directories agent definitions are read from, highest precedence first (see the module
/// documentation). `home` is the user's home directory.
pub fn agent_directories(settings: &Settings, project: &Path, spine_home: &Path, home: Option<&Path>) -> Vec<PathBuf> {
    let mut dirs = vec![project.join(".spine").join("agents"), project.join(".claude").join("agents")];
    dirs.extend(settings.subagent_directories.iter().rev().map(|(d, _)| resolve(project, d)));
    dirs.extend(user_agent_directories(spine_home, home));
    dirs
}

/// The user's agent directories: `$SPINE_HOME/agents`, `~/.claude/agents`.
pub fn user_agent_directories(spine_home: &Path, home: Option<&Path>) -> Vec<PathBuf> {
    let mut dirs = vec![spine_home.join("agents")];
    if let Some(home) = home {
        dirs.push(home.join(".claude").join("agents"));
    }
    dirs
}

fn resolve(project: &Path, dir: &str) -> PathBuf {
    let path = Path::new(dir);
    if path.is_absolute() { path.to_path_buf() } else { project.join(path) }
}

/// Reads every definition of `dirs` (highest precedence first); the warnings name the file
/// and the field of each skipped file, each field not applied and each unknown key.
pub fn read_agent_files(dirs: &[PathBuf]) -> (Vec<AgentFile>, Vec<String>) {
    let mut files: Vec<AgentFile> = Vec::new();
    let mut warnings = Vec::new();
    for dir in dirs {
        let Ok(entries) = std::fs::read_dir(dir) else { continue };
        let mut paths: Vec<PathBuf> = entries
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|e| e == "md") && p.is_file())
            .collect();
        paths.sort();
        for path in paths {
            match parse_agent_file(&path) {
                Ok((file, _)) if files.iter().any(|f| f.name == file.name) => {}
                Ok((file, notes)) => {
                    warnings.extend(notes.into_iter().map(|n| format!("agent definition {}: {n}", path.display())));
                    files.push(file);
                }
                Err(e) => warnings.push(format!("agent definition {} skipped: {e}", path.display())),
            }
        }
    }
    (files, warnings)
}

/// Parses one definition file, with its warnings; the error names the field at fault.
pub fn parse_agent_file(path: &Path) -> Result<(AgentFile, Vec<String>), String> {
    let size = std::fs::metadata(path).map_err(|e| e.to_string())?.len();
    if size > MAX_FILE_BYTES {
        return Err(format!("larger than {MAX_FILE_BYTES} bytes"));
    }
    let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
    parse_agent_text(&text, path)
}

/// Parses a definition's text (`source` is recorded, not read), with its warnings.
pub fn parse_agent_text(text: &str, source: &Path) -> Result<(AgentFile, Vec<String>), String> {
    let (fields, body) = front_matter(text)?;
    read_fields(&fields, Origin::File { body, path: source }).map_err(|e| e.to_string())
}

/// A definition's front matter fields and its body.
pub(crate) fn front_matter(text: &str) -> Result<(Map<String, Value>, &str), String> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let rest = text
        .strip_prefix("---\n")
        .or_else(|| text.strip_prefix("---\r\n"))
        .ok_or("no front matter (the file must open with `---`)")?;
    let end = rest.find("\n---").ok_or("front matter has no closing `---`")?;
    let yaml = &rest[..end];
    let body = rest[end + 4..].split_once('\n').map_or("", |(_, b)| b);
    let fields: Map<String, Value> = match yaml.trim() {
        "" => Map::new(),
        _ => serde_saphyr::from_str(yaml).map_err(|e| format!("invalid front matter: {e}"))?,
    };
    Ok((fields, body))
}

/// The agent types of a session, as [`subagents`] reads them.
pub struct AgentTypes {
    /// The types and the limits of delegation.
    pub subagents: Subagents,
    /// Files skipped, fields not applied, unknown keys, unresolved names.
    pub warnings: Vec<String>,
    /// The hooks of the type the main session runs as ([`Scope::main_agent`]), when it has any
    /// that run: they go after the session's hooks.
    pub main_hooks: Option<Arc<HookRegistry>>,
}

/// The definition files of a run, read and parsed ([`AgentFiles::read`]): those of
/// [`agent_directories`], then the enabled plugins' (`agents/`).
#[derive(Debug, Default)]
pub struct AgentFiles {
    /// The definitions, highest precedence first.
    pub files: Vec<AgentFile>,
    /// The files skipped, the fields not applied, the unknown keys.
    pub warnings: Vec<String>,
}

impl AgentFiles {
    /// Reads the definitions of `project`'s, `spine_home`'s and `home`'s agent directories
    /// and of the enabled plugins.
    pub fn read(settings: &Settings, project: &Path, spine_home: &Path, home: Option<&Path>) -> AgentFiles {
        let dirs = agent_directories(settings, project, spine_home, home);
        let (mut files, mut warnings) = read_agent_files(&dirs);
        let (plugin_files, plugin_warnings) =
            crate::agent_plugins::plugin_agent_files(&settings.plugins, project, &settings.parse_memo);
        settings.parse_memo.save();
        files.extend(plugin_files);
        warnings.extend(plugin_warnings);
        AgentFiles { files, warnings }
    }
}

/// The agent types of a run: the definitions of `agents_flag` (`--agents`), then the files
/// `read` ([`AgentFiles`]), with their models built (a model that cannot be built skips its
/// definition with a warning) and their hooks, skills and MCP servers resolved against `scope`
/// ([`crate::agent_scope`]: a file whose hooks are invalid is skipped with a warning), then
/// `general-purpose` unless one of them defines it, with the limits of settings `subagents`. A
/// malformed `--agents` (its hooks included) is the only error.
pub fn subagents(
    settings: &Settings,
    agents_flag: Option<&str>,
    read: AgentFiles,
    scope: &Scope<'_>,
) -> Result<AgentTypes, AgentFlagError> {
    let (inline, mut warnings) = agents_flag.map(parse_agents_flag).transpose()?.unwrap_or_default();
    let inline_count = inline.len();
    let AgentFiles { files, warnings: file_warnings } = read;
    warnings.extend(file_warnings);
    let mut definitions: Vec<SubagentDefinition> = Vec::new();
    let mut main_hooks = None;
    for (i, file) in inline.into_iter().chain(files).enumerate() {
        if definitions.iter().any(|d| d.name == file.name) {
            continue;
        }
        let from_flag = i < inline_count;
        let (label, prefix) = match from_flag {
            true => (PathBuf::from(format!("--agents {}", file.name)), format!("--agents: {}:", file.name)),
            false => (file.source.clone(), format!("agent definition {}:", file.source.display())),
        };
        let model = match &file.model {
            None => None,
            Some(spec) => match build_definition_model(spec, settings) {
                Ok(model) => Some(model),
                Err(e) => {
                    warnings.push(format!("agent definition {} skipped: field `model`: {e}", file.source.display()));
                    continue;
                }
            },
        };
        let mut notes = Vec::new();
        let resolved = match agent_scope::resolve(&file, &label, scope, &mut notes) {
            Ok(resolved) => resolved,
            Err(unusable) if from_flag => {
                let (path, _) = unusable.errors.first().cloned().unwrap_or_default();
                let reasons: Vec<&str> = unusable.errors.iter().map(|(_, r)| r.as_str()).collect();
                return Err(AgentFlagError::Field {
                    agent: file.name.clone(),
                    error: DefinitionError::Field { field: path, reason: reasons.join("; ") },
                });
            }
            Err(unusable) => {
                warnings.push(format!("agent definition {} skipped: {unusable}", file.source.display()));
                continue;
            }
        };
        warnings.extend(notes.into_iter().map(|n| format!("{prefix} {n}")));
        if resolved.main_hooks.is_some() {
            main_hooks = resolved.main_hooks;
        }
        definitions.push(SubagentDefinition {
            name: file.name,
            description: file.description,
            prompt: file.prompt,
            tools: file.tools,
            disallowed_tools: file.disallowed_tools,
            model,
            max_turns: file.max_turns,
            permission_mode: file.permission_mode,
            skills: resolved.skills,
            mcp_servers: resolved.mcp_servers,
            effort: file.effort,
            hooks: resolved.hooks,
            background: file.background,
            servers: resolved.servers,
            source: file.source,
        });
    }
    if !definitions.iter().any(|d| d.name == spine_core::subagents::GENERAL_PURPOSE) {
        definitions.push(SubagentDefinition::general_purpose());
    }
    let subagents = Subagents {
        definitions,
        max_concurrent: settings
            .subagent_max_concurrent
            .and_then(|n| usize::try_from(n).ok())
            .unwrap_or(DEFAULT_MAX_CONCURRENT),
        max_depth: settings.subagent_max_depth.unwrap_or(DEFAULT_MAX_DEPTH),
    };
    Ok(AgentTypes { subagents, warnings, main_hooks })
}

fn build_definition_model(spec: &str, settings: &Settings) -> Result<Arc<dyn ModelClient>, String> {
    let spec: spine_models::spec::ModelSpec = spec.parse().map_err(|e| format!("{e}"))?;
    let options = crate::client_options(settings, |name| std::env::var(name).ok());
    spine_models::client_with(&spec, &options).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use spine_core::registry::ToolRegistryBuilder;
    use spine_core::skills::SkillCatalog;
    use spine_protocol::permission::PermissionMode;

    /// [`subagents`] with default settings, resolved against no tools, no skills and no hook
    /// models.
    fn bare_subagents(project: &Path, spine_home: &Path, flag: Option<&str>) -> (Subagents, Vec<String>) {
        let settings = Settings::default();
        let tools = ToolRegistryBuilder::new().build().expect("tools");
        let options = spine_hooks::BuildOptions::new(spine_process::ChildEnv::default());
        let scope = Scope {
            settings: &settings,
            project,
            user_dirs: user_agent_directories(spine_home, None),
            tools: &tools,
            skills: crate::agent_scope::LazySkills::new(Box::new(SkillCatalog::default)),
            hooks: &options,
            main_agent: None,
            mcp_sandboxed_env: None,
        };
        let read = AgentFiles::read(&settings, project, spine_home, None);
        let types = subagents(&settings, flag, read, &scope).expect("valid");
        (types.subagents, types.warnings)
    }

    fn parse(text: &str) -> Result<AgentFile, String> {
        parse_agent_text(text, Path::new("/p/.claude/agents/a.md")).map(|(file, _)| file)
    }

    #[test]
    fn a_definition_reads_claude_codes_front_matter_and_body() {
        let file = parse(
            "---\nname: reviewer\ndescription: Reviews diffs\ntools: Read, Grep\nmodel: inherit\nmax_turns: 3\npermissionMode: plan\ncolor: blue\n---\nYou review.\n",
        )
        .expect("parses");
        assert_eq!(file.name, "reviewer");
        assert_eq!(file.tools, Some(vec!["Read".to_owned(), "Grep".to_owned()]));
        assert_eq!(file.model, None, "inherit is the parent's model");
        assert_eq!(file.max_turns, Some(3));
        assert_eq!(file.permission_mode, Some(PermissionMode::Plan));
        assert_eq!(file.prompt, "You review.");
        let listed = parse(
            "---\nname: x\ndescription: d\ntools: [Bash, Agent]\ndisallowedTools: [Write]\n\
             model: scripted:c.json\nmaxTurns: 2\n---\n",
        )
        .expect("ok");
        assert_eq!(listed.tools, Some(vec!["Bash".to_owned(), "Agent".to_owned()]));
        assert_eq!(listed.disallowed_tools, ["Write"]);
        assert_eq!(listed.model.as_deref(), Some("scripted:c.json"));
        assert_eq!(listed.max_turns, Some(2));
    }

    #[test]
    fn a_malformed_definition_names_its_field() {
        assert!(parse("---\ndescription: d\n---\n").expect_err("no name").contains("`name`"));
        assert!(parse("---\nname: x\n---\n").expect_err("no description").contains("`description`"));
        assert!(parse("---\nname: x\ndescription: d\ntools: 3\n---\n").expect_err("bad tools").contains("`tools`"));
        assert!(parse("---\nname: x\ndescription: d\nmaxTurns: 0\n---\n").expect_err("zero").contains("`maxTurns`"));
        assert!(parse("name: x\n").expect_err("no front matter").contains("front matter"));
        assert!(parse("---\nname: a b\ndescription: d\n---\n").expect_err("bad name").contains("`name`"));
    }

    #[test]
    fn project_definitions_win_over_user_ones_and_bad_files_are_skipped_with_a_warning() {
        let root = tempfile::tempdir().expect("tmp");
        let project = root.path().join("p");
        let spine_home = root.path().join("h");
        let write = |dir: &Path, file: &str, text: &str| {
            std::fs::create_dir_all(dir).expect("dir");
            std::fs::write(dir.join(file), text).expect("write");
        };
        write(&project.join(".claude/agents"), "r.md", "---\nname: r\ndescription: project\n---\nP\n");
        write(&spine_home.join("agents"), "r.md", "---\nname: r\ndescription: user\n---\nU\n");
        write(&spine_home.join("agents"), "u.md", "---\nname: u\ndescription: user only\n---\nU\n");
        write(&spine_home.join("agents"), "bad.md", "---\nname: bad\n---\n");
        let (subagents, warnings) = bare_subagents(&project, &spine_home, None);
        let names: Vec<&str> = subagents.definitions.iter().map(|d| d.name.as_str()).collect();
        assert_eq!(names, ["r", "u", "general-purpose"]);
        assert_eq!(subagents.find("r").map(|d| d.description.as_str()), Some("project"));
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(warnings[0].contains("bad.md") && warnings[0].contains("`description`"), "{warnings:?}");
    }

    #[test]
    fn fields_not_applied_and_unknown_keys_are_warnings_naming_the_file_and_field() {
        let root = tempfile::tempdir().expect("tmp");
        let dir = root.path().join("agents");
        std::fs::create_dir_all(&dir).expect("dir");
        std::fs::write(dir.join("r.md"), "---\nname: r\ndescription: d\nisolation: worktree\nfutureKey: 1\n---\nP\n")
            .expect("write");
        let (files, warnings) = read_agent_files(std::slice::from_ref(&dir));
        assert_eq!(files.len(), 1, "never an error");
        let path = dir.join("r.md").display().to_string();
        assert_eq!(
            warnings,
            [
                format!(
                    "agent definition {path}: `isolation` is not applied: spine runs every subagent in the \
                     parent's workspace, never in a temporary git worktree"
                ),
                format!("agent definition {path}: unknown field `futureKey` ignored"),
            ]
        );
    }

    #[test]
    fn an_inline_definition_wins_over_a_file_of_the_same_name() {
        let root = tempfile::tempdir().expect("tmp");
        let project = root.path().join("p");
        std::fs::create_dir_all(project.join(".claude/agents")).expect("dir");
        std::fs::write(project.join(".claude/agents/r.md"), "---\nname: r\ndescription: file\n---\nF\n").expect("w");
        let flag = r#"{"r": {"description": "flag", "prompt": "I"}}"#;
        let (subagents, _) = bare_subagents(&project, &root.path().join("h"), Some(flag));
        let r = subagents.find("r").expect("r");
        assert_eq!((r.description.as_str(), r.prompt.as_str()), ("flag", "I"));
    }
}
