//! What managed settings enforce, as Claude Code 2.1 has it (docs/cli.md, "Managed settings").
//!
//! Contract:
//! - `allowManagedHooksOnly` and `allowManagedPermissionRulesOnly` are honoured only from a
//!   managed source ([`Origin::Managed`]), by precedence among the managed sources; `true` in
//!   any other source is a warning saying it is ignored there. A value that is not a boolean is
//!   an error naming the file and the key, whatever the source.
//! - `allowManagedPermissionRulesOnly: true` keeps the permission rules (allow, ask, deny) of
//!   every other source from applying: `drop_unmanaged_rules` moves them out of
//!   [`Settings::permissions`] into [`ManagedPolicy::dropped_rules`]. The allow rules of
//!   `--allowedTools` are dropped by whoever adds them (spine-agent), with
//!   [`ManagedPolicy::rules_notice`] as the one line that says what was dropped.
//! - `allowedHttpHookUrls` and `httpHookAllowedEnvVars` are read from every source, their
//!   entries appended ([`AllowList`]); set anywhere, they apply to the hooks of every source
//!   but managed ones, and to managed hooks only when a managed source sets them too
//!   ([`AllowList::applies_to`]). spine-hooks applies them.
//! - `allowManagedHooksOnly` is applied by spine-hooks (hooks of other sources do not run).

use serde_json::Value;

use crate::settings::{RuleEntry, Settings};
use crate::source::{Origin, SettingsError, expect_str_list, type_name};

/// The top-level keys this module reads.
pub(crate) const POLICY_KEYS: &[&str] =
    &["allowManagedHooksOnly", "allowManagedPermissionRulesOnly", "allowedHttpHookUrls", "httpHookAllowedEnvVars"];

/// What managed settings enforce, merged.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ManagedPolicy {
    /// The managed source of `allowManagedHooksOnly: true`: only managed hooks run.
    pub hooks_only: Option<Origin>,
    /// The managed source of `allowManagedPermissionRulesOnly: true`: only managed permission
    /// rules apply.
    pub permission_rules_only: Option<Origin>,
    /// `allowedHttpHookUrls`: the URL patterns HTTP hooks may target (unset: any).
    pub http_hook_urls: Option<AllowList>,
    /// `httpHookAllowedEnvVars`: the variables HTTP hook headers may interpolate (unset: each
    /// hook's own `allowedEnvVars`).
    pub http_hook_env_vars: Option<AllowList>,
    /// The rules `allowManagedPermissionRulesOnly` kept from applying.
    pub dropped_rules: DroppedRules,
}

/// A list key whose entries are appended across sources.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AllowList {
    /// Every source's entries, lowest precedence first.
    pub entries: Vec<ListEntry>,
    /// Every source that sets the key (an empty list counts: it allows nothing).
    pub set_by: Vec<Origin>,
}

/// One entry of an [`AllowList`], with its source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListEntry {
    /// The entry as written.
    pub value: String,
    /// The source that holds it.
    pub origin: Origin,
    /// Its JSON path (`allowedHttpHookUrls[1]`).
    pub path: String,
}

impl AllowList {
    /// Whether the list applies to a hook of a managed source (`managed`) or of another one:
    /// to managed hooks only when a managed source sets the list (as Claude Code).
    pub fn applies_to(&self, managed: bool) -> bool {
        !managed || self.set_by.iter().any(Origin::is_managed)
    }

    /// The entries as written.
    pub fn values(&self) -> impl Iterator<Item = &str> {
        self.entries.iter().map(|e| e.value.as_str())
    }

    /// The sources that set it, for messages (`A, B`).
    pub fn sources(&self) -> String {
        let mut names: Vec<String> = Vec::new();
        for origin in &self.set_by {
            let name = origin.to_string();
            if !names.contains(&name) {
                names.push(name);
            }
        }
        names.join(", ")
    }
}

/// Permission rules of sources below managed settings that `allowManagedPermissionRulesOnly`
/// keeps from applying.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DroppedRules {
    /// Allow rules.
    pub allow: Vec<RuleEntry>,
    /// Ask rules.
    pub ask: Vec<RuleEntry>,
    /// Deny rules.
    pub deny: Vec<RuleEntry>,
}

impl DroppedRules {
    /// How many rules were dropped.
    pub fn len(&self) -> usize {
        self.allow.len() + self.ask.len() + self.deny.len()
    }

    /// Whether none was dropped.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl ManagedPolicy {
    /// The one line saying what `allowManagedPermissionRulesOnly` kept from applying, with the
    /// number of `--allowedTools` rules dropped by the caller (`flag_allow`); `None` when it is
    /// not set or nothing was dropped.
    pub fn rules_notice(&self, flag_allow: usize) -> Option<String> {
        let by = self.permission_rules_only.as_ref()?;
        let d = &self.dropped_rules;
        let mut parts = Vec::new();
        for (n, what) in [(d.allow.len(), "allow"), (d.ask.len(), "ask"), (d.deny.len(), "deny")] {
            if n > 0 {
                parts.push(format!("{n} {what} rule{}", if n == 1 { "" } else { "s" }));
            }
        }
        let mut files: Vec<String> = Vec::new();
        for e in d.allow.iter().chain(&d.ask).chain(&d.deny) {
            let name = e.origin.to_string();
            if !files.contains(&name) {
                files.push(name);
            }
        }
        let mut text = Vec::new();
        if !parts.is_empty() {
            text.push(format!("{} from {}", parts.join(", "), files.join(", ")));
        }
        if flag_allow > 0 {
            text.push(format!("{flag_allow} --allowedTools rule{}", if flag_allow == 1 { "" } else { "s" }));
        }
        if text.is_empty() {
            return None;
        }
        Some(format!(
            "`allowManagedPermissionRulesOnly` in {by}: only managed permission rules apply; not applied: {}",
            text.join("; ")
        ))
    }
}

/// Merges one of [`POLICY_KEYS`] of one source into `s.managed`.
pub(crate) fn merge_key(s: &mut Settings, origin: &Origin, key: &str, value: &Value) -> Result<(), SettingsError> {
    match key {
        "allowManagedHooksOnly" | "allowManagedPermissionRulesOnly" => {
            let on = value.as_bool().ok_or_else(|| {
                SettingsError::at(origin, key, format!("expected a boolean, found {}", type_name(value)))
            })?;
            if !origin.is_managed() {
                if on {
                    s.warnings.push(format!(
                        "{origin}: `{key}` is ignored here: only managed settings may set it \
                         (/etc/claude-code/managed-settings.json, /etc/spine/managed-settings.json)"
                    ));
                }
                return Ok(());
            }
            let slot = if key == "allowManagedHooksOnly" {
                &mut s.managed.hooks_only
            } else {
                &mut s.managed.permission_rules_only
            };
            *slot = on.then(|| origin.clone());
        }
        _ => {
            let items = expect_str_list(origin, key, value)?;
            let slot = if key == "allowedHttpHookUrls" {
                &mut s.managed.http_hook_urls
            } else {
                &mut s.managed.http_hook_env_vars
            };
            let list = slot.get_or_insert_with(AllowList::default);
            list.set_by.push(origin.clone());
            for (i, value) in items.into_iter().enumerate() {
                list.entries.push(ListEntry { value, origin: origin.clone(), path: format!("{key}[{i}]") });
            }
        }
    }
    Ok(())
}

/// With `allowManagedPermissionRulesOnly`, moves every permission rule of a source that is not
/// managed from `s.permissions` to `s.managed.dropped_rules`.
pub(crate) fn drop_unmanaged_rules(s: &mut Settings) {
    if s.managed.permission_rules_only.is_none() {
        return;
    }
    let perms = &mut s.permissions;
    let dropped = &mut s.managed.dropped_rules;
    for (kept, out) in [
        (&mut perms.allow, &mut dropped.allow),
        (&mut perms.ask, &mut dropped.ask),
        (&mut perms.deny, &mut dropped.deny),
    ] {
        let (managed, other): (Vec<RuleEntry>, Vec<RuleEntry>) =
            std::mem::take(kept).into_iter().partition(|e| e.origin.is_managed());
        *kept = managed;
        out.extend(other);
    }
}
