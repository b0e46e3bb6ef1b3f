//! `spine --init-only`: the Setup hooks (trigger `init`) run, and spine exits — no session,
//! no model request. What they add as context is printed on stdout (one block per hook, in
//! order); a hook failing closed, or `continue: false`, exits 1 with the reason on stderr.
//! `--init` and `--maintenance` fire Setup at the start of the session instead
//! ([`spine_core::runner::RunRequest::setup`]).

use std::path::Path;
use std::sync::Arc;

use spine_core::hooks::events::ContextOutcome;
use spine_core::runner::{Agent, SessionRef};
use spine_core::trace::{Trace, TraceSink};
use spine_protocol::hook::SetupInput;

use crate::error::exit;
use crate::render::stderr::StderrObserver;
use crate::render::trace_file::TraceFile;

/// The Setup trigger `args` ask for: `init` (`--init`, `--init-only`), `maintenance`
/// (`--maintenance`), none.
pub fn trigger(args: &crate::cli::RunArgs) -> Option<String> {
    if args.init || args.init_only {
        Some("init".to_owned())
    } else if args.maintenance {
        Some("maintenance".to_owned())
    } else {
        None
    }
}

/// Fires Setup with trigger `init` in the session `session_id`; returns the exit status.
pub async fn init_only(
    agent: &Agent,
    session_id: &str,
    transcript: &Path,
    verbose: bool,
    trace_path: Option<&Path>,
) -> u8 {
    let sink: Option<Arc<dyn TraceSink>> = match trace_path.map(TraceFile::create) {
        Some(Ok(file)) => Some(Arc::new(file)),
        Some(Err(e)) => {
            eprintln!("error: --trace: {e}");
            return exit::CONFIG;
        }
        None => None,
    };
    let hooks = agent.session_hooks(SessionRef {
        session_id: session_id.to_owned(),
        transcript_path: transcript.to_path_buf(),
        env_file: Some(transcript.with_extension("env")),
        trace: Trace::new(sink),
        observer: Arc::new(StderrObserver::new(verbose, false, false, None)),
    });
    let merged = hooks.runtime.setup(&hooks.ctx, SetupInput { trigger: "init".to_owned() }).await;
    hooks.runtime.shutdown();
    for context in &merged.contexts {
        println!("{context}");
    }
    if let ContextOutcome::Failed(failure) = &merged.outcome {
        eprintln!("error: {failure}");
        return exit::FAILED;
    }
    if let Some(halt) = &merged.halt {
        eprintln!(
            "stopped by Setup hook `{}`: {}",
            halt.hook_id,
            halt.stop_reason.as_deref().unwrap_or("continue: false")
        );
        return exit::FAILED;
    }
    exit::OK
}
