//! The NATS JetStream server of the tests: `SPINE_TEST_NATS_URL`, default
//! `nats://127.0.0.1:4222` (start one with `scripts/services.sh start`), and the `nats-server`
//! binary the tests' clusters run ([`server_binary`]). A missing server fails the tests that
//! need it; they never skip.

use std::path::{Path, PathBuf};

/// The `nats-server` binary: `SPINE_TEST_NATS_SERVER`, default the one `scripts/services.sh`
/// installs (`SPINE_TEST_NATS_DIR`, default `<workspace>/target/test-peers/nats`, then
/// `bin/nats-server`); panics, saying how to install it, when it is missing. Never the one on
/// `PATH`: Debian's 2.9.10 lets two compare-and-set writes on one subject both succeed in a
/// cluster, which the failover tests would see as spine's fault.
pub fn server_binary() -> PathBuf {
    if let Some(path) = std::env::var_os("SPINE_TEST_NATS_SERVER").filter(|v| !v.is_empty()) {
        return PathBuf::from(path);
    }
    let dir = std::env::var_os("SPINE_TEST_NATS_DIR")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/test-peers/nats"));
    let binary = dir.join("bin/nats-server");
    assert!(
        binary.is_file(),
        "nats-server is not installed at {}: run scripts/services.sh start (or scripts/services.sh bin), \
         or set SPINE_TEST_NATS_SERVER to another binary",
        binary.display()
    );
    binary
}

/// The server's URL.
pub fn nats_url() -> String {
    std::env::var("SPINE_TEST_NATS_URL")
        .ok()
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| "nats://127.0.0.1:4222".into())
}

/// A fresh subject and stream prefix (`tag` and 12 hex digits), so that concurrent tests on one
/// server never see each other's items.
pub fn unique_prefix(tag: &str) -> String {
    format!("{tag}{}", &uuid::Uuid::new_v4().simple().to_string()[..12])
}
