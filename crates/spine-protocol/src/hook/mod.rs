//! Hook events, their inputs and their outcomes.
//!
//! Every event of the loop is a marker type implementing [`HookEvent`], which names its
//! per-event `Input` (what a hook receives, serialised as Claude Code's stdin JSON fields) and
//! its `Action` (what a hook may answer). Invalid combinations are unrepresentable: a
//! PostToolUse hook cannot return an updated input, a Stop hook cannot block a tool.
//!
//! A hook answers a [`HookOutput`]: its event's action plus the fields every event shares
//! (`systemMessage` for the user, and `continue: false` as [`Halt`]).
//!
//! The list of events lives in one place: the `hook_events!` invocation below.

use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::permission::PermissionMode;

mod config_change;
mod elicitation;
mod instructions_loaded;
mod model_switch;
mod notification;
mod permission_denied;
mod permission_request;
mod post_compact;
mod post_tool_batch;
mod post_tool_use;
mod post_tool_use_failure;
mod pre_compact;
mod pre_tool_use;
mod session_end;
mod session_start;
mod setup;
mod stop;
mod stop_failure;
mod subagent_start;
mod subagent_stop;
mod user_prompt_expansion;
mod user_prompt_submit;
mod watch;

pub use config_change::{ConfigChange, ConfigChangeInput, GateAction};
pub use elicitation::{Elicitation, ElicitationAction, ElicitationInput, ElicitationResult, ElicitationResultInput};
pub use instructions_loaded::{InstructionsLoaded, InstructionsLoadedInput};
pub use model_switch::{ModelSwitchAction, ModelSwitchInput, PostModelSwitch, PreModelSwitch};
pub use notification::{Notification, NotificationInput};
pub use permission_denied::{PermissionDenied, PermissionDeniedInput, RetryAction};
pub use permission_request::{PermissionRequest, PermissionRequestAction, PermissionRequestInput};
pub use post_compact::{PostCompact, PostCompactInput};
pub use post_tool_batch::{BatchCall, PostToolBatch, PostToolBatchInput};
pub use post_tool_use::{PostToolUse, PostToolUseAction, PostToolUseInput, UpdatedOutput};
pub use post_tool_use_failure::{PostToolUseFailure, PostToolUseFailureInput};
pub use pre_compact::{CompactTrigger, PreCompact, PreCompactAction, PreCompactInput};
pub use pre_tool_use::{PreToolUse, PreToolUseAction, PreToolUseInput};
pub use session_end::{SessionEnd, SessionEndInput, SessionEndReason};
pub use session_start::{SessionSource, SessionStart, SessionStartAction, SessionStartInput};
pub use setup::{Setup, SetupInput};
pub use stop::{Stop, StopAction, StopInput};
pub use stop_failure::{StopFailure, StopFailureInput};
pub use subagent_start::{SubagentStart, SubagentStartInput};
pub use subagent_stop::{SubagentStop, SubagentStopInput};
pub use user_prompt_expansion::{UserPromptExpansion, UserPromptExpansionInput};
pub use user_prompt_submit::{PromptAction, UserPromptSubmit, UserPromptSubmitInput};
pub use watch::{CwdChanged, CwdChangedInput, FileChanged, FileChangedInput, WatchAction};

/// Declares the events: `HookEventName`, its list and lookups, [`visit_event`] and
/// [`with_hook_event!`](crate::with_hook_event). `$d` is a literal `$`, for the nested macro.
macro_rules! hook_events {
    ($d:tt; $( $(#[$doc:meta])* $name:ident ),* $(,)?) => {
        /// The name of a hook event, as written in settings files and in `hook_event_name`.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, schemars::JsonSchema)]
        pub enum HookEventName {
            $( $(#[$doc])* $name, )*
        }

        impl HookEventName {
            /// Every event, in lifecycle order.
            pub const ALL: &'static [HookEventName] = &[ $( HookEventName::$name, )* ];

            /// The event's name as written in settings.
            pub fn as_str(self) -> &'static str {
                match self { $( HookEventName::$name => stringify!($name), )* }
            }

            /// Whether the event is about one tool call ([`HookEvent::HAS_TOOL_CALL`]), so
            /// that an `if` rule can apply to it.
            pub const fn has_tool_call(self) -> bool {
                match self { $( HookEventName::$name => <$name as HookEvent>::HAS_TOOL_CALL, )* }
            }
        }

        /// Evaluates `$body` with `$E` naming the marker type of the event `$event` (a
        /// [`HookEventName`]): one `match` over every event, generated from the event list,
        /// for code that needs a trait of its own on the event types
        /// (`with_hook_event!(name, E => fire::<E>(…).await)`).
        #[macro_export]
        macro_rules! with_hook_event {
            ($d event:expr, $d E:ident => $d body:expr) => {
                match $d event {
                    $( $d crate::hook::HookEventName::$name => {
                        type $d E = $d crate::hook::$name;
                        $d body
                    } )*
                }
            };
        }

        /// Calls `visitor` with the marker type of the named event: the one place that maps
        /// names to types, so code that builds hooks from settings needs no list of its own.
        pub fn visit_event<V: EventVisitor>(name: HookEventName, visitor: V) -> V::Output {
            match name { $( HookEventName::$name => visitor.visit::<$name>(), )* }
        }

        impl FromStr for HookEventName {
            type Err = UnknownEvent;
            fn from_str(s: &str) -> Result<Self, Self::Err> {
                match s {
                    $( stringify!($name) => Ok(HookEventName::$name), )*
                    _ => Err(UnknownEvent(s.to_owned())),
                }
            }
        }
    };
}

hook_events! { $;
    /// Once, before the first prompt (`source`: startup, resume, compact).
    SessionStart,
    /// A prompt was submitted; the model has not been asked yet.
    UserPromptSubmit,
    /// A known tool with valid arguments, before the permission decision.
    PreToolUse,
    /// The policy asks for approval; hooks may answer in the approver's place.
    PermissionRequest,
    /// The tool returned successfully.
    PostToolUse,
    /// The tool returned an error.
    PostToolUseFailure,
    /// Before a compaction of the context.
    PreCompact,
    /// After a compaction of the context.
    PostCompact,
    /// The model answered without tool calls: a candidate final answer.
    Stop,
    /// A `Task` call starts a subagent; hooks may add context for it.
    SubagentStart,
    /// A subagent answered without tool calls (Stop, inside a subagent).
    SubagentStop,
    /// Once, when the run ends.
    SessionEnd,
    /// The runtime emitted a notification for the user.
    Notification,
    /// Every call of one model reply has its result, before the next model request.
    PostToolBatch,
    /// The turn ended because the model request failed.
    StopFailure,
    /// The permission step refused a call.
    PermissionDenied,
    /// A memory file was loaded into the session's instructions.
    InstructionsLoaded,
    /// A custom command expanded into a prompt, before the model sees it.
    UserPromptExpansion,
    /// The session's model is about to change; hooks may refuse.
    PreModelSwitch,
    /// The session's model changed.
    PostModelSwitch,
    /// `--init`, `--init-only` or `--maintenance`: the project's setup, before the session.
    Setup,
    /// A settings file changed on disk during the session; hooks may refuse the change.
    ConfigChange,
    /// The working directory of the shell tool changed.
    CwdChanged,
    /// A watched file changed on disk.
    FileChanged,
    /// An MCP server asks the user for input; hooks may answer in the user's place.
    Elicitation,
    /// The answer to an MCP server's question, before it is sent.
    ElicitationResult,
}

impl fmt::Display for HookEventName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Something done once per event type, chosen at run time by [`visit_event`].
pub trait EventVisitor {
    /// What the visit returns.
    type Output;
    /// Visits one event type.
    fn visit<E: HookEvent>(self) -> Self::Output;
}

/// The parts of an event's action the engine reads without knowing the event.
pub trait Action {
    /// The decision in one word, for traces and log lines (`proceed`, `block`, `allow`…).
    fn decision(&self) -> &'static str;
    /// The additional context for the model, if the action carries some.
    fn additional_context(&self) -> Option<&str>;
    /// The action as a trace entry records it, when that differs from its serialization: an
    /// answer carrying what a user would type (an elicitation's `content`) names only the
    /// fields, never their values.
    fn traced(&self) -> Option<Value> {
        None
    }
}

impl Action for ContextAction {
    fn decision(&self) -> &'static str {
        if self.additional_context.is_some() { "context" } else { "proceed" }
    }
    fn additional_context(&self) -> Option<&str> {
        self.additional_context.as_deref()
    }
}

impl Action for Observe {
    fn decision(&self) -> &'static str {
        "observe"
    }
    fn additional_context(&self) -> Option<&str> {
        None
    }
}

/// What kind of handler a hook is, as listings and records name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HookKind {
    /// An in-process hook registered by a library user.
    Rust,
    /// A process started per event (`"type": "command"`).
    Command,
    /// One process per run, one JSON line per event (`"persistent": true`).
    Persistent,
    /// A POST request (`"type": "http"`).
    Http,
    /// One model request (`"type": "prompt"`).
    Prompt,
    /// One call of a connected MCP server's tool (`"type": "mcp_tool"`).
    McpTool,
    /// A read-only verifier agent (`"type": "agent"`).
    Agent,
    /// A function of the SDK host program, registered by its `initialize` control request and
    /// called with a `hook_callback` control request.
    Callback,
}

impl HookKind {
    /// The kind in one word: `rust`, `command`, `persistent`, `http`, `prompt`, `mcp_tool`, `agent`,
    /// `callback`.
    pub fn as_str(self) -> &'static str {
        match self {
            HookKind::Rust => "rust",
            HookKind::Command => "command",
            HookKind::Persistent => "persistent",
            HookKind::Http => "http",
            HookKind::Prompt => "prompt",
            HookKind::McpTool => "mcp_tool",
            HookKind::Agent => "agent",
            HookKind::Callback => "callback",
        }
    }
}

impl fmt::Display for HookKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A string that names no hook event.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown hook event `{0}`")]
pub struct UnknownEvent(pub String);

/// A hook event: its name, what its hooks receive, and what they may answer.
pub trait HookEvent: Send + Sync + 'static {
    /// The event's name.
    const NAME: HookEventName;
    /// The per-event input (the event-specific fields of Claude Code's stdin JSON).
    type Input: Serialize + DeserializeOwned + Clone + fmt::Debug + Send + Sync + 'static;
    /// What one hook of this event may answer; `Default` is "no opinion".
    type Action: Action + Serialize + Default + Clone + fmt::Debug + PartialEq + Send + Sync + 'static;

    /// The value a matcher filters on (tool name, source, trigger…); `None` for events that
    /// have no matcher, whose hooks ignore any matcher they declare.
    fn matcher_subject(input: &Self::Input) -> Option<&str>;

    /// A second name the matcher may accept: a tool's own name when hooks see it under
    /// Claude Code's (`exec_command` seen as `Bash`).
    fn matcher_alias(_input: &Self::Input) -> Option<&str> {
        None
    }

    /// Whether the event is about one tool call: then [`HookEvent::tool_call`] answers for
    /// every input, and an `if` rule can apply.
    const HAS_TOOL_CALL: bool = false;

    /// The tool name and arguments, for events about one tool call (for `if` rules).
    fn tool_call(_input: &Self::Input) -> Option<(&str, &Value)> {
        None
    }
}

/// What one hook answered: its event's action plus the fields every event shares.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct HookOutput<A> {
    /// The event-specific answer.
    pub action: A,
    /// A message shown to the user (stderr), never to the model.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub system_message: Option<String>,
    /// `continue: false`: end the run after this hook (on PostToolUse: prevent continuation).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub halt: Option<Halt>,
    /// Answer fields Claude Code defines for the event that spine does not apply (named in a
    /// `-v` note, never an error).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ignored: Vec<String>,
    /// `suppressOutput: true`: the hook's raw output is not shown to the user (its answer still
    /// applies).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub suppress_output: bool,
}

impl<A> HookOutput<A> {
    /// An output carrying only an action.
    pub fn new(action: A) -> Self {
        HookOutput { action, system_message: None, halt: None, ignored: Vec::new(), suppress_output: false }
    }

    /// Adds `continue: false` with an optional reason for the user.
    pub fn halt(mut self, stop_reason: Option<String>) -> Self {
        self.halt = Some(Halt { stop_reason });
        self
    }

    /// Adds a message for the user.
    pub fn with_system_message(mut self, message: impl Into<String>) -> Self {
        self.system_message = Some(message.into());
        self
    }
}

impl<A> From<A> for HookOutput<A> {
    fn from(action: A) -> Self {
        HookOutput::new(action)
    }
}

/// `continue: false`: the run stops after this hook. On PreToolUse the call is not executed;
/// on PostToolUse it is the wire form of "prevent continuation".
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Halt {
    /// Shown to the user and recorded in the trace.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stop_reason: Option<String>,
}

/// The answer of events that only accept additional context (SubagentStart, PostToolUseFailure).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ContextAction {
    /// Text for the model.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub additional_context: Option<String>,
}

impl ContextAction {
    /// Context for the model.
    pub fn context(text: impl Into<String>) -> Self {
        ContextAction { additional_context: Some(text.into()) }
    }
}

/// The answer of observe-only events (PostCompact, SessionEnd, Notification): nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Observe;

/// The fields every hook input carries (Claude Code's common stdin fields).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HookCommonInput {
    /// The run's session id.
    pub session_id: String,
    /// The run's JSONL transcript (flushed before the hook fires).
    pub transcript_path: PathBuf,
    /// The run's working directory.
    pub cwd: PathBuf,
    /// The permission mode of the run.
    pub permission_mode: PermissionMode,
    /// The reasoning effort set for the run (`{"level": "high"}`); absent when none is set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub effort: Option<crate::message::Effort>,
    /// The firing event.
    pub hook_event_name: HookEventName,
    /// The id of the prompt being processed (absent before the first prompt).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_id: Option<String>,
    /// Inside a subagent: the subagent's id (absent in the main agent, as in Claude Code).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_id: Option<String>,
    /// Inside a subagent: its type (`general-purpose`, or a definition's `name`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_type: Option<String>,
}

/// A hook input as external hooks receive it: common fields, then the event's own.
#[derive(Debug, Clone, Serialize)]
pub struct WireInput<'a, I: Serialize> {
    /// The common fields.
    #[serde(flatten)]
    pub common: &'a HookCommonInput,
    /// The event's fields.
    #[serde(flatten)]
    pub event: &'a I,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_event_name_round_trips_through_its_settings_spelling() {
        for e in HookEventName::ALL {
            assert_eq!(e.as_str().parse::<HookEventName>(), Ok(*e));
            assert_eq!(serde_json::to_value(e).expect("ser"), serde_json::json!(e.as_str()));
        }
        assert_eq!(HookEventName::ALL.len(), 26);
        assert!("PreToolUsee".parse::<HookEventName>().is_err());
    }

    #[test]
    fn exactly_the_five_tool_events_have_a_tool_call_and_answer_it() {
        let tool: Vec<HookEventName> = HookEventName::ALL.iter().copied().filter(|e| e.has_tool_call()).collect();
        assert_eq!(
            tool,
            [
                HookEventName::PreToolUse,
                HookEventName::PermissionRequest,
                HookEventName::PostToolUse,
                HookEventName::PostToolUseFailure,
                HookEventName::PermissionDenied
            ]
        );
        let args = serde_json::json!({"command": "ls"});
        let pre = PreToolUseInput {
            tool_name: "Bash".into(),
            spine_tool_name: None,
            tool_input: args.clone(),
            tool_use_id: "c".into(),
        };
        assert_eq!(PreToolUse::tool_call(&pre), Some(("Bash", &args)));
        let asked = PermissionRequestInput {
            tool_name: "Bash".into(),
            spine_tool_name: None,
            tool_input: args.clone(),
            tool_use_id: "c".into(),
            reason: "r".into(),
            permission_suggestions: Vec::new(),
        };
        assert_eq!(PermissionRequest::tool_call(&asked), Some(("Bash", &args)));
        let post = PostToolUseInput {
            tool_name: "Bash".into(),
            spine_tool_name: None,
            tool_input: args.clone(),
            tool_use_id: "c".into(),
            tool_response: Value::Null,
            duration_ms: 0,
        };
        assert_eq!(PostToolUse::tool_call(&post), Some(("Bash", &args)));
        let failed = PostToolUseFailureInput {
            tool_name: "Bash".into(),
            spine_tool_name: None,
            tool_input: args.clone(),
            tool_use_id: "c".into(),
            error: "e".into(),
            is_interrupt: false,
            duration_ms: 0,
        };
        assert_eq!(PostToolUseFailure::tool_call(&failed), Some(("Bash", &args)));
    }

    #[test]
    fn with_hook_event_names_the_marker_type_of_every_event() {
        for e in HookEventName::ALL {
            assert_eq!(with_hook_event!(*e, E => E::NAME), *e);
        }
    }

    #[test]
    fn a_hook_kind_serializes_as_its_one_word_name() {
        for kind in [HookKind::Rust, HookKind::Command, HookKind::Persistent, HookKind::Http] {
            assert_eq!(serde_json::to_value(kind).expect("ser"), serde_json::json!(kind.as_str()));
            assert_eq!(kind.to_string(), kind.as_str());
        }
    }
}
