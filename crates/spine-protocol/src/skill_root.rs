//! The kinds of skill root: where a directory of skills comes from, and whether its skills can
//! be selected.
//!
//! Contract: `system` and `live` roots are active (their skills can be selected with `$name`);
//! `curated` roots are listed but inactive. The kinds are written in snake case (settings'
//! `skills.roots[].kind`, the skill catalog's JSON). The catalog itself (scanning, selection)
//! is spine-core's `skills` module, which re-exports this type as
//! `spine_core::skills::SkillRootKind`.

use serde::{Deserialize, Serialize};

/// The kind of a skill root.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SkillRootKind {
    /// Shipped or user-wide skills (active).
    System,
    /// Installed project skills (active).
    Live,
    /// Reviewed but not enabled (inactive).
    Curated,
}

impl SkillRootKind {
    /// Whether skills of this root can be selected.
    pub fn active(self) -> bool {
        match self {
            SkillRootKind::System | SkillRootKind::Live => true,
            SkillRootKind::Curated => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn system_and_live_roots_are_active_and_curated_ones_are_not() {
        assert!(SkillRootKind::System.active() && SkillRootKind::Live.active());
        assert!(!SkillRootKind::Curated.active());
        assert_eq!(serde_json::to_value(SkillRootKind::Curated).ok(), Some(serde_json::json!("curated")));
    }
}
