//! The system prompt of a turn: its twelve layers (see the parent module doc), the built-in
//! bodies of the layers a workspace may override, and the byte length of the stable prefix.
//! Workspace files (`SOUL.md`, `USER.md`, the root memory, the conversation summary) are read
//! through the workspace boundary; a file that is absent, blank or outside reads as no layer.

use std::path::{Path, PathBuf};

use crate::memory_files::MemoryFiles;
use crate::skills::{self, Listing, Selection};
use crate::workspace::Workspace;

use super::TurnInputs;

/// The built-in agent prompt (layer 1), overridable.
pub const DEFAULT_AGENT_PROMPT: &str = "You are spine, an agent that works in the user's workspace through tools. \
Inspect before you change anything, keep changes minimal, and answer with what you did and what you found.";

/// The agent prompt (layer 1) in place of the built-in one when an output style without
/// `keep-coding-instructions` is chosen (Claude Code's intro line for a style, in spine's words).
pub const STYLE_AGENT_PROMPT: &str = "You are spine, an agent that helps users according to your Output Style \
(below), which describes how you should respond to user queries. You work in the user's workspace through tools.";

/// The built-in soul (layer 2) when the workspace has no `SOUL.md`.
pub const DEFAULT_SOUL: &str =
    "Be direct and precise. Prefer evidence from tools over guesses. Say so when you are unsure.";

/// The built-in user note (layer 3) when the workspace has no `USER.md`.
pub const DEFAULT_USER: &str = "The user is a developer who wants correct, verifiable results.";

/// The built-in operator prompt (layer 6).
pub const OPERATOR_PROMPT: &str = "You run as the main agent of this workspace. Operator State below is a snapshot of the \
workspace, its memory files and the command runs and processes you started; use it instead of re-listing.";

/// The root memory file, relative to the workspace.
pub const ROOT_MEMORY_FILE: &str = ".spine/memory/root.md";

/// The system prompt, the byte length of its stable prefix, and the skills its listing names
/// without their description (the listing's budget).
pub(super) struct SystemPrompt {
    pub(super) text: String,
    pub(super) stable_len: usize,
    pub(super) listing: Listing,
}

/// The system prompt of the turn: the stable layers, then the volatile ones.
pub(super) fn assemble_prompt(inputs: &TurnInputs<'_>, selection: &Selection) -> SystemPrompt {
    let s = inputs.settings;
    let ws = inputs.workspace;
    let operator = s.operator_layers();
    // The output style is the main agent's: a subagent runs its own prompt.
    let style = s.output_style.as_ref().filter(|_| !s.is_subagent);
    let style_heading = style.map(|st| format!("Output Style: {}", st.name));
    let agent_prompt = s.agent_prompt.clone().unwrap_or_else(|| match style {
        Some(st) if !st.keep_coding_instructions => STYLE_AGENT_PROMPT.to_owned(),
        Some(_) | None => DEFAULT_AGENT_PROMPT.to_owned(),
    });
    let mut stable: Vec<(&str, String)> = vec![
        ("Agent Prompt", agent_prompt),
        ("Soul", read_in(ws, "SOUL.md").unwrap_or_else(|| DEFAULT_SOUL.to_owned())),
        ("Memory Files", inputs.memory.map(MemoryFiles::render).unwrap_or_default()),
        ("User", read_in(ws, "USER.md").unwrap_or_else(|| DEFAULT_USER.to_owned())),
    ];
    if operator {
        stable.push(("Operator Prompt", OPERATOR_PROMPT.to_owned()));
    }
    let listing = skills::listing(inputs.skills, skills::listing_budget(None, s.skill_listing_chars));
    let skill_tool = inputs.tools.iter().any(|t| t.name == skills::SKILL_TOOL);
    let entries = listing.lines.join("\n");
    stable.push(match (skill_tool, entries.is_empty()) {
        (true, false) => ("Active Skills", format!("{}\n\n{entries}", skills::LISTING_HEADING)),
        (false, _) | (true, true) => ("Active Skills", entries),
    });
    if let (Some(heading), Some(st)) = (&style_heading, style) {
        stable.push((heading.as_str(), st.prompt.clone()));
    }

    let mut volatile: Vec<(&str, String)> = vec![
        ("Memory", read_in(ws, ROOT_MEMORY_FILE).unwrap_or_default()),
        (
            "Conversation Summary",
            s.conversation_id
                .as_deref()
                .and_then(|id| read_in(ws, &summary_path(id).to_string_lossy()))
                .unwrap_or_default(),
        ),
    ];
    let selected: Vec<String> =
        selection.selected.iter().map(|l| format!("Skill {}:\n{}", l.entry.name, l.skill_md.trim())).collect();
    volatile.push(("Selected Skills", selected.join("\n\n")));
    let imports: Vec<String> =
        s.context_imports.iter().map(|v| serde_json::to_string_pretty(v).unwrap_or_default()).collect();
    volatile.push(("Context Imports", imports.join("\n\n")));
    if operator {
        let state = inputs.operator_state.filter(|v| v.as_object().is_none_or(|m| !m.is_empty()));
        volatile.push((
            "Operator State",
            state.map(|v| serde_json::to_string_pretty(v).unwrap_or_default()).unwrap_or_default(),
        ));
    }
    let stable = render_layers(stable);
    let volatile = render_layers(volatile);
    let stable_len = stable.len();
    let text = match (stable.is_empty(), volatile.is_empty()) {
        (_, true) => stable,
        (true, false) => volatile,
        (false, false) => format!("{stable}\n\n{volatile}"),
    };
    SystemPrompt { text, stable_len, listing }
}

/// Layers as `"<Heading>:\n<body>"`, blank ones dropped, joined by blank lines.
fn render_layers(layers: Vec<(&str, String)>) -> String {
    layers
        .into_iter()
        .filter(|(_, body)| !body.trim().is_empty())
        .map(|(heading, body)| format!("{heading}:\n{}", body.trim()))
        .collect::<Vec<_>>()
        .join("\n\n")
}

/// The summary file of a conversation, relative to the workspace.
pub fn summary_path(conversation_id: &str) -> PathBuf {
    let safe: String = conversation_id
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') { c } else { '_' })
        .collect();
    Path::new(".spine").join("conversations").join(safe).join("summary.md")
}

/// Reads a workspace file through the boundary; `None` when absent, unreadable or outside.
fn read_in(ws: &Workspace, relative: &str) -> Option<String> {
    let path = ws.resolve(relative, ws.root()).ok()?;
    std::fs::read_to_string(path).ok().filter(|t| !t.trim().is_empty())
}
