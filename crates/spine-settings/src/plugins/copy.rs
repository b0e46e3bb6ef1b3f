//! Copying a plugin into the cache ([`copy_plugin`]) by Claude Code's symlink rules, and a
//! digest of a copied tree ([`digest`]).
//!
//! Contract:
//! - Files are copied with their permission bits; directories are recreated; `.git` entries,
//!   sockets, FIFOs and devices are not copied.
//! - A symbolic link is resolved: when its target is inside the plugin's own directory it is
//!   kept, as a relative link to the same place in the copy; when it is elsewhere inside the
//!   boundary (the marketplace, or the cloned repository) its target's content is copied in
//!   its place (a directory that contains itself through links is copied once); when it
//!   leads outside the boundary, or nowhere, it is skipped, and the skip is reported.
//! - [`digest`] is a stable content hash (FNV-1a 64 over the sorted paths, kinds, link
//!   targets and bytes): the same tree always gives the same 12 hex digits.

use std::path::{Path, PathBuf};

use super::PluginError;

/// Copies the plugin at `plugin` (canonical) into `dest` (which must not exist), following
/// links by the rules of the module contract within `boundary` (canonical). Returns what was
/// skipped, one line each.
pub fn copy_plugin(plugin: &Path, boundary: &Path, dest: &Path) -> Result<Vec<String>, PluginError> {
    let mut copier = Copier { plugin, boundary, skipped: Vec::new(), stack: vec![plugin.to_path_buf()] };
    copier.directory(plugin, dest, Path::new(""))?;
    Ok(copier.skipped)
}

struct Copier<'a> {
    plugin: &'a Path,
    boundary: &'a Path,
    skipped: Vec<String>,
    /// The directories being copied (canonical), against link cycles.
    stack: Vec<PathBuf>,
}

fn io_error(path: &Path, what: &str, e: &std::io::Error) -> PluginError {
    PluginError::new(path, "(file)", format!("cannot {what}: {e}"))
}

impl Copier<'_> {
    fn directory(&mut self, src: &Path, dest: &Path, at: &Path) -> Result<(), PluginError> {
        std::fs::create_dir(dest).map_err(|e| io_error(dest, "create the directory", &e))?;
        let mut entries: Vec<_> = std::fs::read_dir(src)
            .map_err(|e| io_error(src, "read the directory", &e))?
            .filter_map(Result::ok)
            .map(|e| e.file_name())
            .collect();
        entries.sort();
        for name in entries {
            if name == ".git" {
                continue;
            }
            let (from, to, here) = (src.join(&name), dest.join(&name), at.join(&name));
            let meta = std::fs::symlink_metadata(&from).map_err(|e| io_error(&from, "read", &e))?;
            let kind = meta.file_type();
            if kind.is_symlink() {
                self.link(&from, &to, &here)?;
            } else if kind.is_dir() {
                self.nested(&from, &to, &here)?;
            } else if kind.is_file() {
                std::fs::copy(&from, &to).map_err(|e| io_error(&from, "copy", &e))?;
            } else {
                self.skipped.push(format!("{}: not a file, directory or link", here.display()));
            }
        }
        Ok(())
    }

    fn nested(&mut self, src: &Path, dest: &Path, at: &Path) -> Result<(), PluginError> {
        let real = src.canonicalize().map_err(|e| io_error(src, "resolve", &e))?;
        if self.stack.contains(&real) {
            self.skipped.push(format!("{}: a link back to a directory being copied", at.display()));
            return Ok(());
        }
        self.stack.push(real);
        let result = self.directory(src, dest, at);
        self.stack.pop();
        result
    }

    fn link(&mut self, from: &Path, to: &Path, at: &Path) -> Result<(), PluginError> {
        let Ok(target) = from.canonicalize() else {
            self.skipped.push(format!("{}: a link to nothing", at.display()));
            return Ok(());
        };
        if let Ok(inside) = target.strip_prefix(self.plugin) {
            let depth = at.components().count().saturating_sub(1);
            let mut relative: PathBuf = std::iter::repeat_n("..", depth).collect();
            relative.push(inside);
            if relative.as_os_str().is_empty() {
                relative.push(".");
            }
            return make_link(&relative, to).map_err(|e| io_error(to, "create the link", &e));
        }
        if !target.starts_with(self.boundary) {
            self.skipped.push(format!(
                "{} -> {}: leads outside the marketplace; not copied",
                at.display(),
                target.display()
            ));
            return Ok(());
        }
        if target.is_dir() {
            self.nested(&target, to, at)
        } else if target.is_file() {
            std::fs::copy(&target, to).map(drop).map_err(|e| io_error(&target, "copy", &e))
        } else {
            self.skipped.push(format!("{}: a link to something that is not a file or a directory", at.display()));
            Ok(())
        }
    }
}

#[cfg(unix)]
fn make_link(target: &Path, at: &Path) -> std::io::Result<()> {
    std::os::unix::fs::symlink(target, at)
}

#[cfg(not(unix))]
fn make_link(_target: &Path, _at: &Path) -> std::io::Result<()> {
    Err(std::io::Error::new(std::io::ErrorKind::Unsupported, "symbolic links are not supported here"))
}

/// A stable digest of the tree at `root` (see the module contract): 12 hex digits.
pub fn digest(root: &Path) -> Result<String, PluginError> {
    let mut hash = Fnv(0xcbf2_9ce4_8422_2325);
    walk(root, Path::new(""), &mut hash)?;
    Ok(format!("{:016x}", hash.0)[..12].to_owned())
}

struct Fnv(u64);

impl Fnv {
    fn bytes(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 ^= u64::from(*b);
            self.0 = self.0.wrapping_mul(0x0100_0000_01b3);
        }
        // A separator, so that ("ab", "c") and ("a", "bc") differ.
        self.0 ^= 0xff;
        self.0 = self.0.wrapping_mul(0x0100_0000_01b3);
    }
}

fn walk(dir: &Path, at: &Path, hash: &mut Fnv) -> Result<(), PluginError> {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .map_err(|e| io_error(dir, "read the directory", &e))?
        .filter_map(Result::ok)
        .map(|e| e.file_name())
        .collect();
    entries.sort();
    for name in entries {
        let (path, here) = (dir.join(&name), at.join(&name));
        hash.bytes(here.to_string_lossy().as_bytes());
        let meta = std::fs::symlink_metadata(&path).map_err(|e| io_error(&path, "read", &e))?;
        if meta.file_type().is_symlink() {
            let target = std::fs::read_link(&path).map_err(|e| io_error(&path, "read the link", &e))?;
            hash.bytes(b"link");
            hash.bytes(target.to_string_lossy().as_bytes());
        } else if meta.is_dir() {
            hash.bytes(b"dir");
            walk(&path, &here, hash)?;
        } else {
            hash.bytes(b"file");
            hash.bytes(&std::fs::read(&path).map_err(|e| io_error(&path, "read", &e))?);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_inside_are_kept_links_in_the_marketplace_copied_and_links_outside_skipped() {
        let dir = tempfile::tempdir().expect("dir");
        let market = dir.path().join("market");
        let plugin = market.join("plugins/p");
        std::fs::create_dir_all(plugin.join("bin")).expect("mkdir");
        std::fs::create_dir_all(market.join("shared/skills/foo")).expect("mkdir");
        std::fs::write(plugin.join("bin/run.sh"), "#!/bin/sh\n").expect("write");
        std::fs::write(market.join("shared/skills/foo/SKILL.md"), "foo").expect("write");
        std::fs::write(dir.path().join("secret"), "secret").expect("write");
        std::fs::create_dir_all(plugin.join("skills")).expect("mkdir");
        std::os::unix::fs::symlink("../bin/run.sh", plugin.join("skills/run")).expect("link");
        std::os::unix::fs::symlink("../../../shared/skills/foo", plugin.join("skills/foo")).expect("link");
        std::os::unix::fs::symlink(dir.path().join("secret"), plugin.join("secret")).expect("link");
        std::os::unix::fs::symlink("..", plugin.join("bin/up")).expect("link");
        std::fs::create_dir_all(plugin.join(".git")).expect("mkdir");
        let (plugin, market) = (plugin.canonicalize().expect("p"), market.canonicalize().expect("m"));
        let dest = dir.path().join("copy");
        let skipped = copy_plugin(&plugin, &market, &dest).expect("copies");

        assert_eq!(std::fs::read_link(dest.join("skills/run")).expect("kept"), Path::new("../bin/run.sh"));
        assert_eq!(std::fs::read_link(dest.join("bin/up")).expect("kept"), Path::new(".."));
        let foo = dest.join("skills/foo");
        assert!(!foo.is_symlink() && foo.join("SKILL.md").is_file(), "dereferenced");
        assert!(!dest.join("secret").exists() && !dest.join("secret").is_symlink(), "skipped");
        assert!(!dest.join(".git").exists());
        assert_eq!(skipped.len(), 1, "{skipped:?}");
        assert!(skipped[0].contains("leads outside the marketplace"), "{skipped:?}");
    }

    #[test]
    fn the_digest_follows_the_content() {
        let dir = tempfile::tempdir().expect("dir");
        std::fs::write(dir.path().join("a"), "1").expect("write");
        let first = digest(dir.path()).expect("digest");
        assert_eq!(first.len(), 12);
        assert_eq!(digest(dir.path()).expect("again"), first);
        std::fs::write(dir.path().join("a"), "2").expect("write");
        assert_ne!(digest(dir.path()).expect("changed"), first);
    }
}
