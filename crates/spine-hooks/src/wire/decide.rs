//! From what a hook returned to its answer, for the three ways of returning one.
//!
//! A process that exited ([`from_exit`]), docs/hooks.md, "Answers of command hooks":
//! - exit 0: stdout starting with `{` is the JSON answer (invalid JSON → failed); other text is
//!   additional context for SessionStart and UserPromptSubmit, ignored elsewhere.
//! - exit 2: a block on events that can block, stderr the reason; JSON on stdout is still read
//!   (its context and universal fields kept, its own block or deny kept; unparsable JSON is
//!   ignored, the block stands). On events that cannot block, a plain failure.
//! - exit 126/127 (the shell could not find or execute the program): a launch error, never a
//!   decision. Nothing else is read as a launch error here: a script that does not exist is
//!   found from the file system before the process is spawned ([`crate::launch`]), never from
//!   stderr, so a guard whose stderr quotes "can't open file" still blocks with exit 2.
//! - any other exit: a failure, unless stdout held a valid JSON answer, which then decides.
//! - stdout over its cap: a failure (the answer cannot be trusted half-read).
//!
//! An HTTP response ([`from_http`]): 2xx + JSON object → parsed like stdout; 2xx + empty body →
//! no opinion; anything else → failure. Status codes never block.
//!
//! A persistent hook's line ([`from_line`]): the JSON answer; `{}` = no opinion.
//!
//! An SDK host callback's answer ([`from_value`]): a JSON object is read as the JSON answer
//! above (`{}` = no opinion, the async form = no opinion); any other value is a failure.

use serde_json::Value;
use spine_core::hooks::HookError;
use spine_protocol::hook::HookOutput;
use spine_settings::type_name;

use super::answer::{looks_like_json, parse, parse_object};
use super::events::WireEvent;

/// How a hook process ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Exit<'a> {
    /// The exit code (`None` when killed by a signal).
    pub code: Option<i32>,
    /// Its stdout (within the cap).
    pub stdout: &'a str,
    /// Whether stdout went over the cap.
    pub stdout_overflow: bool,
    /// Its stderr (capped).
    pub stderr: &'a str,
}

/// The answer of a process that exited.
pub fn from_exit<E: WireEvent>(exit: &Exit<'_>) -> Result<HookOutput<E::Action>, HookError> {
    if exit.stdout_overflow {
        return Err(HookError::failed("stdout went over the answer size limit; answer ignored"));
    }
    let Some(code) = exit.code else {
        return Err(HookError::failed(format!("killed by a signal{}", excerpt(exit.stderr))));
    };
    if let Some(why) = launch_failure(code) {
        return Err(HookError::launch(format!("{why}{}", excerpt(exit.stderr))));
    }
    match code {
        0 if looks_like_json(exit.stdout) => parse::<E>(exit.stdout),
        0 => Ok(HookOutput::new(E::plain_text(exit.stdout).unwrap_or_default())),
        2 => {
            let base = if looks_like_json(exit.stdout) { parse::<E>(exit.stdout).ok() } else { None };
            let base = base.unwrap_or_default();
            match E::exit_block(base.action, exit.stderr.trim().to_owned()) {
                Some(action) => Ok(HookOutput { action, ..base }),
                None => Err(HookError::failed(format!(
                    "exit status 2, but {} cannot block{}",
                    E::NAME,
                    excerpt(exit.stderr)
                ))),
            }
        }
        code => match looks_like_json(exit.stdout).then(|| parse::<E>(exit.stdout)) {
            Some(Ok(answer)) => Ok(answer),
            Some(Err(e)) => {
                Err(HookError::failed(format!("exit status {code}; its JSON answer is unusable: {}", e.detail)))
            }
            None => Err(HookError::failed(format!("exit status {code}{}", excerpt(exit.stderr)))),
        },
    }
}

/// The answer of an HTTP response.
pub fn from_http<E: WireEvent>(status: u16, body: &str) -> Result<HookOutput<E::Action>, HookError> {
    if !(200..300).contains(&status) {
        return Err(HookError::failed(format!("HTTP {status}{}", excerpt(body))));
    }
    if body.trim().is_empty() {
        return Ok(HookOutput::default());
    }
    if !looks_like_json(body) {
        return Err(HookError::failed(format!("HTTP {status} with a body that is not a JSON object{}", excerpt(body))));
    }
    parse::<E>(body)
}

/// The answer of a persistent hook's line.
pub fn from_line<E: WireEvent>(line: &str) -> Result<HookOutput<E::Action>, HookError> {
    if !looks_like_json(line) {
        return Err(HookError::failed(format!("answer line is not a JSON object{}", excerpt(line))));
    }
    parse::<E>(line)
}

/// The answer of an SDK host callback: the JSON value it returned.
pub fn from_value<E: WireEvent>(value: &Value) -> Result<HookOutput<E::Action>, HookError> {
    match value {
        Value::Object(map) => parse_object::<E>(map.clone()),
        other => Err(HookError::failed(format!("answer must be a JSON object, found {}", type_name(other)))),
    }
}

/// Why an exit status means the hook never ran, if it does (the status alone decides).
fn launch_failure(code: i32) -> Option<&'static str> {
    match code {
        126 => Some("exit status 126 (not executable)"),
        127 => Some("exit status 127 (command not found)"),
        _ => None,
    }
}

/// `: <first 300 characters of text>` when there is text.
pub(crate) fn excerpt(text: &str) -> String {
    let text = text.trim();
    if text.is_empty() {
        return String::new();
    }
    let cut: String = text.chars().take(300).collect();
    if cut.len() < text.len() { format!(": {cut}…") } else { format!(": {cut}") }
}
