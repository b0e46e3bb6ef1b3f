//! Redaction of mailbox URLs: what errors, logs and `spine worker` print instead of the URL
//! given, so that passwords and tokens never leave the process.
//!
//! Contract: the user part of every comma-separated seed loses its password (`user:***@`) or
//! its token (`***@`); the values of the `token` and `password` query options become `***`;
//! everything else is kept as given. `sqlite:` URLs have no secrets and are kept whole.

/// Removes passwords and tokens from a mailbox URL's text (`nats://u:***@h:4222?token=***`).
pub fn redact(text: &str) -> String {
    let (base, query) = match text.split_once('?') {
        Some((b, q)) => (b, Some(q)),
        None => (text, None),
    };
    let mut out = if base.starts_with("sqlite:") { base.to_owned() } else { redact_userinfo(base) };
    if let Some(query) = query {
        let pairs: Vec<String> = query
            .split('&')
            .map(|pair| match pair.split_once('=') {
                Some((k, _)) if matches!(k, "token" | "password") => format!("{k}=***"),
                _ => pair.to_owned(),
            })
            .collect();
        out.push('?');
        out.push_str(&pairs.join("&"));
    }
    out
}

/// `scheme://user:***@host` / `scheme://***@host` for each comma-separated seed.
fn redact_userinfo(base: &str) -> String {
    let seeds: Vec<String> = base
        .split(',')
        .map(|seed| {
            let (scheme, rest) = match seed.split_once("://") {
                Some((s, r)) => (Some(s), r),
                None => (None, seed),
            };
            let rest = match rest.rsplit_once('@') {
                Some((userinfo, host)) => match userinfo.split_once(':') {
                    Some((user, _)) => format!("{user}:***@{host}"),
                    None => format!("***@{host}"),
                },
                None => rest.to_owned(),
            };
            scheme.map_or(rest.clone(), |s| format!("{s}://{rest}"))
        })
        .collect();
    seeds.join(",")
}
