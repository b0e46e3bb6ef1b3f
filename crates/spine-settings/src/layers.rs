//! [`Layers`]: the sources of a [`crate::Settings`], shared between its clones.
//!
//! A run clones its settings for the parts that keep them (prompt hooks' models, skills…);
//! the layers (every source's whole object, a plugin's hooks and MCP servers among them) are
//! then shared instead of copied. They read as a `Vec<SettingsLayer>`; changing them
//! (`push`, `extend`…) copies them first when another clone shares them, so each
//! [`crate::Settings`] still has its own.

use std::fmt;
use std::ops::{Deref, DerefMut};
use std::sync::Arc;

use crate::source::SettingsLayer;

/// The layers of the settings, lowest precedence first (see the module documentation): a
/// clone shares them (`to_vec()` makes a `Vec` of one's own).
#[derive(Clone, Default, PartialEq)]
pub struct Layers(Arc<Vec<SettingsLayer>>);

impl Deref for Layers {
    type Target = Vec<SettingsLayer>;

    fn deref(&self) -> &Vec<SettingsLayer> {
        &self.0
    }
}

impl DerefMut for Layers {
    fn deref_mut(&mut self) -> &mut Vec<SettingsLayer> {
        Arc::make_mut(&mut self.0)
    }
}

impl fmt::Debug for Layers {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*self.0, f)
    }
}

impl From<Vec<SettingsLayer>> for Layers {
    fn from(layers: Vec<SettingsLayer>) -> Layers {
        Layers(Arc::new(layers))
    }
}

impl From<Layers> for Vec<SettingsLayer> {
    fn from(layers: Layers) -> Vec<SettingsLayer> {
        Arc::unwrap_or_clone(layers.0)
    }
}

impl<'a> IntoIterator for &'a Layers {
    type Item = &'a SettingsLayer;
    type IntoIter = std::slice::Iter<'a, SettingsLayer>;

    fn into_iter(self) -> Self::IntoIter {
        self.0.iter()
    }
}

impl Extend<SettingsLayer> for Layers {
    fn extend<I: IntoIterator<Item = SettingsLayer>>(&mut self, iter: I) {
        Arc::make_mut(&mut self.0).extend(iter);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Settings;
    use crate::source::Origin;

    fn layer(name: &str) -> SettingsLayer {
        SettingsLayer { origin: Origin::User(name.into()), value: serde_json::Map::new() }
    }

    #[test]
    fn clones_share_until_one_changes() {
        let mut a = Settings::from_layers(vec![layer("a.json")]).expect("settings");
        let b = a.clone();
        assert!(std::ptr::eq(a.layers.as_ptr(), b.layers.as_ptr()), "shared");
        assert_eq!(a, b);
        let copy: Vec<SettingsLayer> = a.layers.to_vec();
        assert_eq!(copy, *b.layers, "`to_vec()` is a Vec of its own");
        a.layers.push(layer("b.json"));
        assert_eq!((a.layers.len(), b.layers.len()), (2, 1), "the change is the changed clone's own");
        assert_eq!(format!("{:?}", b.layers), format!("{:?}", vec![layer("a.json")]), "reads as the Vec");
        let back: Vec<SettingsLayer> = a.layers.into();
        assert_eq!(back.len(), 2);
    }
}
