//! A NATS JetStream cluster of real `nats-server` processes ([`crate::nats::server_binary`]) on
//! loopback, for tests of the clustered mailbox and failover soaks.
//!
//! [`NatsCluster::start`] starts `size` nodes (`n1`, `n2`, …), each with its own client,
//! route and monitoring port on 127.0.0.1 (free ports picked when the cluster starts), its
//! JetStream store in a fresh directory under the system temp dir, and routes to every other
//! node; it returns once every node answers and all agree on a meta leader (JetStream accepts
//! streams then). Node indices count from 0.
//!
//! What a soak needs:
//!
//! | call | what |
//! | --- | --- |
//! | [`client_url`](NatsCluster::client_url)`(i)` | `nats://127.0.0.1:PORT` of node `i` |
//! | [`seed_url`](NatsCluster::seed_url)`()` | every node as one seed list: `nats://127.0.0.1:A,127.0.0.1:B,…` (a mailbox URL) |
//! | [`client_urls`](NatsCluster::client_urls)`()` | every node's client URL (for `async_nats::connect` with several addresses) |
//! | [`kill`](NatsCluster::kill)`(i)` | `kill -9` node `i` (SIGKILL, reaped); its store stays |
//! | [`restart`](NatsCluster::restart)`(i)` | start node `i` again on the same ports and store, wait until it serves and a meta leader is known |
//! | [`meta_leader`](NatsCluster::meta_leader)`()` | the node leading JetStream's meta group (waits for one) |
//! | [`stream_leader`](NatsCluster::stream_leader)`(name)` | the node leading a stream of the global account (waits for one) |
//! | [`is_running`](NatsCluster::is_running)`(i)`, [`node_name`](NatsCluster::node_name)`(i)`, [`log`](NatsCluster::log)`(i)` | state, server name, log text |
//!
//! Waits poll the nodes' monitoring endpoint (`/jsz`) every 100 ms and give up after
//! [`READY_WAIT`] with an error that carries the last answer (a guard against a hung test,
//! not a timing assertion). Dropping the cluster kills every node and removes its directory.
//! Ports are picked by binding port 0 and releasing it, so another process may take one in
//! between (rare; the start then fails with the node's log in the error).

use std::io;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// How long a wait (start, restart, a leader) may take before it fails.
pub const READY_WAIT: Duration = Duration::from_secs(60);

/// One `nats-server` of the cluster.
struct Node {
    name: String,
    client_port: u16,
    http_port: u16,
    config: PathBuf,
    log: PathBuf,
    child: Option<Child>,
}

/// A running cluster; see the module docs.
pub struct NatsCluster {
    dir: PathBuf,
    nodes: Vec<Node>,
}

fn free_ports(n: usize) -> io::Result<Vec<u16>> {
    // Hold every listener until all are picked, so that the ports differ.
    let listeners = (0..n).map(|_| std::net::TcpListener::bind("127.0.0.1:0")).collect::<io::Result<Vec<_>>>()?;
    listeners.iter().map(|l| l.local_addr().map(|a| a.port())).collect()
}

impl NatsCluster {
    /// Starts `size` nodes (1–5; 3 for R3 streams) and waits for a meta leader.
    pub async fn start(size: usize) -> io::Result<Self> {
        if !(1..=5).contains(&size) {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, "a cluster has 1 to 5 nodes"));
        }
        let dir = std::env::temp_dir().join(format!("spine-nats-cluster-{}", uuid::Uuid::new_v4().simple()));
        std::fs::create_dir_all(&dir)?;
        let ports = free_ports(size * 3)?;
        let route_ports: Vec<u16> = (0..size).map(|i| ports[i * 3 + 1]).collect();
        let routes: Vec<String> = route_ports.iter().map(|p| format!("\"nats-route://127.0.0.1:{p}\"")).collect();
        let mut nodes = Vec::new();
        for i in 0..size {
            let name = format!("n{}", i + 1);
            let (client_port, route_port, http_port) = (ports[i * 3], ports[i * 3 + 1], ports[i * 3 + 2]);
            let store = dir.join(&name);
            let config = dir.join(format!("{name}.conf"));
            let text = format!(
                "server_name: {name}\nlisten: \"127.0.0.1:{client_port}\"\nhttp: \"127.0.0.1:{http_port}\"\n\
                 jetstream {{ store_dir: \"{}\", max_memory_store: 256MB, max_file_store: 1GB }}\n\
                 cluster {{ name: \"spine-test\", listen: \"127.0.0.1:{route_port}\", routes: [{}] }}\n",
                store.display(),
                routes.join(", ")
            );
            std::fs::write(&config, text)?;
            nodes.push(Node {
                name: name.clone(),
                client_port,
                http_port,
                config,
                log: dir.join(format!("{name}.log")),
                child: None,
            });
        }
        let mut cluster = NatsCluster { dir, nodes };
        for i in 0..size {
            cluster.spawn(i)?;
        }
        cluster.meta_leader().await?;
        Ok(cluster)
    }

    fn spawn(&mut self, node: usize) -> io::Result<()> {
        let n = &mut self.nodes[node];
        let log = std::fs::OpenOptions::new().create(true).append(true).open(&n.log)?;
        let child = Command::new(crate::nats::server_binary())
            .arg("-c")
            .arg(&n.config)
            .stdin(Stdio::null())
            .stdout(log.try_clone()?)
            .stderr(log)
            .spawn()
            .map_err(|e| io::Error::new(e.kind(), format!("cannot start nats-server: {e}")))?;
        n.child = Some(child);
        Ok(())
    }

    /// Number of nodes.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// Whether the cluster has no nodes (never: [`NatsCluster::start`] refuses 0).
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// Node `node`'s client URL, `nats://127.0.0.1:PORT`.
    pub fn client_url(&self, node: usize) -> String {
        format!("nats://127.0.0.1:{}", self.nodes[node].client_port)
    }

    /// Every node's client URL, in node order (for a client that takes several addresses).
    pub fn client_urls(&self) -> Vec<String> {
        (0..self.nodes.len()).map(|i| self.client_url(i)).collect()
    }

    /// Every node as one seed list, `nats://127.0.0.1:A,127.0.0.1:B,…` (a mailbox URL's base).
    pub fn seed_url(&self) -> String {
        let seeds: Vec<String> = self.nodes.iter().map(|n| format!("127.0.0.1:{}", n.client_port)).collect();
        format!("nats://{}", seeds.join(","))
    }

    /// Node `node`'s server name (`n1`, …), as JetStream names leaders and peers.
    pub fn node_name(&self, node: usize) -> &str {
        &self.nodes[node].name
    }

    /// The index of the node named `name`.
    pub fn node_index(&self, name: &str) -> Option<usize> {
        self.nodes.iter().position(|n| n.name == name)
    }

    /// Whether node `node` runs (it was not killed, or it was restarted).
    pub fn is_running(&self, node: usize) -> bool {
        self.nodes[node].child.is_some()
    }

    /// Node `node`'s log so far.
    pub fn log(&self, node: usize) -> String {
        std::fs::read_to_string(&self.nodes[node].log).unwrap_or_default()
    }

    /// `kill -9` node `node` and reap it; its store stays for [`NatsCluster::restart`]. A node
    /// that is not running is left alone.
    pub fn kill(&mut self, node: usize) {
        if let Some(mut child) = self.nodes[node].child.take() {
            // `Child::kill` sends SIGKILL on Unix.
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Starts node `node` again (same ports, same store), waits until it answers and the
    /// cluster has a meta leader. A running node is killed first.
    pub async fn restart(&mut self, node: usize) -> io::Result<()> {
        self.kill(node);
        self.spawn(node)?;
        self.wait_for(|c| {
            let node_up = c.jsz(node, "");
            async move { node_up.await.ok().map(|_| ()) }
        })
        .await?;
        self.meta_leader().await.map(|_| ())
    }

    /// The node leading the meta group, once every running node agrees on one.
    pub async fn meta_leader(&self) -> io::Result<usize> {
        self.wait_for(|c| async move {
            let mut leader = None;
            for i in (0..c.len()).filter(|i| c.is_running(*i)) {
                let jsz = c.jsz(i, "").await.ok()?;
                let name = jsz.pointer("/meta_cluster/leader").and_then(Value::as_str).filter(|l| !l.is_empty())?;
                if leader.is_some_and(|l| l != name) {
                    return None;
                }
                leader = Some(name.to_owned());
            }
            leader.and_then(|l| c.node_index(&l))
        })
        .await
    }

    /// The node leading stream `stream` (of the global account), once a running node reports
    /// one.
    pub async fn stream_leader(&self, stream: &str) -> io::Result<usize> {
        self.wait_for(|c| async move {
            for i in (0..c.len()).filter(|i| c.is_running(*i)) {
                let Ok(jsz) = c.jsz(i, "?accounts=true&streams=true").await else { continue };
                let accounts = jsz.get("account_details").and_then(Value::as_array).cloned().unwrap_or_default();
                for account in accounts {
                    let streams = account.get("stream_detail").and_then(Value::as_array).cloned().unwrap_or_default();
                    for s in streams.iter().filter(|s| s.get("name").and_then(Value::as_str) == Some(stream)) {
                        if let Some(leader) = s.pointer("/cluster/leader").and_then(Value::as_str)
                            && let Some(index) = c.node_index(leader)
                        {
                            return Some(index);
                        }
                    }
                }
            }
            None
        })
        .await
    }

    /// Polls `probe` until it answers, for up to [`READY_WAIT`].
    async fn wait_for<'a, F, Fut, T>(&'a self, probe: F) -> io::Result<T>
    where
        F: Fn(&'a Self) -> Fut,
        Fut: std::future::Future<Output = Option<T>>,
    {
        let deadline = tokio::time::Instant::now() + READY_WAIT;
        loop {
            if let Some(found) = probe(self).await {
                return Ok(found);
            }
            if tokio::time::Instant::now() >= deadline {
                let logs: Vec<String> = (0..self.len())
                    .map(|i| {
                        let log = self.log(i);
                        let tail: Vec<&str> =
                            log.lines().rev().take(15).collect::<Vec<_>>().into_iter().rev().collect();
                        format!("--- {} ---\n{}", self.node_name(i), tail.join("\n"))
                    })
                    .collect();
                return Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    format!("the NATS cluster did not get ready within {READY_WAIT:?}\n{}", logs.join("\n")),
                ));
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// `GET /jsz{query}` on node `node`'s monitoring port.
    async fn jsz(&self, node: usize, query: &str) -> io::Result<Value> {
        let port = self.nodes[node].http_port;
        let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", port)).await?;
        let request = format!("GET /jsz{query} HTTP/1.0\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
        stream.write_all(request.as_bytes()).await?;
        let mut response = Vec::new();
        stream.read_to_end(&mut response).await?;
        let text = String::from_utf8_lossy(&response);
        let body = text.split_once("\r\n\r\n").map(|(_, b)| b).unwrap_or_default();
        serde_json::from_str(body).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, format!("/jsz: {e}")))
    }
}

impl Drop for NatsCluster {
    fn drop(&mut self) {
        for i in 0..self.nodes.len() {
            self.kill(i);
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
