//! The `sandbox` key: Claude Code 2.1's sandbox settings, plus spine's `mode`
//! ([`SandboxSettings`], merged by `merge`); and what an untrusted project may not set in it
//! (`withhold`).
//!
//! Contract:
//! - Booleans and `mode` take the value of the highest-precedence source that sets them; the
//!   lists (`excludedCommands`, `filesystem.*`, `network.allowedDomains`, `deniedDomains`,
//!   `allowUnixSockets`) are appended across sources, each entry keeping its source and JSON
//!   path (paths resolve against their source: see [`SandboxPath`]).
//! - A wrong type is a [`SettingsError`] naming the file and the JSON path. A key Claude Code
//!   has that spine does not apply is a warning saying so (or a note for the macOS and
//!   Windows ones); a key neither knows follows [`crate::unknown`] (a near miss is an error).
//! - An untrusted project's files may tighten the sandbox but not loosen it: `enabled: false`,
//!   a `mode` other than `read-only`, `failIfUnavailable: false`, `autoAllowBashIfSandboxed:
//!   true`, `allowUnsandboxedCommands: true`, `excludedCommands`, `filesystem.allowWrite`,
//!   `filesystem.allowRead` and the `network` keys that open something are withheld.

use serde_json::{Map, Value};

use crate::source::{Origin, SettingsError, expect_object, expect_str, expect_str_list, type_name};
use crate::unknown::unknown_key;

/// `sandbox.mode` and `--sandbox`: what commands may write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SandboxMode {
    /// Commands write only the session's private temporary directory.
    ReadOnly,
    /// Commands write the workspace roots (minus protected paths), the private temporary
    /// directory and `filesystem.allowWrite`.
    WorkspaceWrite,
    /// No sandbox.
    Off,
}

impl std::str::FromStr for SandboxMode {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "read-only" => Ok(SandboxMode::ReadOnly),
            "workspace-write" => Ok(SandboxMode::WorkspaceWrite),
            "off" | "danger-full-access" => Ok(SandboxMode::Off),
            other => Err(format!("unknown sandbox mode `{other}` (read-only, workspace-write, off)")),
        }
    }
}

impl SandboxMode {
    /// `read-only`, `workspace-write` or `off`.
    pub fn as_str(self) -> &'static str {
        match self {
            SandboxMode::ReadOnly => "read-only",
            SandboxMode::WorkspaceWrite => "workspace-write",
            SandboxMode::Off => "off",
        }
    }
}

/// A path or pattern of the sandbox settings, with where it was written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SandboxPath {
    /// As written: absolute, `//absolute`, `~/…`, or relative to the settings file's root (the
    /// project for a project's files, the file's directory otherwise).
    pub written: String,
    /// Its source.
    pub origin: Origin,
    /// Its JSON path (`sandbox.filesystem.allowWrite[0]`).
    pub path: String,
}

/// The `sandbox` key, merged (see the module contract).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SandboxSettings {
    /// `enabled`, with its source.
    pub enabled: Option<(bool, Origin)>,
    /// `mode` (spine's own), with its source.
    pub mode: Option<(SandboxMode, Origin)>,
    /// `failIfUnavailable`: refuse commands rather than run them unconfined.
    pub fail_if_unavailable: Option<bool>,
    /// `autoAllowBashIfSandboxed`.
    pub auto_allow_bash_if_sandboxed: Option<bool>,
    /// `allowUnsandboxedCommands` (Claude Code's default: true).
    pub allow_unsandboxed_commands: Option<bool>,
    /// `excludedCommands`: Bash rule patterns of commands run outside the sandbox.
    pub excluded_commands: Vec<SandboxPath>,
    /// `filesystem.allowWrite`.
    pub allow_write: Vec<SandboxPath>,
    /// `filesystem.denyWrite`.
    pub deny_write: Vec<SandboxPath>,
    /// `filesystem.denyRead`.
    pub deny_read: Vec<SandboxPath>,
    /// `filesystem.allowRead`: lifts a denied read equal to or beneath it.
    pub allow_read: Vec<SandboxPath>,
    /// `network.allowedDomains`.
    pub allowed_domains: Vec<String>,
    /// `network.deniedDomains`.
    pub denied_domains: Vec<String>,
    /// `network.allowUnixSockets`.
    pub allow_unix_sockets: Vec<SandboxPath>,
    /// `network.allowAllUnixSockets`.
    pub allow_all_unix_sockets: Option<bool>,
    /// `network.allowLocalBinding`.
    pub allow_local_binding: Option<bool>,
    /// `network.httpProxyPort`: the user's own proxy on loopback.
    pub http_proxy_port: Option<u16>,
    /// `network.socksProxyPort` (not applied: one line says so).
    pub socks_proxy_port: Option<u16>,
}

impl SandboxSettings {
    /// The mode the settings ask for: `mode`, else `enabled` (true: workspace-write), else off.
    pub fn mode(&self) -> SandboxMode {
        match (&self.mode, &self.enabled) {
            (Some((mode, _)), _) => *mode,
            (None, Some((true, _))) => SandboxMode::WorkspaceWrite,
            (None, Some((false, _)) | None) => SandboxMode::Off,
        }
    }
}

/// Keys of `sandbox` spine applies.
const KEYS: &[&str] = &[
    "enabled",
    "mode",
    "failIfUnavailable",
    "autoAllowBashIfSandboxed",
    "allowUnsandboxedCommands",
    "excludedCommands",
    "filesystem",
    "network",
];

/// Claude Code's `sandbox` keys spine does not apply, with what spine does instead; `true`
/// marks a warning (it changes what is confined), `false` a note (another platform's).
const NOT_APPLIED: &[(&str, bool, &str)] = &[
    ("credentials", true, "spine does not mask or hide credential files and variables beyond its default denied reads"),
    ("ignoreViolations", false, "spine reports no violations to silence"),
    ("enableWeakerNestedSandbox", false, "spine's sandbox mounts no /proc; nothing to weaken"),
    ("allowNestedUserNamespaces", true, "commands still may not create namespaces (seccomp)"),
    ("enableWeakerNetworkIsolation", false, "macOS only"),
    ("allowAppleEvents", false, "macOS only"),
    ("windows", false, "Windows only"),
    ("ripgrep", false, "spine's Grep does not run in the sandbox"),
    ("bwrapPath", false, "spine's sandbox does not use bubblewrap"),
    ("socatPath", false, "spine's sandbox does not use socat"),
];

const FILESYSTEM_KEYS: &[&str] =
    &["allowWrite", "denyWrite", "denyRead", "allowRead", "allowManagedReadPathsOnly", "disabled"];

const NETWORK_KEYS: &[&str] = &[
    "allowedDomains",
    "deniedDomains",
    "strictAllowlist",
    "allowManagedDomainsOnly",
    "allowUnixSockets",
    "allowAllUnixSockets",
    "allowLocalBinding",
    "allowMachLookup",
    "httpProxyPort",
    "socksProxyPort",
    "tlsTerminate",
];

/// Merges one source's `sandbox` value into `s`; warnings and notes are pushed.
pub(crate) fn merge(
    s: &mut SandboxSettings,
    warnings: &mut Vec<String>,
    notes: &mut Vec<String>,
    origin: &Origin,
    value: &Value,
) -> Result<(), SettingsError> {
    for (key, v) in expect_object(origin, "sandbox", value)? {
        let path = format!("sandbox.{key}");
        match key.as_str() {
            "enabled" => s.enabled = Some((boolean(origin, &path, v)?, origin.clone())),
            "mode" => {
                let mode =
                    expect_str(origin, &path, v)?.parse().map_err(|e: String| SettingsError::at(origin, &path, e))?;
                s.mode = Some((mode, origin.clone()));
            }
            "failIfUnavailable" => s.fail_if_unavailable = Some(boolean(origin, &path, v)?),
            "autoAllowBashIfSandboxed" => s.auto_allow_bash_if_sandboxed = Some(boolean(origin, &path, v)?),
            "allowUnsandboxedCommands" => s.allow_unsandboxed_commands = Some(boolean(origin, &path, v)?),
            "excludedCommands" => s.excluded_commands.extend(entries(origin, &path, v)?),
            "filesystem" => merge_filesystem(s, warnings, origin, v)?,
            "network" => merge_network(s, warnings, notes, origin, v)?,
            other => match NOT_APPLIED.iter().find(|(k, _, _)| *k == other) {
                Some((_, true, why)) => warnings.push(format!("{origin}: `{path}` is not applied ({why})")),
                Some((_, false, why)) => notes.push(format!("{origin}: ignoring `{path}` ({why})")),
                None => {
                    let known = KEYS.iter().chain(NOT_APPLIED.iter().map(|(k, _, _)| k)).copied();
                    warnings.push(unknown_key(origin, &path, other, known)?);
                }
            },
        }
    }
    Ok(())
}

fn merge_filesystem(
    s: &mut SandboxSettings,
    warnings: &mut Vec<String>,
    origin: &Origin,
    value: &Value,
) -> Result<(), SettingsError> {
    for (key, v) in expect_object(origin, "sandbox.filesystem", value)? {
        let path = format!("sandbox.filesystem.{key}");
        let list = match key.as_str() {
            "allowWrite" => &mut s.allow_write,
            "denyWrite" => &mut s.deny_write,
            "denyRead" => &mut s.deny_read,
            "allowRead" => &mut s.allow_read,
            "disabled" if boolean(origin, &path, v)? => {
                warnings.push(format!("{origin}: `{path}` is not applied (filesystem isolation stays on)"));
                continue;
            }
            "allowManagedReadPathsOnly" if boolean(origin, &path, v)? => {
                warnings
                    .push(format!("{origin}: `{path}` is not applied (every source's filesystem.allowRead applies)"));
                continue;
            }
            // `false` is what spine does anyway.
            "disabled" | "allowManagedReadPathsOnly" => continue,
            other => {
                warnings.push(unknown_key(origin, &path, other, FILESYSTEM_KEYS.iter().copied())?);
                continue;
            }
        };
        list.extend(entries(origin, &path, v)?);
    }
    Ok(())
}

fn merge_network(
    s: &mut SandboxSettings,
    warnings: &mut Vec<String>,
    notes: &mut Vec<String>,
    origin: &Origin,
    value: &Value,
) -> Result<(), SettingsError> {
    for (key, v) in expect_object(origin, "sandbox.network", value)? {
        let path = format!("sandbox.network.{key}");
        match key.as_str() {
            "allowedDomains" => s.allowed_domains.extend(expect_str_list(origin, &path, v)?),
            "deniedDomains" => s.denied_domains.extend(expect_str_list(origin, &path, v)?),
            "allowUnixSockets" => s.allow_unix_sockets.extend(entries(origin, &path, v)?),
            "allowAllUnixSockets" => s.allow_all_unix_sockets = Some(boolean(origin, &path, v)?),
            "allowLocalBinding" => s.allow_local_binding = Some(boolean(origin, &path, v)?),
            "httpProxyPort" => s.http_proxy_port = Some(port(origin, &path, v)?),
            "socksProxyPort" => s.socks_proxy_port = Some(port(origin, &path, v)?),
            "allowMachLookup" => notes.push(format!("{origin}: ignoring `{path}` (macOS only)")),
            "strictAllowlist" | "allowManagedDomainsOnly" | "tlsTerminate" => warnings.push(format!(
                "{origin}: `{path}` is not applied (spine's proxy filters by allowedDomains, deniedDomains and \
                 the WebFetch(domain:…) rules; it does not terminate TLS)"
            )),
            other => warnings.push(unknown_key(origin, &path, other, NETWORK_KEYS.iter().copied())?),
        }
    }
    Ok(())
}

fn boolean(origin: &Origin, path: &str, v: &Value) -> Result<bool, SettingsError> {
    v.as_bool()
        .ok_or_else(|| SettingsError::at(origin, path, format!("expected true or false, found {}", type_name(v))))
}

fn port(origin: &Origin, path: &str, v: &Value) -> Result<u16, SettingsError> {
    v.as_u64()
        .and_then(|n| u16::try_from(n).ok())
        .filter(|n| *n > 0)
        .ok_or_else(|| SettingsError::at(origin, path, format!("expected a port number (1-65535), found {v}")))
}

fn entries(origin: &Origin, path: &str, v: &Value) -> Result<Vec<SandboxPath>, SettingsError> {
    Ok(expect_str_list(origin, path, v)?
        .into_iter()
        .enumerate()
        .map(|(i, written)| SandboxPath { written, origin: origin.clone(), path: format!("{path}[{i}]") })
        .collect())
}

/// Moves what an untrusted project's `sandbox` value may not set out of it (see the module
/// contract); returns the withheld part and the JSON paths of what was withheld.
pub(crate) fn withhold(sandbox: &mut Value) -> Option<(Value, Vec<String>)> {
    let Value::Object(obj) = sandbox else { return None };
    let mut out = Map::new();
    let mut names = Vec::new();
    let loosening = |key: &str, v: &Value| match key {
        "enabled" | "failIfUnavailable" => v == &Value::Bool(false),
        "autoAllowBashIfSandboxed" | "allowUnsandboxedCommands" => v == &Value::Bool(true),
        "mode" => v != &Value::String("read-only".to_owned()),
        "excludedCommands" => true,
        _ => false,
    };
    for key in [
        "enabled",
        "mode",
        "failIfUnavailable",
        "autoAllowBashIfSandboxed",
        "allowUnsandboxedCommands",
        "excludedCommands",
    ] {
        if obj.get(key).is_some_and(|v| loosening(key, v))
            && let Some(v) = obj.remove(key)
        {
            names.push(format!("sandbox.{key}"));
            out.insert(key.to_owned(), v);
        }
    }
    for (section, keys) in [
        ("filesystem", &["allowWrite", "allowRead"][..]),
        (
            "network",
            &[
                "allowedDomains",
                "allowUnixSockets",
                "allowAllUnixSockets",
                "allowLocalBinding",
                "httpProxyPort",
                "socksProxyPort",
            ][..],
        ),
    ] {
        let Some(Value::Object(inner)) = obj.get_mut(section) else { continue };
        let mut withheld = Map::new();
        for key in keys {
            let opens = inner.get(*key).is_some_and(|v| v != &Value::Bool(false));
            if opens && let Some(v) = inner.remove(*key) {
                names.push(format!("sandbox.{section}.{key}"));
                withheld.insert((*key).to_owned(), v);
            }
        }
        if !withheld.is_empty() {
            out.insert(section.to_owned(), Value::Object(withheld));
        }
    }
    if out.is_empty() { None } else { Some((Value::Object(out), names)) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn merged(values: &[(Origin, Value)]) -> Result<(SandboxSettings, Vec<String>, Vec<String>), SettingsError> {
        let (mut s, mut warnings, mut notes) = (SandboxSettings::default(), Vec::new(), Vec::new());
        for (origin, v) in values {
            merge(&mut s, &mut warnings, &mut notes, origin, v)?;
        }
        Ok((s, warnings, notes))
    }

    #[test]
    fn scalars_go_by_precedence_and_lists_are_appended_with_their_source() {
        let user = Origin::User("/h/.claude/settings.json".into());
        let cli = Origin::Cli { index: 1, path: None };
        let (s, warnings, _) = merged(&[
            (
                user.clone(),
                json!({"enabled": true, "excludedCommands": ["docker *"], "filesystem": {"denyRead": ["~/secrets"]}}),
            ),
            (
                cli.clone(),
                json!({"mode": "read-only", "autoAllowBashIfSandboxed": true, "filesystem": {"denyRead": ["./x"]},
                                 "network": {"allowedDomains": ["example.com"], "allowLocalBinding": true}}),
            ),
        ])
        .expect("merges");
        assert!(warnings.is_empty(), "{warnings:?}");
        assert_eq!(s.mode(), SandboxMode::ReadOnly);
        assert_eq!(s.auto_allow_bash_if_sandboxed, Some(true));
        assert_eq!(s.deny_read.len(), 2);
        assert_eq!(s.deny_read[1].path, "sandbox.filesystem.denyRead[0]");
        assert_eq!(s.deny_read[1].origin, cli);
        assert_eq!(s.excluded_commands[0].written, "docker *");
        assert_eq!(s.allowed_domains, vec!["example.com".to_owned()]);
        assert_eq!(s.allow_local_binding, Some(true));
    }

    #[test]
    fn wrong_types_name_the_file_and_path_and_typos_are_errors() {
        let origin = Origin::Project("/p/.claude/settings.json".into());
        let err = merged(&[(origin.clone(), json!({"enabled": "yes"}))]).expect_err("type");
        assert_eq!(err.path, "sandbox.enabled");
        assert!(err.origin.contains("/p/.claude/settings.json"), "{err}");
        let err = merged(&[(origin.clone(), json!({"filesystem": {"denyRead": [1]}}))]).expect_err("type");
        assert_eq!(err.path, "sandbox.filesystem.denyRead[0]");
        let err = merged(&[(origin.clone(), json!({"enabeld": true}))]).expect_err("typo");
        assert!(err.reason.contains("did you mean `enabled`"), "{err}");
        let err = merged(&[(origin.clone(), json!({"mode": "strict"}))]).expect_err("mode");
        assert!(err.reason.contains("read-only, workspace-write, off"), "{err}");
        let (_, warnings, notes) =
            merged(&[(origin, json!({"credentials": {}, "allowAppleEvents": true, "futureThing": 1}))]).expect("ok");
        assert_eq!(warnings.len(), 2, "{warnings:?}");
        assert!(warnings[0].contains("sandbox.credentials") && warnings[0].contains("not applied"), "{warnings:?}");
        assert!(warnings[1].contains("unknown field `futureThing`"), "{warnings:?}");
        assert!(notes[0].contains("macOS only"), "{notes:?}");
    }

    #[test]
    fn an_untrusted_project_may_tighten_but_not_loosen() {
        let mut v = json!({"enabled": false, "failIfUnavailable": true, "autoAllowBashIfSandboxed": true,
                           "excludedCommands": ["curl *"], "filesystem": {"allowWrite": ["/"], "denyRead": ["./k"]},
                           "network": {"allowedDomains": ["x.com"], "allowLocalBinding": false}});
        let (withheld, names) = withhold(&mut v).expect("withheld");
        assert_eq!(
            names,
            vec![
                "sandbox.enabled",
                "sandbox.autoAllowBashIfSandboxed",
                "sandbox.excludedCommands",
                "sandbox.filesystem.allowWrite",
                "sandbox.network.allowedDomains"
            ]
        );
        assert_eq!(
            v,
            json!({"failIfUnavailable": true, "filesystem": {"denyRead": ["./k"]}, "network": {"allowLocalBinding": false}})
        );
        assert_eq!(withheld["filesystem"], json!({"allowWrite": ["/"]}));
        assert!(withhold(&mut json!({"enabled": true, "mode": "read-only"})).is_none());
    }
}
