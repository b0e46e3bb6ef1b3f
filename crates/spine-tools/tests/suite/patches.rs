//! Edit's and Write's `structuredPatch` and `originalFile`, in Claude Code's shape: unified-diff
//! hunks with 3 lines of context, `-`/`+`/space prefixes and no `@@` header.

use serde_json::{Value, json};

use crate::support::Fixture;

/// `line 1\n` … `line n\n`.
fn numbered(n: usize) -> String {
    (1..=n).map(|i| format!("line {i}\n")).collect()
}

/// A hunk's `[oldStart, oldLines, newStart, newLines]`.
fn span(hunk: &Value) -> [u64; 4] {
    ["oldStart", "oldLines", "newStart", "newLines"].map(|k| hunk[k].as_u64().expect("number"))
}

#[tokio::test]
async fn an_edit_in_the_middle_of_a_longer_file_gives_one_hunk_with_three_context_lines() {
    let f = Fixture::new();
    let original = numbered(20);
    f.write("long.txt", &original);
    let r = f
        .call("Edit", json!({"file_path": "long.txt", "old_string": "line 10\n", "new_string": "ten\nand a half\n"}))
        .await
        .expect("edit");
    assert_eq!(r["originalFile"], json!(original));
    assert_eq!(r["userModified"], json!(false));
    let hunks = r["structuredPatch"].as_array().expect("hunks");
    assert_eq!(hunks.len(), 1, "{r}");
    assert_eq!(span(&hunks[0]), [7, 7, 7, 8]);
    assert_eq!(
        hunks[0]["lines"],
        json!([" line 7", " line 8", " line 9", "-line 10", "+ten", "+and a half", " line 11", " line 12", " line 13"])
    );
    assert_eq!(f.project("Edit", &r).content, format!("Edited {}: 1 replacement.", f.path("long.txt")));
}

#[tokio::test]
async fn replace_all_with_occurrences_far_apart_gives_one_hunk_each() {
    let f = Fixture::new();
    // `old` on lines 2, 15 and 16: the first stands alone, the other two share a hunk.
    let mut lines: Vec<String> = (1..=20).map(|i| format!("line {i}")).collect();
    for i in [1, 14, 15] {
        lines[i] = format!("old {}", i + 1);
    }
    f.write("many.txt", &(lines.join("\n") + "\n"));
    let r = f
        .call("Edit", json!({"file_path": "many.txt", "old_string": "old", "new_string": "new", "replace_all": true}))
        .await
        .expect("edit");
    assert_eq!(r["replacements"], json!(3));
    assert_eq!(r["replaceAll"], json!(true));
    let hunks = r["structuredPatch"].as_array().expect("hunks");
    assert_eq!(hunks.iter().map(span).collect::<Vec<_>>(), [[1, 5, 1, 5], [12, 8, 12, 8]]);
    assert_eq!(hunks[0]["lines"], json!([" line 1", "-old 2", "+new 2", " line 3", " line 4", " line 5"]));
    assert_eq!(
        hunks[1]["lines"],
        json!([
            " line 12", " line 13", " line 14", "-old 15", "-old 16", "+new 15", "+new 16", " line 17", " line 18",
            " line 19"
        ])
    );
}

#[tokio::test]
async fn a_new_file_has_an_empty_structured_patch_and_a_null_original_file() {
    let f = Fixture::new();
    let r = f.call("Write", json!({"file_path": "fresh.txt", "content": "one\ntwo\n"})).await.expect("write");
    assert_eq!(r["type"], json!("create"));
    assert_eq!(r["structuredPatch"], json!([]));
    assert_eq!(r["originalFile"], json!(null));
    assert_eq!(r["userModified"], json!(false));
}

#[tokio::test]
async fn a_replaced_file_has_its_old_text_and_the_diff_to_the_new() {
    let f = Fixture::new();
    f.write("w.txt", "keep\nold\n");
    let r = f.call("Write", json!({"file_path": "w.txt", "content": "keep\nnew"})).await.expect("write");
    assert_eq!(r["type"], json!("update"));
    assert_eq!(r["originalFile"], json!("keep\nold\n"));
    assert_eq!(
        r["structuredPatch"],
        json!([{"oldStart": 1, "oldLines": 2, "newStart": 1, "newLines": 2,
                "lines": [" keep", "-old", "+new", "\\ No newline at end of file"]}])
    );
    assert_eq!(f.project("Write", &r).content, format!("Wrote 8 bytes to {} (updated).", f.path("w.txt")));
    // The same text again: nothing changed, no hunk.
    let r = f.call("Write", json!({"file_path": "w.txt", "content": "keep\nnew"})).await.expect("write");
    assert_eq!(r["structuredPatch"], json!([]));
    assert_eq!(r["originalFile"], json!("keep\nnew"));
}

#[tokio::test]
async fn a_replaced_binary_file_has_a_null_original_file() {
    let f = Fixture::new();
    std::fs::write(f.root().join("b.bin"), b"\xff\xfe\x00").expect("write");
    let r = f.call("Write", json!({"file_path": "b.bin", "content": "text\n"})).await.expect("write");
    assert_eq!(r["type"], json!("update"));
    assert_eq!(r["originalFile"], json!(null));
    assert_eq!(r["structuredPatch"], json!([]));
}

#[test]
fn edit_fills_in_replace_all_before_hooks_see_the_call() {
    let edit = spine_tools::EditTool;
    let mut args = json!({"file_path": "a.txt", "old_string": "x", "new_string": "y"});
    let map = args.as_object_mut().expect("object");
    spine_core::tool::Tool::normalize(&edit, map, std::path::Path::new("/w"));
    assert_eq!(args, json!({"file_path": "/w/a.txt", "old_string": "x", "new_string": "y", "replace_all": false}));
    let mut args = json!({"file_path": "/w/a.txt", "old_string": "x", "new_string": "y", "replace_all": true});
    let map = args.as_object_mut().expect("object");
    spine_core::tool::Tool::normalize(&edit, map, std::path::Path::new("/w"));
    assert_eq!(args["replace_all"], json!(true));
}
