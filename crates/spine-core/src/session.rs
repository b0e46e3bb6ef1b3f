//! The session transcript: one JSONL record per line under `$SPINE_HOME/sessions/<id>.jsonl`.
//! Every message is written (unbuffered) as soon as it is appended, so a hook that reads
//! `transcript_path` sees everything up to its own event. `--resume` reads it back.

use std::fs::{File, OpenOptions};
use std::io::{self, BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};
use spine_protocol::message::Message;
use spine_protocol::pairing::answer_unanswered;
use spine_protocol::run::RunSubtype;
use spine_protocol::tool::{ErrorCode, ToolCall, ToolError};

/// One line of a transcript.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum TranscriptRecord {
    /// The run started (or resumed).
    Session {
        /// The session id.
        session_id: String,
        /// The working directory.
        cwd: PathBuf,
        /// The model.
        model: String,
    },
    /// A message of the conversation.
    Message {
        /// The message.
        message: Message,
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

/// An append-only transcript file (or none, for runs that keep no transcript).
#[derive(Debug)]
pub struct Transcript {
    path: PathBuf,
    file: Option<Mutex<File>>,
}

impl Transcript {
    /// Opens (creating directories) a transcript for appending.
    pub fn open(path: impl Into<PathBuf>) -> io::Result<Self> {
        let path = path.into();
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let file = OpenOptions::new().create(true).append(true).open(&path)?;
        Ok(Transcript { path, file: Some(Mutex::new(file)) })
    }

    /// A transcript that records nothing (its path is still reported to hooks).
    pub fn discard(path: impl Into<PathBuf>) -> Self {
        Transcript { path: path.into(), file: None }
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends one record as a line.
    pub fn append(&self, record: &TranscriptRecord) -> io::Result<()> {
        let Some(file) = &self.file else {
            return Ok(());
        };
        let mut line = serde_json::to_vec(record).map_err(io::Error::other)?;
        line.push(b'\n');
        let mut file = file.lock().map_err(|_| io::Error::other("transcript lock poisoned"))?;
        file.write_all(&line)
    }

    /// Reads a transcript back: the messages, and the call left pending by a deferral (if the
    /// last run ended deferred).
    pub fn load(path: &Path) -> io::Result<LoadedSession> {
        let reader = BufReader::new(File::open(path)?);
        let mut loaded = LoadedSession::default();
        for (n, line) in reader.lines().enumerate() {
            let line = line?;
            if line.trim().is_empty() {
                continue;
            }
            let record: TranscriptRecord = serde_json::from_str(&line).map_err(|e| {
                io::Error::new(io::ErrorKind::InvalidData, format!("{}:{}: {e}", path.display(), n + 1))
            })?;
            match record {
                TranscriptRecord::Message { message } => {
                    loaded.messages.push(message);
                }
                TranscriptRecord::Compacted { messages } => loaded.messages = messages,
                TranscriptRecord::Deferred { call } => loaded.deferred = Some(call),
                TranscriptRecord::Result { subtype } => {
                    if subtype != RunSubtype::Deferred {
                        loaded.deferred = None;
                    }
                }
                TranscriptRecord::Session { .. } => {}
            }
        }
        // A run killed mid-round left calls unanswered: answer them so the history is valid.
        let keep: Vec<&str> = loaded.deferred.iter().map(|c| c.id.as_str()).collect();
        let canceled = ToolError::new(ErrorCode::Canceled, "the run ended before this call was answered");
        loaded.repaired = answer_unanswered(&mut loaded.messages, &canceled, &keep);
        Ok(loaded)
    }
}

/// A transcript read back for `--resume`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LoadedSession {
    /// The conversation.
    pub messages: Vec<Message>,
    /// The call a deferral left pending.
    pub deferred: Option<ToolCall>,
    /// Calls the transcript left unanswered, now answered `Error [canceled]`.
    pub repaired: Vec<String>,
}
