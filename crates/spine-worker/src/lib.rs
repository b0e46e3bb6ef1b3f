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
//! - [`mailbox`]: the [`Mailbox`] contract (queue, leases, reports,
//!   idempotency store, cancellation) and its backends: [`mailbox::sqlite`] and, with the
//!   `nats` feature (on by default), `mailbox::nats` (JetStream).
//! - [`url`]: `sqlite:PATH` / `nats://HOST:PORT` URLs with their options.
//! - [`decode`]: raw bytes → a typed item, or why not (`validation_error`,
//!   `unsupported_request_kind`), always with an identity to report under.
//! - [`flows`]: one module per item kind; [`agent_run`]: the `agent_run` mode and the
//!   [`AgentFactory`](agent_run::AgentFactory) seam.
//! - [`env`](mod@env): what every item shares (workspace, tools, skills, settings).
//! - [`sink`]: reports on their way to the mailbox (terminal ones stored first).
//! - [`running`]: items in flight and what cancels them; [`shutdown`]: the stop signal.
//! - [`worker`]: the loop (semaphore, lease, keep-alive, settle, graceful shutdown); `fence`:
//!   the keep-alive and claim-watch tasks of one delivery.

// Unit tests link the dev-dependencies of every other target too; the lint checks the
// library's own list (see the workspace Cargo.toml).
#![cfg_attr(test, allow(unused_crate_dependencies))]
#![warn(missing_docs)]

pub mod agent_run;
pub mod decode;
pub mod env;
mod fence;
pub mod flows;
pub mod mailbox;
pub mod running;
pub mod shutdown;
pub mod sink;
pub mod url;
pub mod worker;

pub use env::Environment;
pub use mailbox::{Mailbox, MailboxError, ReportQuery, ReportStream};
pub use url::MailboxUrl;
pub use worker::{Worker, WorkerConfig, WorkerSummary};
