//! spine's model clients, all behind [`spine_core::model::ModelClient`].
//!
//! # Layout
//!
//! - [`scripted`]: the offline scripted model (`--model scripted:FILE`): turn *k* of a JSON
//!   script answers the *k*-th request.
//! - [`spec`]: parsing `--model` specs (`scripted:FILE`, `openai:MODEL`, `anthropic:MODEL`).

pub mod scripted;
pub mod spec;

pub use scripted::ScriptedModel;
