//! The boundary's escapes (`..`, absolute and relative symlinks out, links in the middle,
//! dangling links, FIFOs) under both strategies.

use std::os::unix::fs::symlink;

use super::*;

struct Fixture {
    _inside: tempfile::TempDir,
    outside: tempfile::TempDir,
    ws: Workspace,
}

fn fixture() -> Fixture {
    let inside = tempfile::tempdir().expect("tempdir");
    let outside = tempfile::tempdir().expect("tempdir");
    std::fs::write(outside.path().join("secret"), "outside secret").expect("write");
    let ws = Workspace::new(inside.path()).expect("workspace");
    std::fs::create_dir(ws.root().join("dir")).expect("mkdir");
    std::fs::write(ws.root().join("dir/file"), "inside").expect("write");
    Fixture { _inside: inside, outside, ws }
}

fn is_escape<T: std::fmt::Debug>(r: Result<T, OpenError>) -> bool {
    matches!(r, Err(OpenError::Escape { .. }))
}

fn read(f: &Fixture, rel: &str, strategy: Strategy) -> Result<String, OpenError> {
    let (mut file, _) = f.ws.open_file_with(Path::new(rel), OpenFor::Read, strategy)?;
    let mut s = String::new();
    file.read_to_string(&mut s).expect("read");
    Ok(s)
}

#[test]
fn open_beneath_reads_a_file_by_absolute_or_relative_path() {
    let f = fixture();
    assert_eq!(read(&f, "dir/file", Strategy::Openat2).expect("read"), "inside");
    assert_eq!(f.ws.read_file(&f.ws.root().join("dir/file")).expect("read"), b"inside");
    assert_eq!(read(&f, "dir/file", Strategy::Walk).expect("read"), "inside");
}

#[test]
fn dotdot_above_the_root_is_an_escape() {
    let f = fixture();
    assert!(is_escape(read(&f, "../x", Strategy::Openat2)));
    assert!(is_escape(read(&f, "dir/../../x", Strategy::Openat2)));
    assert!(is_escape(read(&f, "../x", Strategy::Walk)));
    assert!(is_escape(f.ws.read_file(Path::new("/etc/passwd"))));
}

#[test]
fn absolute_symlink_out_is_an_escape() {
    let f = fixture();
    symlink(f.outside.path().join("secret"), f.ws.root().join("abs")).expect("link");
    assert!(is_escape(read(&f, "abs", Strategy::Openat2)));
    assert!(is_escape(read(&f, "abs", Strategy::Walk)));
}

#[test]
fn relative_symlink_out_is_an_escape() {
    let f = fixture();
    let target = PathBuf::from("..").join(f.outside.path().file_name().expect("name")).join("secret");
    symlink(&target, f.ws.root().join("rel")).expect("link");
    assert!(is_escape(read(&f, "rel", Strategy::Openat2)));
    assert!(is_escape(read(&f, "rel", Strategy::Walk)));
}

#[test]
fn symlink_in_the_middle_leading_out_is_an_escape() {
    let f = fixture();
    symlink(f.outside.path(), f.ws.root().join("mid")).expect("link");
    assert!(is_escape(read(&f, "mid/secret", Strategy::Openat2)));
    assert!(is_escape(read(&f, "mid/secret", Strategy::Walk)));
    let write = f.ws.open_file_with(Path::new("mid/new"), OpenFor::Replace, Strategy::Openat2);
    assert!(is_escape(write));
    let write = f.ws.open_file_with(Path::new("mid/sub/new"), OpenFor::Replace, Strategy::Walk);
    assert!(is_escape(write));
    assert!(!f.outside.path().join("new").exists());
    assert!(!f.outside.path().join("sub").exists());
}

#[test]
fn in_workspace_symlinks_work_with_openat2_and_are_refused_by_the_walk() {
    let f = fixture();
    symlink("dir", f.ws.root().join("inlink")).expect("link");
    symlink("../dir/file", f.ws.root().join("dir/filelink")).expect("link");
    assert_eq!(read(&f, "inlink/file", Strategy::Openat2).expect("read"), "inside");
    assert_eq!(read(&f, "dir/filelink", Strategy::Openat2).expect("read"), "inside");
    assert!(is_escape(read(&f, "inlink/file", Strategy::Walk)));
    assert!(is_escape(read(&f, "dir/filelink", Strategy::Walk)));
}

#[test]
fn dangling_symlink_out_refuses_a_write_and_creates_nothing_outside() {
    let f = fixture();
    let target = f.outside.path().join("landed");
    symlink(&target, f.ws.root().join("dangling")).expect("link");
    assert!(is_escape(f.ws.open_file_with(Path::new("dangling"), OpenFor::Replace, Strategy::Openat2)));
    assert!(is_escape(f.ws.open_file_with(Path::new("dangling"), OpenFor::Replace, Strategy::Walk)));
    assert!(!target.exists());
    // A dangling link whose target is inside is created through (as before).
    symlink("dir/made", f.ws.root().join("inside_dangling")).expect("link");
    f.ws.write_file(Path::new("inside_dangling"), b"x").expect("write");
    assert_eq!(std::fs::read(f.ws.root().join("dir/made")).expect("read"), b"x");
}

#[test]
fn fifo_is_refused_without_blocking() {
    let f = fixture();
    rustix::fs::mknodat(f.ws.root_fd(), "fifo", FileType::Fifo, Mode::from_raw_mode(0o644), 0).expect("mkfifo");
    for strategy in [Strategy::Openat2, Strategy::Walk] {
        let r = f.ws.open_file_with(Path::new("fifo"), OpenFor::Read, strategy);
        assert!(matches!(r, Err(OpenError::NotRegular { .. })), "{r:?}");
        let w = f.ws.open_file_with(Path::new("fifo"), OpenFor::Replace, strategy);
        assert!(matches!(w, Err(OpenError::NotRegular { .. })), "{w:?}");
    }
}

#[test]
fn directories_are_refused_for_files_and_missing_files_are_not_found() {
    let f = fixture();
    assert!(matches!(f.ws.read_file(Path::new("dir")), Err(OpenError::IsDirectory { .. })));
    assert!(matches!(f.ws.write_file(Path::new("dir"), b"x"), Err(OpenError::IsDirectory { .. })));
    assert!(matches!(f.ws.read_file(Path::new("nope")), Err(OpenError::NotFound { .. })));
}

#[test]
fn write_creates_parents_beneath_and_reports_presence() {
    let f = fixture();
    for strategy in [Strategy::Openat2, Strategy::Walk] {
        let path = format!("{strategy:?}/a/b/c.txt");
        let (mut file, presence) = f.ws.open_file_with(Path::new(&path), OpenFor::Replace, strategy).expect("create");
        file.write_all(b"long content").expect("write");
        assert_eq!(presence, Presence::Created);
        let (mut file, presence) = f.ws.open_file_with(Path::new(&path), OpenFor::Replace, strategy).expect("replace");
        file.write_all(b"short").expect("write");
        assert_eq!(presence, Presence::Existed);
        assert_eq!(std::fs::read(f.ws.root().join(&path)).expect("read"), b"short");
    }
}

#[test]
fn atomic_replace_and_update_go_through_descriptors() {
    let f = fixture();
    f.ws.replace_file_atomically(Path::new("m/n/key.md"), b"one").expect("replace");
    f.ws.replace_file_atomically(Path::new("m/n/key.md"), b"two").expect("replace");
    assert_eq!(f.ws.read_file(Path::new("m/n/key.md")).expect("read"), b"two");
    let names: Vec<_> = f.ws.list_dir(Path::new("m/n")).expect("list").into_iter().map(|(n, _)| n).collect();
    assert_eq!(names, vec![OsString::from("key.md")]);
    let r: Result<usize, ()> =
        f.ws.update_file(Path::new("m/n/key.md"), |b| Ok(([b, b"!".to_vec()].concat(), 1))).expect("open");
    assert_eq!(r, Ok(1));
    assert_eq!(f.ws.read_file(Path::new("m/n/key.md")).expect("read"), b"two!");
    symlink(f.outside.path(), f.ws.root().join("m/out")).expect("link");
    assert!(is_escape(f.ws.replace_file_atomically(Path::new("m/out/key.md"), b"x")));
    assert!(!f.outside.path().join("key.md").exists());
}

/// A workspace with a primary root and one added directory holding `dir/file`.
fn two_roots() -> (Fixture, tempfile::TempDir, PathBuf) {
    let f = fixture();
    let added = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir(added.path().join("dir")).expect("mkdir");
    std::fs::write(added.path().join("dir/file"), "added").expect("write");
    let ws = Workspace::with_roots(f.ws.root(), [added.path()]).expect("workspace");
    let added_root = added.path().canonicalize().expect("canon");
    (Fixture { ws, ..f }, added, added_root)
}

#[test]
fn files_in_an_added_root_open_beneath_that_root() {
    let (f, _added, root) = two_roots();
    for strategy in [Strategy::Openat2, Strategy::Walk] {
        let (mut file, _) = f.ws.open_file_with(&root.join("dir/file"), OpenFor::Read, strategy).expect("open");
        let mut s = String::new();
        file.read_to_string(&mut s).expect("read");
        assert_eq!(s, "added");
        let new = root.join(format!("new-{strategy:?}/deep.txt"));
        let (_, presence) = f.ws.open_file_with(&new, OpenFor::Replace, strategy).expect("create");
        assert_eq!(presence, Presence::Created);
    }
    f.ws.write_file(&root.join("w.txt"), b"written").expect("write");
    assert_eq!(std::fs::read_to_string(root.join("w.txt")).expect("read"), "written");
    assert_eq!(f.ws.kind(&root.join("dir")).expect("kind"), EntryKind::Directory);
    assert_eq!(f.ws.list_dir(&root.join("dir")).expect("list").len(), 1);
    f.ws.replace_file_atomically(&root.join("dir/file"), b"replaced").expect("replace");
    assert_eq!(f.ws.read_file(&root.join("dir/file")).expect("read"), b"replaced");
    // Relative paths stay relative to the primary root.
    assert_eq!(f.ws.read_file(Path::new("dir/file")).expect("read"), b"inside");
}

#[test]
fn a_symlink_in_an_added_root_pointing_outside_every_root_is_an_escape() {
    let (f, _added, root) = two_roots();
    symlink(f.outside.path().join("secret"), root.join("abs")).expect("link");
    symlink(
        "../../../../../../../../../..".to_owned() + &f.outside.path().join("secret").to_string_lossy(),
        root.join("rel"),
    )
    .expect("link");
    for strategy in [Strategy::Openat2, Strategy::Walk] {
        for link in ["abs", "rel"] {
            let r = f.ws.open_file_with(&root.join(link), OpenFor::Read, strategy);
            assert!(is_escape(r), "{link} {strategy:?}");
        }
        let r = f.ws.open_file_with(&root.join("abs"), OpenFor::Replace, strategy);
        assert!(is_escape(r), "write through abs {strategy:?}");
    }
    assert_eq!(std::fs::read_to_string(f.outside.path().join("secret")).expect("read"), "outside secret");
}

#[test]
fn a_path_under_no_root_is_an_escape_naming_every_root() {
    let (f, _added, root) = two_roots();
    let err = f.ws.read_file(&f.outside.path().join("secret")).expect_err("outside");
    let text = err.to_string();
    assert!(matches!(err, OpenError::Escape { ref roots, .. } if roots.len() == 2), "{text}");
    assert!(text.contains(&*root.to_string_lossy()) && text.contains(&*f.ws.root().to_string_lossy()), "{text}");
}

#[test]
fn a_symlink_in_the_primary_root_into_an_added_root_is_refused_by_the_open_of_its_own_path() {
    // Opened by the link's own path, the open is beneath the primary root and the link leaves
    // it: refused. The tools open the resolved path (inside the added root) instead.
    let (f, _added, root) = two_roots();
    symlink(&root, f.ws.root().join("other")).expect("link");
    assert!(is_escape(f.ws.read_file(&f.ws.root().join("other/dir/file"))));
    let resolved = f.ws.resolve("other/dir/file", f.ws.root()).expect("inside");
    assert_eq!(f.ws.read_file(&resolved).expect("read"), b"added");
}
