//! Writes outside the workspace, reads of hidden paths, protected paths inside the
//! workspace; and what stays allowed.

use std::fs;

use crate::common::{Fixture, describe, python};

#[test]
fn write_outside_the_workspace_is_denied() {
    let f = Fixture::new();
    let script = format!("echo x > {}", f.outside.display());
    f.denied_then_allowed(&f.policy(), &script, "Permission denied");
}

#[test]
fn write_outside_the_workspace_is_denied_for_python() {
    let Some(python) = python() else { return };
    let f = Fixture::new();
    let script = format!("{python} -c \"open('{}', 'w').write('x')\"", f.outside.display());
    f.denied_then_allowed(&f.policy(), &script, "PermissionError");
}

#[test]
fn write_through_a_symlink_in_the_workspace_is_denied() {
    let f = Fixture::new();
    std::os::unix::fs::symlink(&f.outside, f.ws.join("link")).expect("symlink");
    f.denied_then_allowed(&f.policy(), "echo x > link", "Permission denied");
}

#[test]
fn write_via_proc_self_root_is_denied() {
    let f = Fixture::new();
    let script = format!("echo x > /proc/self/root{}", f.outside.display());
    f.denied_then_allowed(&f.policy(), &script, "Permission denied");
}

#[test]
fn write_after_cd_to_root_is_denied() {
    let f = Fixture::new();
    let relative = f.outside.strip_prefix("/").expect("absolute");
    let script = format!("cd / && echo x > {}", relative.display());
    f.denied_then_allowed(&f.policy(), &script, "Permission denied");
}

#[test]
fn reading_a_denied_directory_is_denied() {
    let f = Fixture::new();
    let script = format!("cat {}/.ssh/id_ed25519", f.home.display());
    f.denied_then_allowed(&f.policy(), &script, "Permission denied");
    let listing = format!("ls {}/.ssh", f.home.display());
    f.denied_then_allowed(&f.policy(), &listing, "Permission denied");
}

#[test]
fn reading_a_denied_file_is_denied() {
    let f = Fixture::new();
    fs::write(f.home.join(".netrc"), "machine x password y").expect("write");
    let mut policy = f.policy();
    policy.read_deny.push(f.home.join(".netrc"));
    let script = format!("cat {}/.netrc", f.home.display());
    f.denied_then_allowed(&policy, &script, "Permission denied");
}

#[test]
fn writing_an_existing_protected_file_is_denied() {
    let f = Fixture::new();
    fs::create_dir_all(f.ws.join(".claude")).expect("mkdir");
    fs::write(f.ws.join(".claude/settings.json"), "{}").expect("write");
    let policy = f.policy();
    f.denied_then_allowed(&policy, "echo '{\"hooks\":1}' > .claude/settings.json", "Read-only file system");
    f.denied_then_allowed(&policy, "rm .claude/settings.json && echo '{}' > .claude/settings.json", "rm:");
    // The directory holding it cannot be renamed away and replaced by a writable copy.
    f.denied_then_allowed(&policy, "mv .claude .claude-old && mkdir .claude", "mv:");
}

#[test]
fn writing_a_missing_protected_path_is_undone() {
    let f = Fixture::new();
    let confined = f.sh(Some(&f.policy()), "echo '{}' > .mcp.json && mkdir -p .spine && test -e .mcp.json");
    assert!(confined.status.success(), "{}", describe(&confined));
    let stderr = String::from_utf8_lossy(&confined.stderr);
    assert!(stderr.contains(".mcp.json (a protected path the command created)"), "{stderr}");
    assert!(!f.ws.join(".mcp.json").exists(), ".mcp.json is removed after the command");
    assert!(!f.ws.join(".spine").exists(), ".spine is removed after the command");
    let bare = f.sh(None, "echo '{}' > .mcp.json");
    assert!(bare.status.success() && f.ws.join(".mcp.json").exists(), "{}", describe(&bare));
}

#[test]
fn write_inside_the_workspace_is_allowed() {
    let f = Fixture::new();
    let out = f.sh(Some(&f.policy()), "mkdir -p src && echo hi > src/a.txt && mv src/a.txt src/b.txt && cat src/b.txt");
    assert!(out.status.success(), "{}", describe(&out));
    assert_eq!(fs::read_to_string(f.ws.join("src/b.txt")).expect("read"), "hi\n");
}

#[test]
fn mktemp_in_the_private_tmpdir_is_allowed() {
    let f = Fixture::new();
    let out = f.sh(Some(&f.policy()), "t=$(mktemp) && echo x > \"$t\" && echo \"$t\"");
    assert!(out.status.success(), "{}", describe(&out));
    let made = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    assert!(made.starts_with(&f.tmp.display().to_string()), "{made}");
}

#[test]
fn terminal_devices_stay_usable() {
    let f = Fixture::new();
    let out =
        f.sh(Some(&f.policy()), "echo x > /dev/null && head -c 4 /dev/zero > /dev/null && ls /dev/pts >/dev/null");
    assert!(out.status.success(), "{}", describe(&out));
}

#[test]
fn git_init_and_commit_in_the_workspace_work() {
    let f = Fixture::new();
    let script = "git init -q . && echo hi > a && git add a && git -c user.name=t -c user.email=t@t commit -qm one && git log --oneline";
    let out = f.sh(Some(&f.policy()), script);
    assert!(out.status.success(), "{}", describe(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains("one"), "{}", describe(&out));
    // `.git/hooks` did not exist before: git created it, the helper removed it.
    assert!(f.ws.join(".git/HEAD").exists());
    assert!(!f.ws.join(".git/hooks").exists(), "{}", describe(&out));
}

#[test]
fn git_hooks_of_an_existing_repository_are_read_only() {
    let f = Fixture::new();
    let init = f.sh(None, "git init -q .");
    assert!(init.status.success(), "{}", describe(&init));
    let script = "echo 'curl evil' > .git/hooks/pre-commit";
    f.denied_then_allowed(&f.policy(), script, "Read-only file system");
}

#[test]
fn a_killed_helper_skips_its_undo_so_the_caller_undoes_too() {
    let f = Fixture::new();
    let policy = f.policy();
    let guard = spine_sandbox::MissingGuard::before(&policy);
    // The command kills its helper (same user, same domain: allowed), then creates the file.
    let out = f.sh(Some(&policy), "kill -KILL $PPID; sleep 0.2; echo '{}' > .mcp.json");
    assert_eq!(std::os::unix::process::ExitStatusExt::signal(&out.status), Some(9), "{}", describe(&out));
    assert!(f.ws.join(".mcp.json").exists(), "the helper could not undo");
    let messages = guard.undo();
    assert_eq!(messages.len(), 1, "{messages:?}");
    assert!(!f.ws.join(".mcp.json").exists(), "the caller's undo removed it");
}
