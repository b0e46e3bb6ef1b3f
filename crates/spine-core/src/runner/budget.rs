//! The budget of a session (`--max-budget-usd`, [`AgentConfig::budget`]).
//!
//! Contract: the session's estimated cost is what its runs' `total_cost_usd` report — the
//! known costs of their model requests and of their finished subagents (a request whose model
//! has no price counts 0): the runs of the session that ended (an interactive or driven
//! session runs one per prompt) plus the running one. It is checked after each model reply and
//! before each model request; once it is at or over the budget the run ends with
//! `error_max_budget_usd` (`Reached maximum budget ($B)`, SessionEnd reason `other`) — even
//! after a final answer, as in Claude Code — and no further request is made. The reply's tool
//! calls, when it made any, are answered `Skipped: …` without running, so the conversation
//! stays paired. A subagent's run checks the session's cost before it plus its own; its cost
//! is booked by its parent.
//!
//! [`AgentConfig::budget`]: super::AgentConfig::budget

use std::sync::Mutex;

use spine_protocol::hook::SessionEndReason;
use spine_protocol::message::Message;
use spine_protocol::run::{ModelUsage, RunSubtype};
use spine_protocol::tool::{ErrorCode, ToolCall, ToolError};

use super::finish::End;
use super::{Run, error_result};
use crate::observer::RunEvent;

/// A session's budget: the limit, and what its ended runs cost.
#[derive(Debug)]
pub struct Budget {
    limit: f64,
    spent: Mutex<f64>,
}

impl Budget {
    /// A budget of `limit` US dollars, nothing spent.
    pub fn new(limit: f64) -> Self {
        Budget { limit, spent: Mutex::new(0.0) }
    }

    /// The limit, in US dollars.
    pub fn limit(&self) -> f64 {
        self.limit
    }

    /// What the session's ended runs cost, in US dollars.
    pub fn spent(&self) -> f64 {
        match self.spent.lock() {
            Ok(spent) => *spent,
            Err(poisoned) => *poisoned.into_inner(),
        }
    }

    fn add(&self, usd: f64) {
        match self.spent.lock() {
            Ok(mut spent) => *spent += usd,
            Err(poisoned) => *poisoned.into_inner() += usd,
        }
    }
}

impl Run<'_> {
    /// A main run's end: its cost is the session's (a subagent's is its parent's).
    pub(super) fn book_cost(&self, total_cost_usd: Option<f64>) {
        if let (Some(budget), None) = (&self.agent.config.budget, &self.subagent) {
            budget.add(total_cost_usd.unwrap_or(0.0));
        }
    }

    /// The run's estimated cost so far, in US dollars.
    fn cost_so_far(&self) -> f64 {
        let own = ModelUsage::totals(&self.model_usage).1.unwrap_or(0.0);
        let delegated = match self.delegated_usage.lock() {
            Ok(d) => ModelUsage::totals(&d).1,
            Err(poisoned) => ModelUsage::totals(&poisoned.into_inner()).1,
        };
        own + delegated.unwrap_or(0.0)
    }

    /// The end of a run whose cost reached its budget, `None` while it is under it (or has
    /// none). `calls` (the last reply's, not yet answered) are answered without running.
    pub(super) fn over_budget(&mut self, calls: &[ToolCall]) -> Option<End> {
        let budget = self.agent.config.budget.as_ref()?;
        if budget.spent() + self.cost_so_far() < budget.limit() {
            return None;
        }
        let budget = budget.limit();
        let skipped = ToolError::new(
            ErrorCode::Canceled,
            format!("Skipped: the run reached its budget (--max-budget-usd {budget})"),
        );
        for call in calls {
            let result = error_result(call, &skipped);
            self.observer.on_event(&RunEvent::ToolResult { result: &result });
            self.push(Message::Tool(result));
        }
        Some(End::new(
            RunSubtype::ErrorMaxBudgetUsd,
            format!("Reached maximum budget (${budget})"),
            SessionEndReason::Other,
        ))
    }
}
