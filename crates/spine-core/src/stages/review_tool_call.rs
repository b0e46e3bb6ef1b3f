//! `review_tool_call`: is the tool supported (registered), and is it visible to this run (in
//! `allowed_tool_names`)? Checked in that order: an unknown name is `unsupported_tool`
//! (classification `semantic`), a known but hidden one is `tool_not_allowed`
//! (`authorization`). An absent allowed list means every registered tool.

use std::time::Instant;

use spine_protocol::tool::{ErrorCode, ToolError};
use spine_protocol::trace::StageName;
use thiserror::Error;

use crate::fields;
use crate::registry::ToolRegistry;
use crate::trace::Trace;

/// The tools a run may call.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Visibility {
    /// Every registered tool.
    #[default]
    All,
    /// Only these names.
    Only(Vec<String>),
}

impl Visibility {
    /// Whether a tool name is visible; a listed former name (`Task`) makes its tool (`Agent`)
    /// visible ([`crate::tool_names`]).
    pub fn allows(&self, name: &str) -> bool {
        match self {
            Visibility::All => true,
            Visibility::Only(names) => names.iter().any(|n| crate::tool_names::same_tool(n, name)),
        }
    }

    /// The tools both allow: `other` can only narrow `self`, never widen it.
    pub fn narrowed(&self, other: &Visibility) -> Visibility {
        match (self, other) {
            (Visibility::All, narrower) => narrower.clone(),
            (Visibility::Only(names), Visibility::All) => Visibility::Only(names.clone()),
            (Visibility::Only(names), Visibility::Only(_)) => {
                Visibility::Only(names.iter().filter(|n| other.allows(n)).cloned().collect())
            }
        }
    }

    /// The allowed names as a list (empty for all).
    pub fn names(&self) -> &[String] {
        match self {
            Visibility::All => &[],
            Visibility::Only(names) => names,
        }
    }
}

/// Why a tool call did not pass review.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ReviewError {
    /// The name is not registered.
    #[error("unsupported tool {0}")]
    Unsupported(String),
    /// Registered, but not visible to this run.
    #[error("tool {0} is not visible for this assignment")]
    NotVisible(String),
}

impl ReviewError {
    /// The tool error the model (or the kernel) reads.
    pub fn to_tool_error(&self) -> ToolError {
        match self {
            ReviewError::Unsupported(_) => ToolError::new(ErrorCode::UnsupportedTool, self.to_string()),
            ReviewError::NotVisible(_) => ToolError::new(ErrorCode::ToolNotAllowed, self.to_string()),
        }
    }
}

/// Reviews one tool name.
pub fn review_tool_call(
    tools: &ToolRegistry,
    visibility: &Visibility,
    tool_name: &str,
    tool_use_id: Option<&str>,
    trace: &Trace,
) -> Result<(), ReviewError> {
    let started = Instant::now();
    let verdict = if tools.lookup(tool_name).is_none() {
        Err(ReviewError::Unsupported(tool_name.to_owned()))
    } else if !visibility.allows(tool_name) {
        Err(ReviewError::NotVisible(tool_name.to_owned()))
    } else {
        Ok(())
    };
    let mut f = fields! { "tool_name" => tool_name };
    if let Err(e) = &verdict {
        let te = e.to_tool_error();
        f.insert(
            "error".into(),
            serde_json::json!({"code": te.code, "classification": te.code.classification(), "message": te.message}),
        );
    }
    trace.stage(StageName::ReviewToolCall, tool_use_id, started, f);
    verdict
}
