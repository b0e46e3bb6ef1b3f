//! `spine worker`: lease items from a mailbox, run them through the pipeline, publish reports.
//! Resolves the mailbox URL, the workspace (`--cwd`), and the settings before anything runs
//! (exit 2 on a bad one); waits for an unreachable NATS server for the URL's `connect_wait_ms`
//! (default 30 s, one stderr line per failed attempt with `-v`) before failing.
//! Drains on SIGTERM or Ctrl-C: stops leasing at once (`/readyz` turns 503), lets what it holds
//! finish within `--drain-timeout`, hands the rest back to the mailbox, exits 0; a second
//! signal exits 130 at once. `--listen ADDR` serves `/healthz`, `/readyz` and `/metrics`
//! (spine-worker's `ops`) from before the mailbox is opened, and prints the bound address.
//! Worker warnings go to stderr (`SPINE_LOG` sets the filter, default `warn`).
//! Assignments' commands run in the sandbox (`workspace-write`, no network) unless
//! `--no-sandbox` or the settings turn it off; when a layer is missing they are refused, never
//! run bare. The `-v` start-up line names the sandbox profile.

use std::sync::Arc;
use std::time::Duration;

use spine_settings::SandboxMode;
use spine_worker::ops::Ops;
use spine_worker::shutdown::{self, ShutdownTrigger};
use spine_worker::url::ConnectRetry;
use spine_worker::{Environment, MailboxUrl, Worker, WorkerConfig};

use super::context;
use crate::cli::WorkerArgs;
use crate::error::{config, exit};

/// How long a NATS worker retries its first connection when the URL has no `connect_wait_ms`.
const DEFAULT_CONNECT_WAIT: Duration = Duration::from_secs(30);

/// Runs `spine worker`.
pub async fn worker(args: WorkerArgs) -> anyhow::Result<u8> {
    // This worker's health, readiness and metrics: served from the start (not ready until the
    // mailbox answers), filled in by the worker.
    let ops = Ops::new();
    let server = match args.listen {
        Some(addr) => Some(listen(addr, Arc::clone(&ops)).await?),
        None => None,
    };
    let filter = tracing_subscriber::EnvFilter::try_from_env("SPINE_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    // Log lines carry colour only where stderr may ([`crate::colour`]): never in a pipe or a file.
    let colour = crate::colour::Colour::detect();
    let _ = tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(colour.stderr)
        .with_env_filter(filter)
        .try_init();
    let url: MailboxUrl = args.mailbox.parse().map_err(|e: spine_worker::url::UrlError| config(e.to_string()))?;
    if args.concurrency == 0 {
        return Err(config("--concurrency must be at least 1"));
    }
    let home = context::spine_home()?;
    crate::guard::start();
    if let Err(e) = spine_process::orphans::become_subreaper() {
        eprintln!(
            "warning: cannot become the child subreaper ({e}); processes that leave their group may outlive items"
        );
    }
    let project = context::project_dir(args.cwd.as_ref())?;
    let settings = context::settings_with(&home, &project, &args.settings, args.trust, None, &[])?;
    // Assignments' commands run in a sandbox (workspace-write, no network) unless --no-sandbox
    // or the settings say otherwise; one that cannot be set up refuses them rather than run
    // them bare.
    let request = crate::sandbox::Request {
        flag: args.no_sandbox.then_some(crate::sandbox::SandboxFlag::Off),
        default_mode: SandboxMode::WorkspaceWrite,
        require: true,
        project: &project,
        home: &home,
        command_line: &spine_agent::CommandLine::default(),
        verbosity: if args.verbose { crate::sandbox::Verbosity::Verbose } else { crate::sandbox::Verbosity::Normal },
        network_approver: None,
    };
    let sandbox = crate::sandbox::start(&settings, request)?;
    // MCP servers are connected once per worker and shared by its assignments.
    let child_env = spine_agent::child_env(&settings);
    let connection = spine_agent::connect_mcp_sandboxed(&settings, &project, &child_env, Some(&sandbox))
        .await
        .map_err(|e| config(e.to_string()))?;
    if let Some(notice) = spine_agent::untrusted_notice(&settings, &project, &connection) {
        eprintln!("{notice}");
    }
    for warning in &connection.warnings {
        eprintln!("warning: {warning}");
    }
    let mcp = connection.tools;
    let telemetry = crate::telemetry::exporter(&settings, "spine-worker", false);
    let sandbox_word = match sandbox.mode() {
        SandboxMode::Off => "sandbox off: commands run unconfined".to_owned(),
        _ => format!("sandbox {}", sandbox.profile()),
    };
    let env = Environment::sandboxed(&project, Some(&home), settings, mcp.tools(), Some(sandbox))
        .map_err(|e| config(e.to_string()))?;
    for warning in &env.warnings {
        eprintln!("warning: {warning}");
    }
    // A worker started before its broker waits for it (a supervisor would otherwise loop).
    let url = url.with_default_connect_wait(DEFAULT_CONNECT_WAIT);
    let verbose = args.verbose;
    let log_retry = move |r: &ConnectRetry| {
        if verbose {
            eprintln!(
                "spine worker: cannot connect to {} (attempt {}: {}); retrying in {} ms ({} ms left)",
                r.url,
                r.attempt,
                r.error,
                r.retry_in.as_millis(),
                r.remaining.as_millis()
            );
        }
    };
    let mailbox = url.open_observed(&log_retry).await.map_err(|e| anyhow::anyhow!("cannot open the mailbox: {e}"))?;
    let mut worker_config = WorkerConfig::new(url.lease());
    worker_config.concurrency = args.concurrency;
    worker_config.once = args.once;
    worker_config.grace = args.grace_ms.map_or(args.drain_timeout, Duration::from_millis);
    worker_config.ops = ops;
    worker_config.telemetry = telemetry.clone();
    if args.verbose {
        eprintln!(
            "spine worker {}: {} (concurrency {}, workspace {}, {sandbox_word})",
            worker_config.worker_id,
            mailbox.describe(),
            args.concurrency,
            project.display()
        );
    }
    let (trigger, listener) = shutdown::channel();
    tokio::spawn(stop_on_signals(trigger));
    let env = Arc::new(env);
    let summary = Worker::new(mailbox, Arc::clone(&env), worker_config).run(listener).await?;
    crate::telemetry::flush(telemetry.as_deref());
    env.families.shutdown().await;
    mcp.shutdown().await;
    spine_process::orphans::kill_orphans().await;
    if let Some(server) = server {
        server.abort();
    }
    if args.verbose {
        eprintln!(
            "spine worker: {} deliveries handled, {} canceled at shutdown",
            summary.deliveries, summary.canceled_at_shutdown
        );
    }
    Ok(exit::OK)
}

/// Binds `--listen`, says where on stderr (`spine worker: listening on ADDR`, the line tests
/// and supervisors read when the port was 0), and serves the endpoints in a task.
async fn listen(addr: std::net::SocketAddr, ops: Arc<Ops>) -> anyhow::Result<tokio::task::JoinHandle<()>> {
    let listener =
        tokio::net::TcpListener::bind(addr).await.map_err(|e| config(format!("--listen {addr}: cannot bind: {e}")))?;
    let bound = listener.local_addr().map_err(|e| config(format!("--listen {addr}: {e}")))?;
    eprintln!("spine worker: listening on {bound} (/healthz, /readyz, /metrics)");
    Ok(tokio::spawn(spine_worker::ops::http::serve(listener, ops)))
}

/// The first SIGTERM or Ctrl-C stops leasing; the second exits at once.
async fn stop_on_signals(trigger: ShutdownTrigger) {
    let mut term = match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("warning: cannot watch SIGTERM: {e}");
            return;
        }
    };
    for round in 0..2 {
        tokio::select! {
            _ = term.recv() => {}
            r = tokio::signal::ctrl_c() => if r.is_err() { return },
        }
        if round == 0 {
            eprintln!(
                "spine worker: draining (not leasing; in-flight items get the drain timeout; signal again to exit now)"
            );
            trigger.fire();
        } else {
            std::process::exit(i32::from(exit::CANCELED));
        }
    }
}
