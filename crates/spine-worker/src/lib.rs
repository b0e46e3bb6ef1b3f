//! spine's worker: execution assignments arrive in a mailbox, run through spine-core's
//! pipeline stages, and produce reports (docs/pipeline.md, "The worker").
//!
//! Delivery is at-least-once; execution is idempotent per item: a duplicate delivery of a
//! finished item re-publishes its stored terminal report instead of running again, a worker
//! killed mid-item loses nothing (the item is redelivered with the next `attempt_no`), and at
//! most one terminal report is stored per item.
//!
//! # Layout
//!
//! Modules, each using only those listed before it (never a later one):
//!
//! - [`shutdown`]: the stop signal; [`running`]: items in flight and what cancels them;
//!   [`decode`]: raw bytes → a typed item, or why not (`validation_error`,
//!   `unsupported_request_kind`), always with an identity to report under. None uses another
//!   module of the crate.
//! - [`mailbox`]: the contract in three traits — [`Queue`], [`Executions`] (the idempotency
//!   store, fencing, cancellation) and [`ReportLog`]; a [`Mailbox`] is all three — and its
//!   backends: [`mailbox::sqlite`] and, with the `nats` feature (on by default), `mailbox::nats`
//!   (JetStream). Uses nothing else of the crate.
//! - [`url`]: `sqlite:PATH` / `nats://HOST:PORT` URLs with their options (→ `mailbox`).
//! - [`sink`]: reports on their way to the mailbox, terminal ones stored first (→ `mailbox`,
//!   `running`); `fence`: the keep-alive and claim-watch tasks of one delivery (→ `mailbox`,
//!   `running`).
//! - [`agents`]: the [`AgentFactory`](agents::AgentFactory) seam that builds `agent_run`
//!   agents, and the agent of single tool calls. Uses nothing else of the crate.
//! - [`env`](mod@env): what every item shares (workspace, tools, skills, settings, the agents)
//!   (→ `agents`).
//! - [`flows`]: one module per item kind, `agent_run` among them (→ `env`, `agents`, `decode`,
//!   `mailbox`, `running`, `sink`).
//! - [`ops`]: health, readiness and Prometheus metrics of a worker, and the HTTP endpoints
//!   that serve them (→ `mailbox`).
//! - [`worker`]: the loop (semaphore, lease, keep-alive, graceful shutdown) and one delivery's
//!   claim → plan → work → settle (→ everything above).

// Unit tests link the dev-dependencies of every other target too; the lint checks the
// library's own list (see the workspace Cargo.toml).
#![cfg_attr(test, allow(unused_crate_dependencies))]
#![warn(missing_docs)]

pub mod agents;
pub mod decode;
pub mod env;
mod fence;
pub mod flows;
pub mod mailbox;
pub mod ops;
pub mod running;
pub mod shutdown;
pub mod sink;
pub mod url;
pub mod worker;

pub use env::Environment;
pub use mailbox::{Executions, Mailbox, MailboxError, Queue, ReportLog, ReportQuery, ReportStream};
pub use url::MailboxUrl;
pub use worker::{Worker, WorkerConfig, WorkerSummary};
