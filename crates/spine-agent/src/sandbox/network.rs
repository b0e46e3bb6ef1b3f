//! The network of a session's sandbox: off, the whole network, or spine's filtering proxy
//! (`plan`, then `start_proxy`).
//!
//! Contract:
//! - `sandbox.network.allowedDomains` containing `"*"`: the whole network ([`Network::Full`]).
//! - Otherwise the allowed domains are `allowedDomains` and the `WebFetch(domain:…)` allow
//!   rules (settings and `--allowedTools`); the denied ones `deniedDomains` and the
//!   `WebFetch(domain:…)` deny rules (settings and `--disallowedTools`); a deny wins. When a
//!   domain is allowed, or when a person can be asked (an interactive session), commands reach
//!   the network only through spine's filtering proxy (`spine_tools::proxy`): it listens on a
//!   unix socket in a private directory (mode 0700) made for the session, the sandbox bridges
//!   `127.0.0.1:3128` in the command's network namespace to it, and the command gets
//!   `HTTP_PROXY`/`HTTPS_PROXY`/`ALL_PROXY`. The proxy resolves names outside the sandbox and
//!   refuses private addresses as WebFetch does. Otherwise the network is off.
//! - A destination no pattern lists is put to the person as a `WebFetch` of
//!   `https://HOST:PORT/` (so "always" remembers `WebFetch(domain:HOST)`, which the next
//!   session's proxy allows); each host is asked once per session (the answer is kept, and
//!   connections made while the question waits share it). Nobody to ask: refused.
//! - Private networks follow WebFetch's rule: refused unless the settings'
//!   `web.allow_private_networks` is true (a registry on this machine or the LAN); a name
//!   must still be allowed.
//! - `httpProxyPort`: the user's own proxy on `127.0.0.1:PORT` is the upstream instead of
//!   spine's (spine then filters nothing: one line says so). `socksProxyPort` is not applied
//!   (one line): the sandbox forwards one port, which speaks HTTP and SOCKS5 alike.
//! - A domain pattern that is not a host is a configuration error naming the key. A proxy that
//!   cannot start leaves the network off, said in one line: never open in its place.

use std::collections::HashMap;
use std::net::{Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};

use futures_util::FutureExt;
use futures_util::future::{BoxFuture, Shared};
use serde_json::{Map, Value};
use spine_core::permission::{Approval, ApprovalRequest, Approver as PermissionApprover, PermissionRule};
use spine_protocol::permission::DecisionSource;
use spine_sandbox::policy::DEFAULT_PROXY_PORT;
use spine_sandbox::{Network, ProxyUpstream};
use spine_settings::Settings;
use spine_tools::proxy::{Answer, Approver, DomainGate, DomainPattern, Host, PrivateNetworks, Unlisted};
use spine_tools::sandbox::SessionProxy;

use super::SandboxSetupError;
use crate::CommandLine;

/// What the sandbox's network will be, before anything is started.
pub(super) enum Plan {
    /// No network.
    Off,
    /// The whole network.
    Full,
    /// The user's own proxy on the host's loopback.
    UserProxy(u16),
    /// spine's proxy with this gate; `true`: allowed names may resolve to private addresses.
    Filtered(DomainGate, bool),
}

/// The plan of `settings` (see the module contract); `ask` is the person's approver in an
/// interactive session.
pub(super) fn plan(
    settings: &Settings,
    command_line: &CommandLine,
    ask: Option<Arc<dyn PermissionApprover>>,
) -> Result<(Plan, Vec<String>), SandboxSetupError> {
    let config = &settings.sandbox;
    let mut lines = Vec::new();
    if config.socks_proxy_port.is_some() {
        lines.push(
            "spine: sandbox: network.socksProxyPort is not applied: the sandbox forwards one port, which speaks \
             HTTP and SOCKS5 alike (set httpProxyPort for your own proxy)"
                .to_owned(),
        );
    }
    if config.allowed_domains.iter().any(|d| d.trim() == "*") {
        return Ok((Plan::Full, lines));
    }
    if let Some(port) = config.http_proxy_port {
        lines.push(format!(
            "spine: sandbox: commands reach the network only through your proxy on 127.0.0.1:{port} \
             (network.httpProxyPort); spine does not filter their domains"
        ));
        return Ok((Plan::UserProxy(port), lines));
    }
    let patterns = |key: &str, entries: &[String]| {
        entries
            .iter()
            .enumerate()
            .map(|(i, text)| {
                DomainPattern::parse(text)
                    .map_err(|source| SandboxSetupError::Domain { at: format!("sandbox.network.{key}[{i}]"), source })
            })
            .collect::<Result<Vec<_>, _>>()
    };
    let mut allow = patterns("allowedDomains", &config.allowed_domains)?;
    let mut deny = patterns("deniedDomains", &config.denied_domains)?;
    let rules = |written: Vec<&str>| -> Vec<DomainPattern> {
        written
            .into_iter()
            .filter_map(|text| PermissionRule::parse(text).ok())
            .filter_map(|rule| DomainPattern::webfetch_rule(&rule))
            .collect()
    };
    allow.extend(rules(
        settings
            .permissions
            .allow
            .iter()
            .map(|e| e.rule.as_str())
            .chain(command_line.allow.iter().map(String::as_str))
            .collect(),
    ));
    deny.extend(rules(
        settings
            .permissions
            .deny
            .iter()
            .map(|e| e.rule.as_str())
            .chain(command_line.deny.iter().map(String::as_str))
            .collect(),
    ));
    if allow.is_empty() && ask.is_none() {
        return Ok((Plan::Off, lines));
    }
    let unlisted = match ask {
        Some(approver) => Unlisted::Ask(Arc::new(AskPerson { approver, answers: Mutex::new(HashMap::new()) })),
        None => Unlisted::Deny,
    };
    let private = crate::web_options(settings).private_networks == PrivateNetworks::Allow;
    Ok((Plan::Filtered(DomainGate::new(allow, deny, unlisted), private), lines))
}

/// Starts spine's proxy of `gate` in `dir` (a private directory it then owns); the network
/// the sandbox gives commands to reach it.
pub(super) fn start_proxy(gate: DomainGate, private: bool, dir: PathBuf) -> Result<(SessionProxy, Network), String> {
    let networks = if private { PrivateNetworks::Allow } else { PrivateNetworks::Refuse };
    let proxy = SessionProxy::start(Arc::new(gate), networks, dir).map_err(|e| e.to_string())?;
    let network = Network::Proxy { http: ProxyUpstream::Unix(proxy.socket().to_path_buf()), port: DEFAULT_PROXY_PORT };
    Ok((proxy, network))
}

/// The network of the user's own proxy on the host's loopback.
pub(super) fn user_proxy(port: u16) -> Network {
    Network::Proxy { http: ProxyUpstream::Tcp(SocketAddr::from((Ipv4Addr::LOCALHOST, port))), port: DEFAULT_PROXY_PORT }
}

/// Puts an unlisted destination to the person, once per host (see the module contract).
struct AskPerson {
    approver: Arc<dyn PermissionApprover>,
    answers: Mutex<HashMap<String, Shared<BoxFuture<'static, Answer>>>>,
}

impl Approver for AskPerson {
    fn ask(&self, host: &Host<String>, port: u16) -> BoxFuture<'static, Answer> {
        let key = host.to_string();
        let mut answers = self.answers.lock().unwrap_or_else(PoisonError::into_inner);
        let answer = answers
            .entry(key.clone())
            .or_insert_with(|| {
                let approver = Arc::clone(&self.approver);
                async move { ask_once(approver.as_ref(), &key, port).await }.boxed().shared()
            })
            .clone();
        answer.boxed()
    }
}

async fn ask_once(approver: &dyn PermissionApprover, host: &str, port: u16) -> Answer {
    let mut args = Map::new();
    args.insert("url".to_owned(), Value::String(format!("https://{host}:{port}/")));
    let reason = format!(
        "a sandboxed command connects to {host}:{port}, which no allowed domain covers \
         (sandbox.network.allowedDomains, WebFetch(domain:…) rules); the answer holds for this session"
    );
    let request = ApprovalRequest {
        tool_name: "WebFetch",
        tool_use_id: "sandbox-network",
        args: &args,
        reason: &reason,
        asked_by: &DecisionSource::Default,
        suggestions: &[],
        command_argument: None,
    };
    match approver.approve(&request).await {
        Approval::Allow | Approval::AllowChanged { .. } => Answer::Allow,
        Approval::Deny { reason } => Answer::Deny(reason),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use async_trait::async_trait;

    use super::*;

    /// Answers `allow` for hosts in its list, records the questions, and waits for `gate`
    /// before answering.
    struct Person {
        allow: Vec<&'static str>,
        asked: Mutex<Vec<(String, String)>>,
        count: AtomicUsize,
        gate: tokio::sync::Notify,
    }

    #[async_trait]
    impl PermissionApprover for Person {
        async fn approve(&self, request: &ApprovalRequest<'_>) -> Approval {
            self.count.fetch_add(1, Ordering::SeqCst);
            let url = request.args.get("url").and_then(Value::as_str).unwrap_or_default().to_owned();
            self.asked.lock().expect("lock").push((request.tool_name.to_owned(), url.clone()));
            self.gate.notified().await;
            match self.allow.iter().any(|h| url.contains(h)) {
                true => Approval::Allow,
                false => Approval::Deny { reason: "not now".to_owned() },
            }
        }
    }

    #[tokio::test]
    async fn an_unlisted_host_is_asked_once_as_a_webfetch_and_waiting_connections_share_the_answer() {
        let person = Arc::new(Person {
            allow: vec!["registry.test"],
            asked: Mutex::new(Vec::new()),
            count: AtomicUsize::new(0),
            gate: tokio::sync::Notify::new(),
        });
        let ask = AskPerson { approver: Arc::clone(&person) as Arc<dyn PermissionApprover>, answers: Mutex::default() };
        let host = Host::parse("registry.test").expect("host");
        let (first, second) = (ask.ask(&host, 443), ask.ask(&host, 443));
        let answers = tokio::spawn(async move { (first.await, second.await) });
        while person.count.load(Ordering::SeqCst) == 0 {
            tokio::task::yield_now().await;
        }
        person.gate.notify_one();
        assert_eq!(answers.await.expect("join"), (Answer::Allow, Answer::Allow));
        assert_eq!(ask.ask(&host, 8443).await, Answer::Allow, "the answer is kept for the session");
        assert_eq!(person.count.load(Ordering::SeqCst), 1, "asked once");
        let asked = person.asked.lock().expect("lock").clone();
        assert_eq!(asked, vec![("WebFetch".to_owned(), "https://registry.test:443/".to_owned())]);
    }

    #[tokio::test]
    async fn a_declined_host_is_refused_with_the_persons_words_and_not_asked_again() {
        let person = Arc::new(Person {
            allow: Vec::new(),
            asked: Mutex::new(Vec::new()),
            count: AtomicUsize::new(0),
            gate: tokio::sync::Notify::new(),
        });
        person.gate.notify_one();
        let ask = AskPerson { approver: Arc::clone(&person) as Arc<dyn PermissionApprover>, answers: Mutex::default() };
        let host = Host::parse("evil.test").expect("host");
        assert_eq!(ask.ask(&host, 443).await, Answer::Deny("not now".to_owned()));
        assert_eq!(ask.ask(&host, 443).await, Answer::Deny("not now".to_owned()));
        assert_eq!(person.count.load(Ordering::SeqCst), 1);
    }

    fn settings(json: &str) -> Settings {
        let layer = spine_settings::SettingsLayer {
            origin: spine_settings::Origin::Cli { index: 1, path: None },
            value: serde_json::from_str(json).expect("json"),
        };
        Settings::from_layers(vec![layer]).expect("settings")
    }

    fn planned(json: &str, ask: bool) -> Result<Plan, SandboxSetupError> {
        let person: Arc<dyn PermissionApprover> = Arc::new(spine_core::permission::DenyApprover);
        plan(&settings(json), &CommandLine::default(), ask.then_some(person)).map(|(plan, _)| plan)
    }

    #[test]
    fn the_network_is_off_unless_a_domain_is_allowed_or_a_person_can_be_asked() {
        assert!(matches!(planned("{}", false), Ok(Plan::Off)));
        assert!(matches!(planned("{}", true), Ok(Plan::Filtered(_, false))));
        let listed = r#"{"sandbox": {"network": {"allowedDomains": ["pypi.org"]}}}"#;
        assert!(matches!(planned(listed, false), Ok(Plan::Filtered(_, false))));
        let rule = r#"{"permissions": {"allow": ["WebFetch(domain:pypi.org)"]}}"#;
        assert!(matches!(planned(rule, false), Ok(Plan::Filtered(_, false))));
        let everything = r#"{"sandbox": {"network": {"allowedDomains": ["pypi.org", "*"]}}}"#;
        assert!(matches!(planned(everything, false), Ok(Plan::Full)));
        let own = r#"{"sandbox": {"network": {"allowedDomains": ["pypi.org"], "httpProxyPort": 8080}}}"#;
        assert!(matches!(planned(own, false), Ok(Plan::UserProxy(8080))));
        let private =
            r#"{"sandbox": {"network": {"allowedDomains": ["localhost"]}}, "web": {"allow_private_networks": true}}"#;
        assert!(matches!(planned(private, false), Ok(Plan::Filtered(_, true))));
    }

    #[tokio::test]
    async fn denied_domains_and_webfetch_deny_rules_win_over_allowed_ones() {
        let json = r#"{"sandbox": {"network": {"allowedDomains": ["*.example.com"], "deniedDomains": ["bad.example.com"]}},
                       "permissions": {"deny": ["WebFetch(domain:worse.example.com)"]}}"#;
        let Ok(Plan::Filtered(gate, _)) = planned(json, false) else { panic!("a filtered plan") };
        use spine_tools::proxy::{Decision, Gate};
        for (host, allowed) in [("ok.example.com", true), ("bad.example.com", false), ("worse.example.com", false)] {
            let decision = gate.decide(&Host::parse(host).expect("host"), 443).await;
            assert_eq!(matches!(decision, Decision::Allow), allowed, "{host}: {decision:?}");
        }
    }

    #[test]
    fn a_domain_pattern_that_is_not_a_host_names_its_key() {
        let json = r#"{"sandbox": {"network": {"allowedDomains": ["pypi.org", "https://x.test/"]}}}"#;
        let error = planned(json, false).err().expect("an error").to_string();
        assert!(error.starts_with("sandbox.network.allowedDomains[1]: "), "{error}");
    }
}
