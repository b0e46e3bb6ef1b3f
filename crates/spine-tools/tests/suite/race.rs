//! The race-free open: a symlink swapped in between the boundary check and the open must not
//! lead a Read or a Write out of the workspace. A swapper thread exchanges (atomically, with
//! `renameat2(RENAME_EXCHANGE)`) a real directory and a real file inside the workspace with
//! symlinks to a directory outside, while one batch of 300 Writes and 300 Reads (and a few
//! Globs and Greps) runs through the tools' public API.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use futures_util::future::join_all;
use rustix::fs::{CWD, RenameFlags, renameat_with};
use serde_json::json;

use crate::support::Fixture;

const SECRET: &str = "OUTSIDE-SECRET";
/// The swapper stops by itself after this many exchanges even if the batch never ends.
const MAX_SWAPS: usize = 5_000_000;

/// Lists a directory's names, sorted.
fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .expect("read_dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn swapped_symlinks_never_lead_reads_or_writes_out_of_the_workspace() {
    let f = Fixture::new();
    let outside = tempfile::tempdir().expect("tempdir");
    let out = outside.path().canonicalize().expect("canon");
    std::fs::write(out.join("f.txt"), SECRET).expect("write");
    std::fs::write(out.join("target.txt"), SECRET).expect("write");
    std::fs::write(out.join("outside_only.txt"), SECRET).expect("write");
    let before = names(&out);

    // `swapdir` is a real directory or a symlink to `out`; `swapfile` a real file or a
    // symlink to `out/target.txt`. Their counterparts wait under other names.
    f.write("swapdir/f.txt", "inside");
    std::os::unix::fs::symlink(&out, f.root().join("alt_dir")).expect("link");
    f.write("swapfile", "inside");
    std::os::unix::fs::symlink(out.join("target.txt"), f.root().join("alt_file")).expect("link");

    let stop = Arc::new(AtomicBool::new(false));
    let swaps = Arc::new(AtomicUsize::new(0));
    let swapper = {
        let (stop, swaps, root) = (Arc::clone(&stop), Arc::clone(&swaps), f.root());
        std::thread::spawn(move || {
            let pairs = [(root.join("swapdir"), root.join("alt_dir")), (root.join("swapfile"), root.join("alt_file"))];
            for i in 0..MAX_SWAPS {
                if stop.load(Ordering::Relaxed) {
                    break;
                }
                let (a, b) = &pairs[i % 2];
                renameat_with(CWD, a, CWD, b, RenameFlags::EXCHANGE).expect("exchange");
                swaps.fetch_add(1, Ordering::Relaxed);
            }
        })
    };

    let mut calls = Vec::new();
    for i in 0..300 {
        let (read_path, write_path) = if i % 2 == 0 {
            (f.path("swapdir/f.txt"), f.path(&format!("swapdir/w{i}.txt")))
        } else {
            (f.path("swapfile"), f.path("swapfile"))
        };
        calls.push(("Read", json!({"file_path": read_path})));
        calls.push(("Write", json!({"file_path": write_path, "content": format!("written {i}")})));
    }
    for _ in 0..20 {
        calls.push(("Glob", json!({"pattern": "**/*.txt"})));
        calls.push(("Grep", json!({"pattern": SECRET, "output_mode": "content"})));
    }
    let results = join_all(calls.iter().map(|(tool, args)| f.call(tool, args.clone()))).await;
    stop.store(true, Ordering::Relaxed);
    swapper.join().expect("swapper");

    let mut leaked = 0;
    for ((tool, _), result) in calls.iter().zip(&results) {
        if let Ok(response) = result
            && *tool == "Read"
            && response["file"]["content"].as_str().is_some_and(|c| c.contains(SECRET))
        {
            leaked += 1;
        }
    }
    assert_eq!(leaked, 0, "reads returned the outside secret");
    for ((tool, _), result) in calls.iter().zip(&results) {
        if let Ok(response) = result
            && (*tool == "Glob" || *tool == "Grep")
        {
            let text = response.to_string();
            assert!(!text.contains("outside_only") && !text.contains(SECRET), "{tool} saw outside: {text}");
        }
    }
    assert_eq!(names(&out), before, "a write created a file outside the workspace");
    for name in &before {
        assert_eq!(std::fs::read_to_string(out.join(name)).expect("read"), SECRET, "{name} was overwritten");
    }
    assert!(swaps.load(Ordering::Relaxed) > 0, "the swapper ran");
    // Whatever was refused was refused as the boundary (or as a path that vanished mid-swap).
    for result in results.iter().filter_map(|r| r.as_ref().err()) {
        assert!(
            matches!(
                result.code,
                spine_protocol::tool::ErrorCode::PermissionDenied
                    | spine_protocol::tool::ErrorCode::NotFound
                    | spine_protocol::tool::ErrorCode::ValidationError
            ),
            "{result}"
        );
    }
}
