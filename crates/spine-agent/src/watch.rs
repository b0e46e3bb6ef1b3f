//! What ConfigChange watches in a session: the settings files discovery read or looked for
//! (user, project, local and managed; not `--settings`, which Claude Code does not watch
//! either), and the active skills directories, each with its `source`.

use spine_core::skills::SkillRoot;
use spine_core::watch::{ConfigFile, ConfigSource};
use spine_settings::{FileStatus, Origin, Settings};

/// The configuration paths of `settings` and `skill_roots` to watch, in discovery order.
pub fn config_files(settings: &Settings, skill_roots: &[SkillRoot]) -> Vec<ConfigFile> {
    let mut files: Vec<ConfigFile> = settings
        .files
        .iter()
        .filter(|f| matches!(f.status, FileStatus::Read | FileStatus::NotFound))
        .filter_map(|f| {
            let source = match &f.origin {
                Origin::User(_) => ConfigSource::User,
                Origin::Project(_) => ConfigSource::Project,
                Origin::Local(_) => ConfigSource::Local,
                Origin::Managed(_) => ConfigSource::Policy,
                Origin::Cli { .. } | Origin::Plugin(_) | Origin::Sdk => return None,
            };
            Some(ConfigFile::new(source, f.origin.path()?))
        })
        .collect();
    files.extend(
        skill_roots.iter().filter(|r| r.kind.active()).map(|r| ConfigFile::new(ConfigSource::Skills, r.path.clone())),
    );
    files
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use spine_core::skills::SkillRootKind;
    use spine_settings::SettingsFile;

    use super::*;

    #[test]
    fn read_and_missing_files_are_watched_with_their_source_and_command_line_ones_are_not() {
        let file = |origin: Origin, status: FileStatus| SettingsFile { origin, status };
        let settings = Settings {
            files: vec![
                file(Origin::User(PathBuf::from("/h/.claude/settings.json")), FileStatus::Read),
                file(Origin::Project(PathBuf::from("/p/.claude/settings.json")), FileStatus::NotFound),
                file(Origin::Local(PathBuf::from("/p/.claude/settings.local.json")), FileStatus::NotSelected),
                file(Origin::Cli { index: 1, path: Some(PathBuf::from("/tmp/s.json")) }, FileStatus::Read),
                file(Origin::Managed(PathBuf::from("/etc/claude-code/managed-settings.json")), FileStatus::Read),
            ],
            ..Settings::default()
        };
        let roots = [
            SkillRoot { path: PathBuf::from("/p/.spine/skills"), kind: SkillRootKind::Live },
            SkillRoot { path: PathBuf::from("/p/curated"), kind: SkillRootKind::Curated },
        ];
        assert_eq!(
            config_files(&settings, &roots),
            [
                ConfigFile::new(ConfigSource::User, "/h/.claude/settings.json"),
                ConfigFile::new(ConfigSource::Project, "/p/.claude/settings.json"),
                ConfigFile::new(ConfigSource::Policy, "/etc/claude-code/managed-settings.json"),
                ConfigFile::new(ConfigSource::Skills, "/p/.spine/skills"),
            ]
        );
    }
}
