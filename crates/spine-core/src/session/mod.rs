//! The session transcript, in Claude Code's JSONL format so that hooks reading
//! `transcript_path` work unchanged: one object per line, `type` `user` / `assistant` /
//! `attachment` / `system`, each with `uuid`, `parentUuid` (the previous line, a single chain),
//! `sessionId`, `cwd`, `timestamp` and `version`; messages as Claude Code's content blocks
//! ([`blocks`]). The line formats, and spine's own `system` lines (`spine_session_start`,
//! `spine_deferred`, `spine_result`, `spine_message`), are in `session/line.rs`; reading back in `session/load.rs`.
//!
//! Every record is written (unbuffered) as soon as it is appended, so a hook that reads
//! `transcript_path` sees everything up to its own event. `--resume` reads it back, and only
//! by an id of the form spine generates ([`new_session_id`], checked by [`check_session_id`]),
//! so a resumed id can never name a file outside the sessions directory.

pub mod blocks;
mod line;
mod load;

use std::fs::{File, OpenOptions};
use std::io::{self, BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use spine_protocol::message::{AssistantMessage, Message};
use spine_protocol::run::{RunSubtype, Usage};
use spine_protocol::tool::ToolCall;

use crate::model::FinishReason;
use line::Chain;
pub use line::timestamp_now;

/// A new session id: a random UUID, lower-case and hyphenated (36 characters).
pub fn new_session_id() -> String {
    uuid::Uuid::new_v4().hyphenated().to_string()
}

/// A string that is not a session id spine generates.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "invalid session id {id:?}: expected a session id as spine prints it (a UUID such as \
     123e4567-e89b-42d3-a456-426614174000); paths and other characters are refused"
)]
pub struct InvalidSessionId {
    /// The refused text (for the message).
    pub id: String,
}

/// Accepts exactly the ids [`new_session_id`] makes: a UUID in lower-case hyphenated form.
/// Anything else — path separators, `..`, braces, `urn:uuid:`, upper case — is refused.
pub fn check_session_id(id: &str) -> Result<(), InvalidSessionId> {
    let refuse = || InvalidSessionId { id: id.to_owned() };
    let parsed = uuid::Uuid::try_parse(id).map_err(|_| refuse())?;
    if parsed.hyphenated().to_string() == id { Ok(()) } else { Err(refuse()) }
}

/// One record of a transcript, as the runner appends it.
#[derive(Debug, Clone, PartialEq)]
pub enum TranscriptRecord {
    /// The run started (or resumed).
    Session {
        /// The id `--resume` takes.
        session_id: String,
        /// The run's working directory.
        cwd: PathBuf,
        /// The model's name as its client reports it.
        model: String,
    },
    /// A message of the conversation.
    Message {
        /// As the model saw it.
        message: Message,
    },
    /// A model turn, with what the provider said about it.
    Reply {
        /// The turn.
        message: AssistantMessage,
        /// Its model, usage and stop reason.
        meta: ReplyMeta,
    },
    /// The conversation was compacted: these messages replace everything before.
    Compacted {
        /// The transcript after compaction.
        messages: Vec<Message>,
    },
    /// A call was deferred; `--resume` fires PreToolUse for it again.
    Deferred {
        /// The pending call.
        call: ToolCall,
    },
    /// The run ended.
    Result {
        /// How.
        subtype: RunSubtype,
    },
}

/// What the provider said about a model turn (the `model`, `usage` and `stop_reason` of an
/// `assistant` line).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ReplyMeta {
    /// The model's name.
    pub model: String,
    /// The request's usage, when the provider reported it.
    pub usage: Option<Usage>,
    /// Why the turn ended.
    pub finish: Option<FinishReason>,
}

/// An append-only transcript file (or none, for runs that keep no transcript).
#[derive(Debug)]
pub struct Transcript {
    path: PathBuf,
    writer: Option<Mutex<Writer>>,
}

#[derive(Debug)]
struct Writer {
    file: File,
    chain: Chain,
}

impl Transcript {
    /// Opens (creating directories) a transcript for appending. An existing transcript (a
    /// resumed session) is continued: new lines chain from its last line.
    pub fn open(path: impl Into<PathBuf>) -> io::Result<Self> {
        let path = path.into();
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let file = OpenOptions::new().create(true).append(true).read(true).open(&path)?;
        let chain = Chain::continuing(BufReader::new(&file).lines().map_while(Result::ok));
        Ok(Transcript { path, writer: Some(Mutex::new(Writer { file, chain })) })
    }

    /// A subagent's transcript (`<session>/subagents/agent-<id>.jsonl`, as Claude Code writes
    /// them): every line has `isSidechain: true` and `agentId`.
    pub fn open_sidechain(path: impl Into<PathBuf>, agent_id: &str) -> io::Result<Self> {
        let transcript = Transcript::open(path)?;
        if let Some(writer) = &transcript.writer {
            let mut writer = writer.lock().map_err(|_| io::Error::other("transcript lock poisoned"))?;
            writer.chain.sidechain = Some(agent_id.to_owned());
        }
        Ok(transcript)
    }

    /// Whether records are written (not a [`Transcript::discard`]).
    pub fn is_recording(&self) -> bool {
        self.writer.is_some()
    }

    /// A transcript that records nothing (its path is still reported to hooks).
    pub fn discard(path: impl Into<PathBuf>) -> Self {
        Transcript { path: path.into(), writer: None }
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends one record, as one line (a compaction writes its boundary and then every kept
    /// message, one line each).
    pub fn append(&self, record: &TranscriptRecord) -> io::Result<()> {
        let Some(writer) = &self.writer else {
            return Ok(());
        };
        let mut writer = writer.lock().map_err(|_| io::Error::other("transcript lock poisoned"))?;
        let Writer { file, chain } = &mut *writer;
        let mut bytes = Vec::new();
        for line in chain.lines(record) {
            serde_json::to_writer(&mut bytes, &line).map_err(io::Error::other)?;
            bytes.push(b'\n');
        }
        file.write_all(&bytes)
    }

    /// Reads a transcript back (spine's, or one Claude Code wrote): the messages, and the call
    /// left pending by a deferral (if the last run ended deferred).
    pub fn load(path: &Path) -> io::Result<LoadedSession> {
        load::load(path)
    }
}

#[cfg(test)]
mod tests;

/// A transcript read back for `--resume`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LoadedSession {
    /// The conversation.
    pub messages: Vec<Message>,
    /// The call a deferral left pending.
    pub deferred: Option<ToolCall>,
    /// Calls the transcript left unanswered, now answered `Error [canceled]`.
    pub repaired: Vec<String>,
    /// The working directory of the last run of the session.
    pub cwd: Option<PathBuf>,
    /// The model of the last run of the session, as its client named it.
    pub model: Option<String>,
}
