//! The terminal approver: asks on stderr and reads `y`/`n` from the terminal. Used only when
//! stdin is a terminal; otherwise `ask` fails closed.

use std::io::{BufRead, Write};
use std::sync::Arc;

use async_trait::async_trait;
use spine_core::permission::{Approval, ApprovalRequest, Approver};

use super::status::StatusLine;

/// Asks a person at the terminal (the live status line, if any, is cleared while it asks).
pub struct TerminalApprover {
    /// The status line to clear while asking.
    pub status: Option<Arc<StatusLine>>,
}

#[async_trait]
impl Approver for TerminalApprover {
    async fn approve(&self, request: &ApprovalRequest<'_>) -> Approval {
        if let Some(status) = &self.status {
            status.suspend();
        }
        let approval = self.ask(request).await;
        if let Some(status) = &self.status {
            status.resume();
        }
        approval
    }
}

impl TerminalApprover {
    async fn ask(&self, request: &ApprovalRequest<'_>) -> Approval {
        let question = format!(
            "Allow {} {}? ({}) [y/N] ",
            request.tool_name,
            serde_json::Value::Object(request.args.clone()),
            request.reason
        );
        let answer = tokio::task::spawn_blocking(move || {
            let mut err = std::io::stderr().lock();
            let _ = err.write_all(question.as_bytes());
            let _ = err.flush();
            let mut line = String::new();
            std::io::stdin().lock().read_line(&mut line).map(|_| line)
        })
        .await;
        match answer {
            Ok(Ok(line)) if matches!(line.trim().to_ascii_lowercase().as_str(), "y" | "yes") => Approval::Allow,
            Ok(Ok(_)) => Approval::Deny { reason: "the user declined".to_owned() },
            Ok(Err(e)) => Approval::Deny { reason: format!("could not read the answer: {e}") },
            Err(e) => Approval::Deny { reason: format!("could not ask: {e}") },
        }
    }
}
