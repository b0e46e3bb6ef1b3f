//! Attribute naming: what each record says on its span, under which key, as which value.
//!
//! The contract: every attribute key spine's spans carry besides the span-level ones is named
//! here — the GenAI conventions' (`gen_ai.usage.*`, `gen_ai.tool.call.id`, `error.type`) and
//! spine's own (`spine.decision.*`, `spine.hook.*`, `spine.stage.<field>`). Content (stage
//! fields in [`CONTENT_FIELDS`], hook answers, a decision's arguments) is left out unless
//! [`ContentCapture::Record`]. Pure functions of their input (only [`FieldKeys`] keeps state,
//! a cache of keys); nothing here starts or ends a span.

use std::collections::HashMap;
use std::sync::Arc;

use opentelemetry::{Array, Key, KeyValue, StringValue, Value as OtelValue};
use serde_json::{Map, Value};
use spine_protocol::run::Usage;
use spine_protocol::trace::{HookTrace, StageTrace, ToolDecisionRecord};

use crate::config::ContentCapture;

/// Stage fields that hold content (`project_tool_result`'s `content` preview and `metadata`,
/// `finalize_output`'s `output`): written only with [`ContentCapture::Record`].
const CONTENT_FIELDS: &[&str] = &["content", "metadata", "output"];

/// The combined decision record as attributes: the outcome, each hook's word, the permission
/// decision, and the whole record as JSON — without the call's arguments unless content is
/// recorded (they are the model's content).
pub fn decision_attributes(record: &ToolDecisionRecord, content: ContentCapture) -> Vec<KeyValue> {
    let said = |list: &[spine_protocol::trace::HookSaid]| -> OtelValue {
        string_array(list.iter().map(|h| format!("{}: {}", h.hook_id, h.decision)))
    };
    let mut attributes = vec![
        KeyValue::new("spine.decision.outcome", record.outcome.as_str()),
        KeyValue::new("spine.decision.pre_tool_use", said(&record.pre_tool_use)),
        KeyValue::new("spine.decision.post_tool_use", said(&record.post_tool_use)),
    ];
    if let Some(code) = &record.error_code {
        attributes.push(KeyValue::new("spine.decision.error_code", code.clone()));
        attributes.push(KeyValue::new("error.type", code.clone()));
    }
    if let Some(permission) = &record.permission {
        attributes.push(KeyValue::new("spine.decision.permission.behavior", wire(&permission.behavior)));
        attributes.push(KeyValue::new(
            "spine.decision.permission.source",
            serde_json::to_string(&permission.source).unwrap_or_default(),
        ));
        attributes.push(KeyValue::new("spine.decision.permission.reason", permission.reason.clone()));
    }
    let shown = match content {
        ContentCapture::Record => serde_json::to_string(record),
        ContentCapture::Omit => serde_json::to_string(&ToolDecisionRecord { arguments: None, ..record.clone() }),
    };
    attributes.push(KeyValue::new("spine.decision.record", shown.unwrap_or_default()));
    attributes
}

/// The usage attributes of a request or a run.
pub(super) fn usage_attributes(usage: &Usage) -> Vec<KeyValue> {
    vec![
        KeyValue::new("gen_ai.usage.input_tokens", saturating_i64(usage.input_tokens)),
        KeyValue::new("gen_ai.usage.output_tokens", saturating_i64(usage.output_tokens)),
        KeyValue::new("gen_ai.usage.cache_read.input_tokens", saturating_i64(usage.cache_read_input_tokens)),
        KeyValue::new("gen_ai.usage.cache_creation.input_tokens", saturating_i64(usage.cache_creation_input_tokens)),
    ]
}

/// A stage's attributes: its tool call and its fields as `spine.stage.*` (its name and
/// duration are the span's).
pub(super) fn stage_attributes(stage: &StageTrace, keys: &mut FieldKeys, content: ContentCapture) -> Vec<KeyValue> {
    let mut attributes = Vec::with_capacity(stage.fields.len() + 1);
    if let Some(id) = &stage.tool_use_id {
        attributes.push(KeyValue::new("gen_ai.tool.call.id", id.clone()));
    }
    field_attributes(keys, &stage.fields, content, &mut attributes);
    attributes
}

/// A hook's attributes: its event, id, source (file and JSON path, and the plugin of a
/// plugin's hook), decision, whether it was applied, its duration, and (content only) its
/// answer.
pub(super) fn hook_attributes(hook: &HookTrace, content: ContentCapture) -> Vec<KeyValue> {
    let mut attributes = vec![
        KeyValue::new("spine.hook.event", wire(&hook.event)),
        KeyValue::new("spine.hook.id", hook.hook_id.clone()),
        KeyValue::new("spine.hook.source", hook.source.clone()),
        KeyValue::new("spine.hook.decision", hook.decision.clone()),
        KeyValue::new("spine.hook.applied", hook.applied),
        KeyValue::new("spine.hook.duration_us", saturating_i64(hook.duration_us)),
    ];
    if let Some((file, path)) = split_source(&hook.source) {
        attributes.push(KeyValue::new("spine.hook.source.file", file.to_owned()));
        attributes.push(KeyValue::new("spine.hook.source.path", path.to_owned()));
    }
    if let Some(plugin) = source_plugin(&hook.source) {
        attributes.push(KeyValue::new("spine.hook.source.plugin", plugin.to_owned()));
    }
    if let Some(id) = &hook.tool_use_id {
        attributes.push(KeyValue::new("gen_ai.tool.call.id", id.clone()));
    }
    if content == ContentCapture::Record && !hook.detail.is_null() {
        attributes.push(KeyValue::new("spine.hook.answer", hook.detail.to_string()));
    }
    attributes
}

/// A settings hook's source, `<file> <JSON path>` (`/p/.spine/settings.json
/// hooks.PreToolUse[0].hooks[0]`), split in two; `None` for hooks without a file (`rust`). A
/// plugin's hook names its plugin after the file (`/plug/hooks/hooks.json (plugin
/// guard@market) hooks.PreToolUse[0].hooks[0]`): the file is the part before it
/// (`source_plugin` gives the plugin).
pub fn split_source(source: &str) -> Option<(&str, &str)> {
    let (file, path) = source.rsplit_once(' ')?;
    let file = match plugin_part(file) {
        Some((file, _)) => file,
        None => file,
    };
    (path.starts_with("hooks") && !file.is_empty()).then_some((file, path))
}

/// The plugin (`name@marketplace`) a plugin hook's source names; `None` for other hooks.
pub fn source_plugin(source: &str) -> Option<&str> {
    let (file, path) = source.rsplit_once(' ')?;
    path.starts_with("hooks").then(|| plugin_part(file)).flatten().map(|(_, plugin)| plugin)
}

/// `<file> (plugin <id>)` as the file and the id.
fn plugin_part(file: &str) -> Option<(&str, &str)> {
    let (file, rest) = file.rsplit_once(" (plugin ")?;
    let id = rest.strip_suffix(')')?;
    (!id.is_empty() && !id.contains(' ')).then_some((file, id))
}

/// The attribute keys of JSON fields under a prefix (`spine.stage.<field>`), each made once
/// and then shared: a run repeats the same few fields in every stage.
pub(super) struct FieldKeys {
    prefix: &'static str,
    keys: HashMap<String, Key>,
}

impl FieldKeys {
    /// Keys under `prefix` (without the dot).
    pub(super) fn new(prefix: &'static str) -> FieldKeys {
        FieldKeys { prefix, keys: HashMap::new() }
    }

    fn key(&mut self, field: &str) -> Key {
        if let Some(key) = self.keys.get(field) {
            return key.clone();
        }
        let key = Key::from(Arc::<str>::from(format!("{}.{field}", self.prefix)));
        self.keys.insert(field.to_owned(), key.clone());
        key
    }
}

/// JSON fields as attributes (pushed onto `out`) under the keys' prefix: scalars as themselves,
/// string lists as string arrays, anything else as JSON text; nulls are left out, content
/// fields unless recorded.
fn field_attributes(
    keys: &mut FieldKeys,
    fields: &Map<String, Value>,
    content: ContentCapture,
    out: &mut Vec<KeyValue>,
) {
    for (field, value) in fields {
        if content == ContentCapture::Omit && CONTENT_FIELDS.contains(&field.as_str()) {
            continue;
        }
        if let Some(value) = json_attribute(value) {
            out.push(KeyValue::new(keys.key(field), value));
        }
    }
}

/// A JSON value as an attribute value (`None` for null).
pub fn json_attribute(value: &Value) -> Option<OtelValue> {
    Some(match value {
        Value::Null => return None,
        Value::Bool(b) => OtelValue::Bool(*b),
        Value::Number(n) => match (n.as_i64(), n.as_u64(), n.as_f64()) {
            (Some(i), _, _) => OtelValue::I64(i),
            (None, Some(u), _) => OtelValue::I64(saturating_i64(u)),
            (None, None, Some(f)) => OtelValue::F64(f),
            (None, None, None) => OtelValue::String(n.to_string().into()),
        },
        Value::String(s) => OtelValue::String(s.clone().into()),
        Value::Array(items) if items.iter().all(Value::is_string) => {
            string_array(items.iter().filter_map(Value::as_str).map(str::to_owned))
        }
        Value::Array(_) | Value::Object(_) => OtelValue::String(value.to_string().into()),
    })
}

pub(super) fn string_array(items: impl IntoIterator<Item = String>) -> OtelValue {
    OtelValue::Array(Array::String(items.into_iter().map(StringValue::from).collect()))
}

pub(super) fn saturating_i64(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// An enum's wire name (its JSON string).
pub(super) fn wire<T: serde::Serialize>(value: &T) -> String {
    match serde_json::to_value(value) {
        Ok(Value::String(s)) => s,
        Ok(other) => other.to_string(),
        Err(_) => String::new(),
    }
}

/// `gen_ai.provider.name` guessed from a model name: `anthropic` for Claude models, `openai`
/// for GPT and o-series models, else `spine` (the scripted model, unknown local servers).
pub fn provider_of_model(model: &str) -> &'static str {
    let model = model.to_ascii_lowercase();
    if model.starts_with("claude") {
        "anthropic"
    } else if model.starts_with("gpt")
        || model.starts_with("chatgpt")
        || model.starts_with("o1")
        || model.starts_with("o3")
        || model.starts_with("o4")
    {
        "openai"
    } else {
        "spine"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_settings_hook_source_splits_into_file_and_json_path() {
        assert_eq!(
            split_source("/p/.spine/settings.json hooks.PreToolUse[0].hooks[1]"),
            Some(("/p/.spine/settings.json", "hooks.PreToolUse[0].hooks[1]"))
        );
        assert_eq!(split_source("rust"), None);
    }

    #[test]
    fn a_plugin_hook_source_splits_into_its_file_and_json_path_and_names_its_plugin() {
        let source = "/plug/hooks/hooks.json (plugin guard@market) hooks.PreToolUse[0].hooks[0]";
        assert_eq!(split_source(source), Some(("/plug/hooks/hooks.json", "hooks.PreToolUse[0].hooks[0]")));
        assert_eq!(source_plugin(source), Some("guard@market"));
        assert_eq!(source_plugin("/p/.spine/settings.json hooks.Stop[0].hooks[0]"), None);
        assert_eq!(source_plugin("rust"), None);
        let spaced = "/my plugins/g/hooks/hooks.json (plugin g@inline) hooks.Stop[0].hooks[0]";
        assert_eq!(split_source(spaced), Some(("/my plugins/g/hooks/hooks.json", "hooks.Stop[0].hooks[0]")));
    }

    #[test]
    fn json_fields_become_typed_attributes_and_content_fields_need_the_opt_in() {
        let fields: Map<String, Value> = serde_json::from_value(serde_json::json!({
            "ok": true, "count": 3, "ratio": 0.5, "names": ["a", "b"], "nested": {"x": 1}, "none": null,
            "content": "secret output", "metadata": {"result": 42}
        }))
        .expect("object");
        let mut keys = FieldKeys::new("p");
        let mut omitted = Vec::new();
        field_attributes(&mut keys, &fields, ContentCapture::Omit, &mut omitted);
        let names: Vec<String> = omitted.iter().map(|kv| kv.key.to_string()).collect();
        assert_eq!(names, ["p.ok", "p.count", "p.ratio", "p.names", "p.nested"]);
        assert_eq!(omitted[0].value, OtelValue::Bool(true));
        assert_eq!(omitted[1].value, OtelValue::I64(3));
        assert_eq!(omitted[4].value, OtelValue::String("{\"x\":1}".into()));
        let mut recorded = Vec::new();
        field_attributes(&mut keys, &fields, ContentCapture::Record, &mut recorded);
        assert!(recorded.iter().any(|kv| kv.key.as_str() == "p.content"));
        assert!(recorded.iter().any(|kv| kv.key.as_str() == "p.metadata"));
        // A key made once is shared by every later stage that has the field.
        let again: Vec<String> = recorded.iter().map(|kv| kv.key.to_string()).take(2).collect();
        assert_eq!(again, ["p.ok", "p.count"]);
        assert_eq!(keys.keys.len(), 7, "one key per field, not per use");
    }

    #[test]
    fn the_provider_is_guessed_from_the_model_name() {
        assert_eq!(provider_of_model("claude-sonnet-4-5"), "anthropic");
        assert_eq!(provider_of_model("gpt-5-mini"), "openai");
        assert_eq!(provider_of_model("scripted"), "spine");
    }
}
