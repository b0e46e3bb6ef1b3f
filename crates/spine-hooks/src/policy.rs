//! What managed settings let hooks do (docs/cli.md, "Managed settings"; the keys are read by
//! `spine_settings::policy`).
//!
//! Contract of `apply`, run by [`HookConfig::from_settings_with`] after parsing:
//! - `disableAllHooks` (a single value: the highest-precedence source that sets it decides):
//!   `true` from a managed source turns every hook off; `true` from any other source turns off
//!   every hook but managed settings' own ([`HookConfig::disabled_spares_managed`]).
//! - `allowManagedHooksOnly: true` (honoured from managed settings only): the hooks of every
//!   other source do not run; one warning per source with its handler count.
//! - `allowedHttpHookUrls`, where it applies to a hook (`AllowList::applies_to`: to managed
//!   hooks only when a managed source sets it): an HTTP hook whose URL matches no pattern
//!   ([`url_matches`]) cannot run. Configuring it is a warning naming the hook; each firing
//!   is a launch error ([`HttpConfig::blocked`]), so its `onFailure` decides. An empty list
//!   blocks every HTTP hook it applies to; a pattern that is not a URL matches nothing and is
//!   a warning naming it.
//! - `httpHookAllowedEnvVars`, where it applies: a hook's `allowedEnvVars` becomes the
//!   intersection with it; each name removed is a warning naming the hook.
//!
//! Warnings are only given for hooks that would otherwise run.

use reqwest::Url;
use serde_json::Value;
use spine_settings::{Settings, SettingsError, type_name};

use crate::config::{ConfigWarning, Handler, HookConfig, HttpConfig};

/// Applies `disableAllHooks` and the managed-settings hook policy of `settings` to a parsed
/// configuration; a `disableAllHooks` that is not a boolean goes to `errors`.
pub(crate) fn apply(config: &mut HookConfig, settings: &Settings, errors: &mut Vec<SettingsError>) {
    if let Some((origin, value)) = settings.last("disableAllHooks") {
        match value {
            Value::Bool(true) => {
                config.disabled_by = Some(origin.to_string());
                config.disabled_spares_managed = !origin.is_managed();
            }
            Value::Bool(false) => {}
            other => errors.push(SettingsError::at(
                origin,
                "disableAllHooks",
                format!("expected a boolean, found {}", type_name(other)),
            )),
        }
    }
    let policy = &settings.managed;
    if let Some(by) = &policy.hooks_only {
        config.managed_only_by = Some(by.to_string());
        let mut counts: Vec<(String, usize)> = Vec::new();
        for g in config.groups.iter().filter(|g| !g.origin.is_managed()) {
            let source = g.origin.to_string();
            match counts.iter_mut().find(|(s, _)| *s == source) {
                Some((_, n)) => *n += g.handlers.len(),
                None => counts.push((source, g.handlers.len())),
            }
        }
        for (source, n) in counts.into_iter().filter(|(_, n)| *n > 0) {
            config.warnings.push(ConfigWarning {
                origin: source,
                path: "hooks".to_owned(),
                message: format!(
                    "{n} hook{} not run: `allowManagedHooksOnly` in {by} lets only managed hooks run",
                    if n == 1 { "" } else { "s" }
                ),
            });
        }
    }
    if let Some(list) = &policy.http_hook_urls {
        for e in list.entries.iter().filter(|e| e.value != "*" && UrlPattern::parse(&e.value).is_none()) {
            config.warnings.push(ConfigWarning {
                origin: e.origin.to_string(),
                path: e.path.clone(),
                message: format!("`{}` is not a URL pattern: it matches no URL", e.value),
            });
        }
    }
    let mut warnings = Vec::new();
    let runs: Vec<bool> = config.groups.iter().map(|g| config.runs(g)).collect();
    for (group, runs) in config.groups.iter_mut().zip(runs) {
        let managed = group.origin.is_managed();
        for h in &mut group.handlers {
            let Handler::Http(http) = &mut h.handler else { continue };
            let mut warn = |field: &str, message: String| {
                if runs {
                    warnings.push(ConfigWarning {
                        origin: group.origin.to_string(),
                        path: format!("{}.{field}", h.path),
                        message,
                    });
                }
            };
            if let Some(list) = policy.http_hook_urls.as_ref().filter(|l| l.applies_to(managed))
                && !list.values().any(|p| url_matches(p, &http.url))
            {
                let reason = if list.entries.is_empty() {
                    format!("`allowedHttpHookUrls` in {} is empty: no HTTP hook may run", list.sources())
                } else {
                    format!("{} matches no pattern of `allowedHttpHookUrls` (set in {})", http.url, list.sources())
                };
                warn("url", format!("{reason}: this hook does not run; each firing is a launch error"));
                http.blocked = Some(reason);
            }
            if let Some(list) = policy.http_hook_env_vars.as_ref().filter(|l| l.applies_to(managed)) {
                narrow_env_vars(http, &list.values().collect::<Vec<_>>(), &list.sources(), &mut warn);
            }
        }
    }
    config.warnings.extend(warnings);
}

/// Keeps the names of `http.allowed_env_vars` that `allowed` lists.
fn narrow_env_vars(http: &mut HttpConfig, allowed: &[&str], sources: &str, warn: &mut impl FnMut(&str, String)) {
    let (kept, removed): (Vec<String>, Vec<String>) =
        std::mem::take(&mut http.allowed_env_vars).into_iter().partition(|n| allowed.contains(&n.as_str()));
    for name in removed {
        warn(
            "allowedEnvVars",
            format!("`{name}` is not in `httpHookAllowedEnvVars` (set in {sources}): it is not interpolated"),
        );
    }
    http.allowed_env_vars = kept;
}

/// Whether `url` matches an `allowedHttpHookUrls` pattern, as Claude Code 2.1 matches them.
///
/// Both are parsed as URLs ([`Url`], so `HTTPS://Hooks.Example.com:443/a/../b` is
/// `https://hooks.example.com/b`); `*` matches any run of characters, and is matched part by
/// part, never across parts: the scheme (`*://…` any), the host (compared without case or a
/// trailing dot: `*.example.com`), the port (as written, the scheme's default when none; any
/// with `host:*`, or when the host has a `*` and no port is written), then the path and query
/// (`/hooks/*`). A pattern without a path (`https://hooks.example.com`) allows every path; one
/// ending in `/` only that path. The URL's user name, password and fragment are not compared.
/// `*` alone matches every URL; a pattern that does not parse matches none.
pub fn url_matches(pattern: &str, url: &str) -> bool {
    if pattern == "*" {
        return true;
    }
    match (UrlPattern::parse(pattern), Url::parse(url)) {
        (Some(pattern), Ok(url)) => pattern.matches(&url),
        _ => false,
    }
}

/// An `allowedHttpHookUrls` pattern, parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
struct UrlPattern {
    /// The scheme; `None` for `*`.
    scheme: Option<String>,
    /// The host, lowercase, `*` kept.
    host: String,
    /// The port as written (`None`: the scheme's default); ignored when `any_port`.
    port: Option<u16>,
    any_port: bool,
    /// The path and query, `*` kept; `None` allows every path.
    path: Option<String>,
}

impl UrlPattern {
    fn parse(pattern: &str) -> Option<UrlPattern> {
        // `*` is not a URL character everywhere: it stands in as a word no pattern holds.
        let wild =
            (0u32..).map(|n| format!("spinewildcard{n}x")).find(|w| !pattern.to_ascii_lowercase().contains(w))?;
        let mut text = pattern.replace('*', &wild);
        // A wildcard port is no port to a URL parser: parsed as port 0, matching any.
        let port_wild = format!(":{wild}");
        let at = text
            .match_indices(&port_wild)
            .map(|(i, _)| i)
            .find(|i| text[i + port_wild.len()..].chars().next().is_none_or(|c| matches!(c, '/' | '?' | '#')));
        if let Some(i) = at {
            text.replace_range(i..i + port_wild.len(), ":0");
        }
        let parsed = Url::parse(&text).ok()?;
        let unwild = |s: &str| s.replace(&wild, "*");
        let host = unwild(parsed.host_str()?).trim_end_matches('.').to_ascii_lowercase();
        let path = parsed.path();
        let any_path = matches!(path, "" | "/") && parsed.query().is_none() && !pattern.ends_with('/');
        Some(UrlPattern {
            scheme: (parsed.scheme() != wild).then(|| parsed.scheme().to_owned()),
            any_port: at.is_some() || (parsed.port().is_none() && host.contains('*')),
            host,
            port: parsed.port(),
            path: (!any_path).then(|| unwild(&path_and_query(&parsed))),
        })
    }

    fn matches(&self, url: &Url) -> bool {
        let Some(host) = url.host_str() else { return false };
        self.scheme.as_deref().is_none_or(|s| s == url.scheme())
            && glob(&self.host, &host.trim_end_matches('.').to_ascii_lowercase())
            && (self.any_port || self.port == url.port())
            && self.path.as_deref().is_none_or(|p| glob(p, &path_and_query(url)))
    }
}

fn path_and_query(url: &Url) -> String {
    match url.query() {
        Some(q) => format!("{}?{q}", url.path()),
        None => url.path().to_owned(),
    }
}

/// Whether `text` matches `pattern`, where `*` matches any run of characters.
fn glob(pattern: &str, text: &str) -> bool {
    let (p, t): (Vec<char>, Vec<char>) = (pattern.chars().collect(), text.chars().collect());
    let (mut pi, mut ti) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        if pi < p.len() && p[pi] == '*' {
            star = Some((pi, ti));
            pi += 1;
        } else if pi < p.len() && p[pi] == t[ti] {
            pi += 1;
            ti += 1;
        } else if let Some((sp, st)) = star {
            pi = sp + 1;
            ti = st + 1;
            star = Some((sp, st + 1));
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|c| *c == '*')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pattern_matches_scheme_host_port_and_path_part_by_part() {
        let p = "https://hooks.example.com/*";
        assert!(url_matches(p, "https://hooks.example.com/audit"));
        assert!(url_matches(p, "https://HOOKS.example.com:443/a/b?x=1"), "parsed: case and default port");
        assert!(!url_matches(p, "http://hooks.example.com/audit"), "another scheme");
        assert!(!url_matches(p, "https://hooks.example.com:8443/audit"), "another port");
        assert!(!url_matches(p, "https://hooks.example.com.evil.net/audit"), "another host");
        assert!(!url_matches(p, "https://evil.net/hooks.example.com/audit"), "the host is not in the path");
        assert!(url_matches(p, "https://user:pw@hooks.example.com/x"), "the user part is not the host");
        assert!(!url_matches(p, "https://hooks.example.com@evil.net/x"), "nor is a user part that looks like it");
    }

    #[test]
    fn a_wildcard_never_crosses_from_the_host_into_the_path() {
        let p = "https://*.example.com/*";
        assert!(url_matches(p, "https://a.b.example.com/x"));
        assert!(!url_matches(p, "https://evil.net/.example.com/x"));
        assert!(!url_matches(p, "https://example.com.evil.net/x"));
        assert!(url_matches("https://*.example.com", "https://a.example.com:9000/x"), "host wildcard: any port");
    }

    #[test]
    fn ports_paths_and_the_lone_wildcard() {
        assert!(url_matches("http://127.0.0.1:*/hook", "http://127.0.0.1:8080/hook"));
        assert!(!url_matches("http://127.0.0.1:*/hook", "http://127.0.0.1:8080/other"));
        assert!(url_matches("http://127.0.0.1:8080", "http://127.0.0.1:8080/any/path"), "no path: every path");
        assert!(!url_matches("http://127.0.0.1:8080/", "http://127.0.0.1:8080/x"), "a path of `/`: only it");
        assert!(url_matches("*://hooks.example.com/*", "http://hooks.example.com/x"));
        assert!(url_matches("*", "https://anything.example/"));
        assert!(!url_matches("not a url *", "https://x.example/"), "an invalid pattern matches nothing");
        assert!(!url_matches("https://hooks.example.com/*", "not a url"));
    }

    #[test]
    fn glob_stars_match_any_run() {
        assert!(glob("a*c", "abbbc") && glob("*", "") && glob("a**", "a") && !glob("a*c", "abd"));
        assert!(glob("/x/*/y", "/x/1/2/y") && !glob("/x/*/y", "/x/y"));
    }
}
