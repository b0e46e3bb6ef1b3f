//! One idea of home: the user's home directory (`HOME`), spine's home directory (`SPINE_HOME`,
//! else `~/.spine`) and `~` in paths. Every crate asks here; none reads `HOME` or `SPINE_HOME`
//! itself.
//!
//! Contract:
//! - The user's home ([`user_home`]) is `HOME` when it is set, non-empty and absolute; else
//!   there is none (`None`). An empty or relative `HOME` is treated as unset: it would make
//!   `~/.claude/settings.json` a path relative to wherever spine runs.
//! - spine's home ([`spine_home`]) is `SPINE_HOME` when it is set and non-empty — a relative
//!   value is made absolute against the current directory at the time of the call (joined, not
//!   canonicalised; `None` when the current directory cannot be read) —, else the user's home
//!   joined with `.spine`, else there is none. Never a relative `.spine`: a caller that needs
//!   spine's home and gets `None` fails with [`NoSpineHome`] ("set SPINE_HOME, or HOME to an
//!   absolute path"), see [`require_spine_home`].
//! - `~` and `~/x` ([`expand_tilde`]) expand to the user's home (`~//x` as `~/x`); any other
//!   path, `~user/x` included, is returned as written. `None` when the path needs a home and
//!   there is none: the caller decides (keep the word as written, or refuse to judge it).
//! - The environment is read by the functions without a `_with`/`from_` suffix only; the rules
//!   themselves are pure functions of the values ([`HomeVars`], [`expand_tilde_with`]), which
//!   is what the tests call (changing the environment in a multi-threaded test binary races).

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use thiserror::Error;

/// The variable naming the user's home directory.
pub const HOME_VAR: &str = "HOME";

/// The variable naming spine's home directory (settings, trust store, sessions, skills).
pub const SPINE_HOME_VAR: &str = "SPINE_HOME";

/// spine's home directory under the user's home, when `SPINE_HOME` is not set.
pub const SPINE_DIR: &str = ".spine";

/// There is no spine home: neither `SPINE_HOME` nor an absolute `HOME` is set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
#[error("cannot find spine's home directory: set SPINE_HOME, or HOME to an absolute path")]
pub struct NoSpineHome;

/// The values the home directories come from: the environment's ([`HomeVars::from_env`]), or
/// a test's.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HomeVars {
    /// `HOME`, as set (`None`: unset).
    pub home: Option<OsString>,
    /// `SPINE_HOME`, as set (`None`: unset).
    pub spine_home: Option<OsString>,
}

impl HomeVars {
    /// `HOME` and `SPINE_HOME` from the environment.
    pub fn from_env() -> Self {
        HomeVars { home: std::env::var_os(HOME_VAR), spine_home: std::env::var_os(SPINE_HOME_VAR) }
    }

    /// The user's home: `HOME` when non-empty and absolute (see the module contract).
    pub fn user_home(&self) -> Option<PathBuf> {
        let home = PathBuf::from(self.home.as_ref()?);
        home.is_absolute().then_some(home)
    }

    /// spine's home: `SPINE_HOME` (a relative one against `cwd`; `None` without a `cwd`), else
    /// the user's home joined with `.spine`, else `None` (see the module contract).
    pub fn spine_home(&self, cwd: Option<&Path>) -> Option<PathBuf> {
        match self.spine_home.as_ref().filter(|v| !v.is_empty()) {
            Some(value) => {
                let path = PathBuf::from(value);
                if path.is_absolute() { Some(path) } else { cwd.filter(|c| c.is_absolute()).map(|c| c.join(path)) }
            }
            None => self.user_home().map(|home| home.join(SPINE_DIR)),
        }
    }
}

/// The user's home directory from `HOME` (non-empty and absolute), else `None`.
pub fn user_home() -> Option<PathBuf> {
    HomeVars { home: std::env::var_os(HOME_VAR), spine_home: None }.user_home()
}

/// spine's home directory from `SPINE_HOME`, else `HOME`'s `.spine`, else `None` (see the
/// module contract).
pub fn spine_home() -> Option<PathBuf> {
    let vars = HomeVars::from_env();
    let needs_cwd = vars.spine_home.as_ref().is_some_and(|v| !v.is_empty() && !Path::new(v).is_absolute());
    let cwd = if needs_cwd { std::env::current_dir().ok() } else { None };
    vars.spine_home(cwd.as_deref())
}

/// [`spine_home`], or the error callers show when there is none.
pub fn require_spine_home() -> Result<PathBuf, NoSpineHome> {
    spine_home().ok_or(NoSpineHome)
}

/// `~` and `~/x` expanded with the user's home from `HOME` (see [`expand_tilde_with`]).
pub fn expand_tilde(path: &str) -> Option<PathBuf> {
    expand_tilde_with(path, user_home().as_deref())
}

/// `~` is `home`, `~/x` is `home/x`; any other path is returned as written. `None` when the
/// path starts with `~` or `~/` and `home` is `None`.
pub fn expand_tilde_with(path: &str, home: Option<&Path>) -> Option<PathBuf> {
    let rest = match path.strip_prefix('~') {
        Some("") => "",
        Some(rest) if rest.starts_with('/') => rest.trim_start_matches('/'),
        Some(_) | None => return Some(PathBuf::from(path)),
    };
    Some(home?.join(rest))
}

/// The longest project folder name kept whole.
const MAX_FOLDER_NAME: usize = 200;

/// The name of `project`'s folder under spine's home (`projects/<name>/`,
/// `cache/parsed/<name>.memo`): its path with every character other than an ASCII letter or
/// digit made `-`; a name longer than 200 characters is cut there and followed by a hash of
/// the whole path.
pub fn project_folder_name(project: &Path) -> String {
    let text = project.to_string_lossy();
    let name: String = text.chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '-' }).collect();
    if name.len() <= MAX_FOLDER_NAME {
        return name;
    }
    format!("{}-{:016x}", &name[..MAX_FOLDER_NAME], fnv1a(text.as_bytes()))
}

/// FNV-1a, 64 bits: a hash that never changes between builds (folder names must stay put).
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(home: Option<&str>, spine_home: Option<&str>) -> HomeVars {
        HomeVars { home: home.map(OsString::from), spine_home: spine_home.map(OsString::from) }
    }

    #[test]
    fn the_user_home_is_an_absolute_non_empty_home() {
        assert_eq!(vars(Some("/home/u"), None).user_home(), Some(PathBuf::from("/home/u")));
        assert_eq!(vars(None, None).user_home(), None, "missing HOME");
        assert_eq!(vars(Some(""), None).user_home(), None, "empty HOME");
        assert_eq!(vars(Some("home/u"), None).user_home(), None, "relative HOME");
        assert_eq!(vars(Some("."), None).user_home(), None, "relative HOME");
    }

    #[test]
    fn spine_home_is_spine_home_else_dot_spine_under_the_user_home() {
        let cwd = Some(Path::new("/work"));
        assert_eq!(vars(Some("/h"), Some("/s")).spine_home(cwd), Some(PathBuf::from("/s")));
        assert_eq!(vars(None, Some("/s")).spine_home(cwd), Some(PathBuf::from("/s")), "SPINE_HOME needs no HOME");
        assert_eq!(vars(Some("/h"), None).spine_home(cwd), Some(PathBuf::from("/h/.spine")));
    }

    #[test]
    fn an_empty_spine_home_is_unset() {
        let cwd = Some(Path::new("/work"));
        assert_eq!(vars(Some("/h"), Some("")).spine_home(cwd), Some(PathBuf::from("/h/.spine")));
        assert_eq!(vars(None, Some("")).spine_home(cwd), None);
    }

    #[test]
    fn a_relative_spine_home_is_made_absolute_against_the_current_directory() {
        assert_eq!(
            vars(None, Some("state/spine")).spine_home(Some(Path::new("/work"))),
            Some("/work/state/spine".into())
        );
        assert_eq!(vars(Some("/h"), Some("state")).spine_home(None), None, "no current directory: no guess");
        assert_eq!(vars(None, Some("state")).spine_home(Some(Path::new("rel"))), None, "a relative cwd is no anchor");
    }

    #[test]
    fn without_an_absolute_home_there_is_no_spine_home_never_a_relative_dot_spine() {
        let cwd = Some(Path::new("/work"));
        for home in [None, Some(""), Some("relative")] {
            assert_eq!(vars(home, None).spine_home(cwd), None, "HOME={home:?}");
        }
        assert_eq!(
            NoSpineHome.to_string(),
            "cannot find spine's home directory: set SPINE_HOME, or HOME to an absolute path"
        );
    }

    #[test]
    fn a_tilde_expands_to_the_home_and_other_paths_stay_as_written() {
        let home = Some(Path::new("/h"));
        assert_eq!(expand_tilde_with("~", home), Some(PathBuf::from("/h")));
        assert_eq!(expand_tilde_with("~/", home), Some(PathBuf::from("/h")));
        assert_eq!(expand_tilde_with("~/notes/a.md", home), Some(PathBuf::from("/h/notes/a.md")));
        assert_eq!(expand_tilde_with("~//x", home), Some(PathBuf::from("/h/x")));
        for written in ["~user/x", "a/~/b", "/abs", "rel", ""] {
            assert_eq!(expand_tilde_with(written, home), Some(PathBuf::from(written)), "{written}");
            assert_eq!(expand_tilde_with(written, None), Some(PathBuf::from(written)), "{written}");
        }
    }

    #[test]
    fn a_tilde_without_a_home_does_not_expand() {
        assert_eq!(expand_tilde_with("~", None), None);
        assert_eq!(expand_tilde_with("~/x", None), None);
    }
}
