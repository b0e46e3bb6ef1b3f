//! Bringing a marketplace onto this machine ([`fetch`]) and up to date ([`refresh`]).
//!
//! Contract:
//! - A `directory` or `file` source is read in place (its `installLocation` is the path). A
//!   git or GitHub source is cloned into a scratch directory, its catalog read and checked,
//!   then moved to `marketplaces/<name>/` (`<name>` is the catalog's `name`, made safe by
//!   [`super::store::path_component`]); a marketplace of that name already there is replaced.
//!   A hosted `marketplace.json` (`url`) is refused: spine fetches no files over HTTP.
//! - The catalog must be valid ([`Marketplace::read`]); when a name is expected (a recorded or
//!   declared marketplace), the catalog's name must be that one.
//! - [`refresh`] fetches and resets a clone to the newest commit of its ref (a missing clone is
//!   cloned again), or re-reads a directory; then reads the catalog again.

use super::PluginError;
use super::git::Git;
use super::install::InstallError;
use super::known::MarketplaceSource;
use super::marketplace::{Marketplace, Problem};
use super::store::{KnownMarketplace, Store};

/// A marketplace on this machine: its record and its catalog.
#[derive(Debug, Clone)]
pub struct Fetched {
    /// The `known_marketplaces.json` entry.
    pub known: KnownMarketplace,
    /// The catalog.
    pub marketplace: Marketplace,
    /// The catalog's warnings.
    pub warnings: Vec<Problem>,
}

/// Fetches the marketplace of `source` (see the module contract) at time `now`.
pub fn fetch(
    store: &Store,
    git: &Git,
    source: &MarketplaceSource,
    expected: Option<&str>,
    now: &str,
) -> Result<Fetched, InstallError> {
    let location = match source {
        MarketplaceSource::Directory(path) | MarketplaceSource::File(path) => path.clone(),
        MarketplaceSource::Url(url) => {
            return Err(InstallError::Refused(format!(
                "{url}: spine does not fetch a hosted marketplace.json; add the marketplace's git repository instead"
            )));
        }
        MarketplaceSource::Git { .. } | MarketplaceSource::Github { .. } => {
            return clone(store, git, source, expected, now);
        }
    };
    let (marketplace, warnings) = Marketplace::read(&location)?;
    check_name(&marketplace, expected)?;
    let known = KnownMarketplace {
        source: source.to_record(),
        install_location: location,
        last_updated: now.to_owned(),
        extra: Default::default(),
    };
    Ok(Fetched { known, marketplace, warnings })
}

fn clone(
    store: &Store,
    git: &Git,
    source: &MarketplaceSource,
    expected: Option<&str>,
    now: &str,
) -> Result<Fetched, InstallError> {
    let Some((url, git_ref)) = source.clone_url() else {
        return Err(InstallError::Refused(format!("{}: not a git source", source.describe())));
    };
    let scratch = store.dir.join(".tmp").join(format!("marketplace-{}-{}", std::process::id(), nanos()));
    let fail = |e: std::io::Error, what: &str| PluginError::new(&scratch, "(directory)", format!("cannot {what}: {e}"));
    std::fs::create_dir_all(scratch.parent().unwrap_or(&store.dir)).map_err(|e| fail(e, "create"))?;
    let result = (|| {
        git.clone(&url, git_ref.as_deref(), &scratch)?;
        let (marketplace, _) = Marketplace::read(&scratch)?;
        check_name(&marketplace, expected)?;
        let target = store.marketplace_dir(&marketplace.name);
        if target.exists() {
            std::fs::remove_dir_all(&target).map_err(|e| fail(e, "replace the previous clone"))?;
        }
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent).map_err(|e| fail(e, "create the marketplaces directory"))?;
        }
        std::fs::rename(&scratch, &target).map_err(|e| fail(e, "move the clone into place"))?;
        let (marketplace, warnings) = Marketplace::read(&target)?;
        let known = KnownMarketplace {
            source: source.to_record(),
            install_location: target,
            last_updated: now.to_owned(),
            extra: Default::default(),
        };
        Ok::<_, InstallError>(Fetched { known, marketplace, warnings })
    })();
    let _ = std::fs::remove_dir_all(&scratch);
    if let Some(parent) = scratch.parent() {
        let _ = std::fs::remove_dir(parent);
    }
    result
}

/// Brings the recorded marketplace `name` up to date (see the module contract).
pub fn refresh(
    store: &Store,
    git: &Git,
    name: &str,
    known: &KnownMarketplace,
    now: &str,
) -> Result<Fetched, InstallError> {
    let source = MarketplaceSource::from_record(&known.source)
        .map_err(|e| InstallError::Refused(format!("marketplace {name}: {e}")))?;
    let Some((url, git_ref)) = source.clone_url() else {
        return fetch(store, git, &source, Some(name), now);
    };
    if !known.install_location.join(".git").exists() {
        return fetch(store, git, &source, Some(name), now);
    }
    git.update(&url, git_ref.as_deref(), &known.install_location)?;
    let (marketplace, warnings) = Marketplace::read(&known.install_location)?;
    check_name(&marketplace, Some(name))?;
    let mut known = known.clone();
    known.last_updated = now.to_owned();
    Ok(Fetched { known, marketplace, warnings })
}

fn check_name(marketplace: &Marketplace, expected: Option<&str>) -> Result<(), InstallError> {
    match expected {
        Some(name) if name != marketplace.name => Err(PluginError::new(
            &marketplace.file,
            "name",
            format!("the catalog is named {:?}, but this marketplace is known as {name:?}", marketplace.name),
        )
        .into()),
        _ => Ok(()),
    }
}

fn nanos() -> u128 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::plugins::git::tests::repository;

    const CATALOG: &str = r#"{"name": "team", "owner": {"name": "o"}, "plugins": []}"#;

    #[test]
    fn a_git_marketplace_is_cloned_under_its_name_and_refreshed_to_its_new_commit() {
        let dir = tempfile::tempdir().expect("dir");
        let origin = dir.path().join("origin");
        repository(&origin, &[(".claude-plugin/marketplace.json", CATALOG)]);
        let store = Store { dir: dir.path().join("store") };
        let source = MarketplaceSource::Git { url: format!("file://{}", origin.display()), git_ref: None };
        let fetched = fetch(&store, &Git::default(), &source, None, "t1").expect("cloned");
        assert_eq!(fetched.known.install_location, store.dir.join("marketplaces/team"));
        assert_eq!(fetched.known.source, source.to_record());
        assert_eq!(fetched.marketplace.root, store.dir.join("marketplaces/team"));
        assert!(!store.dir.join(".tmp").exists(), "no scratch left");

        let second = repository(&origin, &[("plugins/p/README.md", "p")]);
        let refreshed = refresh(&store, &Git::default(), "team", &fetched.known, "t2").expect("refreshed");
        assert_eq!(Git::default().head(&refreshed.marketplace.root).as_deref(), Some(second.as_str()));
        assert_eq!(refreshed.known.last_updated, "t2");
        let error = fetch(&store, &Git::default(), &source, Some("other"), "t3").expect_err("another name");
        assert!(error.to_string().contains("known as \"other\""), "{error}");
    }

    #[test]
    fn a_directory_is_read_in_place_and_a_hosted_catalog_is_refused() {
        let dir = tempfile::tempdir().expect("dir");
        let market = dir.path().join("m");
        std::fs::create_dir_all(market.join(".claude-plugin")).expect("mkdir");
        std::fs::write(market.join(".claude-plugin/marketplace.json"), CATALOG).expect("write");
        let store = Store { dir: dir.path().join("store") };
        let fetched =
            fetch(&store, &Git::default(), &MarketplaceSource::Directory(market.clone()), None, "t").expect("read");
        assert_eq!(
            (fetched.known.install_location, fetched.known.source),
            (market.clone(), json!({"source": "directory", "path": market}))
        );
        let hosted = MarketplaceSource::Url("https://example.com/marketplace.json".into());
        let error = fetch(&store, &Git::default(), &hosted, None, "t").expect_err("refused");
        assert!(error.to_string().contains("does not fetch a hosted marketplace.json"), "{error}");
    }
}
