//! Glob and Grep: patterns, gitignore, ordering, modes, limits.

use serde_json::json;
use spine_protocol::tool::ErrorCode;
use spine_testkit::files::mkfifo;

use crate::support::{Fixture, set_mtime};

#[tokio::test]
async fn glob_matches_the_pattern_and_sorts_newest_first() {
    let f = Fixture::new();
    set_mtime(&f.write("src/old.rs", ""), 1_000);
    set_mtime(&f.write("src/new.rs", ""), 3_000);
    set_mtime(&f.write("src/deep/mid.rs", ""), 2_000);
    f.write("src/notes.txt", "");
    let r = f.call("Glob", json!({"pattern": "**/*.rs"})).await.expect("glob");
    let duration = r["durationMs"].clone();
    assert!(duration.is_u64(), "{r}");
    assert_eq!(
        r,
        json!({
            "filenames": ["src/new.rs", "src/deep/mid.rs", "src/old.rs"],
            "durationMs": duration,
            "numFiles": 3,
            "truncated": false,
            "totalMatches": 3,
            "countIsComplete": true,
            "cwd": f.root().display().to_string(),
        })
    );
    let p = f.project("Glob", &r);
    assert_eq!(
        p.content,
        format!("Found 3 files:\n{}\n{}\n{}", f.path("src/new.rs"), f.path("src/deep/mid.rs"), f.path("src/old.rs")),
        "the model reads absolute paths"
    );
    // `*` stays in one directory; a pattern without `/` matches names at any depth.
    let r = f.call("Glob", json!({"pattern": "src/*.rs"})).await.expect("glob");
    assert_eq!(r["numFiles"], json!(2));
    // Names stay relative to the working directory, not to `path`.
    let r = f.call("Glob", json!({"pattern": "*.rs", "path": "src/deep"})).await.expect("glob");
    assert_eq!(r["filenames"], json!(["src/deep/mid.rs"]));
    // An absolute pattern under the search root is taken relative to it.
    let r = f.call("Glob", json!({"pattern": f.path("src/deep/*.rs")})).await.expect("glob");
    assert_eq!(r["filenames"], json!(["src/deep/mid.rs"]));
}

#[tokio::test]
async fn glob_honours_gitignore_outside_a_git_repo_and_skips_hidden_files() {
    let f = Fixture::new();
    f.write(".gitignore", "target/\n*.log\n");
    f.write("target/out.rs", "");
    f.write("debug.log", "");
    f.write(".hidden/x.rs", "");
    f.write(".secret.rs", "");
    f.write("keep.rs", "");
    f.write("keep.md", "");
    let r = f.call("Glob", json!({"pattern": "**/*"})).await.expect("glob");
    let mut names: Vec<String> =
        r["filenames"].as_array().expect("array").iter().map(|v| v.as_str().expect("str").to_owned()).collect();
    names.sort();
    assert_eq!(names, vec!["keep.md", "keep.rs"]);
}

#[tokio::test]
async fn glob_caps_results_at_100_and_says_so() {
    let f = Fixture::new();
    for i in 0..105 {
        f.write(&format!("f{i:03}.txt"), "");
    }
    let r = f.call("Glob", json!({"pattern": "*.txt"})).await.expect("glob");
    assert_eq!(r["numFiles"], json!(100));
    assert_eq!(r["truncated"], json!(true));
    assert_eq!(r["totalMatches"], json!(105));
    assert_eq!(f.project("Glob", &r).metadata["truncated"], json!(true));
}

#[tokio::test]
async fn glob_without_path_searches_the_working_directory() {
    let mut f = Fixture::new();
    f.write("a/one.rs", "");
    f.write("b/two.rs", "");
    f.ctx.cwd = f.root().join("b");
    let r = f.call("Glob", json!({"pattern": "*.rs"})).await.expect("glob");
    assert_eq!(r["filenames"], json!(["two.rs"]));
    assert_eq!(f.project("Glob", &r).content, format!("Found 1 file:\n{}", f.path("b/two.rs")));
    // A name outside the working directory stays absolute, as in Claude Code.
    let r = f.call("Glob", json!({"pattern": "*.rs", "path": f.path("a")})).await.expect("glob");
    assert_eq!(r["filenames"], json!([f.path("a/one.rs")]));
    assert_eq!(f.project("Glob", &r).content, format!("Found 1 file:\n{}", f.path("a/one.rs")));
    let r = f.call("Glob", json!({"pattern": "*.zig"})).await.expect("glob");
    assert_eq!(f.project("Glob", &r).content, "No files found.");
}

fn grep_fixture() -> Fixture {
    let f = Fixture::new();
    set_mtime(&f.write("a.rs", "fn main() {\n    let Foo = 1;\n}\n"), 1_000);
    set_mtime(&f.write("b.rs", "// foo\nline 2\nline 3\nline 4\nfoo again\nline 6\n"), 2_000);
    set_mtime(&f.write("c.txt", "foo in text\n"), 500);
    f
}

#[tokio::test]
async fn grep_lists_matching_files_newest_first_by_default() {
    let f = grep_fixture();
    let r = f.call("Grep", json!({"pattern": "foo"})).await.expect("grep");
    assert_eq!(r["mode"], json!("files_with_matches"));
    assert_eq!(r["numFiles"], json!(2));
    assert_eq!(r["filenames"], json!(["b.rs", "c.txt"]), "relative to the working directory, as in Claude Code");
    assert_eq!(r["totalFiles"], json!(2));
    assert!(r.get("content").is_none());
    let p = f.project("Grep", &r);
    assert_eq!(p.content, format!("Found 2 files:\n{}\n{}", f.path("b.rs"), f.path("c.txt")));
}

#[tokio::test]
async fn grep_dash_i_ignores_case() {
    let f = grep_fixture();
    let r = f.call("Grep", json!({"pattern": "foo", "-i": true, "glob": "*.rs"})).await.expect("grep");
    assert_eq!(r["numFiles"], json!(2));
    let r = f.call("Grep", json!({"pattern": "Foo", "glob": "*.rs"})).await.expect("grep");
    assert_eq!(r["filenames"], json!(["a.rs"]));
}

#[tokio::test]
async fn grep_content_mode_prints_numbered_lines_with_context() {
    let f = grep_fixture();
    let b = f.path("b.rs");
    let r = f.call("Grep", json!({"pattern": "foo", "path": "b.rs", "output_mode": "content"})).await.expect("grep");
    assert_eq!(r["content"], json!(format!("{b}:1:// foo\n{b}:5:foo again")));
    assert_eq!(r["numLines"], json!(2));
    assert_eq!(r["totalLines"], json!(2));
    assert_eq!(r["filenames"], json!(["b.rs"]));
    let r = f
        .call("Grep", json!({"pattern": "foo", "path": "b.rs", "output_mode": "content", "-A": 1}))
        .await
        .expect("grep");
    assert_eq!(r["content"], json!(format!("{b}:1:// foo\n{b}-2-line 2\n--\n{b}:5:foo again\n{b}-6-line 6")));
    let r = f
        .call("Grep", json!({"pattern": "foo", "path": "b.rs", "output_mode": "content", "-C": 2, "-n": false}))
        .await
        .expect("grep");
    assert_eq!(
        r["content"],
        json!(format!("{b}:// foo\n{b}-line 2\n{b}-line 3\n{b}-line 4\n{b}:foo again\n{b}-line 6"))
    );
    assert_eq!(f.project("Grep", &r).content, r["content"].as_str().expect("s"));
}

#[tokio::test]
async fn grep_count_mode_counts_matching_lines_per_file() {
    let f = grep_fixture();
    let r = f.call("Grep", json!({"pattern": "foo", "output_mode": "count"})).await.expect("grep");
    assert_eq!(r["content"], json!(format!("{}:2\n{}:1", f.path("b.rs"), f.path("c.txt"))));
    assert_eq!(r["numMatches"], json!(3));
    assert_eq!(r["numFiles"], json!(2));
    assert!(f.project("Grep", &r).content.starts_with("Found 3 matches in 2 files:"));
}

#[tokio::test]
async fn grep_glob_filter_honours_gitignore_and_skips_binary_files() {
    let f = grep_fixture();
    f.write(".gitignore", "ignored/\n");
    f.write("ignored/x.rs", "foo\n");
    f.write(".hidden.rs", "foo\n");
    std::fs::write(f.root().join("bin.rs"), b"foo\0\x01").expect("write");
    let r = f.call("Grep", json!({"pattern": "foo", "glob": "*.rs"})).await.expect("grep");
    assert_eq!(r["filenames"], json!(["b.rs"]));
    let r = f.call("Grep", json!({"pattern": "foo", "glob": "*.txt"})).await.expect("grep");
    assert_eq!(r["filenames"], json!(["c.txt"]));
}

#[tokio::test]
async fn grep_head_limit_keeps_the_first_results_and_reports_the_limit() {
    let f = grep_fixture();
    let r = f.call("Grep", json!({"pattern": "line", "output_mode": "content", "head_limit": 2})).await.expect("grep");
    assert_eq!(r["numLines"], json!(2));
    assert_eq!(r["totalLines"], json!(4), "before the limit");
    assert_eq!(r["appliedLimit"], json!(2));
    let r = f.call("Grep", json!({"pattern": "foo", "head_limit": 1})).await.expect("grep");
    assert_eq!(r["filenames"], json!(["b.rs"]));
    assert_eq!(r["totalFiles"], json!(2), "before the limit");
    assert!(f.project("Grep", &r).content.contains("first 1 results (head_limit)"));
}

#[tokio::test]
async fn grep_invalid_regex_is_a_validation_error_and_no_match_says_so() {
    let f = grep_fixture();
    let e = f.call("Grep", json!({"pattern": "("})).await.expect_err("bad regex");
    assert_eq!(e.code, ErrorCode::ValidationError);
    let r = f.call("Grep", json!({"pattern": "zzz", "output_mode": "content"})).await.expect("grep");
    assert_eq!(f.project("Grep", &r).content, "No matches found.");
}

#[tokio::test]
async fn a_grep_that_hangs_on_a_fifo_ignore_file_ends_with_a_timeout_error_at_its_time_limit() {
    use crate::agent::{AgentHarness, calls, results, text};
    use spine_tools::{GrepTool, TimeLimited};

    let mut h = AgentHarness::new();
    // A walk opens `.gitignore` files to honour them; one that is a FIFO with no writer blocks
    // that open for ever, as a hung network mount would.
    std::fs::write(h.dir.path().join("a.txt"), "needle\n").expect("write");
    let fifo = h.dir.path().join(".gitignore");
    mkfifo(&fifo);
    // Held open for reading and writing, the FIFO has a writer that never writes: the walk's
    // read of it blocks until this descriptor is closed (also when the test fails).
    let writer = std::fs::OpenOptions::new().read(true).write(true).open(&fifo).expect("open the FIFO");
    h.tools.register(TimeLimited::new(GrepTool, std::time::Duration::from_millis(500)));
    let run = tokio::time::timeout(
        std::time::Duration::from_secs(30),
        h.run("search", vec![calls(&[("g1", "Grep", json!({"pattern": "needle"}))]), text("done")]),
    )
    .await;
    // Release the blocked walk (it sees an empty ignore file, then the canceled token).
    drop(writer);
    let run = run.expect("the run ends although Grep hangs");
    let r = results(&run.outcome.messages);
    assert_eq!(r[0].error_code, Some(ErrorCode::Timeout), "{}", r[0].content);
    assert!(r[0].content.contains("Grep timed out after 500 ms"), "{}", r[0].content);
    assert_eq!(run.outcome.result, "done");
}

#[test]
fn file_tools_declare_the_file_tool_time_limit() {
    use spine_core::tool::Tool;
    let limited: Vec<Box<dyn Tool>> = vec![
        Box::new(spine_tools::ReadTool),
        Box::new(spine_tools::WriteTool),
        Box::new(spine_tools::EditTool),
        Box::new(spine_tools::GlobTool),
        Box::new(spine_tools::GrepTool),
    ];
    for tool in limited {
        assert_eq!(tool.time_limit(), Some(spine_tools::FILE_TOOL_TIME_LIMIT), "{}", tool.spec().name);
    }
    assert_eq!(spine_tools::BashTool.time_limit(), None, "Bash keeps its own timeout");
}
