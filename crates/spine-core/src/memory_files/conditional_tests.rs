//! Unit tests of conditional rule files: how `paths:` is read and how its globs match.

use std::path::Path;

use serde_json::json;

use super::*;

fn rule(globs: &[&str]) -> ConditionalRule {
    let globs = globs.iter().map(|g| (*g).to_owned()).collect();
    let (rule, warnings) =
        ConditionalRule::new(Path::new("/p/.claude/rules/r.md"), MemoryKind::Project, Path::new("/p"), globs, "x");
    assert!(warnings.is_empty(), "{warnings:?}");
    rule
}

fn read(text: &str) -> Option<ConditionalRule> {
    ConditionalRule::read(Path::new("/p/.claude/rules/r.md"), MemoryKind::Project, Path::new("/p"), text)
        .map(|(r, _)| r)
}

#[test]
fn paths_is_a_yaml_list_or_a_comma_separated_string() {
    assert_eq!(globs(&json!("src/**/*.ts")), ["src/**/*.ts"]);
    assert_eq!(globs(&json!(["a/*.go", "b/*.go"])), ["a/*.go", "b/*.go"]);
    assert_eq!(globs(&json!("a/*.go, b/*.go ,, ")), ["a/*.go", "b/*.go"]);
    assert_eq!(globs(&json!(["x.md", 3, null, ["nested/*.md"]])), ["x.md", "nested/*.md"], "non-strings are dropped");
    assert!(globs(&json!(true)).is_empty());
}

#[test]
fn brace_groups_expand_in_order_and_commas_inside_them_do_not_split() {
    assert_eq!(globs(&json!("lib/{a,b}/*.py")), ["lib/a/*.py", "lib/b/*.py"]);
    assert_eq!(globs(&json!("src/*.{ts, tsx}, docs")), ["src/*.ts", "src/*.tsx", "docs"]);
    assert_eq!(globs(&json!("{a,b}/{c,d}")), ["a/c", "a/d", "b/c", "b/d"]);
    assert_eq!(globs(&json!("a{}b")), ["a{}b"], "an empty group is not a group");
}

#[test]
fn brace_expansion_past_its_budget_keeps_the_glob_unexpanded() {
    let many = format!("{{{}}}/{{{}}}", (0..40).map(|i| i.to_string()).collect::<Vec<_>>().join(","), "x,y,z");
    assert_eq!(globs(&json!(many)).len(), 120);
    let too_many = format!("{{{0}}}{{{0}}}", (0..40).map(|i| i.to_string()).collect::<Vec<_>>().join(","));
    assert_eq!(globs(&json!(too_many)), [too_many], "1600 results are over {BRACE_RESULTS}");
}

#[test]
fn a_trailing_double_star_is_dropped_and_only_double_stars_are_no_condition() {
    assert_eq!(globs(&json!(["docs/**", "src/**/*.rs"])), ["docs", "src/**/*.rs"]);
    assert!(read("---\npaths: \"**\"\n---\nalways\n").is_none());
    assert!(read("---\npaths: [\"**\", \"/**\"]\n---\nalways\n").is_none());
    assert!(read("---\npaths: []\n---\nalways\n").is_none());
    assert!(read("---\ndescription: style\n---\nalways\n").is_none());
    assert!(read("no front matter\n").is_none());
}

#[test]
fn a_rule_with_paths_is_conditional_and_shows_its_text_after_the_front_matter() {
    let rule = read("---\npaths: src/**/*.ts\n---\nUse strict mode.\n").expect("conditional");
    assert_eq!(rule.globs, ["src/**/*.ts"]);
    assert_eq!(rule.body, "Use strict mode.\n");
    assert_eq!(rule.message_text(), "Contents of /p/.claude/rules/r.md:\n\nUse strict mode.\n");
    let listed = read("---\npaths:\n  - \"docs/**\"\n  - lib/{a,b}/*.py\n---\nx\n").expect("conditional");
    assert_eq!(listed.globs, ["docs", "lib/a/*.py", "lib/b/*.py"]);
}

#[test]
fn front_matter_that_is_not_yaml_is_read_again_with_glob_values_quoted() {
    assert_eq!(read("---\npaths: *.ts\n---\nx\n").expect("alias-looking glob").globs, ["*.ts"]);
    assert_eq!(read("---\npaths: {src,lib}/**\n---\nx\n").expect("flow-looking glob").globs, ["src", "lib"]);
    let rule = read("---\ndescription: a: b\npaths: [\"a/*\", \"b/*\"]\n---\nbody\n").expect("list kept");
    assert_eq!((rule.globs, rule.body.as_str()), (vec!["a/*".to_owned(), "b/*".to_owned()], "body\n"));
    assert!(read("---\npaths: [unclosed\n  - : :\n---\nx\n").is_none(), "still not YAML: no front matter");
}

#[test]
fn globs_are_gitignore_patterns_relative_to_the_base() {
    let r = rule(&["src/**/*.ts"]);
    assert!(r.matches(Path::new("/p/src/a.ts")));
    assert!(r.matches(Path::new("/p/src/deep/er/a.ts")));
    assert!(!r.matches(Path::new("/p/lib/src/a.ts")), "a pattern with a slash is anchored at the base");
    assert!(!r.matches(Path::new("/p/src/a.tsx")));
    let anywhere = rule(&["*.md"]);
    assert!(anywhere.matches(Path::new("/p/README.md")) && anywhere.matches(Path::new("/p/docs/deep/x.md")));
    let dir = rule(&["docs"]);
    assert!(dir.matches(Path::new("/p/docs/guide/x.txt")), "a directory covers what is under it");
    assert!(dir.matches(Path::new("/p/sub/docs/x.txt")), "a slashless name matches at any depth");
    let negated = rule(&["src/**", "!src/gen/**"]);
    assert!(negated.matches(Path::new("/p/src/a.rs")) && !negated.matches(Path::new("/p/src/gen/b.rs")));
}

#[test]
fn globs_match_case_insensitively_and_never_outside_the_base() {
    let r = rule(&["*.txt", "Src/*.MD"]);
    assert!(r.matches(Path::new("/p/NOTES.TXT")));
    assert!(r.matches(Path::new("/p/src/readme.md")));
    assert!(!r.matches(Path::new("/other/notes.txt")), "outside the base");
    assert!(!r.matches(Path::new("/p")), "the base itself");
}

#[test]
fn a_glob_that_does_not_compile_matches_nothing_with_a_warning() {
    let (rule, warnings) = ConditionalRule::new(
        Path::new("/p/.claude/rules/r.md"),
        MemoryKind::Project,
        Path::new("/p"),
        vec!["src/[z-a].rs".into(), "*.md".into()],
        "x",
    );
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(warnings[0].contains("src/[z-a].rs"), "{warnings:?}");
    assert!(rule.matches(Path::new("/p/a.md")), "the other globs still apply");
}
