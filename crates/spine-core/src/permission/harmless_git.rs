//! Where `git` may be a harmless command ([`super::harmless`]). git reads its repository's
//! configuration, and that configuration may name programs `git status`, `git diff`, `git log`
//! and `git show` run (`core.fsmonitor`, `diff.external`, `diff.<driver>.textconv` and
//! `.command`, `filter.<driver>.clean` and `.process` on the files `.gitattributes` names,
//! `core.pager`, more through `include.path`/`includeIf`). git finds that repository by walking
//! up from the directory it starts in, and it takes a directory that merely looks like one
//! (`HEAD`, `config`, `objects/`, `refs/`): a model that may write files can make one, a
//! tarball someone else wrote can carry one. So `git` is harmless only where spine sees which
//! repository git uses and that it is the project's own, trusted one.
//!
//! Contract of [`check`] (for a call with a `git` command that is harmless by its words):
//! - the project is trusted ([`Scope::trusted`]): its `.git/config` is the user's to vouch for;
//! - the directory the call starts in is known ([`Scope::cwd_known`]), and nothing in the call
//!   changes directory, wherever it stands (no `cd`, `pushd`, `popd`, nor a wrapper that runs
//!   its command elsewhere: [`ShellAnalysis::dirs`] is empty and no command is named so);
//!   git's own `-C`, `--git-dir` and `--work-tree` are refused by its grammar
//!   (`harmless_special.rs`);
//! - that directory, its symlinks followed, is inside the project directory (the workspace's
//!   primary root: an added directory is not covered by the project's trust);
//! - it holds `.git`, which `lstat` says is a directory (not a symlink, not a `gitdir:` file),
//!   and which is a repository as git requires one to be (a valid `HEAD` that is no symlink,
//!   `objects/`, `refs/`; without them git would go on looking above it) with no `commondir`
//!   (which would send git to another repository's configuration): git then uses exactly that
//!   `.git`;
//! - its `config` has no `[include]` or `[includeIf …]` section (no `[include`, in any case,
//!   anywhere in the file): an included file may lie in the working tree, which the model may
//!   write; a `config` that cannot be read, or is over 1 MiB, counts as one that includes;
//! - `GIT_*` assignments never get here (any assignment makes a call not harmless); the
//!   environment spine runs with and the user's global and system configuration
//!   (`~/.gitconfig`, `/etc/gitconfig`) are the user's own and are not inspected.
//!
//! `Err` says which condition failed.

use std::path::Path;

use super::harmless::Scope;
use super::shell::{ShellAnalysis, basename};

/// The most of `HEAD` read: a symbolic ref or an object name is far shorter.
const HEAD_LIMIT: u64 = 4096;

/// The largest `config` read for `include` sections.
const CONFIG_LIMIT: u64 = 1 << 20;

/// Whether the `git` commands of `analysis` run in the project's own, trusted repository (see
/// the module contract).
pub(super) fn check(analysis: &ShellAnalysis, scope: &Scope<'_>) -> Result<(), String> {
    if !scope.trusted {
        return Err("git runs programs its repository's configuration names, and the project is not trusted \
                    (`spine trust`)"
            .to_owned());
    }
    let moves = analysis.commands.iter().any(|c| matches!(basename(c.program()), "cd" | "pushd" | "popd"));
    if moves || !analysis.dirs.is_empty() {
        return Err("it changes directory, so spine cannot tell which repository git uses".to_owned());
    }
    if !scope.cwd_known {
        return Err(
            "the directory it starts in is not known, so spine cannot tell which repository git uses".to_owned()
        );
    }
    let cwd = scope.cwd;
    let real =
        std::fs::canonicalize(cwd).map_err(|e| format!("its directory {} cannot be read: {e}", cwd.display()))?;
    if !real.starts_with(scope.workspace.root()) {
        return Err(format!("{} is not inside the project, whose trust covers its own repository only", cwd.display()));
    }
    own_repository(&real.join(".git"))
}

/// Checks that `dot_git` is a repository directory git takes as it is (see the module
/// contract).
fn own_repository(dot_git: &Path) -> Result<(), String> {
    let shown = dot_git.display();
    let kind = std::fs::symlink_metadata(dot_git).map(|m| m.file_type());
    match kind {
        Err(_) => return Err(format!("there is no {shown}, so git would look for a repository elsewhere")),
        Ok(kind) if kind.is_symlink() => return Err(format!("{shown} is a symlink to a repository elsewhere")),
        Ok(kind) if !kind.is_dir() => return Err(format!("{shown} is a file that names a repository elsewhere")),
        Ok(_) => {}
    }
    if !valid_head(&dot_git.join("HEAD")) || !dot_git.join("objects").is_dir() || !dot_git.join("refs").is_dir() {
        return Err(format!("{shown} is not a whole repository (HEAD, objects/, refs/), so git would look above it"));
    }
    if std::fs::symlink_metadata(dot_git.join("commondir")).is_ok() {
        return Err(format!("{shown}/commondir sends git to another repository"));
    }
    if includes(&dot_git.join("config")) {
        return Err(format!("{shown}/config includes other files (`include.path`, `includeIf`)"));
    }
    Ok(())
}

/// Whether the configuration file `config` may have an `include` or `includeIf` section
/// (section names are case-insensitive), or cannot be read whole. No file is no include.
fn includes(config: &Path) -> bool {
    let text = match read_limited(config, CONFIG_LIMIT) {
        Ok(Some(text)) => text,
        Ok(None) => return true,
        Err(e) => return e.kind() != std::io::ErrorKind::NotFound,
    };
    // git takes a section header wherever a key may start, also after another header on the
    // same line: any `[include` counts, even in a value or a comment.
    text.to_ascii_lowercase().contains("[include")
}

/// The text of `path` when it is at most `limit` bytes (`None`: longer, or not UTF-8).
fn read_limited(path: &Path, limit: u64) -> std::io::Result<Option<String>> {
    use std::io::Read;
    let mut bytes = Vec::new();
    std::fs::File::open(path)?.take(limit + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        return Ok(None);
    }
    Ok(String::from_utf8(bytes).ok())
}

/// Whether `head` is a file git accepts as a repository's `HEAD`: `ref: refs/…` or an object
/// name.
fn valid_head(head: &Path) -> bool {
    let Ok(meta) = std::fs::symlink_metadata(head) else { return false };
    if !meta.is_file() {
        return false;
    }
    let Ok(Some(text)) = read_limited(head, HEAD_LIMIT) else { return false };
    let text = text.trim_end();
    match text.strip_prefix("ref:") {
        Some(target) => target.trim_start().starts_with("refs/"),
        None => matches!(text.len(), 40 | 64) && text.chars().all(|c| c.is_ascii_hexdigit()),
    }
}

#[cfg(test)]
#[path = "harmless_git_tests.rs"]
mod tests;
