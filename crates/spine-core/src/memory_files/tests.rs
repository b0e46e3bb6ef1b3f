//! Unit tests of the memory-file rules: order, imports, depth, cycles, code spans, caps.
use super::*;

struct Fixture {
    _dir: tempfile::TempDir,
    home: PathBuf,
    project: PathBuf,
}

impl Fixture {
    fn new() -> Self {
        let dir = tempfile::tempdir().expect("tmp");
        let base = dir.path().canonicalize().expect("canon");
        let home = base.join("home");
        let project = base.join("project");
        std::fs::create_dir_all(&home).expect("mkdir");
        std::fs::create_dir_all(&project).expect("mkdir");
        Fixture { _dir: dir, home, project }
    }

    fn write(&self, path: &Path, text: &str) {
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(path, text).expect("write");
    }

    fn load_in(&self, workspace: &Path, cwd: &Path) -> (MemoryFiles, Vec<String>) {
        let ws = Workspace::new(workspace).expect("ws");
        load(&MemorySources::Load { home: Some(self.home.clone()) }, &ws, cwd)
    }

    fn load(&self) -> (MemoryFiles, Vec<String>) {
        self.load_in(&self.project, &self.project)
    }
}

fn paths(files: &MemoryFiles) -> Vec<PathBuf> {
    files.files.iter().map(|f| f.path.clone()).collect()
}

#[test]
fn files_load_user_first_then_repository_root_down_to_cwd_in_name_order() {
    let f = Fixture::new();
    std::fs::create_dir_all(f.project.join(".git")).expect("git");
    let sub = f.project.join("pkg/app");
    std::fs::create_dir_all(&sub).expect("mkdir");
    let user = f.home.join(".claude/CLAUDE.md");
    f.write(&user, "user rules");
    let names = ["AGENTS.md", ".claude/CLAUDE.md", "CLAUDE.local.md", "CLAUDE.md"];
    for dir in [&f.project, &sub] {
        for name in names {
            f.write(&dir.join(name), &format!("{name} in {}", dir.display()));
        }
    }
    let (files, warnings) = f.load_in(&f.project, &sub);
    assert!(warnings.is_empty(), "{warnings:?}");
    let mut expected = vec![user];
    for dir in [&f.project, &f.project.join("pkg"), &sub] {
        for name in PROJECT_FILE_NAMES {
            if dir.join(name).exists() {
                expected.push(dir.join(name));
            }
        }
    }
    assert_eq!(paths(&files), expected);
    let kinds: Vec<&str> = files.files.iter().map(|f| f.kind.as_str()).collect();
    assert_eq!(kinds, ["user", "project", "local", "project", "project", "project", "local", "project", "project"]);
}

#[test]
fn without_a_repository_only_the_cwd_is_searched() {
    let f = Fixture::new();
    let sub = f.project.join("sub");
    f.write(&f.project.join("CLAUDE.md"), "outer");
    f.write(&sub.join("CLAUDE.md"), "inner");
    let (files, _) = f.load_in(&f.project, &sub);
    assert_eq!(paths(&files), vec![sub.join("CLAUDE.md")]);
    assert_eq!(project_dirs(&sub), vec![sub.clone()]);
}

#[test]
fn project_files_outside_the_workspace_are_skipped_with_a_warning() {
    let f = Fixture::new();
    std::fs::create_dir_all(f.project.join(".git")).expect("git");
    let sub = f.project.join("sub");
    f.write(&f.project.join("CLAUDE.md"), "repository root, above the workspace");
    f.write(&sub.join("CLAUDE.md"), "inside\n@../secret.md");
    f.write(&f.project.join("secret.md"), "outside");
    let (files, warnings) = f.load_in(&sub, &sub);
    assert_eq!(paths(&files), vec![sub.join("CLAUDE.md")]);
    assert_eq!(warnings.len(), 2, "{warnings:?}");
    assert!(warnings.iter().all(|w| w.contains("outside the workspace")), "{warnings:?}");
}

#[test]
fn imports_resolve_relative_to_the_importing_file_and_from_home() {
    let f = Fixture::new();
    f.write(&f.project.join("CLAUDE.md"), "See @docs/a.md and @~/prefs.md\n");
    f.write(&f.project.join("docs/a.md"), "a imports @./b.md");
    f.write(&f.project.join("docs/b.md"), "b");
    f.write(&f.home.join("prefs.md"), "prefs");
    let (files, warnings) = f.load();
    assert!(warnings.iter().all(|w| w.contains("prefs.md")), "{warnings:?}");
    assert_eq!(
        paths(&files),
        vec![f.project.join("CLAUDE.md"), f.project.join("docs/a.md"), f.project.join("docs/b.md")]
    );
    assert_eq!(files.files[2].imported_by.as_deref(), Some(f.project.join("docs/a.md").as_path()));
    // The project may not reach into home: `~/prefs.md` is outside the workspace.
    assert_eq!(warnings.len(), 1);
    assert!(warnings[0].contains("outside the workspace"), "{warnings:?}");
}

#[test]
fn the_user_file_may_import_from_anywhere() {
    let f = Fixture::new();
    f.write(&f.home.join(".claude/CLAUDE.md"), "@~/notes/mine.md\n@../shared.md");
    f.write(&f.home.join("notes/mine.md"), "mine");
    f.write(&f.home.join("shared.md"), "shared");
    let (files, warnings) = f.load();
    assert!(warnings.is_empty(), "{warnings:?}");
    assert_eq!(
        paths(&files),
        vec![f.home.join(".claude/CLAUDE.md"), f.home.join("notes/mine.md"), f.home.join("shared.md")]
    );
    assert!(files.files.iter().all(|m| m.kind == MemoryKind::User));
}

#[test]
fn imports_stop_after_five_hops() {
    let f = Fixture::new();
    f.write(&f.project.join("CLAUDE.md"), "@d1.md");
    for i in 1..=7 {
        f.write(&f.project.join(format!("d{i}.md")), &format!("level {i} @d{}.md", i + 1));
    }
    let (files, warnings) = f.load();
    let loaded: Vec<String> =
        files.files.iter().map(|m| m.path.file_name().expect("name").to_string_lossy().into_owned()).collect();
    assert_eq!(loaded, ["CLAUDE.md", "d1.md", "d2.md", "d3.md", "d4.md", "d5.md"]);
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(warnings[0].contains("@d6.md") && warnings[0].contains("5 hops"), "{warnings:?}");
}

#[test]
fn import_cycles_are_cut_and_each_file_loads_once() {
    let f = Fixture::new();
    f.write(&f.project.join("CLAUDE.md"), "@a.md @CLAUDE.md");
    f.write(&f.project.join("a.md"), "@b.md");
    f.write(&f.project.join("b.md"), "@a.md @./CLAUDE.md");
    std::os::unix::fs::symlink("CLAUDE.md", f.project.join("AGENTS.md")).expect("link");
    let (files, warnings) = f.load();
    assert!(warnings.is_empty(), "{warnings:?}");
    assert_eq!(paths(&files), vec![f.project.join("CLAUDE.md"), f.project.join("a.md"), f.project.join("b.md")]);
}

#[test]
fn at_signs_in_code_spans_and_fenced_blocks_are_not_imports() {
    let text = "Use `@not/span.md` and ``@not `still` span`` here.\n\
                ```sh\n@not/fenced.md\n```\n\
                ~~~~\n```\n@not/tilde.md\n~~~~\n\
                mail me@example.com or @@scoped, @#anchor\n\
                @yes/one.md then @yes/two.md#section and @dir/with\\ space.md\n\
                - item @./yes/three.md";
    assert_eq!(imports(text), ["yes/one.md", "yes/two.md", "dir/with space.md", "./yes/three.md"]);
}

#[test]
fn missing_imports_are_skipped_with_a_warning() {
    let f = Fixture::new();
    f.write(&f.project.join("CLAUDE.md"), "@gone.md and @docs\n");
    std::fs::create_dir_all(f.project.join("docs")).expect("mkdir");
    let (files, warnings) = f.load();
    assert_eq!(paths(&files), vec![f.project.join("CLAUDE.md")]);
    assert_eq!(warnings.len(), 2, "{warnings:?}");
    assert!(warnings[0].contains("@gone.md") && warnings[0].contains("not found"), "{warnings:?}");
    assert!(warnings[1].contains("docs") && warnings[1].contains("directory"), "{warnings:?}");
}

#[test]
fn each_file_is_cut_at_the_cap_on_a_character_boundary() {
    let f = Fixture::new();
    let long = format!("a{}", "é".repeat(FILE_CAP));
    f.write(&f.project.join("CLAUDE.md"), &long);
    let (files, warnings) = f.load();
    let m = &files.files[0];
    assert!(m.truncated);
    assert_eq!(m.bytes, FILE_CAP + 1);
    assert!(m.content.ends_with("[memory file truncated at 40000 bytes]"));
    assert!(m.content.len() <= FILE_CAP + 60);
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert_eq!(files.trace_value()[0]["truncated"], json!(true));
}

#[test]
fn off_loads_nothing() {
    let f = Fixture::new();
    f.write(&f.project.join("CLAUDE.md"), "rules");
    let ws = Workspace::new(&f.project).expect("ws");
    let (files, warnings) = load(&MemorySources::Off, &ws, &f.project);
    assert!(files.is_empty() && warnings.is_empty());
    assert_eq!(files.render(), "");
}

#[test]
fn render_names_each_file_and_whose_it_is() {
    let f = Fixture::new();
    f.write(&f.home.join(".claude/CLAUDE.md"), "Be brief.\n");
    f.write(&f.project.join("CLAUDE.local.md"), "My sandbox is at :8080.");
    let (files, _) = f.load();
    let text = files.render();
    assert!(text.starts_with(PREAMBLE), "{text}");
    assert!(text.contains(&format!(
        "Contents of {} (user's private global instructions for all projects):\n\nBe brief.\n\nContents of {} \
         (user's private project instructions, not checked in):\n\nMy sandbox is at :8080.",
        f.home.join(".claude/CLAUDE.md").display(),
        f.project.join("CLAUDE.local.md").display()
    )));
    assert_eq!(
        files.trace_value()[1],
        json!({"path": f.project.join("CLAUDE.local.md"), "kind": "local", "bytes": 23})
    );
}

#[test]
fn rule_files_with_paths_are_kept_aside_with_their_base_and_the_others_load() {
    let f = Fixture::new();
    let sub = f.project.join("pkg");
    std::fs::create_dir_all(&sub).expect("mkdir");
    f.write(&f.project.join(".claude/rules/style.md"), "Always brief.\n");
    f.write(&f.project.join(".claude/rules/ts.md"), "---\npaths: src/**/*.ts\n---\nStrict mode.\n");
    f.write(&f.project.join(".claude/rules/star.md"), "---\npaths: \"**\"\n---\nEverywhere.\n");
    f.write(&f.home.join(".claude/rules/txt.md"), "---\npaths: \"*.txt\"\n---\nPlain text.\n");
    let (files, warnings) = f.load_in(&f.project, &sub);
    assert!(warnings.is_empty(), "{warnings:?}");
    let rules = f.project.join(".claude/rules");
    assert_eq!(paths(&files), [rules.join("star.md"), rules.join("style.md")], "`**` is no condition");
    let kept: Vec<(PathBuf, MemoryKind, PathBuf)> =
        files.conditional.iter().map(|r| (r.path.clone(), r.kind, r.base.clone())).collect();
    assert_eq!(
        kept,
        [
            (f.home.join(".claude/rules/txt.md"), MemoryKind::User, sub.clone()),
            (rules.join("ts.md"), MemoryKind::Project, f.project.clone()),
        ],
        "the user's rules match from the working directory, the project's from its root"
    );
    assert_eq!(files.conditional[1].body, "Strict mode.\n");
    assert!(!files.render().contains("Strict mode."), "not part of the session's memory");
}
