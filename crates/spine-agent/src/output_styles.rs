//! Output styles, as Claude Code defines them: Markdown files whose body is added to the
//! system prompt, chosen by the `outputStyle` setting (or `/output-style` in a chat).
//!
//! Contract:
//! - [`available`]: the built-in styles (`Default`, which changes nothing, `Explanatory` and
//!   `Learning`, in spine's words), then the enabled plugins' `output_styles` (files, and the
//!   `*.md` files of directories), the user's `~/.claude/output-styles/*.md`, and the project's
//!   `.claude/output-styles/*.md`. A style's name is its front matter's `name`, else the file's
//!   stem; a later source replaces an earlier style of the same name (project over user over
//!   plugin over built in). Front matter: `name`, `description`, `keep-coding-instructions`
//!   (default false; the built-ins keep them), `force-for-plugin` (a plugin's style only: it
//!   applies whatever `outputStyle` says; the first such plugin wins). A file that cannot be
//!   read is skipped with a warning naming it.
//! - [`chosen`]: the forced plugin style, else the style `outputStyle` names (exactly, else
//!   ignoring case), else none. `Default` is none. An unknown name is a warning listing the
//!   known ones, and no style.
//! - The chosen style is the main agent's prompt layer `Output Style: NAME` (spine-core's
//!   `prepare_turn`); a style without `keep-coding-instructions` also replaces the built-in
//!   agent prompt with one that defers to the style. Subagents never get it.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};
use spine_core::stages::prepare_turn::OutputStyle;
use spine_settings::Settings;

/// The largest style file read.
const MAX_FILE_BYTES: u64 = 256 * 1024;

/// The built-in Explanatory style (spine's wording of Claude Code's idea).
const EXPLANATORY: &str = "Besides doing the task, help the user understand it. Before and after writing code, \
give short educational insights about the implementation choices and the codebase's patterns, each set apart as \
`★ Insight` followed by two or three specific points. Keep them about this code, not general programming.";

/// The built-in Learning style (spine's wording of Claude Code's idea).
const LEARNING: &str = "Work with the user as a collaborator who wants to learn by doing. Share short `★ Insight` \
notes about the choices you make. When a piece of the work is small and instructive (a function body of up to ten \
lines, a design decision, an error case), leave it to the user: add a `TODO(human)` marker where it goes, explain \
what is needed and why, and stop to let them write it before you continue.";

/// A style that can be chosen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StyleEntry {
    /// The style.
    pub style: OutputStyle,
    /// `description`.
    pub description: Option<String>,
    /// Where it comes from: `built in`, `plugin NAME`, or the file.
    pub source: String,
    /// `force-for-plugin` (a plugin's style).
    pub forced: bool,
}

fn built_in(name: &str, prompt: &str, description: &str) -> StyleEntry {
    StyleEntry {
        style: OutputStyle { name: name.to_owned(), prompt: prompt.to_owned(), keep_coding_instructions: true },
        description: Some(description.to_owned()),
        source: "built in".to_owned(),
        forced: false,
    }
}

/// Every style that can be chosen, and warnings about files skipped (see the module
/// documentation).
pub fn available(settings: &Settings, project: &Path, user_home: Option<&Path>) -> (Vec<StyleEntry>, Vec<String>) {
    let mut styles = vec![
        built_in("Default", "", "spine's own prompt, unchanged"),
        built_in("Explanatory", EXPLANATORY, "insights about the implementation while doing the task"),
        built_in("Learning", LEARNING, "learn by doing: insights, and small pieces left to you (TODO(human))"),
    ];
    let mut warnings = Vec::new();
    let mut files: Vec<(PathBuf, String, bool)> = Vec::new();
    for plugin in &settings.plugins {
        for path in &plugin.output_styles {
            files.extend(markdown_files(path).into_iter().map(|f| (f, format!("plugin {}", plugin.name), true)));
        }
    }
    if let Some(home) = user_home {
        let dir = home.join(".claude").join("output-styles");
        files.extend(markdown_files(&dir).into_iter().map(|f| (f.clone(), f.display().to_string(), false)));
    }
    let dir = project.join(".claude").join("output-styles");
    files.extend(markdown_files(&dir).into_iter().map(|f| (f.clone(), f.display().to_string(), false)));
    for (file, source, from_plugin) in files {
        match read_style(&file, from_plugin) {
            Ok(mut entry) => {
                entry.source = source;
                styles.retain(|s| s.style.name != entry.style.name);
                styles.push(entry);
            }
            Err(e) => warnings.push(format!("output style {} skipped: {e}", file.display())),
        }
    }
    (styles, warnings)
}

/// The style of the main agent's prompt, and warnings (see the module documentation).
pub fn chosen(settings: &Settings, project: &Path, user_home: Option<&Path>) -> (Option<OutputStyle>, Vec<String>) {
    let (styles, mut warnings) = available(settings, project, user_home);
    if let Some(forced) = styles.iter().find(|s| s.forced) {
        return (Some(forced.style.clone()), warnings);
    }
    let Some(name) = settings.output_style.as_deref() else { return (None, warnings) };
    match find(&styles, name) {
        Some(entry) if entry.style.prompt.trim().is_empty() => (None, warnings),
        Some(entry) => (Some(entry.style.clone()), warnings),
        None => {
            let known: Vec<&str> = styles.iter().map(|s| s.style.name.as_str()).collect();
            warnings.push(format!("outputStyle `{name}`: no such output style (known: {})", known.join(", ")));
            (None, warnings)
        }
    }
}

/// The style named `name`: exactly, else ignoring case.
pub fn find<'a>(styles: &'a [StyleEntry], name: &str) -> Option<&'a StyleEntry> {
    let name = name.trim();
    styles
        .iter()
        .find(|s| s.style.name == name)
        .or_else(|| styles.iter().find(|s| s.style.name.eq_ignore_ascii_case(name)))
}

/// `path` when it is a `.md` file; the `*.md` files of `path` when it is a directory.
fn markdown_files(path: &Path) -> Vec<PathBuf> {
    if path.is_file() {
        return vec![path.to_path_buf()];
    }
    let Ok(entries) = std::fs::read_dir(path) else { return Vec::new() };
    let mut files: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "md") && p.is_file())
        .collect();
    files.sort();
    files
}

/// One style file.
fn read_style(file: &Path, from_plugin: bool) -> Result<StyleEntry, String> {
    let size = std::fs::metadata(file).map_err(|e| e.to_string())?.len();
    if size > MAX_FILE_BYTES {
        return Err(format!("larger than {} KB", MAX_FILE_BYTES / 1024));
    }
    let text = std::fs::read_to_string(file).map_err(|e| e.to_string())?;
    let (fields, body) = spine_core::front_matter::parse::<Map<String, Value>>(&text)?;
    let text_field = |key: &str| fields.get(key).and_then(Value::as_str).map(str::trim).filter(|s| !s.is_empty());
    let flag = |key: &str| match fields.get(key) {
        Some(Value::Bool(b)) => *b,
        Some(Value::String(s)) => matches!(s.trim().to_ascii_lowercase().as_str(), "true" | "yes" | "on" | "1"),
        Some(Value::Number(n)) => n.as_u64() == Some(1),
        _ => false,
    };
    let stem = file.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    let name = text_field("name").map_or(stem, str::to_owned);
    Ok(StyleEntry {
        style: OutputStyle {
            name,
            prompt: body.trim().to_owned(),
            keep_coding_instructions: flag("keep-coding-instructions"),
        },
        description: text_field("description").map(str::to_owned),
        source: String::new(),
        forced: from_plugin && flag("force-for-plugin"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(path: PathBuf, text: &str) {
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(path, text).expect("write");
    }

    #[test]
    fn project_styles_replace_user_styles_and_the_setting_chooses_by_name() {
        let dir = tempfile::tempdir().expect("tmp");
        let (home, project) = (dir.path().join("home"), dir.path().join("p"));
        write(home.join(".claude/output-styles/terse.md"), "---\nname: Terse\n---\nUSER TERSE");
        write(
            project.join(".claude/output-styles/terse.md"),
            "---\nname: Terse\nkeep-coding-instructions: yes\n---\nPROJECT TERSE\n",
        );
        write(project.join(".claude/output-styles/plain.md"), "PLAIN BODY");
        let mut settings = Settings { output_style: Some("terse".into()), ..Settings::default() };
        let (style, warnings) = chosen(&settings, &project, Some(&home));
        let style = style.expect("chosen, ignoring case");
        assert_eq!(
            (style.name.as_str(), style.prompt.as_str(), style.keep_coding_instructions),
            ("Terse", "PROJECT TERSE", true)
        );
        assert!(warnings.is_empty(), "{warnings:?}");
        settings.output_style = Some("plain".into());
        let style = chosen(&settings, &project, Some(&home)).0.expect("by file stem");
        assert!(!style.keep_coding_instructions);
        settings.output_style = Some("Default".into());
        assert_eq!(chosen(&settings, &project, Some(&home)).0, None, "Default changes nothing");
        settings.output_style = Some("Nope".into());
        let (style, warnings) = chosen(&settings, &project, Some(&home));
        assert!(style.is_none() && warnings[0].contains("known: Default, Explanatory, Learning"), "{warnings:?}");
        settings.output_style = Some("Explanatory".into());
        assert!(chosen(&settings, &project, None).0.is_some_and(|s| s.keep_coding_instructions));
    }
}
