//! The NATS JetStream server of the tests: `SPINE_TEST_NATS_URL`, default
//! `nats://127.0.0.1:4222` (start one with `scripts/services.sh start`). A missing server fails
//! the tests that need it; they never skip.

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
