//! Existing streams and consumers are brought to the URL's settings when a worker starts (on
//! the shared test server): the consumer's ack wait follows `lease_ms`, stream limits follow
//! the URL, and a change JetStream cannot make in place is an error naming the field.

use std::time::Duration;

use async_nats::jetstream::{self, consumer::pull};
use spine_testkit::nats::{nats_url, unique_prefix};
use spine_worker::MailboxUrl;
use spine_worker::mailbox::{Mailbox, MailboxError};

use crate::support::example;

async fn open(prefix: &str, query: &str) -> Result<std::sync::Arc<dyn Mailbox>, MailboxError> {
    let url: MailboxUrl = format!("{}?prefix={prefix}&{query}", nats_url()).parse().expect("url");
    url.open().await
}

async fn js() -> jetstream::Context {
    jetstream::new(async_nats::connect(nats_url()).await.expect("connect"))
}

/// The consumer's ack wait and max deliveries as the server has them.
async fn consumer_settings(prefix: &str) -> (Duration, i64) {
    let stream = js().await.get_stream(format!("{}_ITEMS", prefix.to_ascii_uppercase())).await.expect("stream");
    let mut consumer = stream.get_consumer::<pull::Config>(&format!("{prefix}-workers")).await.expect("consumer");
    let config = &consumer.info().await.expect("info").config;
    (config.ack_wait, config.max_deliver)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restart_with_a_shorter_lease_updates_the_ack_wait_and_redelivery_follows_it() {
    let prefix = unique_prefix("lease");
    let first = open(&prefix, "lease_ms=3600000").await.expect("first start");
    assert_eq!(consumer_settings(&prefix).await.0, Duration::from_secs(3600));
    drop(first);

    let second = open(&prefix, "lease_ms=300&max_deliver=7").await.expect("second start");
    assert_eq!(consumer_settings(&prefix).await, (Duration::from_millis(300), 8));
    second.submit(example("lapses").to_string().as_bytes()).await.expect("submit");
    let leased = second.lease(1, Duration::from_secs(30)).await.expect("lease");
    assert_eq!(leased.iter().map(|d| d.delivery_count).collect::<Vec<_>>(), [1]);
    // Left unsettled, the delivery comes back under the new lease; under the old one it would
    // stay out for an hour, far beyond this wait.
    let again = second.lease(1, Duration::from_secs(120)).await.expect("lease again");
    assert_eq!(again.iter().map(|d| d.delivery_count).collect::<Vec<_>>(), [2], "redelivered under the new lease");
    again[0].lease.ack().await.expect("ack");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restart_with_a_longer_lease_replaces_the_shorter_one() {
    let prefix = unique_prefix("lease");
    drop(open(&prefix, "lease_ms=2000").await.expect("first start"));
    assert_eq!(consumer_settings(&prefix).await, (Duration::from_secs(2), 6));
    drop(open(&prefix, "lease_ms=30000").await.expect("second start"));
    assert_eq!(consumer_settings(&prefix).await, (Duration::from_secs(30), 6));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_max_age_change_updates_every_stream_in_place() {
    let prefix = unique_prefix("age");
    let mailbox = open(&prefix, "max_age=1h").await.expect("first start");
    mailbox.submit(example("kept").to_string().as_bytes()).await.expect("submit");
    drop(open(&prefix, "max_age=2h").await.expect("second start"));
    let js = js().await;
    for suffix in ["ITEMS", "REPORTS", "EXEC", "DEAD"] {
        let mut stream = js.get_stream(format!("{}_{suffix}", prefix.to_ascii_uppercase())).await.expect("stream");
        let info = stream.info().await.expect("info");
        assert_eq!(info.config.max_age, Duration::from_secs(7200), "{suffix}");
        if suffix == "ITEMS" {
            assert_eq!(info.state.messages, 1, "the update keeps the stream's messages");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_storage_change_is_refused_naming_the_stream_the_field_and_both_values() {
    let prefix = unique_prefix("store");
    drop(open(&prefix, "storage=file").await.expect("first start"));
    let Err(error) = open(&prefix, "storage=memory").await else { panic!("a storage change must be refused") };
    let line = error.to_string();
    let MailboxError::Incompatible { object, field, current, wanted, .. } = error else { panic!("{line}") };
    assert_eq!(
        (object.as_str(), field, current.as_str(), wanted.as_str()),
        (format!("stream {}_ITEMS", prefix.to_ascii_uppercase()).as_str(), "storage", "file", "memory")
    );
    assert!(line.contains("use another prefix"), "says what to do: {line}");
    // The stream is untouched: a start with the old settings still works.
    drop(open(&prefix, "storage=file").await.expect("the old settings still open"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replicas_a_standalone_server_cannot_keep_are_refused_naming_the_field() {
    // The shared test server is a single node. Creating an R3 stream there fails (the server
    // says why); it would accept an update of an R1 stream to R3 and keep one copy, so the
    // mailbox refuses that itself, naming the field, before updating anything.
    let prefix = unique_prefix("repl");
    let Err(error) = open(&format!("{prefix}new"), "replicas=3").await else { panic!("R3 on one server must fail") };
    let line = error.to_string();
    assert!(line.contains(&format!("{}NEW_ITEMS", prefix.to_ascii_uppercase())) && line.contains("replicas"), "{line}");

    drop(open(&prefix, "").await.expect("first start, R1"));
    let Err(error) = open(&prefix, "replicas=3").await else { panic!("R1 -> R3 on one server must fail") };
    let line = error.to_string();
    let MailboxError::Incompatible { object, field, current, wanted, .. } = error else { panic!("{line}") };
    assert_eq!(object, format!("stream {}_ITEMS", prefix.to_ascii_uppercase()));
    assert_eq!((field, current.as_str(), wanted.as_str()), ("num_replicas", "1", "3"), "{line}");
    assert!(line.contains("replicas=1"), "says what to do: {line}");
    let mut stream = js().await.get_stream(format!("{}_ITEMS", prefix.to_ascii_uppercase())).await.expect("stream");
    assert_eq!(stream.info().await.expect("info").config.num_replicas, 1, "refused before any update");
}
