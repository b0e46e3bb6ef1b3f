//! Reading a failed command's output for sandbox denials: [`explain_output`] finds the lines
//! that report `Permission denied`, `Operation not permitted`, `Read-only file system` or
//! `Network is unreachable`, works out the path or the operation they are about, and asks
//! [`spine_sandbox::explain()`] whether the policy is the cause.
//!
//! Contract:
//! - The kernel does not say which layer refused, so this is a diagnosis from the policy: a
//!   line is explained only when the policy denies what it names. A path hidden by the policy
//!   is a read denial; a path the policy does not let commands write is a write denial only
//!   when spine itself (outside the sandbox) could write there (the file, or the directory it
//!   would be created in), so a file the user cannot write anyway is not blamed on the
//!   sandbox. `Read-only file system` is always a write.
//! - A line about a socket, a connection or `/dev/tcp/…` is a network denial (a bind when it
//!   speaks of binding or listening), and so is a denial line with no path whose few preceding
//!   lines speak of one (a Python traceback ends with `PermissionError: [Errno 1] Operation not
//!   permitted` under `socket.socket(…)`). A client's own words for a connection that could not
//!   be made (`Couldn't connect to server`, `Could not resolve host`…) are one too: the
//!   sandbox's socket filter (and its network namespace, when it has one) refuses it (`EPERM`)
//!   when the network is off.
//! - Paths are the quoted parts of the line (`'…'`, `"…"`, `‘…’`, `` `…' ``) and the parts
//!   between `: ` separators; relative ones are taken against the command's directory.
//! - Each explanation appears once, at most [`MAX_EXPLANATIONS`] of them.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use nix::libc;
use nix::unistd::{AccessFlags, access};
use spine_sandbox::{Operation, Policy, explain};

/// Explanations kept per output.
pub const MAX_EXPLANATIONS: usize = 3;

/// The denial texts and their errno.
const DENIALS: &[(&str, i32)] = &[
    ("Read-only file system", libc::EROFS),
    ("Operation not permitted", libc::EPERM),
    ("Permission denied", libc::EACCES),
    ("Network is unreachable", libc::ENETUNREACH),
];

/// Words of a line about the network.
const NETWORK_WORDS: &[&str] = &["socket", "connect", "/dev/tcp/", "/dev/udp/", "network", "urlopen", "errno 101"];

/// How clients say a connection could not be made, without an errno text.
const CONNECTION_FAILURES: &[&str] = &[
    "couldn't connect to server",
    "could not resolve host",
    "failed to connect",
    "temporary failure in name resolution",
    "name or service not known",
    "no route to host",
    "network is unreachable",
];

/// Lines before a denial line that may say what it was about.
const CONTEXT_LINES: usize = 4;

/// Words of a line about binding a port.
const BIND_WORDS: &[&str] = &["bind", "listen"];

/// One sentence per distinct denial in `output` the policy explains (see the module contract).
pub fn explain_output(policy: &Policy, output: &str, cwd: &Path) -> Vec<String> {
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    let lines: Vec<&str> = output.lines().collect();
    for (i, line) in lines.iter().enumerate() {
        let context = &lines[i.saturating_sub(CONTEXT_LINES)..i];
        let Some(explanation) = explain_line(policy, line, context, cwd) else { continue };
        if seen.insert(explanation.clone()) {
            out.push(explanation);
            if out.len() == MAX_EXPLANATIONS {
                break;
            }
        }
    }
    out
}

fn explain_line(policy: &Policy, line: &str, context: &[&str], cwd: &Path) -> Option<String> {
    let lower = line.to_ascii_lowercase();
    let Some(errno) = DENIALS.iter().find(|(text, _)| line.contains(text)).map(|(_, errno)| *errno) else {
        let failed = CONNECTION_FAILURES.iter().any(|words| lower.contains(words));
        return failed.then(|| explain(policy, libc::EPERM, Operation::Connect)).flatten();
    };
    let network = |text: &str| NETWORK_WORDS.iter().any(|word| text.to_ascii_lowercase().contains(word));
    if errno != libc::EROFS && network(line) {
        let operation =
            if BIND_WORDS.iter().any(|word| lower.contains(word)) { Operation::Bind } else { Operation::Connect };
        return explain(policy, errno, operation);
    }
    let paths = candidates(line);
    if paths.is_empty() && errno != libc::EROFS && context.iter().any(|l| network(l)) {
        let bind = context.iter().any(|l| BIND_WORDS.iter().any(|word| l.to_ascii_lowercase().contains(word)));
        return explain(policy, errno, if bind { Operation::Bind } else { Operation::Connect });
    }
    paths.into_iter().find_map(|written| {
        let path = absolute(&written, cwd);
        if errno == libc::EROFS {
            return explain(policy, errno, Operation::Write(&path));
        }
        explain(policy, errno, Operation::Read(&path))
            .or_else(|| writable_outside(&path).then(|| explain(policy, errno, Operation::Write(&path))).flatten())
    })
}

/// The quoted parts of `line`, then its `: `-separated parts that look like paths.
fn candidates(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (open, close) in [('\'', '\''), ('"', '"'), ('‘', '’'), ('`', '\'')] {
        let mut rest = line;
        while let Some(start) = rest.find(open) {
            let after = &rest[start + open.len_utf8()..];
            let Some(end) = after.find(close) else { break };
            let quoted = &after[..end];
            if !quoted.is_empty() && !out.iter().any(|c| c == quoted) {
                out.push(quoted.to_owned());
            }
            rest = &after[end + close.len_utf8()..];
        }
    }
    for part in line.split(": ") {
        let part = part.trim();
        let looks_like_path = !part.is_empty()
            && !part.contains(char::is_whitespace)
            && !part.contains(['\'', '"', '‘', '’', '`'])
            && (part.contains('/') || part.starts_with('.') || part.starts_with('~'));
        if looks_like_path && !out.iter().any(|c| c == part) {
            out.push(part.to_owned());
        }
    }
    out
}

/// `written` made absolute against `cwd` (`~/` against `HOME`).
fn absolute(written: &str, cwd: &Path) -> PathBuf {
    if let (Some(rest), Some(home)) = (written.strip_prefix("~/"), std::env::var_os("HOME")) {
        return PathBuf::from(home).join(rest);
    }
    let path = Path::new(written);
    if path.is_absolute() { path.to_path_buf() } else { cwd.join(path) }
}

/// Whether this process (unconfined) could write `path`: the file when it exists, else the
/// directory it would be created in.
fn writable_outside(path: &Path) -> bool {
    if path.symlink_metadata().is_ok() {
        return access(path, AccessFlags::W_OK).is_ok();
    }
    path.parent().is_some_and(|dir| access(dir, AccessFlags::W_OK | AccessFlags::X_OK).is_ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(workspace: &Path) -> Policy {
        Policy {
            read_deny: vec![workspace.join(".env"), "/nonexistent-home/.ssh".into()],
            write_allow: vec![workspace.to_path_buf()],
            write_deny: vec![workspace.join(".claude")],
            ..Policy::default()
        }
    }

    #[test]
    fn paths_in_common_messages_are_found() {
        assert_eq!(candidates("touch: cannot touch '/tmp/zz': Permission denied"), vec!["/tmp/zz"]);
        assert_eq!(candidates("mkdir: cannot create directory ‘/tmp/yy’: Permission denied"), vec!["/tmp/yy"]);
        assert_eq!(candidates("bash: /tmp/outside: Permission denied"), vec!["/tmp/outside"]);
        assert_eq!(candidates("cat: .env: Permission denied"), vec![".env"]);
        assert_eq!(candidates("PermissionError: [Errno 13] Permission denied: '/tmp/x'"), vec!["/tmp/x".to_owned()]);
    }

    #[test]
    fn hidden_paths_writes_outside_and_the_network_are_explained_once_each() {
        let dir = tempfile::tempdir().expect("tmp");
        let ws = dir.path().join("ws");
        std::fs::create_dir_all(&ws).expect("ws");
        let p = policy(&ws);
        let outside = dir.path().join("outside.txt");
        let output = format!(
            "cat: .env: Permission denied\nbash: {0}: Permission denied\nbash: {0}: Permission denied\n\
             bash: socket: Operation not permitted\ncurl: (7) Failed to connect to 127.0.0.1 port 8: Couldn't connect to server\n\
             ok line\n",
            outside.display()
        );
        let said = explain_output(&p, &output, &ws);
        assert_eq!(said.len(), 3, "{said:?}");
        assert_eq!(
            said[0],
            format!("Permission denied (sandbox: {} is hidden from commands)", ws.join(".env").display())
        );
        assert!(said[1].starts_with("Permission denied (sandbox: write outside the workspace"), "{said:?}");
        assert_eq!(said[2], "Operation not permitted (sandbox: network access is off)");
    }

    #[test]
    fn a_traceback_ending_in_a_bare_denial_is_read_with_the_lines_before_it() {
        let p = policy(Path::new("/w"));
        let traceback = "  File \"socket.py\", line 232, in __init__\n    _socket.socket.__init__(self, family, type, proto)\n\
                         PermissionError: [Errno 1] Operation not permitted\n";
        assert_eq!(
            explain_output(&p, traceback, Path::new("/w")),
            vec!["Operation not permitted (sandbox: network access is off)".to_owned()]
        );
        let open = Policy { network: spine_sandbox::Network::Full, ..p };
        assert!(explain_output(&open, traceback, Path::new("/w")).is_empty(), "full network: not the sandbox");
    }

    #[test]
    fn lines_the_policy_does_not_explain_are_left_alone() {
        let dir = tempfile::tempdir().expect("tmp");
        let p = policy(dir.path());
        let inside = dir.path().join("src/main.rs");
        let output = format!("bash: {}: Permission denied\nls: no such file\n", inside.display());
        assert!(explain_output(&p, &output, dir.path()).is_empty());
        let protected =
            format!("touch: cannot touch '{}': Read-only file system", dir.path().join(".claude/x").display());
        let said = explain_output(&p, &protected, dir.path());
        assert_eq!(said.len(), 1);
        assert!(said[0].contains("is protected and read-only"), "{said:?}");
    }
}
