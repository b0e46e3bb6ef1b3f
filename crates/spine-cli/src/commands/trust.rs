//! `spine trust [DIR] | --list | --revoke DIR`: the projects whose own settings apply in full
//! (hooks, allow rules, MCP servers), recorded in `$SPINE_HOME/trusted-projects.json` by
//! canonical path. The rules live in `spine_settings::trust`; [`record`] is also how an
//! interactive session's trust question remembers a "trust" answer.

use spine_settings::TrustStore;

use super::context;
use crate::cli::TrustArgs;
use crate::error::{config, exit};

/// Runs `spine trust`.
pub fn trust(args: TrustArgs) -> anyhow::Result<u8> {
    let home = context::spine_home()?;
    let store = TrustStore::new(&home);
    if args.list {
        let projects = store.list().map_err(|e| config(e.to_string()))?;
        if projects.is_empty() {
            println!("no trusted projects");
        }
        for (path, _) in projects {
            println!("{}", path.display());
        }
        return Ok(exit::OK);
    }
    if let Some(dir) = &args.revoke {
        return if store.revoke(dir).map_err(|e| config(e.to_string()))? {
            println!("no longer trusted: {}", dir.display());
            Ok(exit::OK)
        } else {
            Err(config(format!("{} is not a trusted project", dir.display())))
        };
    }
    let dir = context::project_dir(args.dir.as_ref())?;
    println!("{}", record(&home, &dir)?);
    Ok(exit::OK)
}

/// Trusts `dir` in `home`'s store, as `spine trust DIR` does (the interactive session's trust
/// question answered "trust" too); the line that says so.
pub(crate) fn record(home: &std::path::Path, dir: &std::path::Path) -> anyhow::Result<String> {
    let canonical = TrustStore::new(home).trust(dir).map_err(|e| config(e.to_string()))?;
    Ok(format!("trusted: {} (its hooks, allow rules, env and MCP servers now apply)", canonical.display()))
}
