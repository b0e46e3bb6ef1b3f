//! `spine --input-format stream-json --output-format stream-json`: a session driven by a
//! program over stdin and stdout — the Agent SDKs' protocol (Python `claude-agent-sdk`,
//! TypeScript `@anthropic-ai/claude-agent-sdk`), so an SDK application runs on spine by
//! pointing its CLI path at `spine` (docs/sdk.md).
//!
//! Contract:
//! - The host may first send `initialize` (its hook callbacks, subagents); the agent is
//!   assembled then — or at the first user message when there is no `initialize` — and the
//!   answer lists the commands, models and what spine honours (`hook_on_failure_supported`).
//! - Each user message is a turn, run like `spine -p` runs a prompt, with the conversation so
//!   far; its lines (`system/init`, `assistant`, `user`, …) and then its `result` are written.
//!   Messages that arrive during a turn wait for it, in order.
//! - Control requests are answered whatever the session is doing ([`requests`]): `interrupt`
//!   cancels the running turn as Ctrl-C does (every pending call answered), the permission
//!   mode changes at once, a model change applies from the next turn.
//! - spine's own requests ([`control`]) — `can_use_tool` ([`approver`]), `hook_callback`,
//!   `mcp_message` ([`host`]) — never wait forever: the host closing stdin, the turn's
//!   cancellation or a time limit ends them, each into its fail-open or fail-closed rule.
//! - A malformed line is answered (a `control_response` error for a request, else a
//!   `system`/`error` line) and the session goes on.
//! - stdin's end ends the session once the running turn and the queued messages are done:
//!   SessionEnd fires, what the session started is stopped, and the exit status is the last
//!   turn's (0 when none ran).
//!
//! - [`wire`]: the lines; [`reader`]: stdin; [`control`]: spine's requests of the host;
//!   [`approver`]: the host answers permission questions; [`requests`]: the host's requests;
//!   [`session`]: the turns.

mod approver;
mod control;
mod host;
mod reader;
mod requests;
mod results;
mod session;
mod wire;

use std::sync::Arc;

use serde_json::json;
use spine_core::permission::{Approver, DenyApprover};

use crate::cli::{OutputFormat, RunArgs};
use crate::error::config;
use crate::session_open::{Built, ChosenSession, Extras, Opened, build, open};
use approver::HostApprover;
use control::Control;
use wire::Inbound;

/// Serves a driven session until stdin ends; the exit status of the last turn.
pub async fn serve(args: RunArgs) -> anyhow::Result<u8> {
    if args.output_format != OutputFormat::StreamJson {
        return Err(config("--input-format stream-json needs --output-format stream-json".to_owned()));
    }
    if args.prompt.is_some() {
        return Err(config(
            "with --input-format stream-json the prompts are user messages on stdin, not an argument".to_owned(),
        ));
    }
    let stdio_approver = match args.host.permission_prompt_tool.as_deref() {
        None => false,
        Some("stdio") => true,
        Some(other) => {
            return Err(config(format!(
                "--permission-prompt-tool {other}: spine asks the program on stdin/stdout (`stdio`); an MCP tool as the approver is not supported"
            )));
        }
    };
    crate::guard::start();
    if let Err(e) = spine_process::orphans::become_subreaper() {
        eprintln!(
            "warning: cannot become the child subreaper ({e}); processes that leave their group may outlive the run"
        );
    }
    let Opened { home, launch_dir: _, session, project, model, settings } = open(&args)?;
    let ChosenSession { id, transcript, resumed } = session;
    // The SDKs ask for session states (`running`, `idle`) to know when a run is over.
    let control = Arc::new(match std::env::var("CLAUDE_CODE_SDK_READS_SESSION_STATE").as_deref() {
        Ok("1") | Ok("true") => Control::with_states(&id),
        _ => Control::new(),
    });
    let mut inbound = reader::start(Arc::clone(&control));

    // Before the agent: `initialize`, or the first user message.
    let mut first = None;
    let mut initialize = None;
    while first.is_none() && initialize.is_none() {
        match inbound.recv().await {
            None => return Ok(crate::error::exit::OK),
            Some(Inbound::Request { id, body }) if requests::subtype(&body) == "initialize" => {
                initialize = Some((id, body));
            }
            Some(Inbound::Request { id, body }) => {
                let answer = match requests::subtype(&body) {
                    "interrupt" => wire::success(&id, json!({"still_queued": []})),
                    other if requests::KNOWN.contains(&other) => {
                        wire::error(&id, &format!("`{other}` needs an initialized session: send `initialize` first"))
                    }
                    other => wire::unsupported(&id, other),
                };
                control.emit(&answer);
            }
            Some(Inbound::User(user)) => first = Some(user),
            Some(other) => requests::stray(&control, other),
        }
    }

    let init = match &initialize {
        Some((_, body)) => requests::Initialize::read(body, args.agents.as_deref()),
        None => Ok(requests::Initialize::default()),
    };
    let init = match init {
        Ok(init) => init,
        Err(e) => {
            // The host learns why; the session cannot start without its hooks.
            if let Some((id, _)) = &initialize {
                control.emit(&wire::error(id, &e));
            }
            return Err(config(format!("initialize: {e}")));
        }
    };
    let host_approver = stdio_approver.then(|| Arc::new(HostApprover::new(Arc::clone(&control))));
    let approver: Arc<dyn Approver> = match &host_approver {
        Some(approver) => Arc::clone(approver) as Arc<dyn Approver>,
        None => Arc::new(DenyApprover),
    };
    let sdk_hooks = match &init.hooks {
        Some(hooks) => match spine_hooks::HookConfig::from_sdk(hooks) {
            Ok(hook_config) => Some(spine_agent::SdkHooks {
                config: hook_config,
                callbacks: Arc::new(host::HostCallbacks { control: Arc::clone(&control) }),
            }),
            Err(e) => {
                if let Some((id, _)) = &initialize {
                    control.emit(&wire::error(id, &e.to_string()));
                }
                return Err(config(format!("initialize: {e}")));
            }
        },
        None => None,
    };
    // The TypeScript SDK names its in-process servers in `initialize`, not in `--mcp-config`.
    let mut args = args;
    args.host.mcp_config.extend(init.sdk_mcp_config());
    let extras = Extras {
        agents: init.agents.clone(),
        system_prompt: init.system_prompt.clone(),
        append_system_prompt: init.append_system_prompt.clone(),
        sdk_hooks,
        mcp_host: Some(Arc::new(host::HostMcp { control: Arc::clone(&control) })),
    };
    let built = build(&args, &settings, &project, &home, model, &id, approver, false, extras).await;
    let Built { agent, families, mcp } = match built {
        Ok(built) => built,
        Err(e) => {
            if let Some((request, _)) = &initialize {
                control.emit(&wire::error(request, &e.to_string()));
            }
            return Err(e);
        }
    };
    if let Some((request, _)) = &initialize {
        let answer = requests::initialized(&agent, &settings, &project, &home, init.hooks.is_some());
        control.emit(&wire::success(request, answer));
    }
    let mut session = session::Session::new(session::Parts {
        agent,
        args,
        settings,
        home,
        project,
        id,
        transcript,
        resumed,
        control,
        approver: host_approver,
        mcp_servers: crate::render::stream_json::mcp_statuses(&mcp),
    });
    let code = session.serve(first, &mut inbound).await;
    session.end().await;
    drop(session);
    families.shutdown().await;
    mcp.shutdown().await;
    spine_process::orphans::kill_orphans().await;
    Ok(code)
}
