use serde_json::Map;

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

#[test]
fn with_the_skill_tool_the_listing_has_claude_codes_heading_and_the_budget_shortens_it() {
    let dir = tempfile::tempdir().expect("tmp");
    let ws = Workspace::new(dir.path()).expect("ws");
    let root = dir.path().join("skills");
    for (name, md) in [("a", "---\ndescription: Alpha.\n---\nA"), ("b", "---\ndescription: Beta beta.\n---\nB")] {
        std::fs::create_dir_all(root.join(name)).expect("mkdir");
        std::fs::write(root.join(name).join("SKILL.md"), md).expect("w");
    }
    let (catalog, _) = SkillCatalog::scan(&[SkillRoot { path: root, kind: SkillRootKind::Live }]);
    let skill = spine_protocol::tool::ToolSpec {
        name: crate::skills::SKILL_TOOL.into(),
        description: String::new(),
        input_schema: json!({}),
    };
    let settings = TurnSettings { skill_listing_chars: Some(16), ..Default::default() };
    let trace = Trace::default();
    let tools = [skill];
    let inputs = TurnInputs {
        settings: &settings,
        workspace: &ws,
        skills: &catalog,
        operator_state: None,
        memory: None,
        estimator: &WordsEstimator,
        tools: &tools,
    };
    let p = prepare_turn(&inputs, &[Message::user("hi")], None, &trace);
    let system = p.messages[0].text().expect("system");
    let listing = "Active Skills:\nThe following skills are available for use with the Skill tool:\n\n- a: Alpha.\n- b";
    assert!(system.contains(listing) && !system.contains("Beta"), "{system}");
    let spine_protocol::trace::TraceRecord::Stage(s) = trace.entries().remove(0).record else { panic!("stage") };
    assert_eq!(s.fields["skill_listing"]["without_description"], json!(["b"]));
}

#[test]
fn an_output_style_is_a_stable_layer_of_the_main_agent_and_may_replace_the_coding_prompt() {
    let dir = tempfile::tempdir().expect("tmp");
    let ws = Workspace::new(dir.path()).expect("ws");
    let style = OutputStyle { name: "Terse".into(), prompt: "One line.".into(), keep_coding_instructions: false };
    let settings = TurnSettings { output_style: Some(style.clone()), ..Default::default() };
    let (p, _) = run(&ws, &settings, &SkillCatalog::default(), None, &[Message::user("hi")]);
    let system = p.messages[0].text().expect("system");
    assert!(system.starts_with(&format!("Agent Prompt:\n{STYLE_AGENT_PROMPT}")), "{system}");
    assert!(system[..p.stable_prefix].ends_with("Output Style: Terse:\nOne line."), "{system}");
    let kept = OutputStyle { keep_coding_instructions: true, ..style.clone() };
    let settings = TurnSettings { output_style: Some(kept), ..Default::default() };
    let (p, _) = run(&ws, &settings, &SkillCatalog::default(), None, &[Message::user("hi")]);
    assert!(p.messages[0].text().expect("system").starts_with(&format!("Agent Prompt:\n{DEFAULT_AGENT_PROMPT}")));
    let settings = TurnSettings { output_style: Some(style), is_subagent: true, ..Default::default() };
    let (p, _) = run(&ws, &settings, &SkillCatalog::default(), None, &[Message::user("hi")]);
    assert!(!p.messages[0].text().expect("system").contains("Output Style"), "a subagent runs its own prompt");
}
