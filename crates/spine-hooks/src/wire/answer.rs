//! A hook's JSON answer: the universal fields, and the fields its event owns.
//!
//! [`parse`] reads the universal fields every event accepts — `continue` (false →
//! [`HookOutput::halt`] with `stopReason`), `stopReason`, `systemMessage`, `suppressOutput`
//! (true → [`HookOutput::suppress_output`]: the hook's raw output is not shown, its answer
//! applies) and `terminalSequence` (accepted, no effect) — checks `hookSpecificOutput.hookEventName`
//! against the event, and hands an [`Answer`] to the event's [`WireEvent::read`], which takes
//! the fields it owns. What is left and Claude Code defines for the event
//! ([`super::claude_fields`]) is ignored and named in [`HookOutput::ignored`] (a `-v` note);
//! anything else left is a contract error naming the offending fields (docs/hooks.md, "JSON
//! answer"). A value of the wrong type is a contract error too; text that is not a JSON
//! object is a plain failure (the hook could not answer). An answer in Claude Code's async form
//! (`{"async": true}`, [`super::async_form`]) is no opinion: the hook goes on by itself.

use serde_json::{Map, Value};
use spine_core::hooks::HookError;
use spine_protocol::hook::{HookEvent, HookEventName, HookOutput};

use super::claude_fields;
use super::events::WireEvent;
use spine_settings::type_name;

/// The fields of one answer not yet taken by its event.
#[derive(Debug)]
pub struct Answer {
    event: HookEventName,
    top: Map<String, Value>,
    specific: Map<String, Value>,
    /// Set by an event that turns one of its fields into `continue: false` (PermissionRequest
    /// `interrupt`).
    pub(crate) interrupt: Option<String>,
}

impl Answer {
    /// Takes top-level `decision` (a string, or null/absent).
    pub fn take_decision(&mut self) -> Result<Option<String>, HookError> {
        self.take_top_str("decision")
    }

    /// Takes top-level `reason`.
    pub fn take_reason(&mut self) -> Result<Option<String>, HookError> {
        self.take_top_str("reason")
    }

    /// Takes `hookSpecificOutput.additionalContext` (empty text counts as none).
    pub fn take_context(&mut self) -> Result<Option<String>, HookError> {
        Ok(self.take_specific_str("additionalContext")?.filter(|t| !t.trim().is_empty()))
    }

    /// Takes a string of `hookSpecificOutput`.
    pub fn take_specific_str(&mut self, key: &str) -> Result<Option<String>, HookError> {
        let value = self.take_specific(key);
        as_str(self.event, &format!("hookSpecificOutput.{key}"), value)
    }

    /// Takes any value of `hookSpecificOutput` (null counts as absent).
    pub fn take_specific(&mut self, key: &str) -> Option<Value> {
        self.specific.remove(key).filter(|v| !v.is_null())
    }

    /// Drops `hookSpecificOutput` fields Claude Code defines that have no effect in spine.
    pub fn ignore_specific(&mut self, keys: &[&str]) {
        for key in keys {
            self.specific.remove(*key);
        }
    }

    fn take_top_str(&mut self, key: &str) -> Result<Option<String>, HookError> {
        let value = self.top.remove(key).filter(|v| !v.is_null());
        as_str(self.event, key, value)
    }

    /// The event's name, for messages.
    pub fn event(&self) -> HookEventName {
        self.event
    }

    /// A contract error about this answer.
    pub fn violation(&self, detail: impl std::fmt::Display) -> HookError {
        HookError::contract(format!("{} answer: {detail}", self.event))
    }

    /// The fields left that Claude Code defines for the event (ignored); fails when others are
    /// left, which the event does not own.
    fn finish(self) -> Result<Vec<String>, HookError> {
        let event = self.event;
        let (known_top, other_top): (Vec<&String>, Vec<&String>) =
            self.top.keys().partition(|k| claude_fields::defines(event, k, false));
        let (known_specific, other_specific): (Vec<&String>, Vec<&String>) =
            self.specific.keys().partition(|k| claude_fields::defines(event, k, true));
        let mut left: Vec<String> = other_top.iter().map(|k| format!("`{k}`")).collect();
        left.extend(other_specific.iter().map(|k| format!("`hookSpecificOutput.{k}`")));
        if left.is_empty() {
            let mut ignored: Vec<String> = known_top.into_iter().cloned().collect();
            ignored.extend(known_specific.into_iter().map(|k| format!("hookSpecificOutput.{k}")));
            Ok(ignored)
        } else {
            Err(HookError::contract(format!(
                "{} answer has fields the event does not own: {}",
                self.event,
                left.join(", ")
            )))
        }
    }
}

fn as_str(event: HookEventName, field: &str, value: Option<Value>) -> Result<Option<String>, HookError> {
    match value {
        None => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(other) => {
            Err(HookError::contract(format!("{event} answer: `{field}` must be a string, found {}", type_name(&other))))
        }
    }
}

/// Whether text is meant as a JSON answer (its first non-blank character is `{`).
pub fn looks_like_json(text: &str) -> bool {
    text.trim_start().starts_with('{')
}

/// Parses a JSON answer of event `E`.
pub fn parse<E: WireEvent>(text: &str) -> Result<HookOutput<E::Action>, HookError> {
    let value: Value =
        serde_json::from_str(text.trim()).map_err(|e| HookError::failed(format!("answer is not valid JSON: {e}")))?;
    let Value::Object(top) = value else {
        return Err(HookError::failed(format!("answer must be a JSON object, found {}", type_name(&value))));
    };
    parse_object::<E>(top)
}

/// Interprets a JSON object as an answer of event `E`.
pub fn parse_object<E: WireEvent>(mut top: Map<String, Value>) -> Result<HookOutput<E::Action>, HookError> {
    let event = E::NAME;
    if super::async_form::of_object(&top).is_some() {
        return Ok(HookOutput::default());
    }
    if top.get("async") == Some(&Value::Bool(false)) {
        top.remove("async");
        top.remove("asyncTimeout");
    }
    let suppress_output = match top.remove("suppressOutput").filter(|v| !v.is_null()) {
        None => false,
        Some(Value::Bool(b)) => b,
        Some(other) => {
            return Err(HookError::contract(format!(
                "{event} answer: `suppressOutput` must be a boolean, found {}",
                type_name(&other)
            )));
        }
    };
    let proceed = match top.remove("continue").filter(|v| !v.is_null()) {
        None => true,
        Some(Value::Bool(b)) => b,
        Some(other) => {
            return Err(HookError::contract(format!(
                "{event} answer: `continue` must be a boolean, found {}",
                type_name(&other)
            )));
        }
    };
    let stop_reason = as_str(event, "stopReason", top.remove("stopReason").filter(|v| !v.is_null()))?;
    let system_message = as_str(event, "systemMessage", top.remove("systemMessage").filter(|v| !v.is_null()))?;
    top.remove("terminalSequence");
    let specific = match top.remove("hookSpecificOutput").filter(|v| !v.is_null()) {
        None => Map::new(),
        Some(Value::Object(mut map)) => {
            match map.remove("hookEventName") {
                Some(Value::String(name)) if name == event.as_str() => {}
                Some(Value::String(name)) => {
                    return Err(HookError::contract(format!(
                        "{event} answer: hookSpecificOutput.hookEventName is `{name}`, expected `{event}`"
                    )));
                }
                Some(_) | None => {
                    return Err(HookError::contract(format!(
                        "{event} answer: hookSpecificOutput needs \"hookEventName\": \"{event}\""
                    )));
                }
            }
            map
        }
        Some(other) => {
            return Err(HookError::contract(format!(
                "{event} answer: `hookSpecificOutput` must be an object, found {}",
                type_name(&other)
            )));
        }
    };
    let mut answer = Answer { event, top, specific, interrupt: None };
    let action = E::read(&mut answer)?;
    let interrupt = answer.interrupt.take();
    let ignored = answer.finish()?;
    let mut output = HookOutput::new(action);
    output.ignored = ignored;
    output.system_message = system_message.filter(|m| !m.is_empty());
    output.suppress_output = suppress_output;
    if !proceed {
        output = output.halt(stop_reason);
    } else if let Some(message) = interrupt {
        output = output.halt(Some(message));
    }
    Ok(output)
}

/// A text, or a fallback when it is empty.
pub(crate) fn or_default(text: Option<String>, fallback: impl FnOnce() -> String) -> String {
    match text {
        Some(t) if !t.trim().is_empty() => t,
        _ => fallback(),
    }
}

/// The `NAME` of an event, for fallback texts.
pub(crate) fn name<E: HookEvent>() -> &'static str {
    E::NAME.as_str()
}
