//! The standard gate: allowed and denied domains, as Claude Code's sandbox reads them.
//!
//! Contract:
//! - [`DomainPattern::parse`] reads a `sandbox.network.allowedDomains` entry: `example.com`
//!   matches that host exactly; `*.example.com` matches its subdomains at any depth
//!   (`api.example.com`, `a.b.example.com`) but **not** `example.com` itself; an IP address
//!   matches that address only. `*` alone, `*.` with an IP, and anything that is not a bare
//!   host (port, path, user name) is a [`PatternError`].
//! - [`DomainPattern::webfetch_rule`] reads a `WebFetch(domain:D)` permission rule, which
//!   keeps the permission rules' meaning: `D` and its subdomains.
//! - Matching reuses the permission rules' host comparison,
//!   [`spine_core::permission::url_in_domain`]: hosts compare in the WHATWG parser's normal
//!   form (lowercase, IDN as punycode, one trailing dot ignored, IPv4 in dotted decimal, IPv6
//!   compressed). "Exactly `D`" is "in `D`, and `D` is in the host": containment both ways.
//! - [`DomainGate::decide`]: a denied pattern wins over everything; then an allowed pattern
//!   (including those added at run time with [`DomainGate::allow`]) allows; anything else is
//!   [`Unlisted`]: refused as not allowed, or put to the caller's [`Approver`].

use std::sync::{Arc, RwLock};

use futures_util::future::BoxFuture;
use spine_core::permission::{PermissionRule, PermissionRules, url_in_domain};
use thiserror::Error;
use url::Host;

use super::gate::{Approver, Decision, DenyReason, Gate};

/// A domain pattern that does not parse.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("invalid allowed domain `{pattern}`: {why}")]
pub struct PatternError {
    /// The pattern as written.
    pub pattern: String,
    /// Why.
    pub why: &'static str,
}

/// Which hosts a pattern covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Reach {
    /// The host itself (`example.com`).
    Exact,
    /// Its subdomains, not itself (`*.example.com`).
    Subdomains,
    /// Itself and its subdomains (`WebFetch(domain:example.com)`).
    Within,
}

/// One allowed or denied domain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DomainPattern {
    text: String,
    base: String,
    reach: Reach,
}

impl DomainPattern {
    /// Parses a `sandbox.network.allowedDomains` entry (`example.com`, `*.example.com`).
    pub fn parse(text: &str) -> Result<Self, PatternError> {
        let trimmed = text.trim();
        let (base, reach) = match trimmed.strip_prefix("*.") {
            Some(rest) => (rest, Reach::Subdomains),
            None => (trimmed, Reach::Exact),
        };
        let err = |why| PatternError { pattern: text.to_owned(), why };
        if base.is_empty() || base.contains('*') {
            return Err(err("only a leading `*.` wildcard is supported, and it needs a domain after it"));
        }
        let host = checked_host(base).ok_or_else(|| err("not a bare host name or IP address"))?;
        if reach == Reach::Subdomains && !matches!(host, Host::Domain(_)) {
            return Err(err("an IP address has no subdomains"));
        }
        Ok(DomainPattern { text: trimmed.to_owned(), base: base.to_owned(), reach })
    }

    /// The domain of a `WebFetch(domain:D)` rule (D and its subdomains), `None` for any other
    /// rule (other tools, other specifiers, a domain that is not a bare host).
    pub fn webfetch_rule(rule: &PermissionRule) -> Option<Self> {
        let domain = rule.as_str().strip_prefix("WebFetch(")?.strip_suffix(')')?.trim().strip_prefix("domain:")?;
        let base = domain.trim();
        checked_host(base)?;
        Some(DomainPattern { text: rule.as_str().to_owned(), base: base.to_owned(), reach: Reach::Within })
    }

    /// The pattern as written (`*.example.com`, `WebFetch(domain:example.com)`).
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// Whether the pattern covers `host`.
    pub fn matches(&self, host: &Host<String>) -> bool {
        let url = host_url(host);
        let within = url_in_domain(&url, &self.base);
        match self.reach {
            Reach::Within => within,
            Reach::Exact => within && url_in_domain(&host_url_text(&self.base), &host.to_string()),
            Reach::Subdomains => within && !url_in_domain(&host_url_text(&self.base), &host.to_string()),
        }
    }
}

/// `http://HOST/` for a parsed host (its display is the parser's normal form, IPv6 bracketed).
fn host_url(host: &Host<String>) -> String {
    format!("http://{host}/")
}

fn host_url_text(base: &str) -> String {
    format!("http://{base}/")
}

/// The host a pattern's base names, when it is a bare host the permission rules accept (it
/// must be "in itself": no port, path or user name, and it parses).
fn checked_host(base: &str) -> Option<Host<String>> {
    let host = Host::parse(base).ok()?;
    url_in_domain(&host_url_text(base), base).then_some(host)
}

/// What [`DomainGate`] does with a domain no pattern lists.
#[derive(Clone)]
pub enum Unlisted {
    /// Refuse it as not allowed (the default; no one to ask).
    Deny,
    /// Put it to this approver.
    Ask(Arc<dyn Approver>),
}

impl std::fmt::Debug for Unlisted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Unlisted::Deny => "Deny",
            Unlisted::Ask(_) => "Ask(..)",
        })
    }
}

/// The standard [`Gate`]: allowed and denied domain patterns.
#[derive(Debug)]
pub struct DomainGate {
    allow: RwLock<Vec<DomainPattern>>,
    deny: Vec<DomainPattern>,
    unlisted: Unlisted,
}

impl DomainGate {
    /// A gate allowing `allow`, refusing `deny` (which wins), and treating other domains as
    /// `unlisted` says.
    pub fn new(allow: Vec<DomainPattern>, deny: Vec<DomainPattern>, unlisted: Unlisted) -> Self {
        DomainGate { allow: RwLock::new(allow), deny, unlisted }
    }

    /// The gate of a run's settings: `sandbox.network.allowedDomains` entries plus the
    /// `WebFetch(domain:…)` allow rules allow, `WebFetch(domain:…)` deny rules refuse.
    pub fn from_settings(
        allowed_domains: &[String],
        rules: &PermissionRules,
        unlisted: Unlisted,
    ) -> Result<Self, PatternError> {
        let mut allow = allowed_domains.iter().map(|d| DomainPattern::parse(d)).collect::<Result<Vec<_>, _>>()?;
        allow.extend(rules.allow.iter().filter_map(DomainPattern::webfetch_rule));
        let deny = rules.deny.iter().filter_map(DomainPattern::webfetch_rule).collect();
        Ok(DomainGate::new(allow, deny, unlisted))
    }

    /// Allows one more pattern from now on (an approver's "always allow").
    pub fn allow(&self, pattern: DomainPattern) {
        match self.allow.write() {
            Ok(mut allow) => allow.push(pattern),
            Err(poisoned) => poisoned.into_inner().push(pattern),
        }
    }

    /// The decision without asking: `Ok(true)` allowed, `Ok(false)` unlisted, `Err` denied.
    fn listed(&self, host: &Host<String>) -> Result<bool, DenyReason> {
        if let Some(pattern) = self.deny.iter().find(|p| p.matches(host)) {
            return Err(DenyReason::DeniedDomain { host: host.to_string(), pattern: pattern.as_str().to_owned() });
        }
        let allow = match self.allow.read() {
            Ok(allow) => allow,
            Err(poisoned) => poisoned.into_inner(),
        };
        Ok(allow.iter().any(|p| p.matches(host)))
    }
}

impl Gate for DomainGate {
    fn decide<'a>(&'a self, host: &'a Host<String>, port: u16) -> BoxFuture<'a, Decision> {
        let decision = match (self.listed(host), &self.unlisted) {
            (Err(reason), _) => Decision::Deny(reason),
            (Ok(true), _) => Decision::Allow,
            (Ok(false), Unlisted::Deny) => Decision::Deny(DenyReason::NotAllowed { host: host.to_string() }),
            (Ok(false), Unlisted::Ask(approver)) => Decision::Ask(approver.ask(host, port)),
        };
        Box::pin(std::future::ready(decision))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn host(text: &str) -> Host<String> {
        Host::parse(text).expect("host")
    }

    fn covers(pattern: &str, text: &str) -> bool {
        DomainPattern::parse(pattern).expect("pattern").matches(&host(text))
    }

    #[test]
    fn exact_patterns_match_the_host_only_in_normal_form() {
        assert!(covers("example.com", "example.com"));
        assert!(covers("Example.COM.", "example.com"));
        assert!(covers("example.com", "EXAMPLE.com."));
        assert!(!covers("example.com", "www.example.com"));
        assert!(!covers("example.com", "notexample.com"));
        assert!(covers("bücher.example", "xn--bcher-kva.example"));
        assert!(covers("127.0.0.1", "0x7f.1"));
        assert!(covers("[::1]", "[0:0::1]"));
    }

    #[test]
    fn wildcard_patterns_match_subdomains_at_any_depth_but_not_the_domain() {
        assert!(covers("*.example.com", "api.example.com"));
        assert!(covers("*.example.com", "a.b.example.com"));
        assert!(!covers("*.example.com", "example.com"));
        assert!(!covers("*.example.com", "badexample.com"));
        assert!(!covers("*.example.com", "example.com.evil.test"));
    }

    #[test]
    fn patterns_that_are_not_bare_hosts_are_refused() {
        for bad in ["", "*", "*.", "a.*.com", "example.com:443", "example.com/x", "u@example.com", "*.127.0.0.1"] {
            assert!(DomainPattern::parse(bad).is_err(), "{bad:?} must not parse");
        }
    }

    #[test]
    fn webfetch_domain_rules_cover_the_domain_and_its_subdomains() {
        let rule = PermissionRule::parse("WebFetch(domain:example.com)").expect("rule");
        let pattern = DomainPattern::webfetch_rule(&rule).expect("a domain rule");
        assert!(pattern.matches(&host("example.com")));
        assert!(pattern.matches(&host("api.example.com")));
        assert!(!pattern.matches(&host("example.org")));
        for other in ["WebFetch", "Bash(curl:*)", "WebFetch(domain:a.com:80)", "WebSearch(domain:a.com)"] {
            let rule = PermissionRule::parse(other).expect("rule");
            assert!(DomainPattern::webfetch_rule(&rule).is_none(), "{other}");
        }
    }
}
