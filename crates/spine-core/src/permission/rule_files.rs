//! File rules (`Read(...)`, `Edit(...)`) as the shell analysis uses them: which family a rule
//! is of, whether it matches a path read or written, and where its pattern can match at all
//! (for commands that read or write whole trees, see [`super::super::file_rules`]).

use std::path::{Path, PathBuf};

use super::{PermissionRule, Specifier, absolute_pattern, glob_matches};

impl PermissionRule {
    /// Whether this is a file rule of the `Read` family (`write` false: `Read`, `Read(...)`)
    /// or of the `Edit` family (`write` true: `Edit`, `Write`, `Edit(...)`): no specifier or a
    /// path one. Shell commands' file operands are checked against these
    /// ([`file_rules`](crate::permission::file_rules)).
    pub fn is_file_rule(&self, write: bool) -> bool {
        self.tool_matches(if write { "Write" } else { "Read" })
            && matches!(self.specifier, None | Some(Specifier::Path { .. }))
    }

    /// Whether this file rule matches a read (`write` false) or a write of the absolute,
    /// normal `path`, exactly as for the file tools; relative patterns are anchored at
    /// `project_dir`.
    pub fn matches_file(&self, path: &Path, write: bool, project_dir: &Path) -> bool {
        if !self.is_file_rule(write) {
            return false;
        }
        match &self.specifier {
            None => true,
            Some(Specifier::Path { pattern, compiled }) => glob_matches(pattern, compiled, path, project_dir),
            Some(Specifier::Wildcard(_) | Specifier::Domain(_)) => false,
        }
    }

    /// Where a file rule's pattern can match: the literal directory its absolute pattern
    /// starts with (`/proj/secrets` for `Read(secrets/**)`, `/` for `Read(*.pem)`), and whether
    /// the pattern is that one path (`Read(./.env)`). `None` for a rule without a path
    /// pattern.
    pub fn path_scope(&self, project_dir: &Path) -> Option<(PathBuf, bool)> {
        let Some(Specifier::Path { pattern, .. }) = &self.specifier else {
            return None;
        };
        let Some(text) = absolute_pattern(pattern, project_dir) else {
            return Some((PathBuf::from("/"), false));
        };
        let mut scope = PathBuf::from("/");
        let mut exact = true;
        for part in text.split('/').filter(|p| !p.is_empty()) {
            if part.contains(['*', '?', '[', '{', '\\']) {
                exact = false;
                break;
            }
            scope.push(part);
        }
        Some((scope, exact && text.starts_with('/')))
    }
}
