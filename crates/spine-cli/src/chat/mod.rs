//! The interactive session: `spine` with no prompt on a terminal, `spine chat`, or `spine run`
//! without a prompt on a terminal. The same flags as `spine run` choose the model, settings,
//! permissions and session (`--continue`, `--resume [ID]` reopen one).
//!
//! Each line typed is a prompt, run to its end like `spine -p` runs one (the same hooks,
//! rules, approvals, transcript and trace), with the conversation so far; or a slash command
//! ([`slash`], [`custom`]). SessionStart fires before the first prompt and SessionEnd when the
//! session ends (`/exit`, Ctrl-D, Ctrl-C twice, `/clear`, `/resume`), not around each prompt.
//! The transcript is written as the session goes, so a session that dies can be resumed.
//! Before anything starts, a project that is not trusted and withholds hooks, rules or MCP
//! servers is asked about (the trust question, [`crate::session_open::open_asking`]).
//!
//! Ctrl-C while a prompt runs cancels it as a signal cancels `spine -p`: the running tool's
//! process group is killed and every pending call is answered `Error [canceled]`; the session
//! stays open with that turn in its history. SIGTERM and SIGHUP end the session (exit status
//! 143 and 129).
//!
//! - this module: opening the session, the loop that reads lines and dispatches them, the end
//!   of the session (SessionEnd) and of what it started;
//! - [`prompt`]: running a prompt (a typed line, a custom command, a wake's turn);
//! - [`editor`]: the line editor (`reedline`);
//! - [`view`]: what a running prompt shows;
//! - [`replay`]: a resumed session's last turns, drawn again when it opens;
//! - [`slash`]: parsing a line into a prompt, a built-in command or a custom one;
//! - [`builtins`]: what the built-in commands do; [`permissions`]: `/permissions`;
//! - [`custom`]: the custom commands of `.claude/commands/` and `.spine/commands/`
//!   (UserPromptExpansion fires for each);
//! - [`plugin_commands`]: the enabled plugins' commands (`/plugin:command`), added to them;
//! - [`skill_commands`]: `/<skill>`, `/skills`, `/output-style` (a skill before a custom
//!   command of the same name);
//! - [`model_switch`]: `/model` through the PreModelSwitch and PostModelSwitch hooks;
//! - [`watch`]: the session's watch — the shell's directory carries over between prompts, and
//!   FileChanged and ConfigChange also fire while the session waits at its prompt;
//! - [`wake`]: an `asyncRewake` hook that exits 2 (or a background subagent that ends) while the
//!   session waits at its prompt starts a turn with its message (prompts share background work);
//! - [`totals`]: usage and cost so far (`/cost`).

mod builtins;
pub(crate) mod custom;
mod editor;
pub(crate) mod model_switch;
mod permissions;
pub(crate) mod plugin_commands;
mod prompt;
mod replay;
mod skill_commands;
pub(crate) mod slash;
mod totals;
mod view;
mod wake;
pub(crate) mod watch;

use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::Arc;

use spine_core::hooks::BackgroundHooks;
use spine_core::observer::RunObserver;
use spine_core::permission::Approver;
use spine_core::runner::{Agent, SessionEnding};
use spine_core::trace::{Trace, TraceSink};
use spine_protocol::hook::{SessionEndReason, SessionSource};
use spine_protocol::message::Message;
use spine_protocol::tool::ToolCall;
use tokio::signal::unix::{SignalKind, signal};

use crate::cli::RunArgs;
use crate::error::{config, exit};
use crate::render::approver::TerminalApprover;
use crate::render::status::StatusLine;
use crate::render::trace_file::TraceFile;
use crate::session_open::{Built, ChosenSession, Opened, build, open_asking};
use custom::CustomCommand;
use editor::{Editor, Input, PromptText};
use slash::Line;
use totals::Totals;
use view::ChatView;

/// Runs an interactive session; the exit status is 0, or 143/129 when a signal ended it.
pub async fn chat(args: RunArgs) -> anyhow::Result<u8> {
    if !(std::io::stdin().is_terminal() && std::io::stdout().is_terminal()) {
        return Err(config(
            "an interactive session needs a terminal (for a script, pass the prompt: spine -p \"PROMPT\")".to_owned(),
        ));
    }
    crate::guard::start();
    if let Err(e) = spine_process::orphans::become_subreaper() {
        eprintln!("warning: cannot become the child subreaper ({e})");
    }
    let Opened { home, launch_dir, session, project, model, settings } = open_asking(&args)?;
    let ChosenSession { id, transcript, resumed } = session;
    let status = StatusLine::start_paused();
    let approver = Arc::new(TerminalApprover::new(project.clone(), Some(status.clone()), &settings));
    let Built { agent, families, mcp } = build(
        &args,
        &settings,
        &project,
        &home,
        model,
        &id,
        Arc::clone(&approver) as Arc<dyn Approver>,
        false,
        Default::default(),
    )
    .await?;
    let user_home = spine_protocol::home::user_home();
    let (mut commands, mut warnings) =
        custom::load(&custom::command_dirs(&project, &home, user_home.as_deref()), settings.trust.is_trusted());
    warnings.extend(plugin_commands::add(&mut commands, &settings.plugins, &project));
    for warning in warnings {
        eprintln!("warning: {warning}");
    }
    let mut trace_sink: Option<Arc<dyn TraceSink>> = match &args.trace {
        Some(path) => {
            Some(Arc::new(TraceFile::create(path).map_err(|e| config(format!("--trace {}: {e}", path.display())))?))
        }
        None => None,
    };
    // OpenTelemetry export, when on: one trace per prompt, flushed when the session ends.
    let telemetry = crate::telemetry::session(&settings, &mut trace_sink);
    let watch_wakes = wake::may_wake(&settings, &agent);
    let colour = crate::colour::Colour::detect();
    let idle = watch_wakes || watch::watches_idle(&agent);
    let editor = Editor::start(Some(home.join("chat_history")), idle, colour.stderr)
        .map_err(|e| config(format!("line editor: {e}")))?;
    let (history, deferred, source) = match resumed {
        Some(loaded) => (loaded.messages, loaded.deferred, SessionSource::Resume),
        None => (Vec::new(), None, SessionSource::Startup),
    };
    let view = Arc::new(ChatView::new(Arc::clone(&status)));
    let session_watch = watch::session_watch(&agent, &settings);
    let mut chat = Chat {
        agent,
        settings,
        home,
        launch_dir,
        persist: !args.no_session_persistence,
        session: SessionState { id, transcript, history, deferred, source, started: false },
        totals: Totals::default(),
        status,
        approver,
        view,
        trace: Trace::new(trace_sink),
        telemetry,
        commands,
        background: BackgroundHooks::new(),
        watch_wakes,
        watch: session_watch,
        last_request_end: None,
        setup: crate::commands::setup::trigger(&args),
        expansion: None,
        carried: Vec::new(),
        invoked_skill: None,
    };
    chat.banner();
    let code = chat.run(&editor).await;
    chat.end_session(SessionEndReason::PromptInputExit).await;
    let Chat { agent, session, .. } = chat;
    drop(agent);
    families.shutdown().await;
    mcp.shutdown().await;
    spine_process::orphans::kill_orphans().await;
    println!();
    if session.started {
        eprintln!("Session {} saved (resume it with `spine --resume {}`).", session.id, session.id);
    }
    Ok(code)
}

/// An open session.
struct Chat {
    agent: Agent,
    settings: spine_settings::Settings,
    home: PathBuf,
    launch_dir: PathBuf,
    persist: bool,
    session: SessionState,
    totals: Totals,
    status: Arc<StatusLine>,
    approver: Arc<TerminalApprover>,
    view: Arc<ChatView>,
    trace: Trace,
    /// OpenTelemetry export, when on.
    telemetry: Option<crate::telemetry::SessionTelemetry>,
    commands: Vec<CustomCommand>,
    /// The background hooks of the session's prompts (they outlive each prompt).
    background: BackgroundHooks,
    /// Whether a hook may wake the session while it waits at its prompt.
    watch_wakes: bool,
    /// What the session watches: its shell's directory, files, settings (`watch`).
    watch: Arc<spine_core::watch::SessionWatch>,
    /// When the last prompt's run ended (whether the model's prompt cache is likely warm).
    last_request_end: Option<std::time::Instant>,
    /// Setup's trigger (`--init`, `--maintenance`), fired with the first prompt.
    setup: Option<String>,
    /// The custom command the next prompt expands (UserPromptExpansion fires for it).
    expansion: Option<spine_protocol::hook::UserPromptExpansionInput>,
    /// Contexts for the next prompt's run (PostModelSwitch's).
    carried: Vec<(spine_protocol::hook::HookEventName, String)>,
    /// The skill the next prompt runs (`/name`, [`skill_commands`]): active for its run.
    invoked_skill: Option<String>,
}

/// The session the prompts go to.
struct SessionState {
    id: String,
    transcript: PathBuf,
    /// The conversation so far (no system message).
    history: Vec<Message>,
    /// A call a deferral left pending (a resumed session's), settled by the first prompt.
    deferred: Option<ToolCall>,
    /// SessionStart's `source` for the first prompt.
    source: SessionSource,
    /// Whether SessionStart fired (a prompt ran).
    started: bool,
}

/// What the loop does after a line.
enum Next {
    Continue,
    Exit,
}

impl Chat {
    fn banner(&self) {
        let resumed = if self.session.history.is_empty() { "" } else { " · resumed" };
        println!(
            "spine · {} · {} · session {}{resumed}\n/help lists the commands; Ctrl-C cancels a running prompt, Ctrl-D or /exit leaves.",
            self.agent.model.model(),
            self.agent.config.cwd.display(),
            self.session.id
        );
        replay::show(&self.session.history);
    }

    /// The loop: read a line, run it; ends on `/exit`, Ctrl-D, a second Ctrl-C on an empty
    /// line, or SIGTERM/SIGHUP.
    async fn run(&mut self, editor: &Editor) -> u8 {
        let (Ok(mut terminate), Ok(mut hangup), Ok(mut interrupt)) =
            (signal(SignalKind::terminate()), signal(SignalKind::hangup()), signal(SignalKind::interrupt()))
        else {
            eprintln!("error: cannot watch signals");
            return exit::FAILED;
        };
        let mut armed = false;
        loop {
            self.fire_watched().await;
            if self.background.has_wake() {
                self.woken(&mut interrupt).await;
                if let Some(code) = self.pending_exit(&mut terminate, &mut hangup) {
                    return code;
                }
                continue;
            }
            let hint = armed.then(|| "Ctrl-C again to exit".to_owned());
            let input = tokio::select! {
                input = self.read_input(editor, PromptText { hint }) => input,
                _ = terminate.recv() => return 143,
                _ = hangup.recv() => return 129,
            };
            let line = match input {
                Ok(Input::Line(line)) => line,
                Ok(Input::Interrupt) if armed => return exit::OK,
                Ok(Input::Interrupt) => {
                    armed = true;
                    continue;
                }
                Ok(Input::Cleared) => {
                    armed = false;
                    continue;
                }
                Ok(Input::Eof) => return exit::OK,
                Ok(Input::Woken) => {
                    // The interrupted prompt line stays; the turn prints below it.
                    println!();
                    continue;
                }
                Err(e) => {
                    eprintln!("error: cannot read the terminal: {e}");
                    return exit::FAILED;
                }
            };
            armed = false;
            if line.trim().is_empty() {
                continue;
            }
            let next = match slash::parse(&line) {
                Line::Prompt(prompt) => {
                    self.prompt(Some(prompt), Vec::new(), &mut interrupt).await;
                    Next::Continue
                }
                Line::Builtin(command) => self.builtin(command, &mut interrupt).await,
                Line::Other { name, arguments } => {
                    if !self.skill_command(&name, &arguments, &mut interrupt).await {
                        self.custom(&name, &arguments, &mut interrupt).await;
                    }
                    Next::Continue
                }
            };
            if let Next::Exit = next {
                return exit::OK;
            }
            // A signal that ended the session while the prompt ran.
            if let Some(code) = self.pending_exit(&mut terminate, &mut hangup) {
                return code;
            }
        }
    }

    fn pending_exit(
        &self,
        terminate: &mut tokio::signal::unix::Signal,
        hangup: &mut tokio::signal::unix::Signal,
    ) -> Option<u8> {
        let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
        if terminate.poll_recv(&mut cx).is_ready() {
            return Some(143);
        }
        if hangup.poll_recv(&mut cx).is_ready() {
            return Some(129);
        }
        None
    }

    /// SessionEnd of the current session, if a prompt started it; its background hooks end.
    pub(super) async fn end_session(&mut self, reason: SessionEndReason) {
        self.background.shutdown();
        self.background = BackgroundHooks::new();
        self.watch = watch::session_watch(&self.agent, &self.settings);
        if !self.session.started {
            return;
        }
        self.agent
            .end_session(SessionEnding {
                session_id: self.session.id.clone(),
                transcript_path: self.session.transcript.clone(),
                env_file: Some(self.session.transcript.with_extension("env")),
                reason,
                trace: self.trace.clone(),
                observer: Arc::clone(&self.view) as Arc<dyn RunObserver>,
            })
            .await;
    }
}

/// Whether a command line without a prompt opens an interactive session: stdin and stdout
/// are terminals and `-p` was not given.
pub fn wanted(args: &RunArgs) -> bool {
    args.prompt.is_none()
        && !args.print
        && !args.init_only
        && std::io::stdin().is_terminal()
        && std::io::stdout().is_terminal()
}
