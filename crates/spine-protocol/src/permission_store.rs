//! Where permission updates are saved: the seam between the engine, which applies a
//! PermissionRequest hook's `updatedPermissions` (and the approver's "always") to the running
//! session, and the settings files that keep them.
//!
//! Contract: [`PermissionStore::save`] is called once per update whose destination is a
//! settings file (`userSettings`, `projectSettings`, `localSettings`); it writes the update to
//! the file that destination names and returns that file, or says in words why it did not.
//! The engine never writes settings files itself. `spine-settings`'s `SettingsStore` is the
//! implementation; spine-core re-exports the trait as `spine_core::permission::PermissionStore`.

use std::path::PathBuf;

use crate::permission_update::PermissionUpdate;

/// Saves a permission update to the settings file its destination names.
pub trait PermissionStore: Send + Sync {
    /// Saves `update` (its destination is a settings file); the file it went to, or why not.
    fn save(&self, update: &PermissionUpdate) -> Result<PathBuf, String>;
}
