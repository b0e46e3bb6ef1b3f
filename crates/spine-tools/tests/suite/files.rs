//! Read, Write and Edit on real files.

use serde_json::json;
use spine_protocol::tool::ErrorCode;

use crate::support::Fixture;

#[tokio::test]
async fn read_numbers_lines_and_returns_claude_codes_shape() {
    let f = Fixture::new();
    f.write("a.txt", "alpha\nbeta\ngamma\n");
    let r = f.call("Read", json!({"file_path": "a.txt"})).await.expect("read");
    assert_eq!(
        r,
        json!({"type": "text", "file": {
            "filePath": f.path("a.txt"),
            "content": "alpha\nbeta\ngamma",
            "numLines": 3,
            "startLine": 1,
            "totalLines": 3,
        }})
    );
    let p = f.project("Read", &r);
    assert_eq!(p.content, "     1\talpha\n     2\tbeta\n     3\tgamma");
    assert_eq!(p.metadata["total_lines"], json!(3));
    assert_eq!(p.metadata["truncated"], json!(false));
}

#[tokio::test]
async fn read_offset_is_a_one_based_line_and_limit_counts_lines() {
    let f = Fixture::new();
    let text: String = (1..=10).map(|i| format!("line {i}\n")).collect();
    f.write("ten.txt", &text);
    let r = f.call("Read", json!({"file_path": "ten.txt", "offset": 4, "limit": 2})).await.expect("read");
    assert_eq!(r["file"]["content"], json!("line 4\nline 5"));
    assert_eq!(r["file"]["startLine"], json!(4));
    assert_eq!(r["file"]["numLines"], json!(2));
    assert_eq!(r["file"]["totalLines"], json!(10));
    let p = f.project("Read", &r);
    assert!(p.content.starts_with("     4\tline 4\n     5\tline 5\n"), "{}", p.content);
    assert!(p.content.contains("Lines 4-5 of 10"), "{}", p.content);
    assert_eq!(p.metadata["truncated"], json!(true));
}

#[tokio::test]
async fn read_defaults_to_2000_lines_and_cuts_lines_over_2000_chars() {
    let f = Fixture::new();
    let mut text: String = "x".repeat(2500);
    text.push('\n');
    for i in 2..=2100 {
        text.push_str(&format!("{i}\n"));
    }
    f.write("big.txt", &text);
    let r = f.call("Read", json!({"file_path": "big.txt"})).await.expect("read");
    assert_eq!(r["file"]["numLines"], json!(2000));
    assert_eq!(r["file"]["totalLines"], json!(2100));
    let p = f.project("Read", &r);
    let first = p.content.lines().next().expect("line");
    assert!(first.ends_with("… [line truncated]"), "{}", &first[..20]);
    assert_eq!(first.chars().filter(|c| *c == 'x').count(), 2000);
    assert_eq!(p.metadata["truncated"], json!(true));
}

#[tokio::test]
async fn read_missing_file_is_not_found() {
    let f = Fixture::new();
    let e = f.call("Read", json!({"file_path": "nope.txt"})).await.expect_err("missing");
    assert_eq!(e.code, ErrorCode::NotFound);
    assert!(e.message.contains("nope.txt"), "{}", e.message);
}

#[tokio::test]
async fn read_refuses_directories_and_binary_files() {
    let f = Fixture::new();
    std::fs::create_dir(f.root().join("dir")).expect("mkdir");
    let e = f.call("Read", json!({"file_path": "dir"})).await.expect_err("dir");
    assert_eq!(e.code, ErrorCode::ValidationError);
    std::fs::write(f.root().join("bin"), b"ab\0cd").expect("write");
    let e = f.call("Read", json!({"file_path": "bin"})).await.expect_err("binary");
    assert_eq!(e.code, ErrorCode::ValidationError);
    assert!(e.message.contains("binary"), "{}", e.message);
}

#[tokio::test]
async fn read_of_an_image_returns_claude_codes_image_response_and_a_short_text() {
    let f = Fixture::new();
    let bytes = spine_testkit::images::png(12, 7);
    std::fs::write(f.root().join("shot.png"), &bytes).expect("write");
    let r = f.call("Read", json!({"file_path": "shot.png"})).await.expect("read");
    assert_eq!(r["type"], "image");
    assert_eq!(r["file"]["type"], "image/png");
    assert_eq!(r["file"]["base64"], spine_testkit::images::base64(&bytes));
    assert_eq!(r["file"]["originalSize"], bytes.len());
    assert_eq!(
        r["file"]["dimensions"],
        json!({"originalWidth": 12, "originalHeight": 7, "displayWidth": 12, "displayHeight": 7})
    );
    let p = f.project("Read", &r);
    assert_eq!(p.content, format!("Image: {} (12x7, 1 KB)", f.path("shot.png")));
    let images = spine_core::tool::response_images(&r);
    assert_eq!(images.len(), 1);
    assert_eq!((images[0].width, images[0].height), (Some(12), Some(7)));
}

#[tokio::test]
async fn read_refuses_an_image_over_20_mib_and_one_that_does_not_decode() {
    let f = Fixture::new();
    let mut big = std::fs::File::create(f.root().join("huge.png")).expect("create");
    std::io::Write::write_all(&mut big, &spine_testkit::images::png(4, 4)).expect("head");
    big.set_len(spine_tools::image::MAX_IMAGE_FILE_BYTES + 1).expect("sparse tail");
    drop(big);
    let e = f.call("Read", json!({"file_path": "huge.png"})).await.expect_err("too large");
    assert_eq!(e.code, ErrorCode::ValidationError);
    assert!(e.message.contains("huge.png") && e.message.contains("too large"), "{}", e.message);

    std::fs::write(f.root().join("fake.gif"), b"GIF89a and then nothing an image needs").expect("write");
    let e = f.call("Read", json!({"file_path": "fake.gif"})).await.expect_err("corrupt");
    assert_eq!(e.code, ErrorCode::ValidationError);
    assert!(e.message.contains("fake.gif") && e.message.contains("image/gif image does not decode"), "{}", e.message);

    f.write("looks.png", "but is text\n");
    let r = f.call("Read", json!({"file_path": "looks.png"})).await.expect("text by its bytes");
    assert_eq!(r["type"], "text");
}

#[tokio::test]
async fn write_creates_parent_directories_then_reports_update() {
    let f = Fixture::new();
    let r = f.call("Write", json!({"file_path": "deep/er/new.txt", "content": "hello"})).await.expect("write");
    assert_eq!(
        r,
        json!({"type": "create", "filePath": f.path("deep/er/new.txt"), "content": "hello",
               "structuredPatch": [], "originalFile": null, "userModified": false})
    );
    assert_eq!(std::fs::read_to_string(f.root().join("deep/er/new.txt")).expect("read"), "hello");
    let p = f.project("Write", &r);
    assert_eq!(p.content, format!("Wrote 5 bytes to {} (created).", f.path("deep/er/new.txt")));
    let r = f.call("Write", json!({"file_path": "deep/er/new.txt", "content": "bye"})).await.expect("write");
    assert_eq!(r["type"], json!("update"));
    assert_eq!(std::fs::read_to_string(f.root().join("deep/er/new.txt")).expect("read"), "bye");
}

#[tokio::test]
async fn edit_replaces_a_unique_occurrence() {
    let f = Fixture::new();
    let p = f.write("e.rs", "fn a() {}\nfn b() {}\n");
    let r =
        f.call("Edit", json!({"file_path": "e.rs", "old_string": "fn b", "new_string": "fn c"})).await.expect("edit");
    assert_eq!(
        r,
        json!({"filePath": f.path("e.rs"), "oldString": "fn b", "newString": "fn c",
               "originalFile": "fn a() {}\nfn b() {}\n",
               "structuredPatch": [{"oldStart": 1, "oldLines": 2, "newStart": 1, "newLines": 2,
                                    "lines": [" fn a() {}", "-fn b() {}", "+fn c() {}"]}],
               "userModified": false, "replaceAll": false, "replacements": 1})
    );
    assert_eq!(std::fs::read_to_string(p).expect("read"), "fn a() {}\nfn c() {}\n");
    assert_eq!(f.project("Edit", &r).content, format!("Edited {}: 1 replacement.", f.path("e.rs")));
}

#[tokio::test]
async fn edit_refuses_an_ambiguous_old_string_naming_the_count() {
    let f = Fixture::new();
    let p = f.write("e.txt", "x x x");
    let e = f
        .call("Edit", json!({"file_path": "e.txt", "old_string": "x", "new_string": "y"}))
        .await
        .expect_err("ambiguous");
    assert_eq!(e.code, ErrorCode::ValidationError);
    assert!(e.message.contains("3 times"), "{}", e.message);
    assert_eq!(std::fs::read_to_string(p).expect("read"), "x x x");
}

#[tokio::test]
async fn edit_replace_all_replaces_every_occurrence() {
    let f = Fixture::new();
    let p = f.write("e.txt", "x x x");
    let r = f
        .call("Edit", json!({"file_path": "e.txt", "old_string": "x", "new_string": "yy", "replace_all": true}))
        .await
        .expect("edit");
    assert_eq!(r["replacements"], json!(3));
    assert_eq!(r["replaceAll"], json!(true));
    assert_eq!(std::fs::read_to_string(p).expect("read"), "yy yy yy");
    assert!(f.project("Edit", &r).content.ends_with(": 3 replacements."));
}

#[tokio::test]
async fn edit_missing_old_string_identical_strings_and_missing_file_are_refused() {
    let f = Fixture::new();
    f.write("e.txt", "abc");
    let e = f
        .call("Edit", json!({"file_path": "e.txt", "old_string": "zzz", "new_string": "y"}))
        .await
        .expect_err("not found");
    assert_eq!(e.code, ErrorCode::ValidationError);
    assert!(e.message.contains("old_string not found"), "{}", e.message);
    let e = f
        .call("Edit", json!({"file_path": "e.txt", "old_string": "abc", "new_string": "abc"}))
        .await
        .expect_err("identical");
    assert_eq!(e.code, ErrorCode::ValidationError);
    let e = f
        .call("Edit", json!({"file_path": "none.txt", "old_string": "a", "new_string": "b"}))
        .await
        .expect_err("missing file");
    assert_eq!(e.code, ErrorCode::NotFound);
}

#[tokio::test]
async fn read_of_a_1_gib_sparse_file_is_refused_in_bounded_memory() {
    let f = Fixture::new();
    std::fs::File::create(f.root().join("sparse.img")).expect("create").set_len(1 << 30).expect("sparse 1 GiB");
    let mut head = std::fs::File::create(f.root().join("sparse.log")).expect("create");
    std::io::Write::write_all(&mut head, b"first line\nsecond line\n").expect("head");
    head.set_len(1 << 30).expect("sparse 1 GiB after a text head");
    drop(head);
    let before = spine_testkit::procs::peak_rss_kib().expect("VmHWM");
    for name in ["sparse.img", "sparse.log"] {
        let e = f.call("Read", json!({"file_path": name})).await.expect_err("binary");
        assert_eq!(e.code, ErrorCode::ValidationError, "{name}");
        assert!(e.message.contains(name) && e.message.contains("binary"), "{}", e.message);
    }
    let e = f.call("Read", json!({"file_path": "sparse.log", "limit": 1})).await.expect_err("binary");
    assert!(e.message.contains("binary"), "{}", e.message);
    let grown_mib = spine_testkit::procs::peak_rss_kib().expect("VmHWM").saturating_sub(before) / 1024;
    assert!(grown_mib < 64, "reading 1 GiB files raised the peak RSS by {grown_mib} MiB");
}

#[tokio::test]
async fn read_with_offset_and_limit_on_a_large_file_returns_exactly_those_lines() {
    let f = Fixture::new();
    let text: String = (1..=300_000).map(|i| format!("row {i}\n")).collect();
    f.write("large.txt", &text);
    let r = f.call("Read", json!({"file_path": "large.txt", "offset": 250_001, "limit": 3})).await.expect("read");
    assert_eq!(r["file"]["content"], json!("row 250001\nrow 250002\nrow 250003"));
    assert_eq!(r["file"]["numLines"], json!(3));
    assert_eq!(r["file"]["startLine"], json!(250_001));
    assert_eq!(r["file"]["totalLines"], json!(300_000));
    assert!(r["file"].get("totalLinesExact").is_none() && r["file"].get("byteCap").is_none(), "{r}");
    let p = f.project("Read", &r);
    assert!(
        p.content.ends_with(
            "[Lines 250001-250003 of 300000 in {}; use offset and limit to read more.]"
                .replace("{}", &f.path("large.txt"))
                .as_str()
        ),
        "{}",
        p.content
    );
}

#[tokio::test]
async fn read_returns_at_most_256_kib_of_text_and_says_how_to_read_on() {
    let f = Fixture::new();
    let text: String = (1..=3000).map(|i| format!("{i:0>199}\n")).collect();
    f.write("wide.txt", &text);
    let r = f.call("Read", json!({"file_path": "wide.txt"})).await.expect("read");
    let content = r["file"]["content"].as_str().expect("content");
    assert!(content.len() <= spine_tools::read::MAX_READ_BYTES, "{}", content.len());
    let num = r["file"]["numLines"].as_u64().expect("numLines");
    // Each line as the model receives it: `{n:>6}\t`, 199 characters and a `\n`.
    assert_eq!(num, ((spine_tools::read::MAX_READ_BYTES + 1) / (7 + 199 + 1)) as u64);
    assert_eq!(content.lines().last(), Some(format!("{num:0>199}").as_str()));
    assert_eq!(r["file"]["totalLines"], json!(3000));
    assert_eq!(r["file"]["byteCap"], json!(spine_tools::read::MAX_READ_BYTES));
    let p = f.project("Read", &r);
    let tail = p.content.lines().last().expect("tail");
    assert!(tail.contains(&format!("[Lines 1-{num} of 3000")) && tail.contains("at most 256 KiB"), "{tail}");
    assert_eq!(p.metadata["truncated"], json!(true));
}

#[tokio::test]
async fn read_bounds_the_numbered_text_the_model_receives_not_the_files_bytes() {
    let f = Fixture::new();
    // 256 KiB of the file are 131,072 one-character lines: numbered, over a megabyte.
    f.write("short.txt", &"a\n".repeat(300_000));
    let r = f.call("Read", json!({"file_path": "short.txt", "limit": 300_000})).await.expect("read");
    let p = f.project("Read", &r);
    let (numbered, note) = p.content.rsplit_once('\n').expect("lines and a note");
    let cap = spine_tools::read::MAX_READ_BYTES;
    assert!(numbered.len() <= cap, "{} bytes of numbered lines", numbered.len());
    assert!(numbered.len() + "\n999999\ta".len() > cap, "the window fills the cap: {}", numbered.len());
    let num = r["file"]["numLines"].as_u64().expect("numLines");
    assert_eq!(numbered.lines().last(), Some(format!("{num:>6}\ta").as_str()), "whole lines only");
    assert_eq!(r["file"]["byteCap"], json!(cap));
    assert!(note.contains(&format!("[Lines 1-{num} of 300000")) && note.contains("at most 256 KiB"), "{note}");
    assert_eq!(p.metadata["truncated"], json!(true));
}

/// Every path under `root`, its kind, links not followed (an iterative walk: trees may be deep).
fn tree(root: &std::path::Path) -> Vec<(std::path::PathBuf, &'static str)> {
    let mut found = Vec::new();
    let mut pending = vec![root.to_path_buf()];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).expect("read dir") {
            let path = entry.expect("entry").path();
            let kind = std::fs::symlink_metadata(&path).expect("metadata").file_type();
            if kind.is_dir() {
                pending.push(path.clone());
            }
            let kind = if kind.is_dir() {
                "dir"
            } else if kind.is_symlink() {
                "link"
            } else {
                "file"
            };
            found.push((path.strip_prefix(root).expect("under the root").to_path_buf(), kind));
        }
    }
    found.sort();
    found
}

#[tokio::test]
async fn a_failed_write_leaves_no_directory_it_created() {
    let f = Fixture::new();
    f.write("kept/old.txt", "here before\n");
    std::fs::create_dir(f.root().join("kept/empty")).expect("an empty directory that was there");
    let before = tree(&f.root());
    // A last component of NAME_MAX + 1 bytes cannot be created.
    let name_max = rustix::fs::statvfs(f.root()).expect("statvfs").f_namemax;
    let too_long = "n".repeat(usize::try_from(name_max).expect("a size") + 1);
    for path in [
        format!("new/a/b/c/{too_long}"),
        format!("kept/new/d/{too_long}"),
        format!("kept/empty/e/{too_long}"),
        format!("{}{too_long}", "x/".repeat(2013)),
    ] {
        let e = f.call("Write", json!({"file_path": path, "content": "lost"})).await.expect_err("cannot be created");
        assert_ne!(e.code, ErrorCode::PermissionDenied, "{}", e.message);
        assert_eq!(tree(&f.root()), before, "{}…: the tree is as it was", &path[..12]);
    }
}
