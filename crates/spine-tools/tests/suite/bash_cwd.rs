//! Bash keeps its shell's working directory between calls when the context carries the agent's
//! shell directory (the runner sets `cwd` to it before each call, as `next` does here).

use std::sync::Arc;

use serde_json::{Value, json};
use spine_core::watch::ShellCwd;
use spine_protocol::tool::ErrorCode;

use crate::support::Fixture;

/// A fixture whose context keeps the shell's directory.
fn kept() -> (Fixture, Arc<ShellCwd>) {
    let mut f = Fixture::new();
    let shell = Arc::new(ShellCwd::new(f.root()));
    f.ctx.shell_cwd = Some(Arc::clone(&shell));
    std::fs::create_dir_all(f.root().join("sub/deeper")).expect("dirs");
    (f, shell)
}

/// One call, then the context's `cwd` follows the shell (what the runner does).
async fn bash(f: &mut Fixture, shell: &ShellCwd, command: &str) -> Result<Value, spine_protocol::tool::ToolError> {
    let result = f.call("Bash", json!({"command": command})).await;
    f.ctx.cwd = shell.get();
    result
}

#[tokio::test]
async fn a_cd_is_where_the_next_command_starts_whatever_the_command_prints_or_how_it_exits() {
    let (mut f, shell) = kept();
    let root = f.root();
    let r = bash(&mut f, &shell, "cd sub && echo moved").await.expect("cd");
    assert_eq!(r["stdout"], json!("moved"));
    assert_eq!(r["stderr"], json!(""), "the report never reaches the output");
    assert_eq!(
        bash(&mut f, &shell, "pwd").await.expect("pwd")["stdout"],
        json!(root.join("sub").display().to_string())
    );
    // `exit N` and `set -e` still report the directory.
    let e = bash(&mut f, &shell, "cd deeper; exit 3").await.expect_err("exit 3");
    assert_eq!(e.code, ErrorCode::CommandFailed);
    assert_eq!(shell.get(), root.join("sub/deeper"));
    bash(&mut f, &shell, "set -e; cd ..; false; cd /").await.expect_err("set -e");
    assert_eq!(shell.get(), root.join("sub"));
    // A subshell's cd is its own.
    bash(&mut f, &shell, "(cd deeper)").await.expect("subshell");
    assert_eq!(shell.get(), root.join("sub"));
}

#[tokio::test]
async fn a_cd_out_of_the_workspace_is_reset_to_the_project_directory_with_claude_codes_note() {
    let (mut f, shell) = kept();
    let root = f.root();
    bash(&mut f, &shell, "cd sub").await.expect("cd");
    let outside = tempfile::tempdir().expect("outside");
    let command = format!("cd '{}' && echo there && echo err >&2", outside.path().display());
    let r = bash(&mut f, &shell, &command).await.expect("cd outside");
    assert_eq!(r["stdout"], json!("there"));
    let note = format!("Shell cwd was reset to {}", root.display());
    assert_eq!(r["stderr"], json!(format!("err\n{note}")));
    assert!(f.project("Bash", &r).content.ends_with(&note), "the model reads the note");
    assert_eq!(shell.get(), root);
    assert_eq!(bash(&mut f, &shell, "pwd").await.expect("pwd")["stderr"], json!(""), "reset once");
}

#[tokio::test]
async fn a_directory_removed_under_the_shell_starts_the_next_command_in_the_project_directory() {
    let (mut f, shell) = kept();
    let root = f.root();
    bash(&mut f, &shell, "cd sub/deeper").await.expect("cd");
    std::fs::remove_dir(root.join("sub/deeper")).expect("remove");
    let r = bash(&mut f, &shell, "pwd").await.expect("pwd");
    assert_eq!(r["stdout"], json!(root.display().to_string()));
    assert_eq!(r["stderr"], json!(format!("Shell cwd was reset to {}", root.display())));
}

#[tokio::test]
async fn without_a_kept_directory_every_command_starts_in_the_context_directory() {
    let f = Fixture::new();
    std::fs::create_dir(f.root().join("sub")).expect("sub");
    f.call("Bash", json!({"command": "cd sub"})).await.expect("cd");
    let r = f.call("Bash", json!({"command": "pwd; cd /"})).await.expect("pwd");
    assert_eq!(r["stdout"], json!(f.root().display().to_string()));
    assert_eq!(r["stderr"], json!(""), "no note: nothing is kept");
}
