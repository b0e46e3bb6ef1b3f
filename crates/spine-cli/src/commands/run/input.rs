//! What `spine run` reads besides its flags: the prompt (the argument, piped stdin, or both)
//! and the `--image` files.
//!
//! Contract: stdin is read only when it is not a terminal; with a prompt argument, a stdin
//! silent for [`STDIN_WAIT`] is skipped with a warning (unless `-q`). A prompt that is empty
//! or only whitespace is none. Every read failure is a configuration error.

use std::io::{IsTerminal, Read};
use std::path::{Path, PathBuf};

use crate::error::config;

/// How long stdin may stay silent, when a prompt was given, before the run goes on without it
/// (Claude Code waits the same 3 s, for a stdin that is an open pipe nobody writes to).
const STDIN_WAIT: std::time::Duration = std::time::Duration::from_secs(3);

/// The prompt: the argument, with stdin appended after a newline when stdin is not a terminal
/// (Claude Code's `[prompt, stdin].filter(Boolean).join("\n")`), or stdin alone without an
/// argument. Trailing newlines of stdin are removed; an empty prompt is none.
pub(super) fn read_prompt(arg: Option<String>, quiet: bool) -> anyhow::Result<Option<String>> {
    let stdin = std::io::stdin();
    if stdin.is_terminal() {
        return Ok(arg);
    }
    let piped = match arg {
        None => {
            let mut text = String::new();
            stdin
                .lock()
                .read_to_string(&mut text)
                .map_err(|e| config(format!("cannot read the prompt from stdin: {e}")))?;
            text
        }
        Some(prompt) => match read_stdin_unless_silent()? {
            Some(text) => join_prompt(&prompt, &text),
            None => {
                if !quiet {
                    eprintln!(
                        "warning: no stdin data received in {}s, going on without it (redirect stdin from /dev/null to skip the wait)",
                        STDIN_WAIT.as_secs()
                    );
                }
                prompt
            }
        },
    };
    let text = piped.trim_end_matches(['\n', '\r']).to_owned();
    Ok(if text.trim().is_empty() { None } else { Some(text) })
}

/// The prompt argument followed by piped stdin: `PROMPT\nSTDIN`, or the prompt alone when stdin
/// is empty.
fn join_prompt(prompt: &str, piped: &str) -> String {
    if piped.is_empty() { prompt.to_owned() } else { format!("{prompt}\n{piped}") }
}

/// Reads stdin to its end, unless nothing (not even its end) arrives within [`STDIN_WAIT`].
fn read_stdin_unless_silent() -> anyhow::Result<Option<String>> {
    let (first_tx, first_rx) = std::sync::mpsc::channel::<()>();
    let (done_tx, done_rx) = std::sync::mpsc::channel::<std::io::Result<String>>();
    std::thread::spawn(move || {
        let mut stdin = std::io::stdin().lock();
        let mut bytes = Vec::new();
        let mut buf = [0u8; 8192];
        let mut signalled = false;
        let result = loop {
            match stdin.read(&mut buf) {
                Ok(n) => {
                    if !signalled {
                        signalled = true;
                        let _ = first_tx.send(());
                    }
                    if n == 0 {
                        break String::from_utf8(bytes)
                            .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e));
                    }
                    bytes.extend_from_slice(&buf[..n]);
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => break Err(e),
            }
        };
        if !signalled {
            let _ = first_tx.send(());
        }
        let _ = done_tx.send(result);
    });
    if first_rx.recv_timeout(STDIN_WAIT).is_err() {
        return Ok(None);
    }
    match done_rx.recv() {
        Ok(Ok(text)) => Ok(Some(text)),
        Ok(Err(e)) => Err(config(format!("cannot read stdin: {e}"))),
        Err(_) => Err(config("cannot read stdin")),
    }
}

/// The `--image` files, read and prepared for the model (relative paths against the directory
/// spine was started in, as `--add-dir`; the user named them, so the workspace boundary does not apply). A missing file
/// or one that is not a usable image is a configuration error naming the flag.
pub(super) fn load_images(
    paths: &[PathBuf],
    started_in: &Path,
) -> anyhow::Result<Vec<spine_protocol::message::ImageBlock>> {
    paths
        .iter()
        .map(|path| {
            let full = started_in.join(path);
            spine_agent::image::load(&full)
                .map(|image| image.block)
                .map_err(|e| config(format!("--image {}: {e}", path.display())))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::join_prompt;

    #[test]
    fn piped_stdin_follows_the_prompt_after_a_newline() {
        assert_eq!(join_prompt("summarize", "line 1\nline 2\n"), "summarize\nline 1\nline 2\n");
        assert_eq!(join_prompt("summarize", ""), "summarize");
    }
}
