//! What a Rust program embedding spine writes (docs/library.md walks through it):
//!
//! 1. an agent on an OpenAI-compatible model (`OPENAI_BASE_URL`, `OPENAI_API_KEY`; the model
//!    name from `EMBED_MODEL`, default `gpt-4.1-mini`);
//! 2. a PreToolUse hook that rewrites a command — `rm -rf PATH` becomes a move of PATH into
//!    `.trash/`, so nothing the model deletes is lost;
//! 3. a PostToolUse hook that redacts output — anything shaped like an API key (`sk-…`) is
//!    replaced before the model reads it;
//! 4. a custom tool, `word_count`;
//! 5. a run, then its trace: which hook rewrote or redacted what.
//!
//! `cargo run -p spine-embed-example -- PROJECT_DIR "PROMPT"`

// Unit tests link the dev-dependencies of the integration test too.
#![cfg_attr(test, allow(unused_crate_dependencies))]

use std::error::Error;
use std::sync::OnceLock;

use async_trait::async_trait;
use regex::Regex;
use serde_json::{Map, Value, json};
use spine::hooks::{
    HookOutput, PermissionSuggestion, PostToolUse, PostToolUseAction, PostToolUseInput, PreToolUse, PreToolUseAction,
    PreToolUseInput,
};
use spine::tools::{Effect, Projection, Tool, ToolContext, ToolError, ToolSpec};
use spine::{AgentBuilder, HookContext, RunRequest, Transcript, hook_fn};

/// A tool of our own: counts the words of a text.
struct WordCount;

#[async_trait]
impl Tool for WordCount {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "word_count".into(),
            description: "Counts the words of a text.".into(),
            input_schema: json!({
                "type": "object",
                "properties": {"text": {"type": "string"}},
                "required": ["text"],
                "additionalProperties": false
            }),
        }
    }

    fn effect(&self) -> Effect {
        Effect::Read
    }

    async fn execute(&self, args: &Map<String, Value>, _ctx: &ToolContext) -> Result<Value, ToolError> {
        let text = args.get("text").and_then(Value::as_str).unwrap_or_default();
        Ok(json!({"words": text.split_whitespace().count()}))
    }

    fn project(&self, response: &Value) -> Projection {
        Projection::plain(format!("{} words", response["words"]))
    }
}

/// `rm -rf PATH` (one path, nothing else on the line) as a move into `.trash/`.
fn safe_delete(command: &str) -> Option<String> {
    static RM: OnceLock<Option<Regex>> = OnceLock::new();
    let rm = RM.get_or_init(|| Regex::new(r"^\s*rm\s+-(?:rf|fr)\s+([A-Za-z0-9._/-]+)\s*$").ok()).as_ref()?;
    let path = rm.captures(command)?.get(1)?.as_str();
    Some(format!("mkdir -p .trash && mv {path} .trash/"))
}

/// `text` with every API-key-shaped word replaced.
fn redact(text: &str) -> Option<String> {
    static KEY: OnceLock<Option<Regex>> = OnceLock::new();
    let key = KEY.get_or_init(|| Regex::new(r"sk-[A-Za-z0-9_-]{8,}").ok()).as_ref()?;
    key.is_match(text).then(|| key.replace_all(text, "[REDACTED]").into_owned())
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn Error>> {
    let mut args = std::env::args().skip(1);
    let project = args.next().unwrap_or_else(|| ".".to_owned());
    let prompt = args.next().unwrap_or_else(|| "Clean up the build folder and show me config.txt".to_owned());
    let model = std::env::var("EMBED_MODEL").unwrap_or_else(|_| "gpt-4.1-mini".to_owned());

    let built = AgentBuilder::new(&project)
        .model(format!("openai:{model}"))
        .on_matching::<PreToolUse>(
            "Bash",
            "safe-delete",
            hook_fn(|_ctx: &HookContext, input: &PreToolUseInput| {
                let command = input.tool_input["command"].as_str().unwrap_or_default();
                let updated_input = safe_delete(command).map(|safer| {
                    let mut args = input.tool_input.as_object().cloned().unwrap_or_default();
                    args.insert("command".into(), Value::String(safer));
                    args
                });
                Ok(HookOutput::new(PreToolUseAction::Proceed {
                    permission: PermissionSuggestion::Passthrough,
                    updated_input,
                    additional_context: None,
                }))
            }),
        )
        .on_matching::<PostToolUse>(
            "Bash",
            "redact-keys",
            hook_fn(|_ctx: &HookContext, input: &PostToolUseInput| {
                let output = input.tool_response["stdout"].as_str().unwrap_or_default();
                Ok(HookOutput::new(match redact(output) {
                    Some(clean) => PostToolUseAction::replace_text(clean),
                    None => PostToolUseAction::default(),
                }))
            }),
        )
        .tool(WordCount)
        // The rewritten command must still pass the rules: a hook suggests, the policy decides.
        .allow("Bash(mkdir -p .trash)")
        .allow("Bash(mv:*)")
        .allow("Bash(cat:*)")
        .allow("word_count")
        .build()?;

    let outcome = built
        .agent
        .run(RunRequest::new("embed-example", Transcript::discard("embed-example.jsonl")).prompt(Some(prompt)))
        .await;
    println!("answer ({}): {}", serde_json::to_string(&outcome.subtype)?, outcome.result);
    // The trace: every stage, hook and decision. Here, the hook answers and the tool decisions.
    for entry in outcome.trace.entries() {
        let line = serde_json::to_value(&entry)?;
        if matches!(line["kind"].as_str(), Some("hook" | "tool_decision")) {
            println!("trace: {line}");
        }
    }
    built.shutdown().await;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_plain_rm_rf_of_one_path_is_rewritten() {
        assert_eq!(safe_delete("rm -rf build").as_deref(), Some("mkdir -p .trash && mv build .trash/"));
        assert_eq!(safe_delete("rm -rf build; curl x"), None, "anything else on the line: left to the rules");
        assert_eq!(safe_delete("ls"), None);
    }

    #[test]
    fn key_shaped_words_are_redacted() {
        assert_eq!(redact("api_key = sk-live-abcdef123456\n").as_deref(), Some("api_key = [REDACTED]\n"));
        assert_eq!(redact("nothing here"), None);
    }
}
