//! `prepare_turn`: normalise the transcript, select skills, assemble the system prompt from its
//! eleven layers, resolve the likely model, estimate tokens. The product is the message list of
//! the next model request: the system message, then the transcript.
//!
//! Layers, in order, each written `"<Heading>:\n<body>"`, blank ones dropped, joined by blank
//! lines. What stays the same across turns and across runs of a project comes first, so that
//! the prompt's prefix is byte-identical and prompt caches (explicit breakpoints or automatic
//! prefix caching) hit:
//!
//! - stable: Agent Prompt · Soul (`SOUL.md`, else built in) · Memory Files (`CLAUDE.md`,
//!   `AGENTS.md` and their imports, loaded once per run by [`crate::memory_files`]) · User
//!   (`USER.md`, else built in) · Operator Prompt (profile `main`, not a subagent) · Active
//!   Skills (the catalog);
//! - volatile: Memory (`.spine/memory/root.md`, which the model may write) · Conversation
//!   Summary (`.spine/conversations/<id>/summary.md`) · Selected Skills (a subagent's preloaded
//!   skills, then those the messages reference, chosen per turn) ·
//!   Context Imports · Operator State (the live workspace snapshot; profile `main`, last).
//!
//! [`PreparedTurn::stable_prefix`] is the stable part's length. Workspace files are read
//! through the workspace boundary. The operator-state snapshot is taken by the caller *before*
//! the prompt is assembled and passed in.

use std::path::{Path, PathBuf};
use std::time::Instant;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use spine_protocol::message::Message;
use spine_protocol::trace::StageName;

use crate::fields;
use crate::memory_files::MemoryFiles;
use crate::skills::{SkillCatalog, select_with};
use crate::tokens::{RequestEstimate, TokenCache, TokenEstimator, estimate_request};
use crate::trace::Trace;
use crate::workspace::Workspace;

/// The built-in agent prompt (layer 1), overridable.
pub const DEFAULT_AGENT_PROMPT: &str = "You are spine, an agent that works in the user's workspace through tools. \
Inspect before you change anything, keep changes minimal, and answer with what you did and what you found.";

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

/// The model hints of a payload; the likely model is the first one set, in this order.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModelContext {
    /// `model_context.likely_model`.
    #[serde(default)]
    pub likely_model: Option<String>,
    /// `model_context.model_ref`.
    #[serde(default)]
    pub model_ref: Option<String>,
    /// `model_context.api_model`.
    #[serde(default)]
    pub api_model: Option<String>,
    /// `provider_execution.model_ref`.
    #[serde(default)]
    pub provider_model_ref: Option<String>,
}

impl ModelContext {
    /// The likely model: `likely_model` → `model_ref` → `api_model` → `provider_execution.model_ref`.
    pub fn likely_model(&self) -> Option<&str> {
        [&self.likely_model, &self.model_ref, &self.api_model, &self.provider_model_ref]
            .into_iter()
            .find_map(|m| m.as_deref().filter(|s| !s.is_empty()))
    }
}

/// Plain inputs of `prepare_turn`, built from a CLI run or an assignment payload.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TurnSettings {
    /// Replaces the built-in agent prompt.
    pub agent_prompt: Option<String>,
    /// The agent profile (`main` gets the operator layers).
    pub profile: AgentProfile,
    /// Whether this agent is a subagent.
    pub is_subagent: bool,
    /// Model hints.
    pub model_context: ModelContext,
    /// The tools visible to the turn (for the trace).
    pub allowed_tool_names: Vec<String>,
    /// The conversation (for its summary file).
    pub conversation_id: Option<String>,
    /// Context imports from the payload.
    pub context_imports: Vec<Value>,
    /// Skills in the Selected Skills layer of every turn, referenced or not (a subagent
    /// definition's `skills`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub preloaded_skills: Vec<String>,
}

impl Default for TurnSettings {
    fn default() -> Self {
        TurnSettings {
            agent_prompt: None,
            profile: AgentProfile::Main,
            is_subagent: false,
            model_context: ModelContext::default(),
            allowed_tool_names: Vec::new(),
            conversation_id: None,
            context_imports: Vec::new(),
            preloaded_skills: Vec::new(),
        }
    }
}

impl TurnSettings {
    /// Whether the prompt gets the Operator Prompt and Operator State layers (and so whether
    /// the caller takes an operator-state snapshot): the `main` profile, not a subagent.
    pub fn operator_layers(&self) -> bool {
        self.profile == AgentProfile::Main && !self.is_subagent
    }
}

/// The agent profile of a turn, written as its name (`"main"`, `"researcher"`).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(from = "String", into = "String")]
pub enum AgentProfile {
    /// `main`: the workspace's operator agent.
    #[default]
    Main,
    /// Any other profile, by name.
    Named(String),
}

impl AgentProfile {
    /// The profile's name.
    pub fn as_str(&self) -> &str {
        match self {
            AgentProfile::Main => "main",
            AgentProfile::Named(name) => name,
        }
    }
}

impl From<String> for AgentProfile {
    fn from(name: String) -> Self {
        if name == "main" { AgentProfile::Main } else { AgentProfile::Named(name) }
    }
}

impl From<&str> for AgentProfile {
    fn from(name: &str) -> Self {
        AgentProfile::from(name.to_owned())
    }
}

impl From<AgentProfile> for String {
    fn from(profile: AgentProfile) -> Self {
        match profile {
            AgentProfile::Main => "main".to_owned(),
            AgentProfile::Named(name) => name,
        }
    }
}

/// What `prepare_turn` reads besides the transcript.
pub struct TurnInputs<'a> {
    /// The prompt override, profile, model hints and imports of the turn.
    pub settings: &'a TurnSettings,
    /// The workspace (for SOUL.md, USER.md, memory, summary).
    pub workspace: &'a Workspace,
    /// The skills of the run.
    pub skills: &'a SkillCatalog,
    /// The operator-state snapshot, taken before the prompt is assembled.
    pub operator_state: Option<&'a Value>,
    /// The memory files of the run (`CLAUDE.md`…), loaded once per run; `None`: no such layer.
    pub memory: Option<&'a MemoryFiles>,
    /// The token estimator.
    pub estimator: &'a dyn TokenEstimator,
    /// The tool definitions the request carries (counted in the estimate).
    pub tools: &'a [spine_protocol::tool::ToolSpec],
}

/// The product of `prepare_turn`.
#[derive(Debug, Clone, PartialEq)]
pub struct PreparedTurn {
    /// System message, then the transcript.
    pub messages: Vec<Message>,
    /// The byte length of the system message's stable prefix: the layers that stay the same
    /// across turns and across runs of the same project (see the module doc), which providers
    /// with explicit prompt caching mark as a cache breakpoint.
    pub stable_prefix: usize,
    /// The resolved model.
    pub likely_model: Option<String>,
    /// The estimated size of the request.
    pub estimated_token_count: u64,
    /// The skills loaded into the prompt.
    pub selected_skill_names: Vec<String>,
}

/// Prepares the next model request. With a cache, only messages new since the last call are
/// counted.
pub fn prepare_turn(
    inputs: &TurnInputs<'_>,
    transcript: &[Message],
    cache: Option<&mut TokenCache>,
    trace: &Trace,
) -> PreparedTurn {
    let started = Instant::now();
    let s = inputs.settings;
    let selection = select_with(inputs.skills, &s.preloaded_skills, transcript);
    let SystemPrompt { text: system, stable_len } = assemble_prompt(inputs, &selection);
    let system_tokens = inputs.estimator.count_text(&system) + 4;
    let RequestEstimate { transcript_tokens, tool_tokens, anchored } =
        estimate_request(inputs.estimator, transcript, inputs.tools, cache);
    let mut messages = Vec::with_capacity(transcript.len() + 1);
    messages.push(Message::system(system));
    messages.extend(transcript.iter().cloned());
    let likely_model = s.model_context.likely_model().map(str::to_owned);
    let active: Vec<&str> = inputs.skills.active().map(|e| e.name.as_str()).collect();
    let selected: Vec<String> = selection.selected.iter().map(|l| l.entry.name.clone()).collect();
    // The provider's count of the last request, plus what is new, when there is one.
    let estimated_token_count = anchored.unwrap_or(system_tokens + transcript_tokens + tool_tokens);
    let mut f = fields! {
        "message_count" => messages.len(),
        "estimated_token_count" => estimated_token_count,
        "tool_tokens" => tool_tokens,
        "estimator" => inputs.estimator.name(),
        "anchored_on_usage" => anchored.is_some(),
        "likely_model" => likely_model,
        "profile" => s.profile.as_str(),
        "is_subagent" => s.is_subagent,
        "allowed_tool_names" => s.allowed_tool_names,
        "active_skill_names" => active,
        "selected_skill_names" => selected,
    };
    if !selection.skipped.is_empty() {
        f.insert("skipped_skills".into(), json!(selection.skipped));
    }
    if let Some(memory) = inputs.memory.filter(|m| !m.is_empty()) {
        f.insert("memory_files".into(), memory.trace_value());
    }
    trace.stage(StageName::PrepareTurn, None, started, f);
    PreparedTurn {
        messages,
        stable_prefix: stable_len,
        likely_model,
        estimated_token_count,
        selected_skill_names: selected,
    }
}

/// The system prompt and the byte length of its stable prefix.
struct SystemPrompt {
    text: String,
    stable_len: usize,
}

fn assemble_prompt(inputs: &TurnInputs<'_>, selection: &crate::skills::Selection) -> SystemPrompt {
    let s = inputs.settings;
    let ws = inputs.workspace;
    let operator = s.operator_layers();
    let mut stable: Vec<(&str, String)> = vec![
        ("Agent Prompt", s.agent_prompt.clone().unwrap_or_else(|| DEFAULT_AGENT_PROMPT.to_owned())),
        ("Soul", read_in(ws, "SOUL.md").unwrap_or_else(|| DEFAULT_SOUL.to_owned())),
        ("Memory Files", inputs.memory.map(MemoryFiles::render).unwrap_or_default()),
        ("User", read_in(ws, "USER.md").unwrap_or_else(|| DEFAULT_USER.to_owned())),
    ];
    if operator {
        stable.push(("Operator Prompt", OPERATOR_PROMPT.to_owned()));
    }
    let active: Vec<String> = inputs.skills.active().map(|e| format!("- {}: {}", e.name, e.description)).collect();
    stable.push(("Active Skills", active.join("\n")));

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
    SystemPrompt { text, stable_len }
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

/// The operator-state snapshot: top-level workspace entries (at most 20, skipping `.spine`
/// and `.git`), the added workspace roots (when there are any), the memory files, and any extra sections (command runs, processes) the tools
/// provide. Take it before assembling the prompt.
pub fn operator_snapshot(ws: &Workspace, extra: Map<String, Value>) -> Value {
    let mut highlights = Vec::new();
    if let Ok(dir) = std::fs::read_dir(ws.root()) {
        let mut names: Vec<(String, bool)> = dir
            .filter_map(Result::ok)
            .map(|e| (e.file_name().to_string_lossy().into_owned(), e.file_type().is_ok_and(|t| t.is_dir())))
            .filter(|(n, _)| n != ".spine" && n != ".git")
            .collect();
        names.sort();
        for (name, is_dir) in names.into_iter().take(20) {
            highlights.push(json!({"path": name, "node_type": if is_dir { "directory" } else { "file" }}));
        }
    }
    let memory_dir = ws.root().join(".spine").join("memory");
    let mut entries: Vec<String> = std::fs::read_dir(&memory_dir)
        .map(|d| d.filter_map(Result::ok).map(|e| e.file_name().to_string_lossy().into_owned()).collect())
        .unwrap_or_default();
    entries.sort();
    let mut state = Map::new();
    let mut workspace = json!({"workspace_root": ws.root(), "highlights": highlights});
    if ws.added_roots().len() > 0 {
        // The added roots (`--add-dir`, `permissions.additionalDirectories`): the model may
        // use them with absolute paths.
        workspace["additional_directories"] = json!(ws.added_roots().collect::<Vec<_>>());
        workspace["additional_directories_note"] =
            json!("the file tools may also read and write these directories; give their absolute paths");
    }
    state.insert("workspace".into(), workspace);
    state.insert("memory".into(), json!({"root_memory_path": ROOT_MEMORY_FILE, "entries": entries}));
    state.extend(extra);
    Value::Object(state)
}

/// Extra sections of the operator state (command runs, processes), provided by the tools.
pub trait OperatorStateSource: Send + Sync {
    /// The sections to add, keyed by name.
    fn sections(&self) -> Map<String, Value>;
}

/// Normalises payload messages (`{role, content}` objects) into a transcript; anything else
/// about them is dropped. Unknown roles are an error naming the index.
pub fn normalize_transcript(values: &[Value]) -> Result<Vec<Message>, String> {
    values
        .iter()
        .enumerate()
        .map(|(i, v)| {
            let role = v
                .get("role")
                .and_then(Value::as_str)
                .ok_or_else(|| format!("context_messages[{i}]: missing `role`"))?;
            let content = match v.get("content") {
                Some(Value::String(s)) => s.clone(),
                Some(Value::Null) | None => String::new(),
                Some(other) => other.to_string(),
            };
            match role {
                "system" => Ok(Message::system(content)),
                "user" => Ok(Message::user(content)),
                "assistant" => Ok(Message::assistant_text(content)),
                other => Err(format!("context_messages[{i}]: unsupported role `{other}` (system, user or assistant)")),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::skills::{SkillRoot, SkillRootKind};
    use crate::tokens::WordsEstimator;

    fn run(
        ws: &Workspace,
        settings: &TurnSettings,
        skills: &SkillCatalog,
        state: Option<&Value>,
        t: &[Message],
    ) -> (PreparedTurn, Trace) {
        let trace = Trace::default();
        let inputs = TurnInputs {
            settings,
            workspace: ws,
            skills,
            operator_state: state,
            memory: None,
            estimator: &WordsEstimator,
            tools: &[],
        };
        (prepare_turn(&inputs, t, None, &trace), trace)
    }

    #[test]
    fn stable_layers_come_first_and_volatile_ones_after_the_stable_prefix() {
        let dir = tempfile::tempdir().expect("tmp");
        let ws = Workspace::new(dir.path()).expect("ws");
        std::fs::write(dir.path().join("SOUL.md"), "Workspace soul.").expect("w");
        std::fs::create_dir_all(dir.path().join(".spine/memory")).expect("mkdir");
        std::fs::write(dir.path().join(ROOT_MEMORY_FILE), "Remember the milk.").expect("w");
        let summary = dir.path().join(summary_path("conv-1"));
        std::fs::create_dir_all(summary.parent().expect("parent")).expect("mkdir");
        std::fs::write(&summary, "We talked about tests.").expect("w");
        let settings = TurnSettings { conversation_id: Some("conv-1".into()), ..Default::default() };
        let state = json!({"workspace": {"files": ["a.rs"]}});
        let (p, _) = run(&ws, &settings, &SkillCatalog::default(), Some(&state), &[Message::user("hi")]);
        let system = p.messages[0].text().expect("system");
        let order = [
            "Agent Prompt:\n",
            "Soul:\n",
            "User:\n",
            "Operator Prompt:\n",
            "Memory:\n",
            "Conversation Summary:\n",
            "Operator State:\n",
        ];
        let positions: Vec<usize> = order.iter().map(|h| system.find(h).unwrap_or(usize::MAX)).collect();
        assert!(positions.windows(2).all(|w| w[0] < w[1]), "layers out of order: {positions:?}\n{system}");
        let (stable, volatile) = system.split_at(p.stable_prefix);
        assert!(stable.ends_with(OPERATOR_PROMPT), "the stable prefix ends with the last stable layer: {stable}");
        assert!(volatile.trim_start().starts_with("Memory:\n"), "{volatile}");
        assert!(!stable.contains("a.rs"), "the live workspace snapshot is never in the stable prefix");
        assert!(system.contains("Soul:\nWorkspace soul."));
        assert!(system.contains("Memory:\nRemember the milk."));
        assert!(system.contains("Conversation Summary:\nWe talked about tests."));
        assert_eq!(p.messages[1], Message::user("hi"));
    }

    #[test]
    fn memory_files_are_a_layer_after_soul_and_before_user_and_listed_in_the_trace() {
        let dir = tempfile::tempdir().expect("tmp");
        let ws = Workspace::new(dir.path()).expect("ws");
        std::fs::write(dir.path().join("CLAUDE.md"), "Run the tests with make check.").expect("w");
        let sources = crate::memory_files::MemorySources::Load { home: None };
        let (memory, _) = crate::memory_files::load(&sources, &ws, ws.root());
        let settings = TurnSettings::default();
        let trace = Trace::default();
        let inputs = TurnInputs {
            settings: &settings,
            workspace: &ws,
            skills: &SkillCatalog::default(),
            operator_state: None,
            memory: Some(&memory),
            estimator: &WordsEstimator,
            tools: &[],
        };
        let p = prepare_turn(&inputs, &[Message::user("hi")], None, &trace);
        let system = p.messages[0].text().expect("system");
        let soul = system.find("Soul:\n").expect("soul");
        let files = system.find("Memory Files:\n").expect("memory files");
        let user = system.find("User:\n").expect("user");
        assert!(soul < files && files < user, "{system}");
        assert!(system.contains(&format!(
            "Contents of {} (project instructions, checked into the codebase):\n\nRun the tests with make check.",
            ws.root().join("CLAUDE.md").display()
        )));
        let spine_protocol::trace::TraceRecord::Stage(s) = trace.entries().remove(0).record else { panic!("stage") };
        assert_eq!(
            s.fields["memory_files"],
            json!([{"path": ws.root().join("CLAUDE.md"), "kind": "project", "bytes": 30}])
        );
        let (p, trace) = run(&ws, &settings, &SkillCatalog::default(), None, &[]);
        assert!(!p.messages[0].text().expect("system").contains("Memory Files:"));
        let spine_protocol::trace::TraceRecord::Stage(s) = trace.entries().remove(0).record else { panic!("stage") };
        assert!(s.fields.get("memory_files").is_none());
    }

    #[test]
    fn the_stable_prefix_is_byte_identical_when_the_volatile_layers_change() {
        let dir = tempfile::tempdir().expect("tmp");
        let ws = Workspace::new(dir.path()).expect("ws");
        let settings = TurnSettings::default();
        let prefix = |state: &Value, t: &[Message]| {
            let (p, _) = run(&ws, &settings, &SkillCatalog::default(), Some(state), t);
            let system = p.messages[0].text().expect("system").to_owned();
            system[..p.stable_prefix].to_owned()
        };
        let first = prefix(&json!({"workspace": {"files": ["a.rs"]}}), &[Message::user("hi")]);
        std::fs::create_dir_all(dir.path().join(".spine/memory")).expect("mkdir");
        std::fs::write(dir.path().join(ROOT_MEMORY_FILE), "Written mid-run.").expect("w");
        let later = prefix(
            &json!({"workspace": {"files": ["a.rs", "b.rs"]}, "runs": [1]}),
            &[Message::user("hi"), Message::assistant_text("ok"), Message::user("more")],
        );
        assert!(!first.is_empty());
        assert_eq!(first, later);
    }

    #[test]
    fn operator_layers_only_for_main_profile_and_not_subagents() {
        let dir = tempfile::tempdir().expect("tmp");
        let ws = Workspace::new(dir.path()).expect("ws");
        let state = json!({"workspace": {"highlights": []}});
        for (profile, sub, expected) in [("main", false, true), ("main", true, false), ("researcher", false, false)] {
            let settings = TurnSettings { profile: profile.into(), is_subagent: sub, ..Default::default() };
            let (p, trace) = run(&ws, &settings, &SkillCatalog::default(), Some(&state), &[]);
            let system = p.messages[0].text().expect("system");
            assert_eq!(
                system.contains("Operator Prompt:") && system.contains("Operator State:"),
                expected,
                "{profile} {sub}"
            );
            let entry = trace.entries().remove(0);
            let spine_protocol::trace::TraceRecord::Stage(s) = entry.record else { panic!("stage") };
            assert_eq!(s.fields["is_subagent"], json!(sub));
            assert_eq!(s.fields["profile"], json!(profile));
        }
    }

    #[test]
    fn skill_references_inject_the_skill_body_and_unknown_ones_are_skipped() {
        let dir = tempfile::tempdir().expect("tmp");
        let ws = Workspace::new(dir.path()).expect("ws");
        let root = dir.path().join(".spine/skills");
        std::fs::create_dir_all(root.join("portable-notes")).expect("mkdir");
        std::fs::write(
            root.join("portable-notes/SKILL.md"),
            "---\ndescription: notes anywhere\n---\nWrite notes as Markdown.",
        )
        .expect("w");
        let (catalog, _) = SkillCatalog::scan(&[SkillRoot { path: root, kind: SkillRootKind::Live }]);
        let (p, trace) =
            run(&ws, &TurnSettings::default(), &catalog, None, &[Message::user("use $portable-notes and $nope")]);
        let system = p.messages[0].text().expect("system");
        assert!(system.contains("Active Skills:\n- portable-notes: notes anywhere"));
        assert!(system.contains(
            "Selected Skills:\nSkill portable-notes:\n---\ndescription: notes anywhere\n---\nWrite notes as Markdown."
        ));
        assert_eq!(p.selected_skill_names, vec!["portable-notes"]);
        let spine_protocol::trace::TraceRecord::Stage(s) = trace.entries().remove(0).record else { panic!("stage") };
        assert_eq!(s.fields["skipped_skills"][0]["name"], json!("nope"));
    }

    #[test]
    fn likely_model_resolves_through_the_chain() {
        let mc = ModelContext { model_ref: Some("gpt-5.4".into()), api_model: Some("x".into()), ..Default::default() };
        assert_eq!(mc.likely_model(), Some("gpt-5.4"));
        let mc = ModelContext { provider_model_ref: Some("p".into()), ..Default::default() };
        assert_eq!(mc.likely_model(), Some("p"));
    }

    #[test]
    fn estimate_counts_words_plus_four_per_message() {
        let dir = tempfile::tempdir().expect("tmp");
        let ws = Workspace::new(dir.path()).expect("ws");
        let settings = TurnSettings { agent_prompt: Some("one two".into()), profile: "x".into(), ..Default::default() };
        let (p, _) = run(&ws, &settings, &SkillCatalog::default(), None, &[Message::user("a b c")]);
        let system_words = p.messages[0].text().expect("s").split_whitespace().count() as u64;
        assert_eq!(p.estimated_token_count, system_words + 4 + 3 + 4);
    }

    #[test]
    fn the_operator_state_names_the_added_roots_only_when_there_are_some() {
        let (primary, added) = (tempfile::tempdir().expect("tmp"), tempfile::tempdir().expect("tmp"));
        let single = operator_snapshot(&Workspace::new(primary.path()).expect("ws"), Map::new());
        assert!(single["workspace"].get("additional_directories").is_none(), "{single}");
        let ws = Workspace::with_roots(primary.path(), [added.path()]).expect("ws");
        let state = operator_snapshot(&ws, Map::new());
        let canonical = added.path().canonicalize().expect("canon");
        assert_eq!(state["workspace"]["additional_directories"], json!([canonical]));
        let settings = TurnSettings::default();
        let (p, _) = run(&ws, &settings, &SkillCatalog::default(), Some(&state), &[Message::user("hi")]);
        let system = p.messages[0].text().expect("system");
        assert!(system.contains(&*canonical.to_string_lossy()), "{system}");
    }
}
