//! Paths inside a plugin: its directory resolved cheaply ([`CanonicalBases`]), component paths
//! kept inside it ([`inside`]), and the files and directories a reading looked at, with their
//! stamps ([`Watch`]), so that the parse memo can tell when what it remembered is stale.
//!
//! Contract:
//! - A path below a canonical directory reached by plain names (no symbolic link, no `..`) is
//!   canonical too: it is checked with one `lstat` per name instead of a `realpath`.
//! - A [`Watch`] records the stamp of every file it is told about and every directory on a
//!   plain path, taken before the file is read. A directory's stamp changes whenever an entry
//!   is added, removed or renamed in it, so an entry found missing, or found to be a directory,
//!   is covered by its parent's stamp. Anything a stamp cannot cover — a symbolic link (its
//!   target can change under an unchanged link) or a path resolved the full way — makes the
//!   reading one not to remember.

use std::fs::Metadata;
use std::path::{Component, Path, PathBuf};

use spine_protocol::parse_memo::Stamp;

use super::PluginError;

/// The files and directories a reading depended on, with their stamps (see the contract).
#[derive(Debug)]
pub(super) struct Watch {
    pub(super) deps: Vec<(PathBuf, Stamp)>,
    /// Whether the stamps cover everything the reading depended on.
    pub(super) keep: bool,
}

impl Watch {
    pub(super) fn new() -> Watch {
        Watch { deps: Vec::new(), keep: true }
    }

    /// Records `path`'s stamp from its `lstat`; one that has none (a link) is not rememberable.
    fn record(&mut self, path: &Path, meta: &Metadata) {
        match Stamp::from_metadata(meta) {
            Some(stamp) => self.deps.push((path.to_path_buf(), stamp)),
            None => self.keep = false,
        }
    }

    /// `lstat` of a file the reading depends on, recorded; `None` when it does not exist or
    /// cannot be checked (then covered by its directory's stamp, or not rememberable).
    pub(super) fn file(&mut self, path: &Path) -> Option<Metadata> {
        match path.symlink_metadata() {
            Ok(meta) => {
                self.record(path, &meta);
                Some(meta)
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(_) => {
                self.keep = false;
                None
            }
        }
    }

    /// Whether `parent/name` is a directory (`want_dir`) or a regular file, links followed; its
    /// existence and type are covered by `parent`'s stamp, unless it is a link.
    pub(super) fn entry_is(&mut self, parent: &Path, name: &str, want_dir: bool) -> Option<PathBuf> {
        let path = parent.join(name);
        let found = match path.symlink_metadata() {
            Ok(meta) if meta.file_type().is_symlink() => {
                self.keep = false;
                if want_dir { path.is_dir() } else { path.is_file() }
            }
            Ok(meta) => {
                if want_dir {
                    meta.is_dir()
                } else {
                    meta.is_file()
                }
            }
            Err(e) => {
                self.keep &= e.kind() == std::io::ErrorKind::NotFound;
                false
            }
        };
        found.then_some(path)
    }

    /// Whether every recorded stamp (its path relative to `root`) is still what it was.
    pub(super) fn holds(root: &Path, deps: &[(PathBuf, Stamp)]) -> bool {
        deps.iter().all(|(path, stamp)| Stamp::of(&root.join(path)).as_ref() == Some(stamp))
    }

    /// Whether every recorded stamp has settled (see the parse memo's contract).
    pub(super) fn settled(&self) -> bool {
        self.deps.iter().all(|(_, stamp)| stamp.is_settled())
    }
}

/// Canonical paths of plugin directories, resolved cheaply below directories canonicalised
/// once per load (the stores' caches, where installed plugins live): one `lstat` per name
/// below such a directory instead of a `readlink` per name of the whole path. A path elsewhere,
/// or one with a link or `..` below the base, is canonicalised the full way. A directory found
/// plain on the way (a marketplace's, shared by its plugins) is checked once per load.
pub(super) struct CanonicalBases {
    bases: Vec<(PathBuf, std::cell::OnceCell<Option<PathBuf>>)>,
    plain_dirs: KnownDirs,
}

impl CanonicalBases {
    /// Directories to resolve below, each canonicalised at its first use.
    pub(super) fn new(dirs: impl IntoIterator<Item = PathBuf>) -> Self {
        let bases = dirs.into_iter().map(|dir| (dir, std::cell::OnceCell::new())).collect();
        CanonicalBases { bases, plain_dirs: KnownDirs::default() }
    }

    /// `path` canonicalised, with its metadata (links followed).
    pub(super) fn canonical(&self, path: &Path) -> std::io::Result<(PathBuf, Metadata)> {
        for (given, canonical) in &self.bases {
            if let Ok(rest) = path.strip_prefix(given)
                && let Some(base) = canonical.get_or_init(|| given.canonicalize().ok())
                && let Some(Some(found)) =
                    rest.to_str().and_then(|rest| plain_entry(base, rest, Some(&self.plain_dirs), None))
            {
                // No name below the canonical base is a link: the metadata is the target's.
                return Ok(found);
            }
        }
        let found = path.canonicalize()?;
        let meta = found.metadata()?;
        Ok((found, meta))
    }
}

/// `root/relative` without a `realpath` (`root` is canonical): when `relative` is plain names
/// (and `.`), each of which exists and is no symbolic link, the joined path is canonical too.
/// `None` sends the caller to the full resolution.
fn plain_below(root: &Path, relative: &str, watch: &mut Watch) -> Option<PathBuf> {
    plain_entry(root, relative, None, Some(watch)).flatten().map(|(path, _)| path)
}

/// What `root/relative` is when reached by plain names (and `.`) below the canonical `root`,
/// checked with one `lstat` per name: `Some(Some((path, metadata)))`; `Some(None)` when a name
/// does not exist; `None` when a name is a symbolic link or `..`, or cannot be checked (the
/// caller resolves the full way). A name's directory already in `known` (found plain by this
/// load) is not checked again; directories found on the way are added to it.
///
/// `watch` records what the answer depends on beyond `root`'s own stamp (which covers the
/// names directly in it): the entry found, the directory a missing name was looked for in, and
/// every directory deeper than the first on the way.
pub(super) fn plain_entry(
    root: &Path,
    relative: &str,
    known: Option<&KnownDirs>,
    mut watch: Option<&mut Watch>,
) -> Option<Option<(PathBuf, Metadata)>> {
    let mut path = root.to_path_buf();
    let mut found = None;
    let mut depth = 0;
    // The first-level directory on the way, recorded only when a name is missing in it.
    let mut first_level: Option<(PathBuf, Metadata)> = None;
    let mut components = Path::new(relative).components().peekable();
    while let Some(component) = components.next() {
        let last = components.peek().is_none();
        match component {
            Component::CurDir => {}
            Component::Normal(name) => {
                path.push(name);
                depth += 1;
                if !last && known.is_some_and(|known| known.contains(&path)) {
                    continue;
                }
                match path.symlink_metadata() {
                    Ok(meta) if meta.file_type().is_symlink() => return None,
                    Ok(meta) => {
                        if let Some(known) = known.filter(|_| !last && meta.is_dir()) {
                            known.0.borrow_mut().push(path.clone());
                        }
                        if let Some(watch) = watch.as_deref_mut() {
                            match (last, depth) {
                                (false, 1) => first_level = Some((path.clone(), meta.clone())),
                                _ => watch.record(&path, &meta),
                            }
                        }
                        found = Some(meta);
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                        if let (Some(watch), Some((dir, meta))) = (watch, first_level.filter(|_| depth == 2)) {
                            watch.record(&dir, &meta);
                        }
                        return Some(None);
                    }
                    Err(_) => return None,
                }
            }
            _ => return None,
        }
    }
    let meta = match found {
        Some(meta) => meta,
        None => path.symlink_metadata().ok()?,
    };
    Some(Some((path, meta)))
}

/// Directories below a canonical base found to be plain (existing, no link) during one load.
#[derive(Default)]
pub(super) struct KnownDirs(std::cell::RefCell<Vec<PathBuf>>);

impl KnownDirs {
    /// Whether `dir` was found (its bytes compared: a canonical path has one spelling).
    fn contains(&self, dir: &Path) -> bool {
        self.0.borrow().iter().any(|known| known.as_os_str() == dir.as_os_str())
    }
}

/// `relative` (a manifest path) resolved under `root`, refused when it leaves it (links
/// resolved) or does not exist. Resolved the full way, it is not rememberable.
pub(super) fn inside(
    root: &Path,
    manifest: &Path,
    field: &str,
    relative: &str,
    watch: &mut Watch,
) -> Result<PathBuf, PluginError> {
    if let Some(plain) = plain_below(root, relative, watch) {
        return Ok(plain);
    }
    watch.keep = false;
    let joined = root.join(relative);
    let resolved =
        joined.canonicalize().map_err(|e| PluginError::new(manifest, field, format!("{relative:?}: {e}")))?;
    match resolved.starts_with(root) {
        true => Ok(resolved),
        false => Err(PluginError::new(manifest, field, format!("{relative:?} leads outside the plugin's directory"))),
    }
}
