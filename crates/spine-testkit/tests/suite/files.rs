//! Files: parents created, executables runnable, JSON lines read leniently or strictly, FIFOs,
//! the scripted-model file.

use std::time::Duration;

use serde_json::json;
use spine_testkit::files::{json_lines, mkfifo, read_jsonl, wait_for_file, write_executable, write_file};

#[test]
fn write_file_creates_parents_and_write_executable_makes_a_runnable_script() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = write_file(dir.path(), "a/b/c.txt", "hi");
    assert_eq!(std::fs::read_to_string(&path).expect("read"), "hi");
    let script = write_executable(dir.path(), "hooks/ok.sh", "#!/bin/sh\necho ran\n");
    let out = std::process::Command::new(&script).output().expect("the script runs");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "ran\n");
}

#[test]
fn json_lines_skip_blank_lines_and_a_missing_file_has_none() {
    let dir = tempfile::tempdir().expect("tempdir");
    assert!(json_lines(&dir.path().join("missing.jsonl")).is_empty());
    let path = write_file(dir.path(), "log.jsonl", "{\"a\": 1}\n\n[2]\n");
    assert_eq!(json_lines(&path), vec![json!({"a": 1}), json!([2])]);
    assert_eq!(read_jsonl(&write_file(dir.path(), "t.jsonl", "1\n\"x\"\n")), vec![json!(1), json!("x")]);
}

#[test]
#[should_panic(expected = "missing.jsonl")]
fn read_jsonl_fails_on_a_missing_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    read_jsonl(&dir.path().join("missing.jsonl"));
}

#[test]
#[should_panic(expected = "not JSON")]
fn read_jsonl_fails_on_a_line_that_is_not_json() {
    let dir = tempfile::tempdir().expect("tempdir");
    read_jsonl(&write_file(dir.path(), "t.jsonl", "{}\n\n"));
}

#[test]
fn mkfifo_makes_a_fifo_with_its_parents() {
    use std::os::unix::fs::FileTypeExt;
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("x/y/fifo");
    mkfifo(&path);
    assert!(std::fs::metadata(&path).expect("stat").file_type().is_fifo());
}

#[test]
fn the_scripted_model_file_holds_the_turns() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("script.json");
    spine_testkit::script::write_script_file(&path, json!([{"text": "x"}])).expect("write");
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&path).expect("read")).expect("json");
    assert_eq!(v, json!({"turns": [{"text": "x"}]}));
}

#[tokio::test]
async fn wait_for_file_returns_once_another_task_writes_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("late");
    let writer = {
        let path = path.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(50)).await;
            std::fs::write(path, "").expect("write");
        })
    };
    wait_for_file(&path, Duration::from_secs(30)).await;
    assert!(path.exists());
    writer.await.expect("writer");
}
