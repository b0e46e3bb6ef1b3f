//! The turns of a driven session: each user message runs like `spine -p` runs a prompt, with
//! the conversation so far, while the host's requests are answered (see the parent module's
//! contract).

use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use serde_json::{Map, Value, json};
use spine_core::CancellationToken;
use spine_core::hooks::BackgroundHooks;
use spine_core::observer::RunObserver;
use spine_core::runner::{Agent, RunRequest, SessionEnding, SessionRef, SessionTurn};
use spine_core::session::{LoadedSession, Transcript};
use spine_core::trace::Trace;
use spine_core::watch::SessionWatch;
use spine_protocol::hook::{HookEventName, SessionEndReason, SessionSource};
use spine_protocol::message::Message;
use spine_protocol::tool::ToolCall;
use spine_settings::Settings;
use tokio::sync::mpsc::UnboundedReceiver;

use super::approver::HostApprover;
use super::control::Control;
use super::requests;
use super::results::{Totals, interrupted_line, sdk_result};
use super::wire::{self, Inbound, UserLine};
use crate::chat::model_switch::{SwitchRequest, switch};
use crate::cli::RunArgs;
use crate::render::Fanout;
use crate::render::result::{ResultContext, config_error_json, result_json};
use crate::render::stderr::StderrObserver;
use crate::render::stream_json::{HookEvents, InitInfo, StreamJsonObserver};

/// What a session starts with.
pub(crate) struct Parts {
    pub agent: Agent,
    pub args: RunArgs,
    pub settings: Settings,
    pub home: PathBuf,
    pub project: PathBuf,
    pub id: String,
    pub transcript: PathBuf,
    pub resumed: Option<LoadedSession>,
    pub control: Arc<Control>,
    pub approver: Option<Arc<HostApprover>>,
    pub mcp_servers: Vec<(String, String)>,
}

/// A driven session.
pub(crate) struct Session {
    agent: Agent,
    args: RunArgs,
    settings: Settings,
    home: PathBuf,
    project: PathBuf,
    id: String,
    transcript: PathBuf,
    history: Vec<Message>,
    deferred: Option<ToolCall>,
    source: SessionSource,
    started: bool,
    control: Arc<Control>,
    approver: Option<Arc<HostApprover>>,
    mcp_servers: Vec<(String, String)>,
    queue: VecDeque<UserLine>,
    /// A `set_model` that arrived during a turn, for the next one.
    model_change: Option<(String, Option<String>)>,
    /// Contexts for the next turn (PostModelSwitch's).
    carried: Vec<(HookEventName, String)>,
    trace: Trace,
    background: BackgroundHooks,
    watch: Arc<SessionWatch>,
    last_request_end: Option<Instant>,
    code: u8,
    /// The session's cost and per-model usage so far (the SDKs read them from each result).
    totals: Totals,
}

/// What the host asked while a turn ran, for after it.
struct Busy<'a> {
    agent: &'a Agent,
    session_id: &'a str,
    control: &'a Control,
    cancel: &'a CancellationToken,
    queue: &'a mut VecDeque<UserLine>,
    model_change: &'a mut Option<(String, Option<String>)>,
    mcp_servers: &'a [(String, String)],
}

impl Session {
    /// A session ready for its first turn.
    pub(crate) fn new(parts: Parts) -> Self {
        let (history, deferred, source) = match parts.resumed {
            Some(loaded) => (loaded.messages, loaded.deferred, SessionSource::Resume),
            None => (Vec::new(), None, SessionSource::Startup),
        };
        let watch = crate::chat::watch::session_watch(&parts.agent, &parts.settings);
        Session {
            agent: parts.agent,
            args: parts.args,
            settings: parts.settings,
            home: parts.home,
            project: parts.project,
            id: parts.id,
            transcript: parts.transcript,
            history,
            deferred,
            source,
            started: false,
            control: parts.control,
            approver: parts.approver,
            mcp_servers: parts.mcp_servers,
            queue: VecDeque::new(),
            model_change: None,
            carried: Vec::new(),
            trace: Trace::new(None),
            background: BackgroundHooks::new(),
            watch,
            last_request_end: None,
            code: crate::error::exit::OK,
            totals: Totals::default(),
        }
    }

    /// Runs the turns until stdin ends and nothing is queued; the last turn's exit status.
    pub(crate) async fn serve(&mut self, first: Option<UserLine>, inbound: &mut UnboundedReceiver<Inbound>) -> u8 {
        self.queue.extend(first);
        let mut open = true;
        loop {
            if let Some(user) = self.queue.pop_front() {
                open = self.turn(user, inbound, open).await;
                continue;
            }
            if !open {
                break;
            }
            match inbound.recv().await {
                None => open = false,
                Some(Inbound::User(user)) => self.queue.push_back(user),
                Some(Inbound::Request { id, body }) => self.idle_request(&id, &body).await,
                Some(other) => requests::stray(&self.control, other),
            }
        }
        self.code
    }

    /// SessionEnd, when a turn started the session; its background hooks end.
    pub(crate) async fn end(&mut self) {
        self.background.shutdown();
        if !self.started {
            return;
        }
        self.agent
            .end_session(SessionEnding {
                session_id: self.id.clone(),
                transcript_path: self.transcript.clone(),
                env_file: Some(self.transcript.with_extension("env")),
                reason: SessionEndReason::Other,
                trace: self.trace.clone(),
                observer: self.stderr_observer(),
            })
            .await;
    }

    fn stderr_observer(&self) -> Arc<dyn RunObserver> {
        // The stream is the host's; stderr keeps warnings and notes only.
        Arc::new(StderrObserver::new(false, self.args.quiet, false, None))
    }

    /// One turn: `user`'s message run to its end while the host's messages are handled;
    /// whether stdin is still open.
    async fn turn(&mut self, user: UserLine, inbound: &mut UnboundedReceiver<Inbound>, mut open: bool) -> bool {
        let started = Instant::now();
        if self.args.host.replay_user_messages {
            self.control.emit(&replayed(&user.raw, &self.id));
        }
        let expanded = crate::commands::run::slash_prompt::expand(
            &user.text,
            &self.agent,
            &self.settings,
            &self.project,
            &self.home,
        );
        let (prompt, expansion, allow) = match expanded {
            Ok(Some(expanded)) => (expanded.prompt, Some(expanded.expansion), expanded.allow),
            Ok(None) => (user.text.clone(), None, Vec::new()),
            Err(e) => {
                let duration_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
                self.control.emit(&config_error_json(&e, duration_ms));
                self.code = crate::error::exit::FAILED;
                return open;
            }
        };
        let transcript = if self.args.no_session_persistence {
            Transcript::discard(&self.transcript)
        } else {
            match Transcript::open(&self.transcript) {
                Ok(t) => t,
                Err(e) => {
                    let message = format!("cannot write the session transcript {}: {e}", self.transcript.display());
                    self.control.emit(&config_error_json(&message, 0));
                    self.code = crate::error::exit::FAILED;
                    return open;
                }
            }
        };
        self.control.state("running");
        let cancel = CancellationToken::new();
        if let Some(approver) = &self.approver {
            approver.set_turn(cancel.clone());
        }
        let saved_policy = (!allow.is_empty()).then(|| {
            let widened = self.agent.policy.with_allowed(allow);
            std::mem::replace(&mut self.agent.policy, widened)
        });
        let observers: Vec<Arc<dyn RunObserver>> = vec![self.stderr_observer(), Arc::new(self.stream_observer())];
        let turn = if self.started { SessionTurn::Later } else { SessionTurn::First };
        let request = RunRequest::new(self.id.clone(), transcript)
            .prompt(Some(prompt))
            .images(user.images)
            .expansion(expansion)
            .contexts(std::mem::take(&mut self.carried))
            .history(self.history.clone())
            .deferred(self.deferred.take())
            .source(self.source)
            .session_turn(turn)
            .cancel(cancel.clone())
            .observer(Arc::new(Fanout(observers)))
            .trace(self.trace.clone())
            .background(Some(self.background.clone()))
            .watch(Some(Arc::clone(&self.watch)))
            .env_file(Some(self.transcript.with_extension("env")));
        let outcome = {
            let mut busy = Busy {
                agent: &self.agent,
                session_id: &self.id,
                control: &self.control,
                cancel: &cancel,
                queue: &mut self.queue,
                model_change: &mut self.model_change,
                mcp_servers: &self.mcp_servers,
            };
            let run = busy.agent.run(request);
            tokio::pin!(run);
            loop {
                tokio::select! {
                    outcome = &mut run => break outcome,
                    message = inbound.recv(), if open => match message {
                        None => open = false,
                        Some(message) => busy.handle(message),
                    },
                }
            }
        };
        if let Some(policy) = saved_policy {
            self.agent.policy = policy;
        }
        self.last_request_end = Some(Instant::now());
        self.started = true;
        self.source = SessionSource::Resume;
        self.history = outcome.messages.iter().filter(|m| !matches!(m, Message::System { .. })).cloned().collect();
        let duration_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
        let model = self.agent.model.model().to_owned();
        let context = ResultContext {
            duration_ms,
            model: &model,
            context_window: self.agent.model.context_window(),
            include_messages: self.args.include_messages,
        };
        if let Some(line) = interrupted_line(&outcome, &self.id) {
            self.control.emit(&line);
        }
        let mut result = sdk_result(result_json(&outcome, &context));
        self.totals.add(&mut result);
        self.control.emit(&result);
        self.control.state("idle");
        self.code = crate::commands::run::output::exit_status(&outcome, 0);
        // A model change asked for during the turn, now that it is over.
        if let Some((id, spec)) = self.model_change.take() {
            self.set_model(&id, spec).await;
        }
        open
    }

    /// The stream-json observer of one turn (it writes the turn's `init`).
    fn stream_observer(&self) -> StreamJsonObserver {
        let init = InitInfo::new(&self.agent, &self.settings, &self.project, &self.home)
            .with_mcp_servers(self.mcp_servers.clone());
        let hook_events = if self.args.include_hook_events { HookEvents::Include } else { HookEvents::Omit };
        StreamJsonObserver::new(init, hook_events).with_partial_messages(self.args.host.include_partial_messages)
    }

    /// A request between turns.
    async fn idle_request(&mut self, id: &str, body: &Map<String, Value>) {
        match requests::subtype(body) {
            "set_model" => {
                let spec = body.get("model").and_then(Value::as_str).map(str::to_owned);
                self.set_model(id, spec).await;
            }
            _ => {
                let cancel = CancellationToken::new();
                let mut change = None;
                let mut busy = Busy {
                    agent: &self.agent,
                    session_id: &self.id,
                    control: &self.control,
                    cancel: &cancel,
                    queue: &mut self.queue,
                    model_change: &mut change,
                    mcp_servers: &self.mcp_servers,
                };
                busy.handle(Inbound::Request { id: id.to_owned(), body: body.clone() });
            }
        }
    }

    /// `set_model`: `spec` (`None` or `default`: the configured model) through the hooks.
    async fn set_model(&mut self, id: &str, spec: Option<String>) {
        let spec = match spec.as_deref() {
            None | Some("default") => {
                self.settings.model.clone().unwrap_or_else(|| self.agent.model.model().to_owned())
            }
            Some(spec) => spec.to_owned(),
        };
        let request = SwitchRequest {
            spec,
            source: "sdk",
            settings: &self.settings,
            history: &self.history,
            last_request_end: self.last_request_end,
            session: SessionRef {
                session_id: self.id.clone(),
                transcript_path: self.transcript.clone(),
                env_file: Some(self.transcript.with_extension("env")),
                trace: self.trace.clone(),
                observer: self.stderr_observer(),
            },
        };
        // Nobody can confirm a hook's `ask` here: it keeps the model.
        match switch(&mut self.agent, request, |_| false).await {
            Ok(switched) => {
                if let Some(warning) = switched.warning {
                    eprintln!("warning: {warning}");
                }
                self.carried.extend(switched.contexts);
                self.control.emit(&wire::success(id, json!({"model": self.agent.model.model()})));
            }
            Err(why) => self.control.emit(&wire::error(id, &why)),
        }
    }
}

impl Busy<'_> {
    /// A message that arrived while a turn runs (or between turns, without a turn to cancel).
    fn handle(&mut self, message: Inbound) {
        let (id, body) = match message {
            Inbound::User(user) => {
                self.queue.push_back(user);
                return;
            }
            Inbound::Request { id, body } => (id, body),
            other => {
                requests::stray(self.control, other);
                return;
            }
        };
        let answer = match requests::subtype(&body) {
            "interrupt" => {
                self.cancel.cancel();
                // As Claude Code, the pending permission question is withdrawn before the answer.
                self.control.withdraw_questions();
                let queued: Vec<&str> = self.queue.iter().map(|user| user.text.as_str()).collect();
                json!({"still_queued": queued})
            }
            "set_permission_mode" => {
                requests::set_permission_mode(self.agent, &id, &body, self.control, self.session_id);
                return;
            }
            "set_model" => {
                // Applied when the turn ends; the answer waits for it.
                let spec = body.get("model").and_then(Value::as_str).map(str::to_owned);
                *self.model_change = Some((id, spec));
                return;
            }
            "mcp_status" => requests::mcp_status(self.mcp_servers),
            "initialize" => {
                let hooks = body.get("hooks").is_some_and(|h| h.as_object().is_some_and(|h| !h.is_empty()));
                if hooks { json!({"hooks_applied": false}) } else { json!({}) }
            }
            other => {
                self.control.emit(&wire::unsupported(&id, other));
                return;
            }
        };
        self.control.emit(&wire::success(&id, answer));
    }
}

/// A user message written back (`--replay-user-messages`), with the session's id.
fn replayed(raw: &Value, session_id: &str) -> Value {
    let mut line = raw.clone();
    if let Some(map) = line.as_object_mut() {
        map.insert("session_id".to_owned(), json!(session_id));
        map.entry("uuid".to_owned()).or_insert_with(|| json!(uuid::Uuid::new_v4().to_string()));
        map.insert("isReplay".to_owned(), json!(true));
    }
    line
}
