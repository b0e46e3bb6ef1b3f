//! Prompt caching for the Messages API: `cache_control: {"type": "ephemeral"}` breakpoints on
//! the request body, three of the API's four:
//!
//! 1. the last tool definition (the tools are the start of the cached prefix);
//! 2. the end of the system prompt's stable prefix ([`ModelRequest::stable_prefix`]): the
//!    `system` string becomes two text blocks, the stable part (marked) and the rest; without a
//!    known prefix the whole system prompt is one marked block;
//! 3. the last content block of the last message (not a `thinking` block, which cannot carry
//!    one), so the next request of the conversation reads everything before it from the cache.
//!
//! A prefix that is not on a character boundary, or covers the whole prompt, marks the whole
//! prompt. Turned off by `DISABLE_PROMPT_CACHING` (as in Claude Code) or the settings; then the
//! body is left as it is.
//!
//! The breakpoints are set on the body's own types before it is encoded (each `cache_control`
//! is serialised last in its object), so a cached request costs one encoding, as an uncached
//! one does.
//!
//! [`ModelRequest::stable_prefix`]: spine_core::model::ModelRequest::stable_prefix

use super::wire::{EPHEMERAL, MessagesRequest, System, SystemBlock};

/// Whether requests carry cache breakpoints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PromptCaching {
    /// Breakpoints on the tools, the stable system prefix and the last message.
    #[default]
    On,
    /// No `cache_control` anywhere.
    Off,
}

/// Adds the breakpoints to a request body.
pub(crate) fn mark(body: &mut MessagesRequest<'_>, stable_prefix: Option<usize>) {
    if let Some(last) = body.tools.last_mut() {
        last.cache_control = Some(EPHEMERAL);
    }
    if let Some(system) = body.system.as_mut() {
        mark_system(system, stable_prefix);
    }
    let last_block =
        body.messages.last_mut().and_then(|turn| turn.content.iter_mut().rev().find_map(|block| block.cache_control()));
    if let Some(slot) = last_block {
        *slot = Some(EPHEMERAL);
    }
}

fn mark_system(system: &mut System, stable_prefix: Option<usize>) {
    let System::Text(text) = system else { return };
    let split = stable_prefix.filter(|&n| n > 0 && n < text.len() && text.is_char_boundary(n));
    let block = |text: &str, marked: bool| SystemBlock {
        kind: "text",
        text: text.to_owned(),
        cache_control: marked.then_some(EPHEMERAL),
    };
    let blocks = match split {
        Some(n) if !text[n..].trim().is_empty() => {
            let (stable, rest) = text.split_at(n);
            vec![block(stable, true), block(rest.trim_start(), false)]
        }
        Some(_) | None => vec![block(text, true)],
    };
    *system = System::Blocks(blocks);
}

#[cfg(test)]
#[path = "cache_tests.rs"]
mod tests;
