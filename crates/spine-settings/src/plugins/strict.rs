//! The manifest a plugin's cached copy gets from its own `plugin.json` and its marketplace
//! entry ([`effective`]), by the entry's `strict`.
//!
//! Claude Code reads the marketplace entry again each time it loads the plugin; spine writes
//! the result into the copy, so that the copy describes itself and loads without the
//! marketplace.
//!
//! Contract:
//! - `strict: true` (the default): `plugin.json` is the authority and the entry supplements
//!   it. The entry's `commands`, `agents` and `outputStyles` are added to the manifest's (or,
//!   when the manifest sets none, to the default directory, which stays loaded); its `skills`
//!   are added; its `hooks`, `mcpServers` and `lspServers` are added to the manifest's as
//!   files (an inline object is written to `.claude-plugin/marketplace-<field>.json`, an
//!   inline object of the manifest's to `.claude-plugin/plugin-<field>.json`). The entry's
//!   `defaultEnabled` wins over the manifest's. Without a `plugin.json`, the manifest is made
//!   from the entry (named by it).
//! - `strict: false`: the entry is the whole definition: its fields make the manifest, named
//!   by the entry. A `plugin.json` that declares components as well is a conflict, refused
//!   naming the catalog and the entry.
//! - `None`: the plugin's own `plugin.json` is used unchanged (it exists, the entry adds no
//!   component, no `defaultEnabled`).

use std::path::Path;

use serde_json::{Map, Value};

use super::PluginError;
use super::marketplace::Entry;

/// The component fields of a manifest (what `strict` decides).
pub const COMPONENTS: &[&str] = &["commands", "agents", "skills", "outputStyles", "hooks", "mcpServers", "lspServers"];

/// Path fields that replace a default directory when a manifest sets them.
const REPLACING: &[(&str, &str)] = &[("commands", "commands"), ("agents", "agents"), ("outputStyles", "output-styles")];

/// Fields that are files or inline objects.
const CONFIGS: &[&str] = &["hooks", "mcpServers", "lspServers"];

/// The manifest to write into the copy, and other files it names (relative path, JSON).
#[derive(Debug, Clone, PartialEq)]
pub struct Effective {
    /// `.claude-plugin/plugin.json`'s object.
    pub manifest: Map<String, Value>,
    /// Files the manifest names, to write beside it.
    pub files: Vec<(String, Value)>,
}

/// The manifest of the plugin at `plugin_dir` (its own `plugin.json` is `own`) as its entry of
/// the catalog `catalog` makes it (see the module contract).
pub fn effective(
    entry: &Entry,
    own: Option<&Map<String, Value>>,
    plugin_dir: &Path,
    catalog: &Path,
) -> Result<Option<Effective>, PluginError> {
    let entry_fields = entry.manifest_fields();
    if !entry.strict {
        if let Some(own) = own
            && let Some(key) = COMPONENTS.iter().find(|k| own.contains_key(**k))
        {
            return Err(PluginError::new(
                catalog,
                &format!("plugins[{}].strict", entry.index),
                format!(
                    "plugin {:?} has conflicting manifests: `strict: false` makes the entry its whole definition, and its plugin.json declares components too (`{key}`); remove them from one of the two",
                    entry.name
                ),
            ));
        }
        let mut manifest = own.cloned().unwrap_or_default();
        manifest.extend(entry_fields);
        manifest.insert("name".to_owned(), Value::String(entry.name.clone()));
        return Ok(Some(Effective { manifest, files: Vec::new() }));
    }
    let adds = COMPONENTS.iter().any(|k| entry_fields.contains_key(*k)) || entry_fields.contains_key("defaultEnabled");
    let mut manifest = match own {
        Some(_) if !adds => return Ok(None),
        Some(own) => own.clone(),
        None => {
            let mut made: Map<String, Value> = entry_fields
                .iter()
                .filter(|(k, _)| !COMPONENTS.contains(&k.as_str()))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            made.insert("name".to_owned(), Value::String(entry.name.clone()));
            made
        }
    };
    let mut files = Vec::new();
    for key in COMPONENTS {
        let Some(added) = entry_fields.get(*key) else { continue };
        if CONFIGS.contains(key) {
            let mut list = Vec::new();
            for (origin, value) in [("plugin", manifest.get(*key).cloned()), ("marketplace", Some(added.clone()))] {
                match value {
                    Some(Value::Object(inline)) => {
                        let file = format!("./.claude-plugin/{origin}-{key}.json");
                        files.push((file.trim_start_matches("./").to_owned(), Value::Object(inline)));
                        list.push(Value::String(file));
                    }
                    Some(other) => list.extend(paths(&other)),
                    None => {}
                }
            }
            manifest.insert((*key).to_owned(), Value::Array(dedup(list)));
            continue;
        }
        let mut list = match manifest.get(*key) {
            Some(existing) => paths(existing),
            None => REPLACING
                .iter()
                .find(|(field, _)| field == key)
                .filter(|(_, dir)| plugin_dir.join(dir).is_dir())
                .map(|(_, dir)| vec![Value::String(format!("./{dir}/"))])
                .unwrap_or_default(),
        };
        list.extend(paths(added));
        manifest.insert((*key).to_owned(), Value::Array(dedup(list)));
    }
    if let Some(on) = entry_fields.get("defaultEnabled") {
        manifest.insert("defaultEnabled".to_owned(), on.clone());
    }
    Ok(Some(Effective { manifest, files }))
}

fn paths(value: &Value) -> Vec<Value> {
    match value {
        Value::Array(items) => items.clone(),
        other => vec![other.clone()],
    }
}

fn dedup(list: Vec<Value>) -> Vec<Value> {
    let mut out: Vec<Value> = Vec::new();
    for item in list {
        if !out.contains(&item) {
            out.push(item);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::plugins::marketplace::Marketplace;

    fn entry(value: Value) -> Entry {
        let catalog = json!({"name": "m", "owner": {"name": "o"}, "plugins": [value]});
        let (market, check) = Marketplace::check(Path::new("/m/.claude-plugin/marketplace.json"), &catalog);
        let market = market.unwrap_or_else(|| panic!("{check:?}"));
        market.plugins[0].clone()
    }

    fn object(value: Value) -> Map<String, Value> {
        value.as_object().cloned().expect("object")
    }

    #[test]
    fn a_strict_entry_supplements_the_plugins_own_manifest() {
        let dir = tempfile::tempdir().expect("dir");
        std::fs::create_dir_all(dir.path().join("commands")).expect("mkdir");
        let e = entry(json!({"name": "p", "source": "./p", "commands": ["./extra/b.md"], "skills": "./more",
            "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "echo e"}]}]}, "defaultEnabled": false}));
        let own = object(json!({"name": "p", "version": "1.0.0", "hooks": "./h.json"}));
        let made = effective(&e, Some(&own), dir.path(), Path::new("/c")).expect("merges").expect("changed");
        assert_eq!(
            Value::Object(made.manifest),
            json!({"name": "p", "version": "1.0.0", "hooks": ["./h.json", "./.claude-plugin/marketplace-hooks.json"],
                "commands": ["./commands/", "./extra/b.md"], "skills": ["./more"], "defaultEnabled": false})
        );
        assert_eq!(made.files.len(), 1);
        assert_eq!(made.files[0].0, ".claude-plugin/marketplace-hooks.json");
        let plain = entry(json!({"name": "p", "source": "./p", "description": "d"}));
        assert_eq!(effective(&plain, Some(&own), dir.path(), Path::new("/c")).expect("ok"), None, "used as is");
    }

    #[test]
    fn without_a_manifest_or_with_strict_false_the_entry_makes_it() {
        let dir = tempfile::tempdir().expect("dir");
        let loose = entry(json!({"name": "loose", "source": "./l", "strict": false, "version": "0.3.0",
            "commands": ["./commands/hi.md"], "category": "x"}));
        let made = effective(&loose, None, dir.path(), Path::new("/c")).expect("ok").expect("made");
        assert_eq!(
            Value::Object(made.manifest),
            json!({"name": "loose", "version": "0.3.0", "commands": ["./commands/hi.md"]})
        );
        let own = object(json!({"name": "other", "version": "2.0.0"}));
        let made = effective(&loose, Some(&own), dir.path(), Path::new("/c")).expect("ok").expect("made");
        assert_eq!(made.manifest["name"], "loose");
        let bare = entry(json!({"name": "bare", "source": "./b", "description": "d"}));
        let made = effective(&bare, None, dir.path(), Path::new("/c")).expect("ok").expect("made");
        assert_eq!(Value::Object(made.manifest), json!({"name": "bare", "description": "d"}));
    }

    #[test]
    fn strict_false_with_components_in_both_is_a_conflict_naming_the_entry() {
        let dir = tempfile::tempdir().expect("dir");
        let loose = entry(json!({"name": "q", "source": "./q", "strict": false, "commands": ["./x.md"]}));
        let own = object(json!({"name": "q", "commands": ["./x.md"]}));
        let error = effective(&loose, Some(&own), dir.path(), Path::new("/c")).expect_err("conflict");
        assert_eq!(error.field, "plugins[0].strict");
        assert!(error.to_string().contains("conflicting manifests"), "{error}");
    }
}
