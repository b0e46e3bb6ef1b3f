//! What an untrusted project brings that spine withholds, counted, and the one sentence that
//! says so.
//!
//! Contract:
//! - [`Withheld::of`] counts, for a project that is not trusted, what its own files configure
//!   and spine does not apply (see `spine_settings::trust`): hook handlers, allow rules, MCP
//!   servers (its settings' `mcpServers` and `.mcp.json`, unless the user's settings enable
//!   them), the plugins its settings enable that were not loaded, and the other withheld keys
//!   by name. A trusted project withholds nothing.
//! - [`Withheld::sentence`] is the sentence every place that shows it uses — `/hooks`,
//!   `spine hooks list`, `spine doctor` and `spine mcp list`: ``4 hooks and 1 MCP server
//!   withheld: project not trusted — run `spine trust /p` ``.
//! - An interactive session asks the trust question at start when something is withheld
//!   ([`Withheld::is_empty`]), naming the same counts ([`Withheld::counts`]).

use std::path::Path;

use spine_settings::Settings;
use spine_settings::trust::{McpApproval, SkippedItem};

/// What an untrusted project's files bring that is not applied (see the module documentation).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Withheld {
    /// Hook handlers.
    pub(crate) hooks: usize,
    /// `permissions.allow` rules.
    pub(crate) allow_rules: usize,
    /// MCP servers (`.mcp.json` and the settings' `mcpServers`).
    pub(crate) mcp_servers: usize,
    /// Plugins the project's settings enable, not loaded.
    pub(crate) plugins: usize,
    /// Every other withheld key, as named by [`SkippedItem`] (`2 env variables`,
    /// `defaultMode acceptEdits`).
    pub(crate) other: Vec<String>,
    /// The files it comes from, relative to the project when inside it.
    pub(crate) files: Vec<String>,
}

impl Withheld {
    /// What `settings` withhold from `project` (nothing when it is trusted).
    pub(crate) fn of(settings: &Settings, project: &Path) -> Self {
        let mut w = Withheld::default();
        if settings.trust.is_trusted() {
            return w;
        }
        let add_file = |w: &mut Withheld, file: &Path| {
            let shown = file.strip_prefix(project).unwrap_or(file).display().to_string();
            if !w.files.contains(&shown) {
                w.files.push(shown);
            }
        };
        let mut settings_servers = 0;
        for skipped in &settings.skipped {
            match &skipped.item {
                SkippedItem::Hooks(n) => w.hooks += n,
                SkippedItem::AllowRules(n) => w.allow_rules += n,
                SkippedItem::McpServer(_) => settings_servers += 1,
                other => {
                    let text = other.to_string();
                    if !w.other.contains(&text) {
                        w.other.push(text);
                    }
                }
            }
            add_file(&mut w, &skipped.file);
        }
        // `.mcp.json` is read by the agent, not by discovery: its skipped servers are counted
        // with the settings' own from the list of every configured server.
        w.mcp_servers = match spine_agent::configured_mcp_servers(settings, project) {
            Ok(servers) => {
                let skipped: Vec<_> = servers.iter().filter(|s| s.approval == McpApproval::Untrusted).collect();
                for file in skipped.iter().filter_map(|s| s.file.as_deref()) {
                    add_file(&mut w, file);
                }
                skipped.len()
            }
            Err(_) => settings_servers,
        };
        for (file, _) in spine_agent::withheld_plugins(settings) {
            w.plugins += 1;
            add_file(&mut w, file);
        }
        w
    }

    /// Whether nothing is withheld.
    pub(crate) fn is_empty(&self) -> bool {
        self.hooks == 0 && self.allow_rules == 0 && self.mcp_servers == 0 && self.plugins == 0 && self.other.is_empty()
    }

    /// What is withheld, counted: `4 hooks, 1 allow rule and 1 MCP server` (empty when nothing).
    pub(crate) fn counts(&self) -> String {
        let mut parts: Vec<String> = Vec::new();
        for (n, one, many) in [
            (self.hooks, "hook", "hooks"),
            (self.allow_rules, "allow rule", "allow rules"),
            (self.mcp_servers, "MCP server", "MCP servers"),
            (self.plugins, "plugin", "plugins"),
        ] {
            if n > 0 {
                parts.push(format!("{n} {}", if n == 1 { one } else { many }));
            }
        }
        parts.extend(self.other.iter().cloned());
        match parts.split_last() {
            None => String::new(),
            Some((last, [])) => last.clone(),
            Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
        }
    }

    /// The sentence: ``4 hooks and 1 MCP server withheld: project not trusted — run `spine trust
    /// /p` ``; `None` when nothing is withheld.
    pub(crate) fn sentence(&self, project: &Path) -> Option<String> {
        if self.is_empty() {
            return None;
        }
        Some(format!("{} withheld: project not trusted — run `spine trust {}`", self.counts(), project.display()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sentence_counts_what_is_withheld_and_says_how_to_trust() {
        let w = Withheld { hooks: 4, mcp_servers: 1, ..Withheld::default() };
        assert_eq!(
            w.sentence(Path::new("/p")).as_deref(),
            Some("4 hooks and 1 MCP server withheld: project not trusted — run `spine trust /p`")
        );
        let w = Withheld { hooks: 1, allow_rules: 2, plugins: 1, other: vec!["3 env variables".into()], ..w };
        assert_eq!(w.counts(), "1 hook, 2 allow rules, 1 MCP server, 1 plugin and 3 env variables");
    }

    #[test]
    fn nothing_withheld_is_no_sentence() {
        assert!(Withheld::default().is_empty());
        assert_eq!(Withheld::default().sentence(Path::new("/p")), None);
        let env_only = Withheld { other: vec!["1 env variable".into()], ..Withheld::default() };
        assert_eq!(
            env_only.sentence(Path::new("/p")).as_deref(),
            Some("1 env variable withheld: project not trusted — run `spine trust /p`")
        );
    }
}
