//! Which addresses the web tools may connect to.
//!
//! Contract (with [`PrivateNetworks::Refuse`], the default):
//! - [`is_public`] is false for loopback, unspecified (`0.0.0.0`, `::`), "this network"
//!   (`0.0.0.0/8`), private (RFC 1918), carrier-grade NAT (`100.64.0.0/10`), link-local
//!   (`169.254.0.0/16`, `fe80::/10`), unique-local (`fc00::/7`), site-local (`fec0::/10`),
//!   multicast, broadcast and reserved (`240.0.0.0/4`) addresses, the IETF protocol block
//!   (`192.0.0.0/24`), benchmarking (`198.18.0.0/15`) and documentation ranges; IPv6 forms that
//!   embed an IPv4 address (IPv4-mapped `::ffff:a.b.c.d`, IPv4-compatible `::a.b.c.d`, NAT64
//!   `64:ff9b::/96`, 6to4 `2002::/16`) are judged by the embedded address.
//! - [`check_host`] refuses a URL whose host is a non-public IP literal, before any connection
//!   (IP literals never reach a resolver).
//! - [`PublicResolver`] is the HTTP client's DNS resolver: it resolves with tokio and keeps
//!   only public addresses; when none remain the lookup fails with a [`PrivateAddress`] error.
//!   The client connects only to the addresses the resolver returned, so a name that resolves
//!   to a public address for a check and to 127.0.0.1 for the connection (DNS rebinding) cannot
//!   slip through: there is one resolution, and it is the one filtered.
//!
//! With [`PrivateNetworks::Allow`] (settings `web.allow_private_networks: true`) nothing is
//! filtered.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use reqwest::dns::{Addrs, Name, Resolve, Resolving};
use thiserror::Error;
use url::{Host, Url};

/// Whether the web tools may reach private networks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PrivateNetworks {
    /// Loopback, private, link-local and similar addresses are refused (the default).
    #[default]
    Refuse,
    /// Every address may be reached (settings `web.allow_private_networks: true`).
    Allow,
}

/// A host that is, or resolves only to, addresses that are not public.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error(
    "{host} {why}; private networks are refused (set `web.allow_private_networks: true` in settings to allow them)"
)]
pub struct PrivateAddress {
    /// The host as written in the URL.
    pub host: String,
    /// What it is or resolves to (`is not a public address`, `resolved only to …`).
    pub why: String,
}

/// Whether an address is on the public internet.
pub fn is_public(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => is_public_v4(v4),
        IpAddr::V6(v6) => is_public_v6(v6),
    }
}

fn is_public_v4(ip: Ipv4Addr) -> bool {
    let [a, b, c, _] = ip.octets();
    let private = ip.is_unspecified()
        || ip.is_loopback()
        || ip.is_private()
        || ip.is_link_local()
        || ip.is_broadcast()
        || ip.is_multicast()
        || ip.is_documentation()
        || a == 0
        || a >= 240
        || (a == 100 && (64..128).contains(&b))
        || (a == 192 && b == 0 && c == 0)
        || (a == 198 && (b == 18 || b == 19));
    !private
}

fn is_public_v6(ip: Ipv6Addr) -> bool {
    if let Some(v4) = embedded_v4(ip) {
        return is_public_v4(v4);
    }
    let first = ip.segments()[0];
    let private = ip.is_unspecified()
        || ip.is_loopback()
        || ip.is_multicast()
        || (first & 0xfe00) == 0xfc00
        || (first & 0xffc0) == 0xfe80
        || (first & 0xffc0) == 0xfec0
        || (first == 0x2001 && ip.segments()[1] == 0x0db8);
    !private
}

/// The IPv4 address an IPv6 address stands for, if it embeds one.
fn embedded_v4(ip: Ipv6Addr) -> Option<Ipv4Addr> {
    let s = ip.segments();
    let tail = || Ipv4Addr::new((s[6] >> 8) as u8, s[6] as u8, (s[7] >> 8) as u8, s[7] as u8);
    if let Some(v4) = ip.to_ipv4_mapped() {
        return Some(v4);
    }
    match s {
        // IPv4-compatible ::a.b.c.d (but not :: and ::1, judged as IPv6).
        [0, 0, 0, 0, 0, 0, _, _] if !ip.is_unspecified() && !ip.is_loopback() => Some(tail()),
        // NAT64 well-known prefix.
        [0x64, 0xff9b, 0, 0, 0, 0, _, _] => Some(tail()),
        // 6to4: 2002:AABB:CCDD::/48 embeds AA.BB.CC.DD.
        [0x2002, hi, lo, ..] => Some(Ipv4Addr::new((hi >> 8) as u8, hi as u8, (lo >> 8) as u8, lo as u8)),
        _ => None,
    }
}

/// Refuses a URL whose host is a non-public IP literal (names are left to the resolver).
pub fn check_host(url: &Url, mode: PrivateNetworks) -> Result<(), PrivateAddress> {
    match mode {
        PrivateNetworks::Allow => Ok(()),
        PrivateNetworks::Refuse => match url.host() {
            Some(Host::Ipv4(ip)) if !is_public_v4(ip) => {
                Err(PrivateAddress { host: ip.to_string(), why: "is not a public address".to_owned() })
            }
            Some(Host::Ipv6(ip)) if !is_public_v6(ip) => {
                Err(PrivateAddress { host: format!("[{ip}]"), why: "is not a public address".to_owned() })
            }
            Some(Host::Ipv4(_) | Host::Ipv6(_) | Host::Domain(_)) | None => Ok(()),
        },
    }
}

/// The HTTP client's resolver: tokio's lookup, non-public addresses dropped.
#[derive(Debug, Clone, Copy, Default)]
pub struct PublicResolver;

impl Resolve for PublicResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let host = name.as_str().to_owned();
        Box::pin(async move {
            let all: Vec<SocketAddr> = tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            let public: Vec<SocketAddr> = all.iter().copied().filter(|a| is_public(a.ip())).collect();
            if public.is_empty() {
                let listed: Vec<String> = all.iter().map(|a| a.ip().to_string()).collect();
                let why = if listed.is_empty() {
                    "resolved to no address".to_owned()
                } else {
                    format!("resolved only to addresses that are not public ({})", listed.join(", "))
                };
                return Err(Box::new(PrivateAddress { host, why }) as Box<dyn std::error::Error + Send + Sync>);
            }
            Ok(Box::new(public.into_iter()) as Addrs)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn public(text: &str) -> bool {
        is_public(text.parse().expect("ip"))
    }

    #[test]
    fn loopback_private_link_local_and_their_ipv6_forms_are_not_public() {
        for ip in [
            "127.0.0.1",
            "127.9.9.9",
            "0.0.0.0",
            "0.1.2.3",
            "10.0.0.1",
            "172.16.0.1",
            "172.31.255.255",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "100.127.255.254",
            "255.255.255.255",
            "224.0.0.1",
            "::",
            "::1",
            "fc00::1",
            "fd12:3456::1",
            "fe80::1",
            "::ffff:127.0.0.1",
            "::ffff:169.254.169.254",
            "::ffff:10.1.2.3",
            "::127.0.0.1",
            "64:ff9b::a9fe:a9fe",
            "2002:7f00:1::",
        ] {
            assert!(!public(ip), "{ip} must not be public");
        }
        for ip in ["1.1.1.1", "93.184.216.34", "100.128.0.1", "172.32.0.1", "2606:4700::1111", "::ffff:8.8.8.8"] {
            assert!(public(ip), "{ip} is public");
        }
    }

    #[test]
    fn ip_literal_hosts_are_checked_before_any_connection() {
        let refuse = |u: &str| check_host(&Url::parse(u).expect("url"), PrivateNetworks::Refuse);
        assert!(refuse("http://127.0.0.1:8080/").is_err());
        assert!(refuse("http://0x7f.1/").is_err(), "the WHATWG parser reads 0x7f.1 as 127.0.0.1");
        assert!(refuse("http://[::ffff:7f00:1]/").is_err());
        assert!(refuse("http://2130706433/").is_err());
        assert!(refuse("http://example.com/").is_ok(), "names are left to the resolver");
        assert!(check_host(&Url::parse("http://127.0.0.1/").expect("url"), PrivateNetworks::Allow).is_ok());
    }
}
