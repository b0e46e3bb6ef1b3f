//! Connecting one MCP server (stdio child, streamable HTTP or SDK) and closing it again.
//!
//! A stdio server is spawned by us — not by rmcp's child-process transport — so that it
//! leads its own process group ([`GroupChild`], killed on drop) and its stderr is captured; rmcp
//! speaks JSON-RPC over the child's stdout/stdin pipes. An HTTP server gets its own reqwest
//! client (rustls/ring, no connection pooling, no redirects). An SDK server is reached through
//! the program driving spine ([`super::sdk`]). Start-up (spawn/connect, `initialize`,
//! `tools/list`) runs under one time limit.

use std::collections::HashMap;
use std::process::Stdio;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use rmcp::service::RunningService;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{RoleClient, ServiceExt};
use spine_process::GroupChild;
use tokio::io::AsyncReadExt;
use tokio::time::Instant;

use super::config::{ServerConfig, ServerTransport};
use super::elicit::{Routes, SpineClient};
use super::sdk::SdkTransport;
use super::{McpIssue, McpIssueKind, McpOptions};
use crate::ring::OutputRing;

/// Bytes of a stdio server's stderr kept for issues.
const STDERR_CAP: usize = 16 * 1024;
/// Bytes of stderr quoted in an issue.
const STDERR_QUOTE: usize = 2 * 1024;
/// How long `shutdown` waits for the connection to close.
const CLOSE_TIMEOUT: Duration = Duration::from_secs(2);
/// How long a stdio server has to exit after its input closed.
const EXIT_GRACE: Duration = Duration::from_millis(500);

/// A connected server.
pub(crate) struct McpServer {
    /// The configured name.
    pub name: String,
    /// The rmcp client.
    pub service: RunningService<RoleClient, SpineClient>,
    /// The elicitors of the tool calls running on it.
    pub routes: Arc<Routes>,
    /// The stdio child (absent for HTTP and SDK servers).
    child: Option<GroupChild>,
}

impl McpServer {
    /// The stdio child's process id.
    pub(crate) fn pid(&self) -> Option<u32> {
        self.child.as_ref().and_then(GroupChild::id)
    }

    /// Closes the connection (stdin EOF or HTTP session delete), gives a stdio server a moment
    /// to exit, then terminates its process group.
    pub(crate) async fn close(mut self) {
        let _ = self.service.close_with_timeout(CLOSE_TIMEOUT).await;
        if let Some(mut child) = self.child.take() {
            if tokio::time::timeout(EXIT_GRACE, child.wait()).await.is_ok() {
                child.reap_leftovers().await;
            } else {
                child.terminate().await;
            }
        }
    }
}

/// Connects a server and lists its tools.
pub(crate) async fn connect(
    config: ServerConfig,
    options: &McpOptions,
) -> Result<(McpServer, Vec<rmcp::model::Tool>), McpIssue> {
    let startup_timeout = config.startup_timeout.unwrap_or(options.startup_timeout);
    let deadline = Instant::now() + startup_timeout;
    let name = config.name.clone();
    let fail = |kind: McpIssueKind, message: String| McpIssue { server: name.clone(), tool: None, kind, message };
    let routes = Arc::new(Routes::default());
    let spine_client = || SpineClient::new(&config.name, Arc::clone(&routes));
    let (service, child, stderr) = match &config.transport {
        ServerTransport::Stdio { command, args, env, sandbox } => {
            let child_env = match (sandbox, &options.sandboxed_env) {
                (false, _) => &options.child_env,
                (true, Some(confined)) => confined,
                (true, None) => {
                    let why = "configured with \"sandbox\": true, but this session has no sandbox to run it in";
                    return Err(fail(McpIssueKind::Start, why.to_owned()));
                }
            };
            let mut cmd = child_env.command(command);
            cmd.args(args)
                .envs(env)
                .current_dir(&options.cwd)
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped());
            let mut child =
                GroupChild::spawn(&mut cmd, child_env).map_err(|e| fail(McpIssueKind::Start, e.to_string()))?;
            let stderr = Arc::new(Mutex::new(OutputRing::new(STDERR_CAP)));
            if let Some(mut pipe) = child.take_stderr() {
                let ring = Arc::clone(&stderr);
                tokio::spawn(async move {
                    let mut buf = vec![0u8; 4096];
                    while let Ok(n) = pipe.read(&mut buf).await {
                        if n == 0 {
                            break;
                        }
                        ring.lock().unwrap_or_else(PoisonError::into_inner).push(&buf[..n]);
                    }
                });
            }
            let (Some(stdout), Some(stdin)) = (child.take_stdout(), child.take_stdin()) else {
                return Err(fail(McpIssueKind::Start, "the server's pipes could not be opened".to_owned()));
            };
            match tokio::time::timeout_at(deadline, spine_client().serve((stdout, stdin))).await {
                Ok(Ok(service)) => (service, Some(child), Some(stderr)),
                Ok(Err(e)) => {
                    let status = exit_note(&mut child);
                    child.terminate().await;
                    let message = format!("initialization failed: {e}{status}{}", quote(&stderr));
                    return Err(fail(McpIssueKind::Start, message));
                }
                Err(_) => {
                    child.terminate().await;
                    let message =
                        format!("did not initialize within {} s{}", startup_timeout.as_secs_f32(), quote(&stderr));
                    return Err(fail(McpIssueKind::Start, message));
                }
            }
        }
        ServerTransport::Http { url, headers } => {
            crate::web::install_crypto_provider();
            let mut custom = HashMap::new();
            for (k, v) in headers {
                let name = reqwest::header::HeaderName::from_bytes(k.as_bytes())
                    .map_err(|e| fail(McpIssueKind::Config, format!("header name {k:?}: {e}")))?;
                let value = reqwest::header::HeaderValue::from_str(v)
                    .map_err(|e| fail(McpIssueKind::Config, format!("header {k}: {e}")))?;
                custom.insert(name, value);
            }
            let client = reqwest::Client::builder()
                .pool_max_idle_per_host(0)
                .redirect(reqwest::redirect::Policy::none())
                .connect_timeout(startup_timeout)
                .build()
                .map_err(|e| fail(McpIssueKind::Start, format!("cannot build the HTTP client: {e}")))?;
            let transport_config = StreamableHttpClientTransportConfig::with_uri(url.as_str()).custom_headers(custom);
            let transport = StreamableHttpClientTransport::with_client(client, transport_config);
            match tokio::time::timeout_at(deadline, spine_client().serve(transport)).await {
                Ok(Ok(service)) => (service, None, None),
                Ok(Err(e)) => return Err(fail(McpIssueKind::Start, format!("cannot connect to {url}: {e}"))),
                Err(_) => {
                    let message = format!("{url} did not initialize within {} s", startup_timeout.as_secs_f32());
                    return Err(fail(McpIssueKind::Start, message));
                }
            }
        }
        ServerTransport::Sdk { .. } => {
            let Some(host) = &options.sdk_host else {
                let why = "an SDK MCP server (\"type\": \"sdk\") needs a program driving spine over --input-format \
                           stream-json to serve it";
                return Err(fail(McpIssueKind::Start, why.to_owned()));
            };
            let transport = SdkTransport::new(&config.name, Arc::clone(host));
            match tokio::time::timeout_at(deadline, spine_client().serve(transport)).await {
                Ok(Ok(service)) => (service, None, None),
                Ok(Err(e)) => return Err(fail(McpIssueKind::Start, format!("initialization failed: {e}"))),
                Err(_) => {
                    let message = format!(
                        "the SDK server did not initialize within {} s (the program driving spine did not answer)",
                        startup_timeout.as_secs_f32()
                    );
                    return Err(fail(McpIssueKind::Start, message));
                }
            }
        }
    };
    let server = McpServer { name: config.name.clone(), service, routes, child };
    match tokio::time::timeout_at(deadline, server.service.list_all_tools()).await {
        Ok(Ok(tools)) => Ok((server, tools)),
        Ok(Err(e)) => {
            let quoted = stderr.as_ref().map(quote).unwrap_or_default();
            let issue = fail(McpIssueKind::ListTools, format!("tools/list failed: {e}{quoted}"));
            server.close().await;
            Err(issue)
        }
        Err(_) => {
            let issue = fail(
                McpIssueKind::ListTools,
                format!("tools/list did not answer within {} s", startup_timeout.as_secs_f32()),
            );
            server.close().await;
            Err(issue)
        }
    }
}

/// ` (exited with status N)` when the child has already exited.
fn exit_note(child: &mut GroupChild) -> String {
    match child.try_wait() {
        Ok(Some(status)) => format!(" (the server exited: {status})"),
        _ => String::new(),
    }
}

/// `; stderr: …` with the end of the server's stderr, when it wrote any.
fn quote(stderr: &Arc<Mutex<OutputRing>>) -> String {
    let tail = stderr.lock().unwrap_or_else(PoisonError::into_inner).tail(STDERR_QUOTE);
    let text = tail.text.trim();
    if text.is_empty() { String::new() } else { format!("; stderr: {text}") }
}
