//! The line editor of an interactive session (`reedline`): history kept in
//! `$SPINE_HOME/chat_history` (Up/Down, Ctrl-R searches it), multi-line input (Alt-Enter or
//! Shift-Enter, or a line ending with `\`, insert a newline), the emacs key bindings; the prompt
//! in colour unless colour is off (`NO_COLOR`, [`crate::colour`]).
//!
//! Ctrl-C is the editor's own key, not a signal, while a line is being edited (the terminal is
//! in raw mode): on a line with text it clears the line; on an empty line it is reported as
//! [`Input::Interrupt`] (the session decides: the second one in a row exits). Ctrl-D on an empty
//! line is [`Input::Eof`]. Keys that reach the editor in the same read as that Ctrl-C (a paste,
//! type-ahead on a loaded machine) are dropped by reedline, which ends the read there.
//!
//! The editor lives on its own thread (it blocks on the terminal; it reads nothing and uses no
//! CPU while no line is asked for, and while asked it blocks on the terminal, never polls).
//! Started to watch for wakes (a session whose hooks may wake the model, `asyncRewake`), it
//! can be interrupted ([`Editor::interrupt`]: the read ends with [`Input::Woken`], the text
//! typed so far stays for the next read); reedline then polls the terminal every 100 ms while
//! a line is asked for.

use std::borrow::Cow;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use reedline::{
    EditCommand, Emacs, FileBackedHistory, KeyCode, KeyModifiers, Prompt, PromptEditMode, PromptHistorySearch,
    PromptHistorySearchStatus, Reedline, ReedlineEvent, Signal, ValidationResult, Validator, default_emacs_keybindings,
};

/// Lines kept in the history file.
const HISTORY_SIZE: usize = 1_000;

/// The host command Ctrl-C is bound to (so that the editor can tell an empty line from one
/// with text).
const CTRL_C: &str = "spine:ctrl-c";

/// What the user did at the prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Input {
    /// A line (or several, for multi-line input) was submitted.
    Line(String),
    /// Ctrl-C on an empty line.
    Interrupt,
    /// Ctrl-C cleared a line with text.
    Cleared,
    /// Ctrl-D on an empty line, or the terminal closed.
    Eof,
    /// [`Editor::interrupt`] ended the read (the line typed so far is kept for the next one).
    Woken,
}

/// What the prompt shows.
#[derive(Debug, Clone, Default)]
pub struct PromptText {
    /// Shown right of the input (e.g. `Ctrl-C again to exit`).
    pub hint: Option<String>,
}

struct Request {
    prompt: PromptText,
    reply: tokio::sync::oneshot::Sender<std::io::Result<Input>>,
}

/// The editor thread's handle.
pub struct Editor {
    requests: std::sync::mpsc::Sender<Request>,
    interrupt: Option<Arc<AtomicBool>>,
}

impl Editor {
    /// Starts the editor thread; the history is read from and appended to `history`. With
    /// `interruptible`, a read can be ended by [`Editor::interrupt`]. The prompt is coloured
    /// only with `colour` (`crate::colour`: reedline draws on stderr, so stderr's decision).
    pub fn start(history: Option<PathBuf>, interruptible: bool, colour: bool) -> std::io::Result<Self> {
        let interrupt = interruptible.then(|| Arc::new(AtomicBool::new(false)));
        let signal = interrupt.clone();
        let (requests, rx) = std::sync::mpsc::channel::<Request>();
        let history = match history {
            Some(path) => {
                if let Some(dir) = path.parent() {
                    std::fs::create_dir_all(dir)?;
                }
                Some(FileBackedHistory::with_file(HISTORY_SIZE, path).map_err(std::io::Error::other)?)
            }
            None => None,
        };
        std::thread::Builder::new().name("spine-editor".into()).spawn(move || {
            let mut keys = default_emacs_keybindings();
            keys.add_binding(
                KeyModifiers::CONTROL,
                KeyCode::Char('c'),
                ReedlineEvent::ExecuteHostCommand(CTRL_C.into()),
            );
            let mut editor = Reedline::create()
                .with_edit_mode(Box::new(Emacs::new(keys)))
                .with_validator(Box::new(Continuation))
                .with_ansi_colors(colour);
            if let Some(history) = history {
                editor = editor.with_history(Box::new(history));
            }
            if let Some(signal) = signal {
                editor = editor.with_break_signal(signal);
            }
            while let Ok(Request { prompt, reply }) = rx.recv() {
                let _ = reply.send(read(&mut editor, &ChatPrompt(prompt)));
            }
        })?;
        Ok(Editor { requests, interrupt })
    }

    /// Ends the read in progress with [`Input::Woken`] (or the next one, when none is); nothing
    /// when the editor was not started interruptible.
    pub fn interrupt(&self) {
        if let Some(flag) = &self.interrupt {
            flag.store(true, Ordering::Relaxed);
        }
    }

    /// Reads one input.
    pub async fn read(&self, prompt: PromptText) -> std::io::Result<Input> {
        let (reply, answer) = tokio::sync::oneshot::channel();
        self.requests.send(Request { prompt, reply }).map_err(|_| std::io::Error::other("the line editor stopped"))?;
        answer.await.map_err(|_| std::io::Error::other("the line editor stopped"))?
    }
}

fn read(editor: &mut Reedline, prompt: &ChatPrompt) -> std::io::Result<Input> {
    loop {
        match editor.read_line(prompt)? {
            Signal::Success(text) => return Ok(Input::Line(unescape_continuations(&text))),
            Signal::CtrlD => return Ok(Input::Eof),
            Signal::CtrlC => return Ok(Input::Interrupt),
            Signal::ExternalBreak(_) => return Ok(Input::Woken),
            Signal::HostCommand(command) if command == CTRL_C => {
                if editor.current_buffer_contents().is_empty() {
                    return Ok(Input::Interrupt);
                }
                editor.run_edit_commands(&[EditCommand::Clear]);
                return Ok(Input::Cleared);
            }
            _ => {}
        }
    }
}

/// A line ending with `\` continues on the next line.
struct Continuation;

impl Validator for Continuation {
    fn validate(&self, line: &str) -> ValidationResult {
        if line.ends_with('\\') { ValidationResult::Incomplete } else { ValidationResult::Complete }
    }
}

/// The text of a multi-line input: a `\` that ended a line is removed (the newline stays).
pub fn unescape_continuations(text: &str) -> String {
    text.replace("\\\r\n", "\n").replace("\\\n", "\n")
}

struct ChatPrompt(PromptText);

impl Prompt for ChatPrompt {
    fn render_prompt_left(&self) -> Cow<'_, str> {
        Cow::Borrowed("")
    }

    fn render_prompt_right(&self) -> Cow<'_, str> {
        Cow::Owned(self.0.hint.clone().unwrap_or_default())
    }

    fn render_prompt_indicator(&self, _mode: PromptEditMode) -> Cow<'_, str> {
        Cow::Borrowed("> ")
    }

    fn render_prompt_multiline_indicator(&self) -> Cow<'_, str> {
        Cow::Borrowed("  ")
    }

    fn render_prompt_history_search_indicator(&self, search: PromptHistorySearch) -> Cow<'_, str> {
        let prefix = match search.status {
            PromptHistorySearchStatus::Passing => "",
            PromptHistorySearchStatus::Failing => "failing ",
        };
        Cow::Owned(format!("({prefix}reverse-search: {}) ", search.term))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_backslash_at_the_end_of_a_line_continues_the_input_and_is_removed() {
        assert!(matches!(Continuation.validate("first line \\"), ValidationResult::Incomplete));
        assert!(matches!(Continuation.validate("done"), ValidationResult::Complete));
        assert_eq!(unescape_continuations("one \\\ntwo \\\nthree"), "one \ntwo \nthree");
        assert_eq!(unescape_continuations("a \\ b"), "a \\ b", "a backslash inside a line stays");
    }
}
