//! Mailbox URL parsing of the clustered NATS settings: seeds, stream settings, credentials and
//! TLS, each error naming its option, and secrets never shown.

use std::path::PathBuf;
use std::time::Duration;

use spine_worker::MailboxUrl;
use spine_worker::mailbox::nats::NatsOptions;
use spine_worker::mailbox::nats::settings::{Auth, Secret, Storage, StreamSettings};

fn nats(text: &str) -> (String, NatsOptions) {
    match text.parse::<MailboxUrl>() {
        Ok(MailboxUrl::Nats { url, options }) => (url, options),
        other => panic!("{text}: {other:?}"),
    }
}

/// The error line of a URL that must not parse.
fn error(text: &str) -> String {
    match text.parse::<MailboxUrl>() {
        Err(e) => e.to_string(),
        Ok(url) => panic!("{text} parsed: {url:?}"),
    }
}

#[test]
fn several_seeds_are_kept_in_order_with_their_schemes() {
    let (url, options) = nats("nats://a:4222,b:4223,nats://c?prefix=fleet");
    assert_eq!(url, "nats://a:4222,nats://b:4223,nats://c");
    assert_eq!(options.prefix, "fleet");
    assert!(!options.connection.tls.required);
    let (url, options) = nats("tls://a:4222,b:4222");
    assert_eq!(url, "tls://a:4222,tls://b:4222");
    assert!(options.connection.tls.required, "the tls:// scheme requires TLS");
}

#[test]
fn seeds_must_be_host_and_port() {
    assert!(error("nats://a:4222,,b:4222").contains("seed 2 has no host"));
    assert!(error("nats://a:http").contains("invalid port"));
    assert!(error("nats://a:4222,ws://b:80").contains("seed 2 has scheme `ws`"));
    assert!(error("redis://a").contains("expected sqlite:PATH or nats://"));
}

#[test]
fn stream_settings_default_to_one_file_replica_kept_forever() {
    let (_, options) = nats("nats://a:4222");
    assert_eq!(options.stream, StreamSettings::default());
    assert_eq!(options.stream.replicas, 1);
    assert_eq!(options.stream.storage, Storage::File);
    assert_eq!(options.stream.max_age, None);
}

#[test]
fn each_stream_setting_is_read() {
    let (_, options) = nats("nats://a:4222?replicas=3&storage=memory&max_age=7d&tags=ssd,eu-west&cluster=east");
    assert_eq!(options.stream.replicas, 3);
    assert_eq!(options.stream.storage, Storage::Memory);
    assert_eq!(options.stream.max_age, Some(Duration::from_secs(7 * 86_400)));
    assert_eq!(options.stream.tags, ["ssd", "eu-west"]);
    assert_eq!(options.stream.cluster.as_deref(), Some("east"));
    for (age, expected) in [("90s", 90), ("30m", 1800), ("12h", 43_200)] {
        let (_, options) = nats(&format!("nats://a?max_age={age}"));
        assert_eq!(options.stream.max_age, Some(Duration::from_secs(expected)), "{age}");
    }
}

#[test]
fn each_invalid_stream_setting_is_an_error_naming_the_option() {
    for (query, names) in [
        ("replicas=0", "replicas must be 1 to 5"),
        ("replicas=6", "replicas must be 1 to 5"),
        ("replicas=three", "replicas must be 1 to 5"),
        ("storage=disk", "storage must be `file` or `memory`"),
        ("max_age=7", "max_age must be a duration"),
        ("max_age=0s", "max_age must be a duration"),
        ("max_age=1w", "max_age must be a duration"),
        ("tags=a,,b", "tags must be comma-separated"),
        ("cluster=", "cluster needs a cluster name"),
        ("tls=maybe", "tls must be `true` or `false`"),
        ("creds=", "creds needs a file path"),
        ("tls_cert=/c.pem", "tls_cert and tls_key go together"),
        ("tls_key=/k.pem", "tls_cert and tls_key go together"),
        ("bogus=1", "unknown option `bogus`"),
    ] {
        let line = error(&format!("nats://a:4222?{query}"));
        assert!(line.contains(names), "{query}: {line}");
    }
}

#[test]
fn nats_settings_are_refused_on_sqlite_mailboxes() {
    for query in ["replicas=3", "storage=memory", "creds=/x.creds", "tls=true"] {
        let line = error(&format!("sqlite:./m.db?{query}"));
        let key = query.split('=').next().unwrap_or_default();
        assert!(line.contains(&format!("`{key}` applies to nats:// mailboxes only")), "{line}");
    }
}

#[test]
fn credentials_come_from_the_user_part_or_the_query_and_exclude_each_other() {
    let (url, options) = nats("nats://alice:s3cret@a:4222,b:4222");
    assert_eq!(url, "nats://a:4222,nats://b:4222", "the seeds keep no credentials");
    assert_eq!(options.connection.auth, Auth::UserPassword { user: "alice".into(), password: Secret::new("s3cret") });
    let (_, options) = nats("nats://tok123@a:4222");
    assert_eq!(options.connection.auth, Auth::Token(Secret::new("tok123")));
    let (_, options) = nats("nats://a?token=tok123");
    assert_eq!(options.connection.auth, Auth::Token(Secret::new("tok123")));
    let (_, options) = nats("nats://a?creds=/etc/spine/worker.creds");
    assert_eq!(options.connection.auth, Auth::Creds(PathBuf::from("/etc/spine/worker.creds")));
    let (_, options) = nats("nats://a?nkey=/etc/spine/worker.nk");
    assert_eq!(options.connection.auth, Auth::NkeySeedFile(PathBuf::from("/etc/spine/worker.nk")));
    assert!(error("nats://a?creds=/x.creds&nkey=/y.nk").contains("exclude each other"));
    assert!(error("nats://u:p@a?creds=/x.creds").contains("give them once"));
    assert!(error("nats://u:p@a,v:q@b").contains("different credentials"));
}

#[test]
fn tls_files_require_tls() {
    let (_, options) = nats("nats://a?tls_ca=/ca.pem&tls_cert=/c.pem&tls_key=/k.pem");
    let tls = &options.connection.tls;
    assert!(tls.required);
    assert_eq!(tls.ca.as_deref(), Some(std::path::Path::new("/ca.pem")));
    assert_eq!(tls.client, Some((PathBuf::from("/c.pem"), PathBuf::from("/k.pem"))));
    let (_, options) = nats("nats://a?tls=true");
    assert!(options.connection.tls.required);
}

#[test]
fn secrets_never_appear_in_errors_debug_or_display() {
    let line = error("nats://alice:s3cret@a:4222,b:4222?replicas=9");
    assert!(line.contains("nats://alice:***@a:4222,b:4222"), "{line}");
    let line = error("nats://tok123@a:4222?bogus=1");
    assert!(line.contains("nats://***@a:4222"), "{line}");
    let line = error("nats://a:4222?token=tok123&replicas=0");
    assert!(line.contains("token=***"), "{line}");
    let url: MailboxUrl = "nats://alice:s3cret@a:4222".parse().unwrap_or_else(|e| panic!("{e}"));
    for shown in [format!("{url:?}"), url.to_string()] {
        assert!(!shown.contains("s3cret"), "{shown}");
    }
    let url: MailboxUrl = "nats://a:4222?token=tok123".parse().unwrap_or_else(|e| panic!("{e}"));
    for shown in [format!("{url:?}"), url.to_string()] {
        assert!(!shown.contains("tok123"), "{shown}");
    }
    assert_eq!(
        spine_worker::url::redact("nats://u:pw@a,tok@b?token=t&password=p&prefix=x"),
        "nats://u:***@a,***@b?token=***&password=***&prefix=x"
    );
}
