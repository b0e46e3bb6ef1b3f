//! The merge of the larger settings keys into [`Settings`]: `permissions` (its
//! `additionalDirectories` in [`crate::directories`]), `context`,
//! `skills` and `env_passthrough`. Each error names the source, the JSON path and the reason.

use serde_json::Value;
use spine_protocol::compaction::{CompactStrategy, TokenEstimatorKind};
use spine_protocol::permission::PermissionMode;
use spine_protocol::skill_root::SkillRootKind;

use crate::claude_keys::{PERMISSIONS_KEYS, PERMISSIONS_NOT_APPLIED};
use crate::settings::{RuleEntry, Settings, SkillRootSetting};
use crate::source::{Origin, SettingsError, expect_object, expect_str, type_name};
use crate::unknown::unknown_key;

/// The `defaultMode` values spine implements, for the warning about the others.
const SUPPORTED_MODES: &str = "default, acceptEdits, plan, dontAsk, bypassPermissions";

pub(crate) fn merge_permissions(s: &mut Settings, origin: &Origin, value: &Value) -> Result<(), SettingsError> {
    let obj = expect_object(origin, "permissions", value)?;
    for (key, v) in obj {
        let list = match key.as_str() {
            "allow" => &mut s.permissions.allow,
            "ask" => &mut s.permissions.ask,
            "deny" => &mut s.permissions.deny,
            "defaultMode" => {
                let text = expect_str(origin, "permissions.defaultMode", v)?;
                // A mode spine does not implement is one warning line, not an error for the
                // whole file: the rest of the file still applies.
                // Claude Code reads `manual` as `default`.
                let text = if text == "manual" { "default" } else { text };
                match text.parse::<PermissionMode>() {
                    Ok(mode) => s.permissions.default_mode = Some(mode),
                    Err(_) => s.warnings.push(format!(
                        "{origin}: permissions.defaultMode `{text}` is not supported by spine (supported: {}); ignored",
                        SUPPORTED_MODES
                    )),
                }
                continue;
            }
            "additionalDirectories" => {
                crate::directories::merge(&mut s.permissions.additional_directories, origin, v)?;
                continue;
            }
            "disableBypassPermissionsMode" => {
                match v {
                    Value::String(text) if text == "disable" => s.permissions.bypass_disabled_by = Some(origin.clone()),
                    other => {
                        return Err(SettingsError::at(
                            origin,
                            "permissions.disableBypassPermissionsMode",
                            format!("expected \"disable\", found {other}"),
                        ));
                    }
                }
                continue;
            }
            other => {
                let path = format!("permissions.{other}");
                match PERMISSIONS_NOT_APPLIED.iter().find(|(k, _)| *k == other) {
                    Some((_, why)) => s.warnings.push(format!("{origin}: `{path}` is not applied ({why})")),
                    None => s.warnings.push(unknown_key(origin, &path, other, PERMISSIONS_KEYS.iter().copied())?),
                }
                continue;
            }
        };
        let Value::Array(items) = v else {
            return Err(SettingsError::at(
                origin,
                format!("permissions.{key}"),
                format!("expected an array of rules, found {}", type_name(v)),
            ));
        };
        for (i, item) in items.iter().enumerate() {
            let path = format!("permissions.{key}[{i}]");
            let rule = expect_str(origin, &path, item)?;
            list.push(RuleEntry { rule: rule.to_owned(), origin: origin.clone(), path });
        }
    }
    Ok(())
}

pub(crate) fn merge_context(s: &mut Settings, origin: &Origin, value: &Value) -> Result<(), SettingsError> {
    for (k, v) in expect_object(origin, "context", value)? {
        let path = format!("context.{k}");
        match k.as_str() {
            "compaction_threshold_tokens" => {
                let n = v.as_u64().ok_or_else(|| {
                    SettingsError::at(origin, &path, format!("expected a non-negative integer, found {v}"))
                })?;
                s.compaction_threshold_tokens = Some(n);
            }
            "compaction_strategy" => {
                s.compaction_strategy = Some(match expect_str(origin, &path, v)? {
                    "sandwich" => CompactStrategy::Sandwich,
                    "summarize" => CompactStrategy::Summarize,
                    other => {
                        return Err(SettingsError::at(
                            origin,
                            &path,
                            format!("unknown strategy `{other}` (sandwich or summarize)"),
                        ));
                    }
                });
            }
            "token_estimator" => {
                s.token_estimator = Some(match expect_str(origin, &path, v)? {
                    "words" => TokenEstimatorKind::Words,
                    "bpe" => TokenEstimatorKind::Bpe,
                    e => {
                        return Err(SettingsError::at(
                            origin,
                            &path,
                            format!("unknown estimator `{e}` (words or bpe)"),
                        ));
                    }
                });
            }
            other => s.warnings.push(unknown_key(
                origin,
                &path,
                other,
                ["compaction_threshold_tokens", "compaction_strategy", "token_estimator"],
            )?),
        }
    }
    Ok(())
}

pub(crate) fn merge_skills(s: &mut Settings, origin: &Origin, value: &Value) -> Result<(), SettingsError> {
    for (k, v) in expect_object(origin, "skills", value)? {
        match k.as_str() {
            "roots" => {
                let Value::Array(items) = v else {
                    return Err(SettingsError::at(
                        origin,
                        "skills.roots",
                        format!("expected an array, found {}", type_name(v)),
                    ));
                };
                let mut roots = Vec::new();
                for (i, item) in items.iter().enumerate() {
                    let path = format!("skills.roots[{i}]");
                    roots.push(match item {
                        Value::String(p) => SkillRootSetting { path: p.clone(), kind: SkillRootKind::Live },
                        Value::Object(o) => {
                            let p = o.get("path").and_then(Value::as_str).ok_or_else(|| {
                                SettingsError::at(origin, format!("{path}.path"), "expected a string")
                            })?;
                            let kind = match o.get("kind").and_then(Value::as_str).unwrap_or("live") {
                                "system" => SkillRootKind::System,
                                "live" => SkillRootKind::Live,
                                "curated" => SkillRootKind::Curated,
                                other => {
                                    return Err(SettingsError::at(
                                        origin,
                                        format!("{path}.kind"),
                                        format!("unknown kind `{other}` (system, live or curated)"),
                                    ));
                                }
                            };
                            SkillRootSetting { path: p.to_owned(), kind }
                        }
                        other => {
                            return Err(SettingsError::at(
                                origin,
                                &path,
                                format!("expected a path or {{path, kind}}, found {}", type_name(other)),
                            ));
                        }
                    });
                }
                s.skill_roots = Some(roots);
            }
            other => s.warnings.push(unknown_key(origin, &format!("skills.{other}"), other, ["roots"])?),
        }
    }
    Ok(())
}

/// `env_passthrough`: a list of provider key names. Every entry must be one of the keys spine
/// removes from children; user, managed and `--settings` sources may opt keys in; a project's
/// own settings files cannot (a cloned repository would hand your key to its own hooks), so
/// there the key is ignored with a note.
pub(crate) fn merge_env_passthrough(s: &mut Settings, origin: &Origin, value: &Value) -> Result<(), SettingsError> {
    let list = value.as_array().ok_or_else(|| {
        SettingsError::at(
            origin,
            "env_passthrough",
            format!("expected an array of key names, found {}", type_name(value)),
        )
    })?;
    let mut names = Vec::new();
    for (i, entry) in list.iter().enumerate() {
        let path = format!("env_passthrough[{i}]");
        let name = expect_str(origin, &path, entry)?;
        if !spine_process::secrets::is_provider_key(name) {
            return Err(SettingsError::at(
                origin,
                path,
                format!(
                    "{name:?} is not a provider key spine keeps from tools and hooks (known: {})",
                    spine_process::secrets::PROVIDER_KEYS.join(", ")
                ),
            ));
        }
        names.push(name.to_owned());
    }
    match origin {
        Origin::User(_) | Origin::Cli { .. } | Origin::Managed(_) | Origin::Sdk => {
            for name in names {
                if !s.env_passthrough.contains(&name) {
                    s.env_passthrough.push(name);
                }
            }
        }
        Origin::Project(_) | Origin::Local(_) | Origin::Plugin(_) => s.notes.push(format!(
            "{origin}: ignoring `env_passthrough` (only user settings and --settings may hand provider keys to tools and hooks)"
        )),
    }
    Ok(())
}
