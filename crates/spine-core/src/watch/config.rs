//! The files ConfigChange watches: the settings files the session read (or looked for), and
//! its skills directories, each with the `source` Claude Code names it by.

use std::path::PathBuf;

/// Which settings a changed file holds (ConfigChange's `source`, its matcher subject).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ConfigSource {
    /// `~/.claude/settings.json`, `$SPINE_HOME/settings.json`: `user_settings`.
    User,
    /// `.claude/settings.json`, `.spine/settings.json`: `project_settings`.
    Project,
    /// `.claude/settings.local.json`, `.spine/settings.local.json`: `local_settings`.
    Local,
    /// Managed settings: `policy_settings`. A ConfigChange hook cannot block their change.
    Policy,
    /// A skills directory: `skills`.
    Skills,
}

impl ConfigSource {
    /// The value hooks read (`source`).
    pub fn as_str(self) -> &'static str {
        match self {
            ConfigSource::User => "user_settings",
            ConfigSource::Project => "project_settings",
            ConfigSource::Local => "local_settings",
            ConfigSource::Policy => "policy_settings",
            ConfigSource::Skills => "skills",
        }
    }

    /// Whether a ConfigChange hook may block a change of this source (managed settings: no).
    pub fn can_block(self) -> bool {
        self != ConfigSource::Policy
    }
}

impl std::fmt::Display for ConfigSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One watched configuration path: a settings file (whether or not it exists yet), or a skills
/// directory (everything below it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigFile {
    /// Which settings it holds.
    pub source: ConfigSource,
    /// The absolute path.
    pub path: PathBuf,
}

impl ConfigFile {
    /// A watched configuration path.
    pub fn new(source: ConfigSource, path: impl Into<PathBuf>) -> Self {
        ConfigFile { source, path: path.into() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sources_read_as_claude_codes_names_and_only_managed_ones_cannot_be_blocked() {
        let all = [
            ConfigSource::User,
            ConfigSource::Project,
            ConfigSource::Local,
            ConfigSource::Policy,
            ConfigSource::Skills,
        ];
        let names: Vec<&str> = all.iter().map(|s| s.as_str()).collect();
        assert_eq!(names, ["user_settings", "project_settings", "local_settings", "policy_settings", "skills"]);
        assert_eq!(all.iter().filter(|s| !s.can_block()).collect::<Vec<_>>(), [&ConfigSource::Policy]);
    }
}
