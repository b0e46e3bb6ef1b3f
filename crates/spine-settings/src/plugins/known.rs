//! Where a marketplace comes from ([`MarketplaceSource`]): the argument of `plugin marketplace
//! add`, and the `source` object Claude Code records in `known_marketplaces.json` and in
//! settings' `extraKnownMarketplaces`.
//!
//! Contract ([`MarketplaceSource::parse_argument`], Claude Code 2.1's rules, in order):
//! - `user@host:path[.git][#ref]` (scp-like SSH) is a git repository.
//! - `http://` or `https://`: with `#ref` split off, a URL ending in `.git` or holding `/_git/`
//!   is a git repository, as is a `github.com` or `gitlab.com` repository URL (`.git` is
//!   appended); any other URL is a hosted `marketplace.json` (`url`), which spine does not
//!   fetch. spine also clones `file://`, `git://` and `ssh://` URLs (Claude Code refuses them).
//! - A path starting with `./`, `../`, `/` or `~` is local: a `.json` file is a `file` source,
//!   a directory a `directory` source used in place — except a bare git repository (no work
//!   tree, no catalog), which spine clones as git (Claude Code refuses it).
//! - `owner/repo`, with `@ref` or `#ref`, is GitHub (cloned from
//!   `https://github.com/owner/repo.git`); a host without a scheme is refused.
//! - The record is `{"source": "directory"|"file", "path"}`, `{"source": "git", "url",
//!   "ref"?}`, `{"source": "github", "repo", "ref"?}` or `{"source": "url", "url"}`.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

use super::marketplace::github_repo;

/// Where a marketplace comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MarketplaceSource {
    /// A local directory holding `.claude-plugin/marketplace.json`, used in place.
    Directory(PathBuf),
    /// A local catalog file.
    File(PathBuf),
    /// A git repository, cloned.
    Git {
        /// What git clones.
        url: String,
        /// A branch or a tag.
        git_ref: Option<String>,
    },
    /// A GitHub repository (`owner/repo`), cloned over HTTPS.
    Github {
        /// `owner/repo`.
        repo: String,
        /// A branch or a tag.
        git_ref: Option<String>,
    },
    /// A hosted `marketplace.json` (Claude Code's; spine does not fetch it).
    Url(String),
}

/// Why an argument is not a marketplace source.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{argument}: {reason}")]
pub struct SourceError {
    /// The argument or the record.
    pub argument: String,
    /// Why.
    pub reason: String,
}

fn refused(argument: &str, reason: impl Into<String>) -> SourceError {
    SourceError { argument: argument.to_owned(), reason: reason.into() }
}

impl MarketplaceSource {
    /// Parses the argument of `plugin marketplace add` (see the module contract); relative
    /// paths resolve against `cwd`, `~` against `home`.
    pub fn parse_argument(argument: &str, cwd: &Path, home: Option<&Path>) -> Result<Self, SourceError> {
        let text = argument.trim();
        if let Some((url, git_ref)) = scp_like(text) {
            return Ok(MarketplaceSource::Git { url, git_ref });
        }
        if text.starts_with("http://") || text.starts_with("https://") {
            return Ok(http(text));
        }
        if ["file://", "git://", "ssh://"].iter().any(|scheme| text.starts_with(scheme)) {
            let (url, git_ref) = split_ref(text, &['#']);
            return Ok(MarketplaceSource::Git { url, git_ref });
        }
        if text.starts_with("./") || text.starts_with("../") || text.starts_with('/') || text.starts_with('~') {
            return local(argument, text, cwd, home);
        }
        if text.contains('/') && !text.starts_with('@') {
            if text.contains(':') {
                return Err(refused(argument, "not a marketplace source. Try: owner/repo, https://…, or ./path"));
            }
            let (repo, git_ref) = split_ref(text, &['#', '@']);
            if !github_repo(&repo) {
                return Err(refused(
                    argument,
                    "not a valid GitHub owner/repo shorthand. For a git repository use its full https:// (or file://) URL; for a local path use ./ or an absolute path",
                ));
            }
            return Ok(MarketplaceSource::Github { repo, git_ref });
        }
        Err(refused(argument, "not a marketplace source. Try: owner/repo, https://…, or ./path"))
    }

    /// Reads a recorded `source` object (`known_marketplaces.json`, `extraKnownMarketplaces`).
    pub fn from_record(value: &Value) -> Result<Self, SourceError> {
        let text = |key: &str| value.get(key).and_then(Value::as_str).map(str::to_owned);
        let shown = value.to_string();
        let missing = |key: &str| refused(&shown, format!("`{key}` is required"));
        match value.get("source").and_then(Value::as_str) {
            Some("directory") => {
                text("path").map(|p| MarketplaceSource::Directory(p.into())).ok_or_else(|| missing("path"))
            }
            Some("file") => text("path").map(|p| MarketplaceSource::File(p.into())).ok_or_else(|| missing("path")),
            Some("git") => text("url")
                .map(|url| MarketplaceSource::Git { url, git_ref: text("ref") })
                .ok_or_else(|| missing("url")),
            Some("github") => match text("repo") {
                Some(repo) if github_repo(&repo) => Ok(MarketplaceSource::Github { repo, git_ref: text("ref") }),
                Some(repo) => Err(refused(&shown, format!("{repo:?} is not owner/repo"))),
                None => Err(missing("repo")),
            },
            Some("url") => text("url").map(MarketplaceSource::Url).ok_or_else(|| missing("url")),
            Some(other) => Err(refused(&shown, format!("spine does not fetch marketplaces of source type {other:?}"))),
            None => Err(missing("source")),
        }
    }

    /// The record of this source, as Claude Code writes it.
    pub fn to_record(&self) -> Value {
        let mut record = Map::new();
        let mut put = |key: &str, value: &str| {
            record.insert(key.to_owned(), Value::String(value.to_owned()));
        };
        match self {
            MarketplaceSource::Directory(path) => {
                put("source", "directory");
                put("path", &path.to_string_lossy());
            }
            MarketplaceSource::File(path) => {
                put("source", "file");
                put("path", &path.to_string_lossy());
            }
            MarketplaceSource::Git { url, git_ref } => {
                put("source", "git");
                put("url", url);
                if let Some(r) = git_ref {
                    put("ref", r);
                }
            }
            MarketplaceSource::Github { repo, git_ref } => {
                put("source", "github");
                put("repo", repo);
                if let Some(r) = git_ref {
                    put("ref", r);
                }
            }
            MarketplaceSource::Url(url) => {
                put("source", "url");
                put("url", url);
            }
        }
        Value::Object(record)
    }

    /// What git clones, and the ref, for a git or GitHub source.
    pub fn clone_url(&self) -> Option<(String, Option<String>)> {
        match self {
            MarketplaceSource::Git { url, git_ref } => Some((url.clone(), git_ref.clone())),
            MarketplaceSource::Github { repo, git_ref } => {
                Some((format!("https://github.com/{repo}.git"), git_ref.clone()))
            }
            _ => None,
        }
    }

    /// How `plugin marketplace list` shows it.
    pub fn describe(&self) -> String {
        match self {
            MarketplaceSource::Directory(p) => format!("directory {}", p.display()),
            MarketplaceSource::File(p) => format!("file {}", p.display()),
            MarketplaceSource::Git { url, git_ref } => {
                format!("git {url}{}", git_ref.as_ref().map(|r| format!("#{r}")).unwrap_or_default())
            }
            MarketplaceSource::Github { repo, git_ref } => {
                format!("github {repo}{}", git_ref.as_ref().map(|r| format!("@{r}")).unwrap_or_default())
            }
            MarketplaceSource::Url(url) => format!("url {url}"),
        }
    }
}

/// `user@host:path[#ref]`.
fn scp_like(text: &str) -> Option<(String, Option<String>)> {
    let (user, rest) = text.split_once('@')?;
    let user_ok = !user.is_empty() && user.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'));
    let (host, path) = rest.split_once(':')?;
    if !user_ok || host.is_empty() || host.contains('/') || path.is_empty() {
        return None;
    }
    Some(split_ref(text, &['#']))
}

/// `text` and what follows the first of `marks`, if anything does.
fn split_ref(text: &str, marks: &[char]) -> (String, Option<String>) {
    match text.split_once(marks) {
        Some((base, r)) if !r.is_empty() => (base.to_owned(), Some(r.to_owned())),
        Some((base, _)) => (base.to_owned(), None),
        None => (text.to_owned(), None),
    }
}

fn http(text: &str) -> MarketplaceSource {
    let (url, git_ref) = split_ref(text, &['#']);
    if url.ends_with(".git") || url.contains("/_git/") {
        return MarketplaceSource::Git { url, git_ref };
    }
    let after_scheme = url.split_once("://").map(|(_, rest)| rest).unwrap_or(&url);
    let (host, path) = after_scheme.split_once('/').unwrap_or((after_scheme, ""));
    let host = host.to_ascii_lowercase();
    let parts: Vec<&str> = path.trim_end_matches('/').split('/').filter(|p| !p.is_empty()).collect();
    let repository = match host.as_str() {
        "github.com" | "www.github.com" => parts.len() == 2,
        "gitlab.com" => parts.len() >= 2 && !parts.contains(&"-") && parts.first() != Some(&"api"),
        _ => false,
    };
    if repository && !url.contains(['?', '#']) {
        return MarketplaceSource::Git { url: format!("{}.git", url.trim_end_matches('/')), git_ref };
    }
    MarketplaceSource::Url(url)
}

fn local(argument: &str, text: &str, cwd: &Path, home: Option<&Path>) -> Result<MarketplaceSource, SourceError> {
    let path = match text.strip_prefix('~') {
        Some(rest) => match home {
            Some(home) => home.join(rest.trim_start_matches('/')),
            None => return Err(refused(argument, "no home directory to resolve `~`")),
        },
        None => cwd.join(text),
    };
    let path = path.canonicalize().map_err(|e| refused(argument, format!("cannot open {}: {e}", path.display())))?;
    if path.is_file() {
        return match path.extension().is_some_and(|e| e == "json") {
            true => Ok(MarketplaceSource::File(path)),
            false => Err(refused(argument, "a file must be a marketplace.json")),
        };
    }
    if !path.is_dir() {
        return Err(refused(argument, "neither a file nor a directory"));
    }
    let bare_repository = !path.join(super::marketplace::CATALOG).exists()
        && path.join("HEAD").is_file()
        && path.join("objects").is_dir()
        && path.join("refs").is_dir();
    match bare_repository {
        true => Ok(MarketplaceSource::Git { url: path.to_string_lossy().into_owned(), git_ref: None }),
        false => Ok(MarketplaceSource::Directory(path)),
    }
}

/// The `source` records of `extraKnownMarketplaces` in one settings object, by name; entries
/// that are not `{"source": {…}}` are reported in `problems`.
pub fn declared(settings: &Map<String, Value>, problems: &mut Vec<String>) -> Vec<(String, MarketplaceSource)> {
    let Some(value) = settings.get("extraKnownMarketplaces") else { return Vec::new() };
    let Value::Object(entries) = value else {
        problems.push("extraKnownMarketplaces: expected an object of marketplaces".to_owned());
        return Vec::new();
    };
    let mut out = Vec::new();
    for (name, entry) in entries {
        match entry.get("source").map(MarketplaceSource::from_record) {
            Some(Ok(source)) => out.push((name.clone(), source)),
            Some(Err(e)) => problems.push(format!("extraKnownMarketplaces.{name}.source: {}", e.reason)),
            None => problems.push(format!("extraKnownMarketplaces.{name}: expected {}", json!({"source": {}}))),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(argument: &str) -> Result<MarketplaceSource, SourceError> {
        MarketplaceSource::parse_argument(argument, Path::new("/nowhere"), None)
    }

    fn git(url: &str, git_ref: Option<&str>) -> MarketplaceSource {
        MarketplaceSource::Git { url: url.to_owned(), git_ref: git_ref.map(str::to_owned) }
    }

    #[test]
    fn urls_and_shorthands_are_read_as_claude_code_reads_them() {
        assert_eq!(
            parse("acme/plugins").expect("github"),
            MarketplaceSource::Github { repo: "acme/plugins".into(), git_ref: None }
        );
        assert_eq!(
            parse("acme/plugins@v2.0").expect("github ref"),
            MarketplaceSource::Github { repo: "acme/plugins".into(), git_ref: Some("v2.0".into()) }
        );
        assert_eq!(
            parse("https://gitlab.example.com/t/p.git#v1").expect("git"),
            git("https://gitlab.example.com/t/p.git", Some("v1"))
        );
        assert_eq!(
            parse("https://github.com/acme/plugins").expect("github url"),
            git("https://github.com/acme/plugins.git", None)
        );
        assert_eq!(
            parse("git@gitlab.com:team/plugins.git").expect("scp"),
            git("git@gitlab.com:team/plugins.git", None)
        );
        assert_eq!(parse("file:///srv/m.git#main").expect("file"), git("file:///srv/m.git", Some("main")));
        assert_eq!(
            parse("https://example.com/marketplace.json").expect("hosted"),
            MarketplaceSource::Url("https://example.com/marketplace.json".into())
        );
        for bad in ["gitlab.com:x/y", "market", "a b/c d", "-x/y"] {
            assert!(parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn local_paths_are_directories_files_or_bare_repositories() {
        let dir = tempfile::tempdir().expect("dir");
        let market = dir.path().join("m");
        std::fs::create_dir_all(market.join(".claude-plugin")).expect("mkdir");
        std::fs::write(market.join(".claude-plugin/marketplace.json"), "{}").expect("write");
        let bare = dir.path().join("b.git");
        for sub in ["objects", "refs"] {
            std::fs::create_dir_all(bare.join(sub)).expect("mkdir");
        }
        std::fs::write(bare.join("HEAD"), "ref: refs/heads/main\n").expect("write");
        let at = |arg: &str| MarketplaceSource::parse_argument(arg, dir.path(), None).expect(arg);
        let market = market.canonicalize().expect("canonical");
        assert_eq!(at("./m"), MarketplaceSource::Directory(market.clone()));
        assert_eq!(at("./m/.claude-plugin/marketplace.json"), MarketplaceSource::File(market.join(CATALOG_FILE)));
        let bare = bare.canonicalize().expect("canonical");
        assert_eq!(at("./b.git"), git(&bare.to_string_lossy(), None));
        assert!(MarketplaceSource::parse_argument("./missing", dir.path(), None).is_err());
    }

    const CATALOG_FILE: &str = ".claude-plugin/marketplace.json";

    #[test]
    fn records_round_trip_in_claude_codes_shape() {
        for source in [
            MarketplaceSource::Directory("/m".into()),
            git("file:///m.git", Some("main")),
            MarketplaceSource::Github { repo: "o/r".into(), git_ref: None },
        ] {
            assert_eq!(MarketplaceSource::from_record(&source.to_record()).expect("round trip"), source);
        }
        assert_eq!(
            MarketplaceSource::Github { repo: "o/r".into(), git_ref: None }.to_record(),
            json!({"source": "github", "repo": "o/r"})
        );
        assert_eq!(git("u", None).to_record(), json!({"source": "git", "url": "u"}));
        assert_eq!(
            MarketplaceSource::Github { repo: "o/r".into(), git_ref: Some("v1".into()) }.clone_url(),
            Some(("https://github.com/o/r.git".to_owned(), Some("v1".to_owned()))),
            "GitHub's shorthand is cloned over HTTPS"
        );
        assert_eq!(MarketplaceSource::Directory("/m".into()).clone_url(), None);
        assert!(MarketplaceSource::from_record(&json!({"source": "npm", "package": "x"})).is_err());
    }
}
