//! Memory: Markdown files under `.spine/memory/`, key validation, search, the daily log, the
//! workspace boundary, and the root memory reaching the prompt.

use serde_json::json;
use spine_core::stages::prepare_turn::ROOT_MEMORY_FILE;
use spine_protocol::run::RunSubtype;
use spine_protocol::tool::ErrorCode;
use spine_tools::FamilyConfig;

use crate::agent::{AgentHarness, calls, results, text};
use crate::direct::Direct;

#[tokio::test]
async fn store_and_get_round_trip_through_a_markdown_file() {
    let d = Direct::new();
    let stored = d
        .call("memory_store", json!({"key": "build-notes", "value": "# Build\n\nUse `cargo test`.\n"}))
        .await
        .expect("store");
    assert_eq!(
        stored,
        json!({"key": "build-notes", "path": ".spine/memory/build-notes.md", "bytes": 27, "created": true, "root": false})
    );
    assert_eq!(d.project("memory_store", &stored).content, "Stored memory `build-notes` (27 bytes).");
    let file = std::fs::read_to_string(d.root().join(".spine/memory/build-notes.md")).expect("file");
    assert_eq!(file, "# Build\n\nUse `cargo test`.\n");
    let got = d.call("memory_get", json!({"key": "build-notes"})).await.expect("get");
    assert_eq!(got["value"], json!(file));
    assert_eq!(d.project("memory_get", &got).content, "Memory `build-notes` (27 bytes):\n# Build\n\nUse `cargo test`.");
    let again = d.call("memory_store", json!({"key": "build-notes", "value": "v2"})).await.expect("replace");
    assert_eq!(again["created"], json!(false));
    assert_eq!(std::fs::read_to_string(d.root().join(".spine/memory/build-notes.md")).expect("file"), "v2");
}

#[tokio::test]
async fn invalid_keys_are_validation_errors() {
    let d = Direct::new();
    let long = "k".repeat(101);
    for key in ["../escape", "a/b", ".hidden", "", "two words", "tab\t", long.as_str(), "ü"] {
        for (tool, args) in [("memory_store", json!({"key": key, "value": "x"})), ("memory_get", json!({"key": key}))] {
            let e = d.call(tool, args).await.expect_err(key);
            assert_eq!(e.code, ErrorCode::ValidationError, "{tool} {key:?}: {e}");
            assert!(e.message.starts_with(&format!("invalid memory key {key:?}")), "{}", e.message);
        }
    }
    assert!(!d.root().join(".spine").exists(), "nothing was written");
}

#[tokio::test]
async fn a_missing_entry_is_not_found() {
    let d = Direct::new();
    let e = d.call("memory_get", json!({"key": "nope"})).await.expect_err("missing");
    assert_eq!(e.code, ErrorCode::NotFound);
    assert_eq!(e.message, "no memory entry `nope`");
}

#[tokio::test]
async fn oversized_values_are_validation_errors() {
    let d = Direct::new();
    let e = d.call("memory_store", json!({"key": "big", "value": "x".repeat(256 * 1024 + 1)})).await.expect_err("big");
    assert_eq!(e.code, ErrorCode::ValidationError);
}

#[tokio::test]
async fn append_daily_adds_timestamped_entries_to_todays_log() {
    let d = Direct::new();
    let first = d.call("memory_append_daily", json!({"text": "Fixed the flaky test."})).await.expect("append");
    d.call("memory_append_daily", json!({"text": "Released 0.2."})).await.expect("append");
    let date = first["date"].as_str().expect("date").to_owned();
    assert_eq!(date.len(), 10);
    assert_eq!(first["path"], json!(format!(".spine/memory/daily/{date}.md")));
    let log = std::fs::read_to_string(d.root().join(format!(".spine/memory/daily/{date}.md"))).expect("log");
    assert!(log.starts_with(&format!("# {date}\n\n## ")), "{log}");
    assert_eq!(log.matches(&format!("# {date}")).count(), 1, "one title: {log}");
    assert_eq!(log.matches(" UTC\n\n").count(), 2, "{log}");
    assert!(log.contains("Fixed the flaky test.\n\n## ") && log.ends_with("Released 0.2.\n\n"), "{log}");
    let empty = d.call("memory_append_daily", json!({"text": "  "})).await.expect_err("empty");
    assert_eq!(empty.code, ErrorCode::ValidationError);
}

#[tokio::test]
async fn list_shows_entries_and_daily_logs() {
    let d = Direct::new();
    let none = d.call("memory_list", json!({})).await.expect("list");
    assert_eq!(d.project("memory_list", &none).content, "No memory entries.");
    d.call("memory_store", json!({"key": "b", "value": "bb"})).await.expect("store");
    d.call("memory_store", json!({"key": "a", "value": "a"})).await.expect("store");
    let appended = d.call("memory_append_daily", json!({"text": "t"})).await.expect("append");
    let list = d.call("memory_list", json!({})).await.expect("list");
    let keys: Vec<&str> =
        list["entries"].as_array().expect("entries").iter().filter_map(|e| e["key"].as_str()).collect();
    assert_eq!(keys, vec!["a", "b"]);
    assert_eq!(list["daily"][0]["date"], appended["date"]);
    assert_eq!(
        d.project("memory_list", &list).content,
        format!(
            "2 memory entries:\n- a (1 bytes)\n- b (2 bytes)\nDaily logs: {}",
            appended["date"].as_str().expect("date")
        )
    );
}

#[tokio::test]
async fn search_ranks_phrase_matches_first_and_returns_line_snippets() {
    let d = Direct::new();
    d.call(
        "memory_store",
        json!({"key": "deploy", "value": "# Deploy\n\nWe deploy staging on Fridays.\nProduction on Mondays."}),
    )
    .await
    .expect("store");
    d.call("memory_store", json!({"key": "misc", "value": "deploy scripts live in ops/\n\nstaging has its own db"}))
        .await
        .expect("store");
    d.call("memory_store", json!({"key": "unrelated", "value": "nothing to see"})).await.expect("store");
    d.call("memory_append_daily", json!({"text": "Talked about Staging capacity."})).await.expect("append");
    let r = d.call("memory_search", json!({"query": "deploy staging"})).await.expect("search");
    let keys: Vec<&str> = r["results"].as_array().expect("results").iter().filter_map(|e| e["key"].as_str()).collect();
    assert_eq!(keys.len(), 3, "{r}");
    assert_eq!(&keys[..2], ["deploy", "misc"], "the phrase match first: {r}");
    assert!(keys[2].starts_with("daily/"), "{r}");
    assert_eq!(r["results"][0]["snippets"][0], json!({"line": 1, "text": "# Deploy"}));
    assert_eq!(r["results"][0]["snippets"][1], json!({"line": 3, "text": "We deploy staging on Fridays."}));
    assert_eq!(r["searched"], json!(4));
    let p = d.project("memory_search", &r);
    assert!(p.content.starts_with("3 memory entries match \"deploy staging\":\n- deploy (score "), "{}", p.content);
    assert!(p.content.contains("  L3: We deploy staging on Fridays."), "{}", p.content);
    let none = d.call("memory_search", json!({"query": "kubernetes"})).await.expect("search");
    assert_eq!(d.project("memory_search", &none).content, "No memory matches \"kubernetes\" (4 files searched).");
    let bad = d.call("memory_search", json!({"query": "?!"})).await.expect_err("no words");
    assert_eq!(bad.code, ErrorCode::ValidationError);
}

#[tokio::test]
async fn a_memory_directory_linked_outside_the_workspace_is_permission_denied() {
    let d = Direct::new();
    let outside = tempfile::tempdir().expect("outside");
    std::fs::create_dir_all(d.root().join(".spine")).expect("mkdir");
    std::os::unix::fs::symlink(outside.path(), d.root().join(".spine/memory")).expect("link");
    for (tool, args) in [
        ("memory_store", json!({"key": "x", "value": "leak"})),
        ("memory_get", json!({"key": "x"})),
        ("memory_append_daily", json!({"text": "leak"})),
        ("memory_list", json!({})),
        ("memory_search", json!({"query": "leak"})),
    ] {
        let e = d.call(tool, args).await.expect_err(tool);
        assert_eq!(e.code, ErrorCode::PermissionDenied, "{tool}");
    }
    assert_eq!(std::fs::read_dir(outside.path()).expect("dir").count(), 0, "nothing written outside");
}

/// The key `root` is the root memory file: what the model stores there is in the Memory
/// layer of the very next request.
#[tokio::test]
async fn the_root_key_reaches_the_next_prompt_through_prepare_turn() {
    let mut h = AgentHarness::new();
    spine_tools::register_families(&mut h.tools, FamilyConfig::default());
    let root = h.root();
    let run = h
        .run(
            "remember",
            vec![
                calls(&[("c1", "memory_store", json!({"key": "root", "value": "Remember the milk."}))]),
                text("noted"),
            ],
        )
        .await;
    assert_eq!(run.outcome.subtype, RunSubtype::Success);
    assert_eq!(
        results(&run.outcome.messages)[0].content,
        "Stored memory `root` (18 bytes). It is the root memory, included in every prompt."
    );
    assert_eq!(std::fs::read_to_string(root.join(ROOT_MEMORY_FILE)).expect("root"), "Remember the milk.");
    let requests = run.script.requests();
    assert!(!requests[0][0].text().expect("system").contains("Remember the milk."));
    assert!(requests[1][0].text().expect("system").contains("Memory:\nRemember the milk."));
}
