//! Unit tests of the files a tool call touches, for conditional rules.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

use super::*;

fn input(value: Value) -> Map<String, Value> {
    value.as_object().cloned().unwrap_or_default()
}

#[test]
fn read_touches_its_file_even_when_it_fails_and_write_and_edit_only_when_they_succeed() {
    let cwd = Path::new("/p");
    let args = input(json!({"file_path": "src/a.ts"}));
    assert_eq!(touched_files("Read", &args, true, cwd), [PathBuf::from("/p/src/a.ts")]);
    assert_eq!(touched_files("Read", &args, false, cwd), [PathBuf::from("/p/src/a.ts")]);
    for tool in ["Write", "Edit"] {
        assert_eq!(touched_files(tool, &args, true, cwd), [PathBuf::from("/p/src/a.ts")], "{tool}");
        assert!(touched_files(tool, &args, false, cwd).is_empty(), "{tool}");
    }
}

#[test]
fn other_tools_touch_no_file() {
    let cwd = Path::new("/p");
    for tool in ["Glob", "Grep", "exec_command", "mcp__x__read", "NotebookEdit"] {
        let args = input(json!({"file_path": "a.ts", "path": "src", "pattern": "*.ts", "command": "cat a.ts"}));
        assert!(touched_files(tool, &args, true, cwd).is_empty(), "{tool}");
    }
}

#[test]
fn bash_touches_the_file_a_printing_command_names_when_it_succeeded_and_the_file_exists() {
    let dir = tempfile::tempdir().expect("dir");
    std::fs::create_dir_all(dir.path().join("docs")).expect("mkdir");
    std::fs::write(dir.path().join("docs/x.md"), "x\n").expect("write");
    let bash = |command: &str, ok: bool| touched_files("Bash", &input(json!({"command": command})), ok, dir.path());
    assert_eq!(bash("cat docs/x.md", true), [dir.path().join("docs/x.md")]);
    assert!(bash("cat docs/x.md", false).is_empty(), "a failed command");
    assert!(bash("cat docs/missing.md", true).is_empty(), "not a file");
    assert!(bash("cat docs", true).is_empty(), "a directory");
}

#[test]
fn printing_commands_are_cat_nl_bat_head_tail_and_sed_n() {
    for (command, file) in [
        ("cat a.md", "a.md"),
        ("cat -n a.md", "a.md"),
        ("nl a.md", "a.md"),
        ("bat --plain a.md", "a.md"),
        ("batcat -n a.md", "a.md"),
        ("head -n 20 a.md", "a.md"),
        ("head -20 a.md", "a.md"),
        ("tail --lines=5 a.md", "a.md"),
        ("tail -n5 a.md", "a.md"),
        ("sed -n '3,9p' a.md", "a.md"),
        ("sed -n 4p a.md", "a.md"),
        ("sed --quiet 1,2p a.md", "a.md"),
    ] {
        assert_eq!(printed_files(command), [file], "{command}");
    }
}

#[test]
fn commands_that_do_more_than_print_a_file_name_none() {
    for command in [
        "cat a.md | head",
        "cat a.md > b.md",
        "cat < a.md",
        "cat a.md b.md",
        "cat -v a.md",
        "cat -",
        "cat",
        "nl -ba a.md",
        "head -c 10 a.md",
        "head -n 0 a.md",
        "tail -f a.md",
        "sed 3p a.md",
        "sed -n -i 3p a.md",
        "sed -n -e 3p a.md",
        "sed -n s/a/b/p a.md",
        "/bin/cat a.md",
        "sudo cat a.md",
        "ls && cat a.md",
        "eval cat a.md",
    ] {
        assert!(printed_files(command).is_empty(), "{command}: {:?}", printed_files(command));
    }
}

#[test]
fn several_printing_commands_count_beside_echo_printf_true_and_colon() {
    assert_eq!(printed_files("echo start && cat a.md; head -3 b.md && true"), ["a.md", "b.md"]);
    assert_eq!(printed_files(": ; printf x && nl c.md"), ["c.md"]);
}

#[test]
fn grep_and_rg_count_only_alone_with_display_flags_and_a_plain_file() {
    for (command, file) in [
        ("grep foo a.md", "a.md"),
        ("grep -n -i foo a.md", "a.md"),
        ("grep -A 3 --line-number foo a.md", "a.md"),
        ("egrep -C2 'a.b' a.md", "a.md"),
        ("rg --context=2 -S foo a.md", "a.md"),
        ("rg --after-context 2 foo a.md", "a.md"),
    ] {
        assert_eq!(printed_files(command), [file], "{command}");
    }
    for command in ["grep foo", "grep -r foo src", "grep foo a.md b.md", "grep foo '*.md'", "echo x && grep foo a.md"] {
        assert!(printed_files(command).is_empty(), "{command}");
    }
}
