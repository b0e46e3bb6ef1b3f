//! The `hooks` of the Agent SDK's `initialize` control request, parsed into a [`HookConfig`].
//!
//! Shape (what the Python and TypeScript SDKs send): `{"<Event>": [{"matcher": "Bash" | null,
//! "hookCallbackIds": ["hook_0", …], "timeout"?: seconds, "onFailure"?: "continue" |
//! "block"}]}`, or `null` (no hooks).
//!
//! Contract of [`HookConfig::from_sdk`]:
//! - Each matcher object becomes one [`GroupConfig`] of [`Origin::Sdk`] at
//!   `initialize.hooks.<Event>[i]`, its matcher compiled as a settings matcher (`null` or absent:
//!   every subject); each callback id one [`Handler::Callback`] at
//!   `initialize.hooks.<Event>[i].hookCallbackIds[j]`, in the order the host gave.
//! - `timeout` (seconds, as in settings: positive, at most a day) is each of the group's
//!   handlers' time limit; absent or `null`, [`DEFAULT_TIMEOUT_SECS`].
//! - `onFailure`: `"continue"` fails open, any other value fails closed (the SDK's rule);
//!   absent or `null`, open (external hooks' default).
//! - An event spine does not fire (unknown, or Claude Code's and not spine's) is a warning: its
//!   callbacks never run. An unknown field of a matcher object is a warning too (an SDK newer
//!   than spine); every other malformed value is an error naming the JSON path and why, all of
//!   them collected.
//! - The configuration has no `disableAllHooks` of its own; appended to the settings' one
//!   ([`HookConfig::extend`]) it follows theirs (see [`HookConfig::not_run`]).

use serde_json::{Map, Value};
use spine_core::hooks::{FailurePolicy, Matcher, RunMode};
use spine_protocol::hook::HookEventName;
use spine_settings::{Origin, type_name};

use super::events::{self, unsupported_event};
use super::{DEFAULT_TIMEOUT_SECS, Diagnostics, GroupConfig, Handler, HandlerConfig, HookConfig, HookConfigError};
use crate::shell::Shells;

/// The fields of one matcher object the SDK sends.
const FIELDS: &[&str] = &["matcher", "hookCallbackIds", "timeout", "onFailure"];

/// The JSON path of the hooks in the `initialize` request.
const ROOT: &str = "initialize.hooks";

impl HookConfig {
    /// Parses the `hooks` of the SDK host's `initialize` request (docs/hooks.md, "SDK callback
    /// hooks"); `null` is no hooks.
    pub fn from_sdk(hooks: &Value) -> Result<HookConfig, HookConfigError> {
        let origin = Origin::Sdk;
        // Callbacks run no shell: no shell is looked for.
        let shells = Shells::default();
        let mut diag = Diagnostics { origin: &origin, shells: &shells, errors: Vec::new(), warnings: Vec::new() };
        let mut config = HookConfig::default();
        match hooks {
            Value::Null => {}
            Value::Object(events) => {
                for (name, list) in events {
                    parse_event(&mut diag, name, list, &mut config.groups);
                }
            }
            other => diag.error(ROOT, format!("expected an object of events or null, found {}", type_name(other))),
        }
        config.warnings = diag.warnings;
        if diag.errors.is_empty() { Ok(config) } else { Err(HookConfigError { errors: diag.errors }) }
    }
}

fn parse_event(diag: &mut Diagnostics<'_>, name: &str, list: &Value, groups: &mut Vec<GroupConfig>) {
    let path = format!("{ROOT}.{name}");
    let Ok(event) = name.parse::<HookEventName>() else {
        let why = match unsupported_event(name) {
            Some(why) => why,
            // A near miss of a known event is no typo here: the SDK spells its events itself.
            None => events::unknown_event(name).unwrap_or_else(|near_miss| near_miss),
        };
        diag.warn(&path, format!("{why}; its callbacks will not run"));
        return;
    };
    match list {
        Value::Null => {}
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                if let Some(group) = parse_group(diag, event, format!("{path}[{i}]"), item) {
                    groups.push(group);
                }
            }
        }
        other => diag.error(&path, format!("expected an array of matchers, found {}", type_name(other))),
    }
}

fn parse_group(diag: &mut Diagnostics<'_>, event: HookEventName, path: String, item: &Value) -> Option<GroupConfig> {
    let Value::Object(obj) = item else {
        diag.error(&path, format!("expected a matcher object, found {}", type_name(item)));
        return None;
    };
    let errors_before = diag.errors.len();
    for key in obj.keys().filter(|k| !FIELDS.contains(&k.as_str())) {
        diag.unknown(&format!("{path}.{key}"), key, FIELDS);
    }
    let field = |key: &str| obj.get(key).filter(|v| !v.is_null());
    let (matcher_text, matcher) = match field("matcher") {
        None => (None, Matcher::All),
        Some(Value::String(text)) => match Matcher::parse(text) {
            Ok(matcher) => (Some(text.clone()), matcher),
            Err(e) => {
                diag.error(format!("{path}.matcher"), e.to_string());
                (None, Matcher::All)
            }
        },
        Some(other) => {
            diag.error(format!("{path}.matcher"), format!("expected a string or null, found {}", type_name(other)));
            (None, Matcher::All)
        }
    };
    let timeout = match field("timeout") {
        None => std::time::Duration::from_secs_f64(DEFAULT_TIMEOUT_SECS),
        Some(v) => match v.as_f64().filter(|s| *s > 0.0 && s.is_finite() && *s <= 86_400.0) {
            Some(secs) => std::time::Duration::from_secs_f64(secs),
            None => {
                diag.error(format!("{path}.timeout"), format!("expected a positive number of seconds, found {v}"));
                std::time::Duration::ZERO
            }
        },
    };
    // The SDK's rule: "continue" fails open, anything else blocks.
    let on_failure = match field("onFailure") {
        None => FailurePolicy::Open,
        Some(Value::String(s)) if s == "continue" => FailurePolicy::Open,
        Some(_) => FailurePolicy::Closed,
    };
    let handlers = callbacks(diag, &path, obj, timeout, on_failure);
    if diag.errors.len() > errors_before {
        return None;
    }
    Some(GroupConfig { event, origin: Origin::Sdk, path, matcher_text, matcher, sequential: false, handlers })
}

/// The handlers of `hookCallbackIds`, each with the group's time limit and failure policy.
fn callbacks(
    diag: &mut Diagnostics<'_>,
    path: &str,
    obj: &Map<String, Value>,
    timeout: std::time::Duration,
    on_failure: FailurePolicy,
) -> Vec<HandlerConfig> {
    let at = format!("{path}.hookCallbackIds");
    let ids = match obj.get("hookCallbackIds") {
        Some(Value::Array(ids)) => ids,
        None | Some(Value::Null) => {
            diag.error(at, "missing (the list of callback ids)");
            return Vec::new();
        }
        Some(other) => {
            diag.error(at, format!("expected an array of callback ids, found {}", type_name(other)));
            return Vec::new();
        }
    };
    let mut handlers = Vec::with_capacity(ids.len());
    for (j, id) in ids.iter().enumerate() {
        let path = format!("{at}[{j}]");
        match id {
            Value::String(id) if !id.trim().is_empty() => handlers.push(HandlerConfig {
                path,
                handler: Handler::Callback { id: id.clone() },
                timeout,
                on_failure,
                status_message: None,
                run: RunMode::Blocking,
                rewake: None,
                once: false,
                condition: None,
            }),
            Value::String(_) => diag.error(path, "empty callback id"),
            other => diag.error(path, format!("expected a string, found {}", type_name(other))),
        }
    }
    handlers
}

#[cfg(test)]
#[path = "sdk_tests.rs"]
mod tests;
