//! The session transcript: one JSONL record per line under `$SPINE_HOME/sessions/<id>.jsonl`.
//! Every message is written (unbuffered) as soon as it is appended, so a hook that reads
//! `transcript_path` sees everything up to its own event. `--resume` reads it back, and only
//! by an id of the form spine generates ([`new_session_id`], checked by [`check_session_id`]),
//! so a resumed id can never name a file outside the sessions directory.

use std::fs::{File, OpenOptions};
use std::io::{self, BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};
use spine_protocol::message::Message;
use spine_protocol::pairing::answer_unanswered;
use spine_protocol::run::RunSubtype;
use spine_protocol::tool::{ErrorCode, ToolCall, ToolError};

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

/// One line of a transcript.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
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
                TranscriptRecord::Session { cwd, model, .. } => {
                    loaded.cwd = Some(cwd);
                    loaded.model = Some(model);
                }
            }
        }
        // A run killed mid-round left calls unanswered: answer them so the history is valid.
        let keep: Vec<&str> = loaded.deferred.iter().map(|c| c.id.as_str()).collect();
        let canceled = ToolError::new(ErrorCode::Canceled, "the run ended before this call was answered");
        loaded.repaired = answer_unanswered(&mut loaded.messages, &canceled, &keep);
        Ok(loaded)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resume_accepts_only_generated_session_ids() {
        let id = new_session_id();
        assert_eq!(check_session_id(&id), Ok(()));
        for bad in [
            "../../x",
            "a/b",
            "..",
            "",
            "x.jsonl",
            "/etc/passwd",
            "123E4567-E89B-42D3-A456-426614174000",
            "{123e4567-e89b-42d3-a456-426614174000}",
            "urn:uuid:123e4567-e89b-42d3-a456-426614174000",
            "123e4567e89b42d3a456426614174000",
            "123e4567-e89b-42d3-a456-426614174000/../x",
        ] {
            assert!(check_session_id(bad).is_err(), "{bad}");
        }
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
    /// The working directory of the last run of the session.
    pub cwd: Option<PathBuf>,
    /// The model of the last run of the session, as its client named it.
    pub model: Option<String>,
}
