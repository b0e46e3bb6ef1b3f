//! The host's side of stdin: one task reads lines as they come, whatever the session is
//! doing, so an answer to spine's request is never stuck behind a running turn.
//!
//! Contract of [`start`]: answers (`control_response`) go straight to [`Control::resolve`];
//! every other message goes to the returned channel in order. At the end of stdin (the host
//! closed it, or reading failed) [`Control::close`] fails what is pending and the channel
//! closes once its messages are taken.

use std::sync::Arc;

use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::sync::mpsc;

use super::control::Control;
use super::wire::{Inbound, parse};

/// Starts reading stdin; the messages that are not answers, in order.
pub(crate) fn start(control: Arc<Control>) -> mpsc::UnboundedReceiver<Inbound> {
    let (tx, rx) = mpsc::unbounded_channel();
    tokio::spawn(async move {
        let mut lines = BufReader::new(tokio::io::stdin()).lines();
        loop {
            let line = match lines.next_line().await {
                Ok(Some(line)) => line,
                Ok(None) => break,
                Err(e) => {
                    let _ = tx.send(Inbound::Malformed { reason: format!("cannot read stdin: {e}"), request_id: None });
                    break;
                }
            };
            let message = match parse(&line) {
                None => continue,
                Some(Inbound::Response { id, result }) => {
                    // An answer nobody waits for (late, duplicated) changes nothing.
                    control.resolve(&id, result);
                    continue;
                }
                Some(message) => message,
            };
            if tx.send(message).is_err() {
                break;
            }
        }
        control.close();
    });
    rx
}
