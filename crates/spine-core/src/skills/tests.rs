//! The catalog, the seed's selection, and the rules added for Claude Code's and Codex's skills.
use super::*;
use spine_protocol::message::Message;

fn skill(root: &Path, dir: &str, md: &str) {
    std::fs::create_dir_all(root.join(dir)).expect("mkdir");
    std::fs::write(root.join(dir).join("SKILL.md"), md).expect("write");
}

#[test]
fn references_are_links_or_inline_dollar_names_not_after_word_chars_or_slashes() {
    let m = [
        Message::user("use $portable-notes. and [$deploy](skills/deploy) and a$b and /$c and $portable-notes"),
        Message::Tool(spine_protocol::message::ToolResultMessage {
            tool_call_id: "x".into(),
            name: "t".into(),
            content: "$fromtool".into(),
            error_code: None,
            images: Vec::new(),
        }),
    ];
    assert_eq!(referenced_names(&m), vec!["deploy", "portable-notes"]);
}

#[test]
fn catalog_orders_roots_reads_front_matter_and_keeps_curated_inactive() {
    let dir = tempfile::tempdir().expect("tmp");
    let (sys, live, cur) = (dir.path().join("sys"), dir.path().join("live"), dir.path().join("cur"));
    skill(
        &live,
        "notes",
        "---\nname: portable-notes\ndescription: >\n  Keep notes\n  portable.\n---\nWrite notes in Markdown.\n",
    );
    skill(&sys, "deploy", "Deploy with care.\n");
    skill(&cur, "draft", "---\ndescription: not yet\n---\nbody\n");
    skill(&live, "bad name", "x");
    skill(&live, "broken", "---\nname: [unclosed\n---\n");
    let roots = [
        SkillRoot { path: cur, kind: SkillRootKind::Curated },
        SkillRoot { path: live, kind: SkillRootKind::Live },
        SkillRoot { path: sys, kind: SkillRootKind::System },
    ];
    let (catalog, issues) = SkillCatalog::scan(&roots);
    let names: Vec<(&str, bool)> = catalog.entries().iter().map(|e| (e.name.as_str(), e.active)).collect();
    assert_eq!(names, vec![("deploy", true), ("portable-notes", true), ("draft", false)]);
    assert_eq!(catalog.get("portable-notes").map(|e| e.description.as_str()), Some("Keep notes portable."));
    assert_eq!(issues.len(), 2, "{issues:?}");

    let selection = select(&catalog, &[Message::user("follow $portable-notes and $draft and $unknown")]);
    assert_eq!(selection.selected.len(), 1);
    assert!(selection.selected[0].skill_md.contains("Write notes in Markdown."));
    assert_eq!(selection.skipped.iter().map(|s| s.name.as_str()).collect::<Vec<_>>(), ["draft", "unknown"]);
}

#[test]
fn preloaded_skills_are_selected_first_without_a_reference_and_once() {
    let dir = tempfile::tempdir().expect("tmp");
    skill(dir.path(), "a", "Skill A.");
    skill(dir.path(), "b", "Skill B.");
    let (catalog, _) = SkillCatalog::scan(&[SkillRoot { path: dir.path().to_path_buf(), kind: SkillRootKind::Live }]);
    let preloaded = ["b".to_owned(), "gone".to_owned()];
    let selection = select_with(&catalog, &preloaded, &[Message::user("use $a and $b")]);
    let names: Vec<&str> = selection.selected.iter().map(|l| l.entry.name.as_str()).collect();
    assert_eq!(names, ["b", "a"]);
    assert_eq!(selection.skipped.iter().map(|s| s.name.as_str()).collect::<Vec<_>>(), ["gone"]);
}

#[test]
fn skill_files_are_read_through_the_skill_boundary() {
    let dir = tempfile::tempdir().expect("tmp");
    skill(dir.path(), "s", "body");
    std::fs::write(dir.path().join("s/ref.md"), "reference").expect("write");
    std::fs::write(dir.path().join("secret.txt"), "secret").expect("write");
    let (catalog, _) = SkillCatalog::scan(&[SkillRoot { path: dir.path().to_path_buf(), kind: SkillRootKind::Live }]);
    assert_eq!(catalog.read_file("s", "ref.md"), Ok("reference".into()));
    assert!(matches!(catalog.read_file("s", "../secret.txt"), Err(SkillError::InvalidFileReference { .. })));
    assert!(matches!(catalog.read_file("s", "/etc/passwd"), Err(SkillError::InvalidFileReference { .. })));
    assert_eq!(catalog.load("s").map(|l| l.files), Ok(vec!["ref.md".to_owned()]));
}

#[test]
fn skill_md_symlinked_out_of_its_skill_directory_is_refused_at_scan() {
    let dir = tempfile::tempdir().expect("tmp");
    let outside = tempfile::tempdir().expect("tmp");
    std::fs::write(outside.path().join("SKILL.md"), "---\nname: stolen\n---\nsecret").expect("write");
    std::fs::create_dir(dir.path().join("s")).expect("mkdir");
    std::os::unix::fs::symlink(outside.path().join("SKILL.md"), dir.path().join("s/SKILL.md")).expect("link");
    let (catalog, issues) =
        SkillCatalog::scan(&[SkillRoot { path: dir.path().to_path_buf(), kind: SkillRootKind::Live }]);
    assert!(catalog.entries().is_empty());
    assert!(issues.iter().any(|i| i.reason.contains("SKILL.md is outside")), "{issues:?}");
}

fn live(path: &Path) -> SkillRoot {
    SkillRoot { path: path.to_path_buf(), kind: SkillRootKind::Live }
}

#[test]
fn a_front_matter_name_names_the_skill_and_its_directory_stays_an_alias() {
    let dir = tempfile::tempdir().expect("tmp");
    skill(dir.path(), "other-dir", "---\nname: renamed\n---\nRENAMED\n");
    skill(dir.path(), "label", "---\nname: Fancy Label\n---\nFirst line\nsecond\n");
    skill(dir.path(), "tools", "---\ncontext: fork\nagent: Explore\n---\nbody\n");
    let (catalog, issues) = SkillCatalog::scan(&[live(dir.path())]);
    assert!(issues.is_empty(), "{issues:?}");
    let names: Vec<&str> = catalog.entries().iter().map(|e| e.name.as_str()).collect();
    assert_eq!(names, ["label", "renamed", "tools"], "an invalid front matter name falls back to the directory's");
    assert_eq!(catalog.get("other-dir").map(|e| e.name.as_str()), Some("renamed"));
    assert_eq!(catalog.get("label").map(|e| e.description.as_str()), Some("First line"), "the body's first line");
    let notes: Vec<&str> = catalog.notes().iter().map(|n| n.reason.as_str()).collect();
    assert_eq!(notes.len(), 2, "{notes:?}");
    assert!(notes[0].contains("`context` is not supported"), "{notes:?}");
}

#[test]
fn earlier_roots_win_and_plugins_are_namespaced_with_their_single_skill_named_by_front_matter() {
    let dir = tempfile::tempdir().expect("tmp");
    let (user, project, plugin) = (dir.path().join("user"), dir.path().join("project"), dir.path().join("plugin"));
    skill(&user, "twin", "---\ndescription: user\n---\nU");
    skill(&project, "twin", "---\ndescription: project\n---\nP");
    skill(&plugin.join("skills"), "review", "---\nname: fancy\n---\nR");
    std::fs::write(plugin.join("SKILL.md"), "---\nname: solo\n---\nS").expect("write");
    let source = |dir: PathBuf, single: bool| PluginSkills {
        plugin: "tools".into(),
        root: plugin.clone(),
        data: dir.join("data"),
        dir,
        single,
    };
    let roots = [live(&project), SkillRoot { path: user, kind: SkillRootKind::System }];
    let (catalog, issues) = SkillCatalog::scan_all(
        &roots,
        &[source(plugin.join("skills"), false), source(plugin.clone(), true)],
        &ParseMemo::disabled(),
    );
    assert_eq!(catalog.get("twin").map(|e| e.description.as_str()), Some("user"));
    assert!(issues.iter().any(|i| i.name == "twin" && i.reason.contains("shadowed")), "{issues:?}");
    let names: Vec<&str> = catalog.entries().iter().map(|e| e.name.as_str()).collect();
    assert_eq!(names, ["twin", "tools:fancy", "tools:solo"]);
    assert_eq!(catalog.find("tools:review").map(|e| e.name.as_str()), Some("tools:fancy"), "its directory's name");
    assert_eq!(catalog.find("/solo").map(|e| e.name.as_str()), Some("tools:solo"), "a plugin skill's own name");
    assert!(catalog.get("tools:solo").is_some_and(|e| e.plugin.as_ref().is_some_and(|p| p.root == plugin)));
}

#[test]
fn only_the_user_selects_or_invokes_a_disable_model_invocation_skill_and_only_the_model_a_hidden_one() {
    let dir = tempfile::tempdir().expect("tmp");
    skill(dir.path(), "deploy", "---\ndisable-model-invocation: on\n---\nDeploy $ARGUMENTS");
    skill(dir.path(), "lore", "---\nuser-invocable: false\n---\nLore");
    let (catalog, _) = SkillCatalog::scan(&[live(dir.path())]);
    let by_model = select(&catalog, &[Message::assistant_text("I will use $deploy")]);
    assert!(by_model.selected.is_empty() && by_model.skipped[0].reason.contains("disable-model-invocation"));
    assert_eq!(select(&catalog, &[Message::user("use $deploy")]).selected.len(), 1);
    assert!(select_with(&catalog, &["deploy".to_owned()], &[]).selected.is_empty(), "never preloaded");
    let session = SkillSession { catalog: std::sync::Arc::new(catalog), vars: SkillVars::default() };
    assert!(matches!(session.invoke("deploy", None, Invoker::Model), Err(InvokeError::UserOnly(_))));
    let run = session.invoke("/deploy", Some("prod"), Invoker::User).expect("the user may");
    assert!(run.text.ends_with("\n\nDeploy prod"), "{}", run.text);
    assert!(matches!(session.invoke("lore", None, Invoker::User), Err(InvokeError::ModelOnly(_))));
    assert!(session.invoke("lore", None, Invoker::Model).is_ok());
    assert_eq!(
        session.invoke("nope", None, Invoker::Model).err().map(|e| e.to_string()),
        Some("Unknown skill: nope".into())
    );
}

#[test]
fn a_remembered_listing_still_sees_a_skill_md_added_to_a_listed_directory_and_a_new_directory() {
    let dir = tempfile::tempdir().expect("tmp");
    let root = dir.path().join("skills");
    skill(&root, "b", "---\ndescription: b\n---\nbody\n");
    std::fs::create_dir_all(root.join("a")).expect("mkdir");
    std::fs::write(root.join("notes.txt"), "not a skill").expect("write");
    let memo_file = dir.path().join("memo.json");
    let roots = [SkillRoot { path: root.clone(), kind: SkillRootKind::Live }];
    let names = |memo: &ParseMemo| {
        let (catalog, issues) = SkillCatalog::scan_all(&roots, &[], memo);
        assert!(issues.is_empty(), "{issues:?}");
        catalog.entries.iter().map(|e| e.name.clone()).collect::<Vec<_>>()
    };
    // Older than the memo's settle time, so the listing and the skill are remembered.
    std::thread::sleep(spine_protocol::parse_memo::SETTLE + std::time::Duration::from_millis(100));
    let memo = ParseMemo::at(memo_file.clone());
    assert_eq!(names(&memo), ["b"]);
    memo.save();
    let saved = std::fs::read_to_string(&memo_file).expect("memo written");
    assert!(saved.contains("skill-dirs.v1"), "the listing is remembered: {saved}");

    // A SKILL.md written into a listed directory leaves the root's stamp as it was.
    std::fs::write(root.join("a").join("SKILL.md"), "---\ndescription: a\n---\nbody\n").expect("write");
    assert_eq!(names(&ParseMemo::at(memo_file.clone())), ["a", "b"]);
    // A new directory changes the root's stamp: listed again.
    skill(&root, "c", "---\ndescription: c\n---\nbody\n");
    assert_eq!(names(&ParseMemo::at(memo_file)), ["a", "b", "c"]);
}

#[test]
fn a_skill_md_that_is_a_directory_is_no_skill_and_a_linked_one_is_read() {
    let dir = tempfile::tempdir().expect("tmp");
    let root = dir.path().join("skills");
    std::fs::create_dir_all(root.join("odd").join("SKILL.md")).expect("mkdir");
    std::fs::create_dir_all(root.join("linked")).expect("mkdir");
    std::fs::write(root.join("linked").join("real.md"), "---\ndescription: via a link\n---\nbody\n").expect("write");
    std::os::unix::fs::symlink("real.md", root.join("linked").join("SKILL.md")).expect("link");
    let roots = [SkillRoot { path: root, kind: SkillRootKind::Live }];
    let memo = ParseMemo::at(dir.path().join("memo.json"));
    let (catalog, issues) = SkillCatalog::scan_all(&roots, &[], &memo);
    let names: Vec<_> = catalog.entries.iter().map(|e| e.name.as_str()).collect();
    assert_eq!(names, ["linked"]);
    assert!(issues.is_empty(), "{issues:?}");
}
