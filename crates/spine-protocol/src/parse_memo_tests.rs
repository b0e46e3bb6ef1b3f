use std::cell::Cell;
use std::fs::File;
use std::time::SystemTime;

use super::*;

/// A file whose modification time is an hour old. Its change time is now, so it settles only
/// after [`SETTLE`].
fn old_file(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).expect("write");
    let hour_ago = SystemTime::now() - Duration::from_secs(3600);
    File::options().write(true).open(&path).and_then(|f| f.set_modified(hour_ago)).expect("set mtime");
    path
}

fn settle() {
    std::thread::sleep(SETTLE + Duration::from_millis(100));
}

/// Parses `path` through `memo`, counting the parses.
fn parse_len(memo: &ParseMemo, path: &Path, parses: &Cell<u32>) -> usize {
    memo.get_or_parse("len.v1", path, "", || {
        parses.set(parses.get() + 1);
        (std::fs::read_to_string(path).map(|t| t.len()).unwrap_or(0), true)
    })
}

#[test]
fn a_settled_unchanged_file_is_parsed_once_across_runs_and_a_change_parses_again() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = old_file(dir.path(), "a.md", "hello");
    settle();
    let memo_file = dir.path().join("memo.json");
    let parses = Cell::new(0);
    let first = ParseMemo::at(memo_file.clone());
    assert_eq!(parse_len(&first, &path, &parses), 5);
    first.save();
    let second = ParseMemo::at(memo_file.clone());
    assert_eq!(parse_len(&second, &path, &parses), 5);
    assert_eq!(parses.get(), 1, "the second run uses what the first parsed");

    // Same size, content changed: the change time differs.
    std::fs::write(&path, "HELLO").expect("rewrite");
    let third = ParseMemo::at(memo_file);
    assert_eq!(parse_len(&third, &path, &parses), 5);
    assert_eq!(parses.get(), 2, "a changed file is parsed again");
}

#[test]
fn a_file_changed_within_the_settle_time_is_not_remembered() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("fresh.md");
    std::fs::write(&path, "new").expect("write");
    let memo_file = dir.path().join("memo.json");
    let parses = Cell::new(0);
    let first = ParseMemo::at(memo_file.clone());
    parse_len(&first, &path, &parses);
    first.save();
    assert!(!memo_file.exists(), "nothing was added, nothing written");
    parse_len(&ParseMemo::at(memo_file), &path, &parses);
    assert_eq!(parses.get(), 2);
}

#[test]
fn a_result_the_reader_does_not_keep_and_a_symbolic_link_are_never_remembered() {
    let dir = tempfile::tempdir().expect("tempdir");
    let target = old_file(dir.path(), "target.md", "text");
    let link = dir.path().join("link.md");
    std::os::unix::fs::symlink(&target, &link).expect("symlink");
    settle();
    let memo_file = dir.path().join("memo.json");
    let parses = Cell::new(0);
    let memo = ParseMemo::at(memo_file.clone());
    parse_len(&memo, &link, &parses);
    memo.get_or_parse("len.v1", &target, "", || {
        parses.set(parses.get() + 1);
        (4_usize, false)
    });
    memo.save();
    let again = ParseMemo::at(memo_file);
    parse_len(&again, &link, &parses);
    parse_len(&again, &target, &parses);
    assert_eq!(parses.get(), 4);
}

#[test]
fn the_context_and_the_kind_are_part_of_the_key() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = old_file(dir.path(), "a.md", "x");
    settle();
    let memo_file = dir.path().join("memo.json");
    let memo = ParseMemo::at(memo_file.clone());
    let a: String = memo.get_or_parse("k.v1", &path, "project-a", || ("a".to_owned(), true));
    let b: String = memo.get_or_parse("k.v1", &path, "project-b", || ("b".to_owned(), true));
    memo.save();
    let again = ParseMemo::at(memo_file);
    let a2: String = again.get_or_parse("k.v1", &path, "project-a", || ("changed".to_owned(), true));
    let b2: String = again.get_or_parse("k.v1", &path, "project-b", || ("changed".to_owned(), true));
    let other_kind: String = again.get_or_parse("k.v2", &path, "project-a", || ("v2".to_owned(), true));
    assert_eq!((a, b, a2, b2, other_kind), ("a".into(), "b".into(), "a".into(), "b".into(), "v2".into()));
}

#[test]
fn a_malformed_or_foreign_memo_file_is_an_empty_memo() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = old_file(dir.path(), "a.md", "abc");
    settle();
    let parses = Cell::new(0);
    let memo_at = |name: &str, text: &str| {
        let file = dir.path().join(name);
        std::fs::write(&file, text).expect("write");
        ParseMemo::at(file)
    };
    let mut line = serde_json::to_string(&key("len.v1", &path, "")).expect("key");
    line.push('\t');
    Stamp::of(&path).expect("stamp").write_to(&mut line);
    line.push_str("\t0\t99\n");
    let good = format!("{}\n{line}", header());
    assert_eq!(parse_len(&memo_at("good.memo", &good), &path, &parses), 99, "a well-formed entry is used");
    assert_eq!(parses.get(), 0);

    assert_eq!(parse_len(&memo_at("bad.memo", "{not a memo"), &path, &parses), 3);
    let torn = format!("{good}\"len.v1 x\t1 2 3\t0\t1\n");
    assert_eq!(parse_len(&memo_at("torn.memo", &torn), &path, &parses), 3, "one bad line empties the memo");
    let foreign = format!("spine parse memo 1, spine 0.0.0-other\n{line}");
    assert_eq!(parse_len(&memo_at("foreign.memo", &foreign), &path, &parses), 3, "another version's is not used");
    assert_eq!(parses.get(), 3);
}

#[test]
fn a_path_with_tabs_quotes_and_line_breaks_is_remembered_like_any_other() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = old_file(dir.path(), "odd\tname \"quoted\"\nnext.md", "hello");
    settle();
    let memo_file = dir.path().join("memo.memo");
    let parses = Cell::new(0);
    for _ in 0..2 {
        let memo = ParseMemo::at(memo_file.clone());
        assert_eq!(parse_len(&memo, &path, &parses), 5);
        memo.save();
    }
    assert_eq!(parses.get(), 1, "the second run uses the remembered result");
    assert_eq!(std::fs::read_to_string(&memo_file).expect("memo").lines().count(), 2, "a header and one entry");
}

#[test]
fn a_disabled_memo_always_parses() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = old_file(dir.path(), "a.md", "abc");
    let parses = Cell::new(0);
    let memo = ParseMemo::disabled();
    parse_len(&memo, &path, &parses);
    parse_len(&memo, &path, &parses);
    memo.save();
    assert_eq!(parses.get(), 2);
}

#[test]
fn a_stamp_tells_a_file_from_a_directory_and_a_caller_without_a_stamp_always_parses() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = old_file(dir.path(), "a.md", "hello");
    assert!(Stamp::of(&path).is_some_and(|s| s.is_file()));
    assert!(Stamp::of(dir.path()).is_some_and(|s| !s.is_file()));
    settle();
    let memo_file = dir.path().join("memo.json");
    let parses = Cell::new(0);
    for _ in 0..2 {
        let memo = ParseMemo::at(memo_file.clone());
        let len: usize = memo.get_or_parse_stamped("len.v1", &path, None, "", || {
            parses.set(parses.get() + 1);
            (5, true)
        });
        assert_eq!(len, 5);
        memo.save();
    }
    assert_eq!(parses.get(), 2, "without a stamp nothing is remembered");
    assert!(!memo_file.exists());
}

#[test]
fn a_stamps_text_reads_back_as_the_stamp_and_anything_else_is_refused() {
    let dir = tempfile::tempdir().expect("dir");
    let stamp = Stamp::of(&old_file(dir.path(), "f", "x")).expect("stamp");
    let mut text = String::new();
    stamp.write_to(&mut text);
    assert_eq!(Stamp::parse(&text), Some(stamp));
    let json = serde_json::to_string(&stamp).expect("serialises");
    assert_eq!(serde_json::from_str::<Stamp>(&json).expect("deserialises"), stamp);
    assert_eq!(Stamp::parse("1 2 3 4 -5 6 -7 8").map(|s| (s.mtime, s.ctime)), Some(((-5, 6), (-7, 8))));
    for bad in ["", "1 2 3 4 5 6 7", "1 2 3 4 5 6 7 8 9", "1 2 3 4 5 6 7 8 ", "1  2 3 4 5 6 7 8", "1 2 x 4 5 6 7 8"] {
        assert_eq!(Stamp::parse(bad), None, "{bad:?}");
    }
    assert_eq!(Stamp::parse("1 2 4294967296 4 5 6 7 8"), None, "a mode beyond u32");
    assert_eq!(Stamp::parse("18446744073709551616 2 3 4 5 6 7 8"), None, "beyond u64");
}
