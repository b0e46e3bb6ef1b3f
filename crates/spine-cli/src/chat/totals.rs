//! Usage and cost of an interactive session so far, and the `/cost` text: prompts, model
//! requests, tokens and cost per model, added up after each prompt.

use std::collections::BTreeMap;

use spine_protocol::run::{ModelUsage, Usage};

/// Usage and cost of the session so far (`/cost`).
#[derive(Default)]
pub(super) struct Totals {
    pub(super) prompts: u32,
    pub(super) requests: u32,
    pub(super) models: BTreeMap<String, ModelUsage>,
    pub(super) started: Option<std::time::Instant>,
}

impl Totals {
    pub(super) fn add(&mut self, models: &BTreeMap<String, ModelUsage>, requests: u32) {
        self.requests += requests;
        for (name, usage) in models {
            let entry = self.models.entry(name.clone()).or_default();
            entry.requests += usage.requests;
            entry.requests_without_usage += usage.requests_without_usage;
            if let Some(u) = usage.usage {
                entry.usage.get_or_insert_with(Usage::default).add(u);
            }
            if let Some(c) = usage.cost_usd {
                *entry.cost_usd.get_or_insert(0.0) += c;
            }
        }
    }

    /// The `/cost` text.
    pub(super) fn text(&self) -> String {
        let (usage, cost) = ModelUsage::totals(&self.models);
        let mut text = format!("{} prompt(s), {} model request(s)", self.prompts, self.requests);
        if let Some(started) = self.started {
            text.push_str(&format!(", {:.0} s since the first", started.elapsed().as_secs_f64()));
        }
        match usage {
            Some(u) => text.push_str(&format!(
                "\ntokens: {} in ({} cache read, {} cache write), {} out",
                u.input_tokens, u.cache_read_input_tokens, u.cache_creation_input_tokens, u.output_tokens
            )),
            None => text.push_str("\ntokens: none reported"),
        }
        match cost {
            Some(c) => text.push_str(&format!("\ncost: ${c:.4}")),
            None => text.push_str("\ncost: unknown (no price for the model, or no usage reported)"),
        }
        for (model, m) in &self.models {
            let cost = m.cost_usd.map(|c| format!(" · ${c:.4}")).unwrap_or_default();
            text.push_str(&format!("\n  {model}: {} request(s){cost}", m.requests));
        }
        text
    }
}
