//! The streams and the consumer at start: created when missing; when they exist, compared with
//! the settings the URL asks for and updated in place where JetStream allows it.
//!
//! Contract:
//!
//! - Stream: `num_replicas` (R1→R3 and back, on a cluster), `max_age`, placement and the
//!   per-subject limit are updated (the server moves or re-replicates the stream); `storage`
//!   and `retention` cannot change in place, nor can a server outside any cluster hold more
//!   than one replica (it would accept the update and keep one copy) — [`MailboxError::Incompatible`] names the stream,
//!   the field, the current and the wanted value and what to do. Other fields an operator set
//!   (limits, description, …) are kept.
//! - Consumer: `ack_wait` (the lease) and `max_deliver` are updated, so that a worker started
//!   with another `lease_ms` on the same prefix runs with its own lease, not the one the
//!   consumer was first created with; `ack_policy` cannot change (incompatible).
//! - Every update is logged (`tracing::info!`) with the field, the old and the new value; the
//!   last worker to start wins, so a fleet must start every worker with the same settings.
//! - Two workers creating the same stream at once both succeed: a failed create is followed
//!   by one more look-up.

use async_nats::jetstream::consumer::pull;
use async_nats::jetstream::consumer::{FromConsumer, PullConsumer};
use async_nats::jetstream::stream::{self, Placement, RetentionPolicy, StorageType};
use async_nats::jetstream::{self, context};

use super::settings::{Storage, StreamSettings};
use crate::mailbox::MailboxError;

/// A stream's wanted configuration: its own shape and the URL's settings.
pub(super) fn stream_config(
    name: &str,
    subjects: Vec<String>,
    retention: RetentionPolicy,
    per_subject: i64,
    settings: &StreamSettings,
) -> stream::Config {
    let placement = (settings.cluster.is_some() || !settings.tags.is_empty())
        .then(|| Placement { cluster: settings.cluster.clone(), tags: settings.tags.clone() });
    stream::Config {
        name: name.to_owned(),
        subjects,
        retention,
        storage: match settings.storage {
            Storage::File => StorageType::File,
            Storage::Memory => StorageType::Memory,
        },
        num_replicas: settings.replicas,
        max_age: settings.max_age.unwrap_or_default(),
        placement,
        max_messages_per_subject: per_subject,
        ..Default::default()
    }
}

fn storage_name(storage: StorageType) -> &'static str {
    match storage {
        StorageType::File => "file",
        StorageType::Memory => "memory",
    }
}

fn placement_text(placement: Option<&Placement>) -> String {
    match placement {
        None => "none".into(),
        Some(p) => format!("cluster={} tags={}", p.cluster.as_deref().unwrap_or("-"), p.tags.join(",")),
    }
}

fn same_placement(a: Option<&Placement>, b: Option<&Placement>) -> bool {
    let empty = |p: Option<&Placement>| p.is_none_or(|p| p.cluster.is_none() && p.tags.is_empty());
    (empty(a) && empty(b)) || a == b
}

/// Gets the stream, creating it when missing and updating what differs from `wanted`.
pub(super) async fn ensure_stream(
    js: &jetstream::Context,
    wanted: stream::Config,
    fail: impl Fn(String) -> MailboxError,
) -> Result<stream::Stream, MailboxError> {
    let name = wanted.name.clone();
    let existing = match js.get_stream(&name).await {
        Ok(s) => s,
        Err(e) if is_not_found(&e) => {
            match js.create_stream(wanted.clone()).await {
                Ok(s) => return Ok(s),
                // Another worker may have created it in the meantime: look again.
                Err(create) => js
                    .get_stream(&name)
                    .await
                    .map_err(|_| fail(format!("stream {name}: cannot create it: {create}")))?,
            }
        }
        Err(e) => return Err(fail(format!("stream {name}: {e}"))),
    };
    check_replicas(&existing, &wanted)?;
    let current = existing.cached_info().config.clone();
    if current.storage != wanted.storage {
        return Err(MailboxError::Incompatible {
            object: format!("stream {name}"),
            field: "storage",
            current: storage_name(current.storage).into(),
            wanted: storage_name(wanted.storage).into(),
            remedy: format!(
                "JetStream cannot change a stream's storage in place: use another prefix, set \
                 storage={} in the URL, or delete the stream (`nats stream rm {name}`, which loses its \
                 messages) and start again",
                storage_name(current.storage)
            ),
        });
    }
    if current.retention != wanted.retention {
        return Err(MailboxError::Incompatible {
            object: format!("stream {name}"),
            field: "retention",
            current: format!("{:?}", current.retention).to_lowercase(),
            wanted: format!("{:?}", wanted.retention).to_lowercase(),
            remedy: "the stream was not created by spine's mailbox: use another prefix".into(),
        });
    }
    let mut updated = current.clone();
    let mut changes = Vec::new();
    if current.num_replicas.max(1) != wanted.num_replicas.max(1) {
        changes.push(("num_replicas", current.num_replicas.to_string(), wanted.num_replicas.to_string()));
        updated.num_replicas = wanted.num_replicas;
    }
    if current.max_age != wanted.max_age {
        changes.push(("max_age", format!("{:?}", current.max_age), format!("{:?}", wanted.max_age)));
        updated.max_age = wanted.max_age;
    }
    if !same_placement(current.placement.as_ref(), wanted.placement.as_ref()) {
        changes.push((
            "placement",
            placement_text(current.placement.as_ref()),
            placement_text(wanted.placement.as_ref()),
        ));
        updated.placement = wanted.placement.clone();
    }
    if current.max_messages_per_subject != wanted.max_messages_per_subject {
        changes.push((
            "max_messages_per_subject",
            current.max_messages_per_subject.to_string(),
            wanted.max_messages_per_subject.to_string(),
        ));
        updated.max_messages_per_subject = wanted.max_messages_per_subject;
    }
    if changes.is_empty() {
        return Ok(existing);
    }
    let fields: Vec<String> = changes.iter().map(|(f, from, to)| format!("{f} {from} -> {to}")).collect();
    js.update_stream(&updated).await.map_err(|e| {
        fail(format!(
            "stream {name}: cannot update {} in place: {e} (use another prefix, or the stream's current settings)",
            fields.join(", ")
        ))
    })?;
    for (field, from, to) in &changes {
        tracing::info!(stream = %name, field, from = %from, to = %to, "mailbox stream updated");
    }
    js.get_stream(&name).await.map_err(|e| fail(format!("stream {name}: {e}")))
}

/// A standalone server refuses to create an R3 stream but accepts an update to R3 and keeps
/// one copy: refuse that before updating, so that a fleet asking for R3 never runs on R1
/// believing otherwise.
fn check_replicas(stream: &stream::Stream, wanted: &stream::Config) -> Result<(), MailboxError> {
    let info = stream.cached_info();
    // A server outside any cluster reports no cluster name and keeps one copy whatever its
    // configuration says.
    let clustered = info.cluster.as_ref().is_some_and(|c| c.name.as_deref().is_some_and(|n| !n.is_empty()));
    if clustered || wanted.num_replicas <= 1 {
        return Ok(());
    }
    Err(MailboxError::Incompatible {
        object: format!("stream {}", wanted.name),
        field: "num_replicas",
        current: "1".into(),
        wanted: wanted.num_replicas.to_string(),
        remedy: "the server is not part of a cluster and keeps one copy: use replicas=1 there, or a \
                 JetStream cluster of at least that many servers"
            .into(),
    })
}

/// Gets the durable consumer, creating it when missing and updating its `ack_wait` and
/// `max_deliver` when they differ from `wanted`.
pub(super) async fn ensure_consumer(
    items: &stream::Stream,
    wanted: pull::Config,
    fail: impl Fn(String) -> MailboxError,
) -> Result<PullConsumer, MailboxError> {
    let name = wanted.durable_name.clone().unwrap_or_default();
    let existing: PullConsumer = match items.get_consumer(&name).await {
        Ok(c) => c,
        Err(_) => match items.create_consumer(wanted.clone()).await {
            Ok(c) => return Ok(c),
            Err(create) => items.get_consumer(&name).await.map_err(|_| fail(format!("consumer {name}: {create}")))?,
        },
    };
    let current = existing.cached_info().config.clone();
    if current.ack_policy != wanted.ack_policy {
        return Err(MailboxError::Incompatible {
            object: format!("consumer {name}"),
            field: "ack_policy",
            current: format!("{:?}", current.ack_policy).to_lowercase(),
            wanted: format!("{:?}", wanted.ack_policy).to_lowercase(),
            remedy: "the consumer was not created by spine's mailbox: use another prefix".into(),
        });
    }
    let mut changes = Vec::new();
    if current.ack_wait != wanted.ack_wait {
        changes.push(("ack_wait", format!("{:?}", current.ack_wait), format!("{:?}", wanted.ack_wait)));
    }
    if current.max_deliver != wanted.max_deliver {
        changes.push(("max_deliver", current.max_deliver.to_string(), wanted.max_deliver.to_string()));
    }
    if changes.is_empty() {
        return Ok(existing);
    }
    let current = pull::Config::try_from_consumer_config(current)
        .map_err(|e| fail(format!("consumer {name}: not a pull consumer: {e}")))?;
    let updated = pull::Config { ack_wait: wanted.ack_wait, max_deliver: wanted.max_deliver, ..current };
    // Without the client's `server_2_10` feature, creating a durable that exists updates it
    // (the create-or-update action every server since 2.9 takes).
    let consumer = items.create_consumer(updated).await.map_err(|e| {
        let fields: Vec<String> = changes.iter().map(|(f, from, to)| format!("{f} {from} -> {to}")).collect();
        fail(format!("consumer {name}: cannot update {}: {e}", fields.join(", ")))
    })?;
    for (field, from, to) in &changes {
        tracing::info!(consumer = %name, field, from = %from, to = %to, "mailbox consumer updated");
    }
    Ok(consumer)
}

/// Whether a `get_stream` failed because the stream does not exist.
fn is_not_found(error: &context::GetStreamError) -> bool {
    matches!(error.kind(), context::GetStreamErrorKind::JetStream(e) if e.error_code() == jetstream::ErrorCode::STREAM_NOT_FOUND)
}
