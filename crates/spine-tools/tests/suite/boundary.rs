//! The workspace boundary of the file tools: normalisation before hooks, and refusal at
//! execution of any path resolving outside the root (`..`, absolute, symlinks).

use serde_json::{Map, Value, json};
use spine_core::tool::Tool;
use spine_protocol::tool::ErrorCode;

use crate::support::Fixture;

/// Each file tool with arguments aimed at `target`.
fn calls(target: &str) -> Vec<(&'static str, Value)> {
    vec![
        ("Read", json!({"file_path": target})),
        ("Write", json!({"file_path": target, "content": "pwned"})),
        ("Edit", json!({"file_path": target, "old_string": "secret", "new_string": "pwned"})),
        ("Grep", json!({"pattern": "secret", "path": target})),
        ("Glob", json!({"pattern": "*", "path": target})),
    ]
}

async fn assert_denied(f: &Fixture, target: &str, outside_file: &std::path::Path) {
    for (tool, args) in calls(target) {
        let e = f.call(tool, args).await.expect_err(&format!("{tool} {target} must be denied"));
        assert_eq!(e.code, ErrorCode::PermissionDenied, "{tool} {target}: {e}");
        assert!(e.message.contains("is outside the workspace"), "{tool}: {}", e.message);
    }
    assert_eq!(std::fs::read_to_string(outside_file).expect("outside file"), "secret");
}

#[tokio::test]
async fn dotdot_paths_out_of_the_workspace_are_permission_denied() {
    let f = Fixture::new();
    let outside = tempfile::tempdir().expect("tempdir");
    let file = outside.path().join("s.txt");
    std::fs::write(&file, "secret").expect("write");
    // From the root, climb to the outside directory.
    let depth = f.root().components().count() - 1;
    let rel = format!(
        "{}{}",
        "../".repeat(depth),
        file.canonicalize().expect("canon").to_string_lossy().trim_start_matches('/')
    );
    assert_denied(&f, &rel, &file).await;
}

#[tokio::test]
async fn absolute_paths_outside_the_workspace_are_permission_denied() {
    let f = Fixture::new();
    let outside = tempfile::tempdir().expect("tempdir");
    let file = outside.path().join("s.txt");
    std::fs::write(&file, "secret").expect("write");
    assert_denied(&f, &file.to_string_lossy(), &file).await;
}

#[tokio::test]
async fn symlinks_pointing_outside_are_permission_denied() {
    let f = Fixture::new();
    let outside = tempfile::tempdir().expect("tempdir");
    let file = outside.path().join("s.txt");
    std::fs::write(&file, "secret").expect("write");
    std::os::unix::fs::symlink(&file, f.root().join("link.txt")).expect("link");
    std::os::unix::fs::symlink(outside.path(), f.root().join("dirlink")).expect("link");
    assert_denied(&f, "link.txt", &file).await;
    assert_denied(&f, "dirlink/s.txt", &file).await;
    assert_denied(&f, "dirlink", &file).await;
}

#[tokio::test]
async fn a_search_does_not_follow_symlinks_out_of_the_workspace() {
    let f = Fixture::new();
    let outside = tempfile::tempdir().expect("tempdir");
    std::fs::write(outside.path().join("s.txt"), "secret").expect("write");
    std::os::unix::fs::symlink(outside.path(), f.root().join("dirlink")).expect("link");
    std::os::unix::fs::symlink(outside.path().join("s.txt"), f.root().join("l.txt")).expect("link");
    f.write("in.txt", "secret");
    let r = f.call("Grep", json!({"pattern": "secret"})).await.expect("grep");
    assert_eq!(r["filenames"], json!(["in.txt"]));
    let r = f.call("Glob", json!({"pattern": "**/*.txt"})).await.expect("glob");
    assert_eq!(r["filenames"], json!(["in.txt"]));
}

#[test]
fn file_tools_normalise_paths_and_report_them_for_the_boundary_check() {
    let cwd = std::path::Path::new("/w/project");
    for tool in spine_tools::builtin_tools() {
        let name = tool.spec().name;
        let key = match name.as_str() {
            "Read" | "Write" | "Edit" => "file_path",
            "Glob" | "Grep" => "path",
            _ => {
                let mut args = Map::new();
                args.insert("command".into(), json!("ls ../x"));
                tool.normalize(&mut args, cwd);
                assert_eq!(args["command"], json!("ls ../x"), "{name} must not touch args");
                assert!(tool.workspace_paths(&args).is_empty(), "{name}");
                continue;
            }
        };
        let mut args = Map::new();
        args.insert(key.into(), json!("src/../lib/./a.rs"));
        tool.normalize(&mut args, cwd);
        assert_eq!(args[key], json!("/w/project/lib/a.rs"), "{name}");
        assert_eq!(tool.workspace_paths(&args), vec!["/w/project/lib/a.rs"], "{name}");
    }
    // Glob and Grep without `path` search the working directory: nothing to report.
    let glob = spine_tools::GlobTool;
    let mut args = Map::new();
    args.insert("pattern".into(), json!("*.rs"));
    glob.normalize(&mut args, cwd);
    assert!(glob.workspace_paths(&args).is_empty());
    assert_eq!(args.len(), 1);
}
