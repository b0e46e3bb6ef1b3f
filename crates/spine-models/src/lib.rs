//! spine's model clients, all behind [`spine_core::model::ModelClient`].
//!
//! # Layout
//!
//! - [`scripted`]: the offline scripted model (`--model scripted:FILE`): turn *k* of a JSON
//!   script answers the *k*-th request.
//! - [`spec`]: parsing `--model` specs (`scripted:FILE`, `openai:MODEL`,
//!   `openai-responses:MODEL`, `anthropic:MODEL`,
//!   bare `claude-*`/`gpt-*` names and the `sonnet`/`opus`/`haiku` aliases).
//! - [`openai`]: OpenAI-compatible chat completions (streamed or whole).
//! - [`anthropic`]: the Anthropic Messages API (streamed or whole), extended thinking included.
//! - [`responses`]: the OpenAI Responses API (streamed, stateless: `store: false`, reasoning
//!   items sent back encrypted).
//! - [`pricing`]: list prices per model family (`data/prices.json`, overridable by settings)
//!   and the cost of a run's usage.
//! - [`config`]: [`ProviderConfig`], the options every HTTP provider shares, with the
//!   provider's own in its `provider` field; [`provider`]: [`provider::Provider`], what a
//!   provider adds (its path, body and stream-event mapping); [`client`]: [`ProviderClient`],
//!   the one client over any provider.
//! - [`factory`]: a client from a spec ([`client_for`]); the spec to use when none was given
//!   ([`default_spec_from_env`]).
//!
//! Shared layers, outermost first: cancellation (in [`ProviderClient`]'s `complete`), [`retry`]
//! (backoff, `retry-after`, never after content was delivered, the total deadline, one report
//! per attempt, the one classification of in-stream errors), [`http`] (client, per-attempt
//! timeouts, error statuses), [`sse`] (event framing and the steps every reader shares), then
//! each provider's `stream` module (reply assembly). Keys are [`secret::Secret`]s: never
//! printed, scrubbed from server text.
//!
//! A new HTTP provider is its options type implementing [`provider::Provider`] (path,
//! variables, request body, stream reader), its wire types, its [`sse`] event mapping, and a
//! line in [`factory`] and [`spec`].

// Unit tests link the dev-dependencies of every other target too; the lint checks the
// library's own list (see the workspace Cargo.toml).
#![cfg_attr(test, allow(unused_crate_dependencies))]
#![warn(missing_docs)]

pub mod anthropic;
pub mod client;
pub mod config;
pub mod error;
pub mod factory;
pub mod http;
pub mod openai;
pub mod pricing;
pub mod provider;
mod reply;
pub mod responses;
pub mod retry;
pub mod scripted;
pub mod secret;
pub mod spec;
pub mod sse;

pub use anthropic::{AnthropicClient, AnthropicConfig, AnthropicOptions};
pub use client::ProviderClient;
pub use config::{ProviderConfig, Streaming};
pub use error::ClientError;
pub use factory::{
    ClientOptions, DEFAULT_ANTHROPIC_MODEL, DEFAULT_OPENAI_MODEL, ReasoningOptions, anthropic_model_from_env,
    client_for, client_with, default_spec_from_env,
};
pub use openai::{OpenAiClient, OpenAiConfig, OpenAiOptions};
pub use responses::{ResponsesClient, ResponsesConfig, ResponsesOptions};
pub use scripted::ScriptedModel;
pub use secret::Secret;
