//! The worker's Prometheus metrics: their names, help texts and the registry that holds them.
//!
//! Contract: every metric is registered once, in [`Metrics::new`], into a [`Registry`] owned
//! by the worker's [`Ops`](super::Ops) (no process-wide registry); label sets are empty, so
//! the series are fixed whatever items run. The gauges that describe a moment (in flight,
//! oldest lease age, pending messages, draining) are set when `/metrics` is scraped.
//!
//! Dependency: `prometheus-client`, the Prometheus project's own Rust client — typed metrics in
//! a registry passed by value, text encoding, nothing global, no HTTP server or thread of its
//! own (the worker serves `/metrics` with the hyper it already has).

use std::sync::atomic::AtomicU64;

use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

/// The worker's metrics (see docs/cli.md, "spine worker", for each name's meaning).
#[derive(Debug)]
pub(crate) struct Metrics {
    /// Deliveries leased (`spine_worker_items_leased_total`).
    pub(crate) leased: Counter,
    /// Deliveries of a message handed out before (`…_items_redelivered_total`).
    pub(crate) redelivered: Counter,
    /// Items that ended with a terminal report other than a failure (`…_items_completed_total`).
    pub(crate) completed: Counter,
    /// Items that ended with `execution_fail` or `agent_program_failed`
    /// (`…_items_failed_total`).
    pub(crate) failed: Counter,
    /// Deliveries handed back unfinished at shutdown (`…_items_released_total`).
    pub(crate) released: Counter,
    /// Deliveries held now (`…_items_in_flight`).
    pub(crate) in_flight: Gauge,
    /// Seconds since the oldest delivery held now was leased (`…_oldest_lease_age_seconds`).
    pub(crate) oldest_lease_age: Gauge<f64, AtomicU64>,
    /// Messages waiting in the mailbox (`…_mailbox_pending`; -1 when the backend cannot tell).
    pub(crate) pending: Gauge,
    /// 1 while the worker drains (`…_draining`).
    pub(crate) draining: Gauge,
    /// Model request durations (`…_model_request_duration_seconds`).
    pub(crate) model_request: Histogram,
    /// Tool call (execute stage) durations (`…_tool_call_duration_seconds`).
    pub(crate) tool_call: Histogram,
}

impl Metrics {
    /// The metrics, registered in a new registry.
    pub(crate) fn new() -> (Metrics, Registry) {
        let metrics = Metrics {
            leased: Counter::default(),
            redelivered: Counter::default(),
            completed: Counter::default(),
            failed: Counter::default(),
            released: Counter::default(),
            in_flight: Gauge::default(),
            oldest_lease_age: Gauge::default(),
            pending: Gauge::default(),
            draining: Gauge::default(),
            // 50 ms … ~100 s.
            model_request: Histogram::new(exponential_buckets(0.05, 2.0, 12)),
            // 5 ms … ~160 s.
            tool_call: Histogram::new(exponential_buckets(0.005, 2.0, 16)),
        };
        let mut registry = Registry::default();
        let m = &metrics;
        registry.register("spine_worker_items_leased", "Deliveries leased from the mailbox", m.leased.clone());
        registry.register(
            "spine_worker_items_redelivered",
            "Deliveries of a message that was handed out before",
            m.redelivered.clone(),
        );
        registry.register(
            "spine_worker_items_completed",
            "Items ended with a terminal report other than a failure",
            m.completed.clone(),
        );
        registry.register("spine_worker_items_failed", "Items ended with a failure report", m.failed.clone());
        registry.register(
            "spine_worker_items_released",
            "Deliveries handed back to the mailbox unfinished at shutdown",
            m.released.clone(),
        );
        registry.register("spine_worker_items_in_flight", "Deliveries held by this worker now", m.in_flight.clone());
        registry.register(
            "spine_worker_oldest_lease_age_seconds",
            "Seconds since the oldest delivery held now was leased",
            m.oldest_lease_age.clone(),
        );
        registry.register(
            "spine_worker_mailbox_pending",
            "Messages waiting in the mailbox (JetStream consumer num_pending; SQLite queued rows); -1 unknown",
            m.pending.clone(),
        );
        registry.register("spine_worker_draining", "1 while the worker drains after SIGTERM", m.draining.clone());
        registry.register(
            "spine_worker_model_request_duration_seconds",
            "Duration of model requests",
            m.model_request.clone(),
        );
        registry.register(
            "spine_worker_tool_call_duration_seconds",
            "Duration of tool calls (their execute stage)",
            m.tool_call.clone(),
        );
        (metrics, registry)
    }
}
