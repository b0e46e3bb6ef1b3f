//! What spine's filtering proxy refused, per sandboxed command: [`NetworkLog`].
//!
//! Contract:
//! - [`NetworkLog::observer`] is the proxy's observer. A final event (refused, or allowed but
//!   unreachable; an allowed connection and the `asked` step say nothing) that came through
//!   the unix socket carries the process id of its peer: the sandbox helper whose bridge
//!   carried it, which is the process spine spawned for the command. It is kept under that
//!   id as one line (`spine sandbox: proxy refused evil.test:443 (evil.test is not an allowed
//!   domain)`), each line once, at most [`MAX_LINES`] per process (then a count of the rest)
//!   and [`MAX_PROCESSES`] processes (the oldest dropped). Events without a peer (a TCP
//!   client) belong to no command and are dropped.
//! - [`NetworkLog::take`] hands a spawn's guard the lines of its launcher's process id once
//!   the process group is gone, and forgets them (a later process with the same id starts
//!   clean).
//! - [`SessionProxy`] is the proxy of one session's commands: it listens on `proxy.sock` in a
//!   directory private to the session (the caller makes it, mode 0700), reports into its own
//!   log, and when dropped stops and removes the directory. The launcher holding it keeps it
//!   alive as long as any command environment may start a command.

use std::collections::{HashMap, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use crate::proxy::{
    Gate, Listen, Observer, Outcome, PrivateNetworks, Proxy, ProxyConfig, ProxyError, ProxyEvent, ProxyHandle,
};

/// spine's proxy of one session's commands (see the module contract).
#[derive(Debug)]
pub struct SessionProxy {
    handle: Option<ProxyHandle>,
    dir: PathBuf,
    socket: PathBuf,
    log: Arc<NetworkLog>,
}

impl SessionProxy {
    /// Starts the proxy deciding with `gate` on `dir/proxy.sock`, within the current tokio
    /// runtime; `dir` is the caller's private directory, which the proxy now owns.
    pub fn start(gate: Arc<dyn Gate>, private_networks: PrivateNetworks, dir: PathBuf) -> Result<Self, ProxyError> {
        let socket = dir.join("proxy.sock");
        let log = NetworkLog::new();
        let mut config = ProxyConfig::new(Listen::Unix(socket.clone()));
        config.private_networks = private_networks;
        match Proxy::new(config, gate).with_observer(log.observer()).spawn() {
            Ok(handle) => Ok(SessionProxy { handle: Some(handle), dir, socket, log }),
            Err(e) => {
                let _ = std::fs::remove_dir_all(&dir);
                Err(e)
            }
        }
    }

    /// The unix socket it listens on.
    pub fn socket(&self) -> &Path {
        &self.socket
    }

    /// What it refused, per command.
    pub fn log(&self) -> &Arc<NetworkLog> {
        &self.log
    }
}

impl Drop for SessionProxy {
    fn drop(&mut self) {
        drop(self.handle.take());
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Lines kept per process.
pub const MAX_LINES: usize = 32;
/// Processes kept at once.
pub const MAX_PROCESSES: usize = 1024;

/// The proxy's refusals, by the process they came from (see the module contract).
#[derive(Debug, Default)]
pub struct NetworkLog {
    inner: Mutex<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    by_pid: HashMap<u32, Lines>,
    order: VecDeque<u32>,
}

#[derive(Debug, Default)]
struct Lines {
    lines: Vec<String>,
    cut: usize,
}

impl NetworkLog {
    /// An empty log.
    pub fn new() -> Arc<Self> {
        Arc::new(NetworkLog::default())
    }

    /// The proxy's observer writing into this log.
    pub fn observer(self: &Arc<Self>) -> Observer {
        let log = Arc::clone(self);
        Arc::new(move |event: &ProxyEvent| log.record(event))
    }

    /// Keeps `event` under its peer's process id, when it says something (module contract).
    pub fn record(&self, event: &ProxyEvent) {
        let (Some(pid), Some(line)) = (event.peer_pid, line(event)) else { return };
        let mut inner = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        if !inner.by_pid.contains_key(&pid) {
            if inner.order.len() >= MAX_PROCESSES
                && let Some(oldest) = inner.order.pop_front()
            {
                inner.by_pid.remove(&oldest);
            }
            inner.order.push_back(pid);
        }
        let entry = inner.by_pid.entry(pid).or_default();
        if entry.lines.contains(&line) {
            return;
        }
        match entry.lines.len() < MAX_LINES {
            true => entry.lines.push(line),
            false => entry.cut += 1,
        }
    }

    /// The lines of process `pid`, forgotten here.
    pub fn take(&self, pid: u32) -> Vec<String> {
        let mut inner = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        inner.order.retain(|p| *p != pid);
        let Some(entry) = inner.by_pid.remove(&pid) else { return Vec::new() };
        let mut lines = entry.lines;
        if entry.cut > 0 {
            lines.push(format!("spine sandbox: proxy refused {} more destinations", entry.cut));
        }
        lines
    }
}

/// The line of an event that says something.
fn line(event: &ProxyEvent) -> Option<String> {
    let destination = match event.host.contains(':') {
        true => format!("[{}]:{}", event.host.trim_start_matches('[').trim_end_matches(']'), event.port),
        false => format!("{}:{}", event.host, event.port),
    };
    match &event.outcome {
        Outcome::Denied(reason) => Some(format!("spine sandbox: proxy refused {destination} ({reason})")),
        Outcome::Failed { error } => Some(format!("spine sandbox: proxy allowed {destination} but {error}")),
        Outcome::Asked | Outcome::Allowed { .. } => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proxy::{DenyReason, Protocol};

    fn refused(pid: Option<u32>, host: &str) -> ProxyEvent {
        ProxyEvent {
            protocol: Protocol::HttpConnect,
            peer_pid: pid,
            host: host.to_owned(),
            port: 443,
            outcome: Outcome::Denied(DenyReason::NotAllowed { host: host.to_owned() }),
        }
    }

    #[test]
    fn refusals_are_kept_per_process_once_each_and_taken_once() {
        let log = NetworkLog::new();
        let observer = log.observer();
        observer(&refused(Some(7), "evil.test"));
        observer(&refused(Some(7), "evil.test"));
        observer(&refused(Some(8), "other.test"));
        observer(&refused(None, "nobody.test"));
        assert_eq!(
            log.take(7),
            vec!["spine sandbox: proxy refused evil.test:443 (evil.test is not an allowed domain)".to_owned()]
        );
        assert!(log.take(7).is_empty(), "taken once");
        assert_eq!(log.take(8).len(), 1);
    }

    #[test]
    fn allowed_connections_and_questions_say_nothing() {
        let log = NetworkLog::new();
        let mut event = refused(Some(9), "ok.test");
        event.outcome = Outcome::Asked;
        log.record(&event);
        event.outcome = Outcome::Allowed { address: "192.0.2.1:443".parse().expect("addr"), approved: true };
        log.record(&event);
        assert!(log.take(9).is_empty());
    }

    #[test]
    fn lines_per_process_are_bounded_and_the_rest_counted() {
        let log = NetworkLog::new();
        for i in 0..MAX_LINES + 3 {
            log.record(&refused(Some(1), &format!("h{i}.test")));
        }
        let lines = log.take(1);
        assert_eq!(lines.len(), MAX_LINES + 1);
        assert_eq!(lines[MAX_LINES], "spine sandbox: proxy refused 3 more destinations");
    }

    #[test]
    fn the_oldest_process_is_dropped_beyond_the_bound() {
        let log = NetworkLog::new();
        for pid in 0..=u32::try_from(MAX_PROCESSES).expect("fits") {
            log.record(&refused(Some(pid), "x.test"));
        }
        assert!(log.take(0).is_empty(), "the oldest went");
        assert_eq!(log.take(1).len(), 1);
    }
}
