//! URLs under the permission rules: the `domain:` specifier, and the gate that decides the
//! URLs a network tool reaches on its own (redirect hops).
//!
//! Contract:
//! - [`url_in_domain`]: a URL is in `domain:D` when [`url::Url`] — the WHATWG parser, the same
//!   one the HTTP client uses — parses it, it has **no userinfo** (no user name, no password:
//!   `http://allowed.test@127.0.0.1/` is never in any domain), and its host is `D` or a
//!   subdomain of `D`. Hosts compare in the parser's normal form: lowercase, IDN as punycode
//!   (`domain:bücher.example` and `xn--bcher-kva.example` are the same rule), one trailing dot
//!   ignored, IPv4 in dotted-decimal (`0x7f.1` is `127.0.0.1`), IPv6 in brackets as
//!   compressed by the parser. An IP rule matches that address only (no "subdomains"). The
//!   port never matters. A URL or a rule domain that does not parse matches nothing.
//! - [`PolicyUrlGate`]: decides a URL as the policy would decide a call of the tool with
//!   `{"url": URL}` and no hook suggestion: allow → `Ok`; deny, ask and defer → `Err` with the
//!   reason (nobody can answer an `ask` in the middle of a fetch). Deny and ask rules always
//!   count; a hook's `allow` for the first URL does not carry over to the next.

use serde_json::{Map, Value};
use spine_protocol::permission::{PermissionBehavior, PermissionSuggestion};
use spine_protocol::tool::Effect;
use url::{Host, Url};

use super::policy::{CallFacts, PermissionPolicy};
use crate::tool::UrlGate;

/// Whether `url` is in `domain` (the text after `domain:` in a rule).
pub fn url_in_domain(url: &str, domain: &str) -> bool {
    let Ok(url) = Url::parse(url.trim()) else {
        return false;
    };
    if has_userinfo(&url) {
        return false;
    }
    let (Some(host), Some(rule)) = (url.host(), rule_host(domain)) else {
        return false;
    };
    match (host, rule) {
        (Host::Domain(host), Host::Domain(rule)) => {
            let host = host.strip_suffix('.').unwrap_or(host);
            host == rule || host.strip_suffix(rule.as_str()).is_some_and(|rest| rest.ends_with('.'))
        }
        (Host::Ipv4(host), Host::Ipv4(rule)) => host == rule,
        (Host::Ipv6(host), Host::Ipv6(rule)) => host == rule,
        (Host::Domain(_) | Host::Ipv4(_) | Host::Ipv6(_), _) => false,
    }
}

/// Whether a URL carries a user name or a password.
pub fn has_userinfo(url: &Url) -> bool {
    !url.username().is_empty() || url.password().is_some()
}

/// The rule's domain in the parser's normal form (`*.` prefix and one trailing dot dropped).
fn rule_host(domain: &str) -> Option<Host<String>> {
    let domain = domain.trim();
    let domain = domain.strip_prefix("*.").unwrap_or(domain);
    let domain = domain.strip_suffix('.').unwrap_or(domain);
    if domain.is_empty() {
        return None;
    }
    // Parse it as the host of a URL, so IDN, case and IP forms normalise exactly as hosts do.
    let parsed = Url::parse(&format!("http://{domain}/")).ok()?;
    if has_userinfo(&parsed) || parsed.port().is_some() || parsed.path() != "/" {
        return None;
    }
    parsed.host().map(|h| h.to_owned())
}

/// A [`UrlGate`] backed by the run's permission policy.
#[derive(Debug, Clone)]
pub struct PolicyUrlGate {
    policy: PermissionPolicy,
    tool_name: String,
    effect: Effect,
}

impl PolicyUrlGate {
    /// A gate deciding URLs as calls of `tool_name` (with `effect`) under `policy`.
    pub fn new(policy: PermissionPolicy, tool_name: impl Into<String>, effect: Effect) -> Self {
        PolicyUrlGate { policy, tool_name: tool_name.into(), effect }
    }
}

impl UrlGate for PolicyUrlGate {
    fn check(&self, url: &Url) -> Result<(), String> {
        let mut args = Map::new();
        args.insert("url".to_owned(), Value::String(url.as_str().to_owned()));
        let facts = CallFacts::new(&self.tool_name, self.effect, &args);
        let decision = self.policy.decide(facts, &PermissionSuggestion::Passthrough, None);
        match decision.behavior {
            PermissionBehavior::Allow => Ok(()),
            PermissionBehavior::Deny => Err(decision.reason),
            PermissionBehavior::Ask | PermissionBehavior::Defer => Err(format!(
                "{} would need approval ({}), which cannot be given in the middle of a fetch",
                self.tool_name, decision.reason
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    use serde_json::json;
    use spine_protocol::permission::PermissionMode;

    use super::*;
    use crate::permission::{PermissionRule, PermissionRules, RuleUse};

    fn matches(rule: &str, url: &str, usage: RuleUse) -> bool {
        let input = json!({"url": url});
        let input = input.as_object().cloned().unwrap_or_default();
        PermissionRule::parse(rule).expect("rule").matches("WebFetch", &input, Path::new("/proj"), usage)
    }

    fn allowed(url: &str) -> bool {
        matches("WebFetch(domain:allowed.test)", url, RuleUse::Allow)
    }

    #[test]
    fn domain_rule_matches_the_host_and_its_subdomains_as_the_http_client_parses_it() {
        assert!(allowed("https://allowed.test/x"));
        assert!(allowed("http://api.allowed.test:8080/x?q=1"));
        assert!(!allowed("https://notallowed.test/"));
        assert!(!allowed("https://evil.test/allowed.test"));
        assert!(!allowed("https://allowed.test.evil.test/"));
        assert!(!allowed("not a url"));
    }

    #[test]
    fn domain_rule_never_matches_a_url_with_userinfo() {
        assert!(!allowed("http://allowed.test@127.0.0.1:8080/"));
        assert!(!allowed("http://user:pw@allowed.test/"));
        assert!(!allowed("http://user@allowed.test/"));
        assert!(!allowed("http://:pw@allowed.test/"));
        // A deny rule does not "see" it either: the tool refuses such URLs itself.
        assert!(!matches("WebFetch(domain:allowed.test)", "http://u@allowed.test/", RuleUse::Restrict));
    }

    #[test]
    fn domain_rule_is_not_fooled_by_a_backslash_before_the_at_sign() {
        // WHATWG: `\` ends the authority of an http URL, so the host is 127.0.0.1.
        assert!(!allowed("http://127.0.0.1:8080\\@allowed.test/"));
        assert!(matches("WebFetch(domain:127.0.0.1)", "http://127.0.0.1:8080\\@allowed.test/", RuleUse::Restrict));
    }

    #[test]
    fn domain_rule_ignores_ports_case_and_one_trailing_dot() {
        assert!(allowed("http://ALLOWED.Test:1/"));
        assert!(allowed("http://allowed.test./"));
        assert!(matches("WebFetch(domain:Allowed.TEST.)", "https://www.allowed.test/", RuleUse::Allow));
        assert!(matches("WebFetch(domain:*.allowed.test)", "https://www.allowed.test/", RuleUse::Allow));
        assert!(!matches("WebFetch(domain:allowed.test:8080)", "https://allowed.test:8080/", RuleUse::Allow));
    }

    #[test]
    fn domain_rule_compares_idn_in_punycode_and_ips_as_the_parser_writes_them() {
        assert!(matches("WebFetch(domain:bücher.example)", "https://xn--bcher-kva.example/", RuleUse::Allow));
        assert!(matches("WebFetch(domain:xn--bcher-kva.example)", "https://www.BÜCHER.example/", RuleUse::Allow));
        assert!(matches("WebFetch(domain:127.0.0.1)", "http://0x7f.1/", RuleUse::Restrict));
        assert!(matches("WebFetch(domain:127.0.0.1)", "http://127.0.0.1:9/", RuleUse::Restrict));
        assert!(!matches("WebFetch(domain:0.0.1)", "http://127.0.0.1/", RuleUse::Restrict), "no IP suffixes");
        assert!(matches("WebFetch(domain:[::1])", "http://[0:0::1]:80/", RuleUse::Restrict));
    }

    fn gate(allow: &[&str], ask: &[&str], deny: &[&str], mode: PermissionMode) -> PolicyUrlGate {
        let parse = |v: &[&str]| v.iter().map(|r| PermissionRule::parse(r).expect("rule")).collect();
        let rules = PermissionRules { allow: parse(allow), ask: parse(ask), deny: parse(deny) };
        PolicyUrlGate::new(PermissionPolicy::new(rules, mode, PathBuf::from("/proj")), "WebFetch", Effect::Network)
    }

    fn url(text: &str) -> Url {
        Url::parse(text).expect("url")
    }

    #[test]
    fn redirect_gate_allows_what_the_policy_allows_and_refuses_deny_and_ask() {
        let g = gate(&["WebFetch(domain:a.test)"], &[], &[], PermissionMode::Default);
        assert_eq!(g.check(&url("https://www.a.test/x")), Ok(()));
        let refused = g.check(&url("https://b.test/")).expect_err("ask is refused");
        assert!(refused.contains("cannot be given in the middle of a fetch"), "{refused}");
        let bypass =
            gate(&[], &["WebFetch(domain:ask.test)"], &["WebFetch(domain:no.test)"], PermissionMode::BypassPermissions);
        assert_eq!(bypass.check(&url("https://b.test/")), Ok(()));
        assert!(bypass.check(&url("https://no.test/")).expect_err("deny").contains("denied by rule"));
        assert!(bypass.check(&url("https://ask.test/")).is_err(), "ask rules count even in bypass mode");
    }
}
