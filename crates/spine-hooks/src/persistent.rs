//! Persistent hooks (spine's own): one process per run, one JSON line in and one out per event.
//!
//! Contract of [`PersistentProcess`] and [`PersistentHook`]:
//! - The process starts lazily, on the first event that reaches it, in its own process group
//!   (cwd and environment as for command hooks — the hooks' [`ChildEnv`] included —, with the
//!   env file variables, since it may serve SessionStart). One process serves every event and
//!   handler declaring the same command (they share the dedup key).
//! - Per event: the event JSON plus a sequence number [`SEQ_FIELD`] (`"spine_seq": N`, counted
//!   per process object from 1, never reused across restarts) and `\n` on stdin, then one line
//!   read from stdout: the same JSON answer a command hook prints, echoing the same
//!   `"spine_seq": N` (`{"spine_seq": N}` = no opinion). The field is removed before the answer
//!   is read. There are no exit codes: a block is `decision`/`permissionDecision`. Requests are
//!   serialised.
//! - Correlation: the first line read after an event was sent must be a JSON object carrying
//!   that event's `spine_seq`. A line that is not a JSON object, lacks the field or carries
//!   another number (a surplus line of an earlier event, a debug print) fails **that** event and
//!   the process is killed; the next event starts a fresh one (not counted as a death, like a
//!   time-out), so a stray line can never shift an answer onto another event. A line over
//!   [`LINE_CAP`] bytes is a failure and the process is killed.
//! - The time limit covers one exchange; on time-out the group is killed and the next event
//!   starts a fresh process (time-outs are the runtime's doing and do not count as crashes).
//! - A program or script path that does not exist is a launch error, found before spawning
//!   ([`crate::launch`]).
//! - A process that dies (exits, or closes its stdout) fails the event in progress, if any; it
//!   is restarted **once**. After its second death it counts as failed for the rest of the run
//!   (each event fails at once, without a new process).
//! - stderr is drained continuously into a capped buffer; its tail goes into failure details.
//! - Dropping the process (end of run) SIGKILLs its group.

use std::process::{ExitStatus, Stdio};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use spine_core::hooks::{Hook, HookContext, HookError, SessionInfo};
use spine_process::run::pump;
use spine_process::{CappedText, ChildEnv, GroupChild, Stream};
use spine_protocol::hook::HookOutput;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{ChildStdin, ChildStdout};
use tokio_util::sync::CancellationToken;

use crate::command::STDERR_CAP;
use crate::config::Program;
use crate::env;
use crate::launch;
use crate::record::{HookMeta, Raw};
use crate::wire::decide::{self, excerpt};
use crate::wire::{WireEvent, input};

/// The field carrying the sequence number of an event line and of its answer.
pub const SEQ_FIELD: &str = "spine_seq";
/// Bytes of one answer line read at most.
pub const LINE_CAP: usize = 1 << 20;
/// Deaths after which the process is not restarted again.
const MAX_DEATHS: u32 = 2;
/// How long a process that closed its stdout gets to exit before it is terminated.
const EXIT_GRACE: Duration = Duration::from_millis(200);

/// One persistent process, shared by the handlers that declare its command.
pub struct PersistentProcess {
    program: Program,
    child_env: ChildEnv,
    state: tokio::sync::Mutex<State>,
}

#[derive(Default)]
struct State {
    live: Option<Live>,
    deaths: u32,
    starts: u32,
    gave_up: Option<String>,
    /// The sequence number of the last event sent.
    seq: u64,
}

struct Live {
    child: GroupChild,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    stderr: Arc<Mutex<CappedText>>,
}

enum LineRead {
    Line(String),
    Eof,
    TooLong,
}

enum Failure {
    /// The process died: counts toward the restart budget.
    Died(HookError),
    /// The runtime killed it (time-out, cancellation): restarted next time, not counted.
    Killed(HookError),
}

impl PersistentProcess {
    /// A process for `program`, not started yet; it will get `child_env`.
    pub fn new(program: Program, child_env: ChildEnv) -> Self {
        PersistentProcess { program, child_env, state: tokio::sync::Mutex::new(State::default()) }
    }

    /// How many times the process was started so far.
    pub async fn starts(&self) -> u32 {
        self.state.lock().await.starts
    }

    /// Sends one event (its JSON object, without newline) with the next sequence number and
    /// reads its answer line; returns the answer with [`SEQ_FIELD`] removed.
    pub async fn exchange(
        &self,
        session: &SessionInfo,
        event: &[u8],
        timeout: Duration,
        cancel: &CancellationToken,
    ) -> Result<String, HookError> {
        let mut state = self.state.lock().await;
        if let Some(why) = &state.gave_up {
            return Err(HookError::failed(why.clone()));
        }
        if let Some(live) = state.live.as_mut()
            && let Ok(Some(status)) = live.child.try_wait()
        {
            let detail = death_detail(Some(status), &live.stderr);
            state.live = None;
            let error = state.died(HookError::failed(detail));
            if state.gave_up.is_some() {
                return Err(error);
            }
        }
        if state.live.is_none() {
            state.live = Some(self.start(session)?);
            state.starts += 1;
        }
        state.seq += 1;
        let seq = state.seq;
        let line = sequenced(event, seq)?;
        let Some(live) = state.live.as_mut() else {
            return Err(HookError::failed("persistent hook is not running"));
        };
        let outcome = tokio::select! {
            r = tokio::time::timeout(timeout, talk(live, &line)) => match r {
                Ok(Ok(LineRead::Line(answer))) => match in_step(&answer, seq) {
                    Ok(answer) => Ok(answer),
                    Err(why) => {
                        live.child.terminate().await;
                        Err(Failure::Killed(HookError::failed(format!(
                            "answer out of step: {why}; process killed (restarted on the next event){}",
                            excerpt(&answer)
                        ))))
                    }
                },
                Ok(Ok(LineRead::Eof)) | Ok(Err(_)) => {
                    let status = match tokio::time::timeout(EXIT_GRACE, live.child.wait()).await {
                        Ok(status) => status.ok(),
                        Err(_) => live.child.terminate().await,
                    };
                    live.child.reap_leftovers().await;
                    let detail = death_detail(status, &live.stderr);
                    let code = status.and_then(|s| s.code());
                    Err(Failure::Died(if matches!(code, Some(126 | 127)) {
                        HookError::launch(detail)
                    } else {
                        HookError::failed(detail)
                    }))
                }
                Ok(Ok(LineRead::TooLong)) => {
                    live.child.terminate().await;
                    Err(Failure::Died(HookError::failed(format!("answer line went over {LINE_CAP} bytes; process killed"))))
                }
                Err(_) => {
                    live.child.terminate().await;
                    Err(Failure::Killed(HookError::timeout(format!(
                        "no answer line within {:.1} s; process group killed (restarted on the next event)",
                        timeout.as_secs_f64()
                    ))))
                }
            },
            () = cancel.cancelled() => {
                live.child.terminate().await;
                Err(Failure::Killed(HookError::failed("the run was canceled; process group killed")))
            }
        };
        match outcome {
            Ok(answer) => Ok(answer),
            Err(Failure::Killed(e)) => {
                state.live = None;
                Err(e)
            }
            Err(Failure::Died(e)) => {
                state.live = None;
                Err(state.died(e))
            }
        }
    }

    fn start(&self, session: &SessionInfo) -> Result<Live, HookError> {
        if let Some(missing) = launch::missing_script(&self.program, session) {
            return Err(HookError::launch(missing));
        }
        let mut command = env::command(&self.program, session, true).map_err(HookError::launch)?;
        command.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
        let mut child =
            GroupChild::spawn(&mut command, &self.child_env).map_err(|e| HookError::launch(e.to_string()))?;
        let (Some(stdin), Some(stdout)) = (child.take_stdin(), child.take_stdout()) else {
            return Err(HookError::launch("persistent hook started without pipes"));
        };
        let stderr = Arc::new(Mutex::new(CappedText::new(STDERR_CAP)));
        if let Some(pipe) = child.take_stderr() {
            tokio::spawn(pump(pipe, Arc::clone(&stderr), None, Stream::Stderr));
        }
        Ok(Live { child, stdin, stdout: BufReader::new(stdout), stderr })
    }
}

impl State {
    /// Counts a death and notes what follows in the error's detail; gives up once the budget
    /// is spent.
    fn died(&mut self, error: HookError) -> HookError {
        self.deaths += 1;
        if self.deaths >= MAX_DEATHS {
            let why = format!("persistent hook died {} times; not restarted for the rest of the run", self.deaths);
            self.gave_up = Some(why.clone());
            return HookError { detail: format!("{}; {why}", error.detail), ..error };
        }
        HookError { detail: format!("{}; it will be restarted once", error.detail), ..error }
    }
}

/// The event line: the event object with `"spine_seq": seq` added, and `\n`.
fn sequenced(event: &[u8], seq: u64) -> Result<Vec<u8>, HookError> {
    let mut object: serde_json::Map<String, serde_json::Value> =
        serde_json::from_slice(event).map_err(|e| HookError::failed(format!("event is not a JSON object: {e}")))?;
    object.insert(SEQ_FIELD.to_owned(), seq.into());
    let mut line =
        serde_json::to_vec(&object).map_err(|e| HookError::failed(format!("event cannot be encoded: {e}")))?;
    line.push(b'\n');
    Ok(line)
}

/// The answer without its sequence number, when the line answers event `seq`; else why not.
fn in_step(line: &str, seq: u64) -> Result<String, String> {
    let Ok(serde_json::Value::Object(mut answer)) = serde_json::from_str::<serde_json::Value>(line) else {
        return Err(format!("expected a JSON object with \"{SEQ_FIELD}\": {seq}, got a line that is not one"));
    };
    match answer.remove(SEQ_FIELD) {
        Some(serde_json::Value::Number(n)) if n.as_u64() == Some(seq) => {
            serde_json::to_string(&answer).map_err(|e| e.to_string())
        }
        Some(other) => Err(format!("expected \"{SEQ_FIELD}\": {seq}, got {other}")),
        None => Err(format!("expected \"{SEQ_FIELD}\": {seq}, the answer has none")),
    }
}

/// Writes the event line, then reads the answer line.
async fn talk(live: &mut Live, line: &[u8]) -> std::io::Result<LineRead> {
    live.stdin.write_all(line).await?;
    live.stdin.flush().await?;
    read_line(&mut live.stdout, LINE_CAP).await
}

/// Reads one `\n`-terminated line of at most `cap` bytes.
async fn read_line(reader: &mut BufReader<ChildStdout>, cap: usize) -> std::io::Result<LineRead> {
    let mut buf: Vec<u8> = Vec::new();
    loop {
        let available = reader.fill_buf().await?;
        if available.is_empty() {
            return Ok(LineRead::Eof);
        }
        match available.iter().position(|b| *b == b'\n') {
            Some(i) => {
                buf.extend_from_slice(available.get(..i).unwrap_or_default());
                reader.consume(i + 1);
                if buf.last() == Some(&b'\r') {
                    buf.pop();
                }
                return Ok(if buf.len() > cap {
                    LineRead::TooLong
                } else {
                    LineRead::Line(String::from_utf8_lossy(&buf).into_owned())
                });
            }
            None => {
                let n = available.len();
                buf.extend_from_slice(available);
                reader.consume(n);
                if buf.len() > cap {
                    return Ok(LineRead::TooLong);
                }
            }
        }
    }
}

fn death_detail(status: Option<ExitStatus>, stderr: &Mutex<CappedText>) -> String {
    let stderr = stderr.lock().unwrap_or_else(PoisonError::into_inner).text();
    let tail: String = {
        let chars: Vec<char> = stderr.trim_end().chars().collect();
        chars[chars.len().saturating_sub(300)..].iter().collect()
    };
    let how = match status.and_then(|s| s.code()) {
        Some(code) => format!("exited with status {code}"),
        None => "ended".to_owned(),
    };
    format!("persistent hook {how}{}", excerpt(&tail))
}

/// A handler backed by a [`PersistentProcess`].
pub struct PersistentHook {
    process: Arc<PersistentProcess>,
    timeout: Duration,
    meta: Arc<HookMeta>,
}

impl PersistentHook {
    /// A handler of `process` with a time limit per event.
    pub fn new(process: Arc<PersistentProcess>, timeout: Duration, meta: Arc<HookMeta>) -> Self {
        PersistentHook { process, timeout, meta }
    }
}

#[async_trait]
impl<E: WireEvent> Hook<E> for PersistentHook {
    async fn call(&self, ctx: &HookContext, input: &E::Input) -> Result<HookOutput<E::Action>, HookError> {
        let started = Instant::now();
        let event = input::encode::<E>(ctx, input);
        let (raw, result) = match self.process.exchange(&ctx.session, &event, self.timeout, &ctx.cancel).await {
            Ok(answer) => {
                let result = decide::from_line::<E>(&answer);
                (Raw::Line { line: answer }, result)
            }
            Err(e) => (Raw::None, Err(e)),
        };
        self.meta.report::<E>(|| raw, &result, started.elapsed());
        result
    }
}
