//! `prepare_request`: the steps before every model request, the same for a run and a worker
//! item — the operator-state snapshot (only for the operator profile, see
//! [`TurnSettings::operator_layers`]), [`prepare_turn`], the compaction threshold, and whether
//! `compact_context` should run.
//!
//! Compaction itself stays with the caller: a run wraps it in PreCompact / PostCompact hooks and
//! prepares again when the transcript changed, a worker item compacts the prepared messages
//! directly. When no compaction is due, this stage writes the `compact_context` trace entry
//! that says so.

use serde_json::Value;

use super::compact_context::{can_compact, compaction_threshold, record_not_compacted, should_compact};
use super::prepare_turn::{
    OperatorStateSource, PreparedTurn, TurnInputs, TurnSettings, operator_snapshot, prepare_turn,
};
use crate::memory_files::MemoryFiles;
use crate::skills::SkillCatalog;
use crate::tokens::{TokenCache, TokenEstimator};
use crate::trace::Trace;
use crate::workspace::Workspace;

/// Where the compaction threshold comes from, first set wins: the budget hints, the
/// configured threshold, 80% of the model's context window.
#[derive(Debug, Clone, Copy, Default)]
pub struct ThresholdSources<'a> {
    /// An assignment's `budget_hints`.
    pub budget_hints: Option<&'a Value>,
    /// `context.compaction_threshold_tokens` from settings.
    pub configured: Option<u64>,
    /// The model's context window in tokens, when known.
    pub context_window: Option<u64>,
}

/// What the stage reads besides the transcript.
pub struct RequestInputs<'a> {
    /// The layers' settings.
    pub settings: &'a TurnSettings,
    /// The workspace the layers' files are read through.
    pub workspace: &'a Workspace,
    /// Skills scanned for this run or item.
    pub skills: &'a SkillCatalog,
    /// Counts tokens of the request.
    pub estimator: &'a dyn TokenEstimator,
    /// Sections added to the operator-state snapshot (command runs, processes).
    pub operator_state: Option<&'a dyn OperatorStateSource>,
    /// The memory files of a run (`CLAUDE.md`…) for the Memory Files layer; `None`: none.
    pub memory: Option<&'a MemoryFiles>,
    /// Where the compaction threshold comes from.
    pub threshold: ThresholdSources<'a>,
    /// The model named in traces when the settings name none (a run's own model).
    pub default_model: Option<&'a str>,
    /// The tool definitions the request carries (their schemas count in the estimate).
    pub tools: &'a [spine_protocol::tool::ToolSpec],
}

/// Whether the request should be compacted before it is sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compaction {
    /// Under the threshold, or nothing could be dropped (recorded in the trace).
    NotNeeded,
    /// Over the threshold, and compacting would shrink the request.
    Due,
}

/// The product of the stage.
#[derive(Debug, Clone, PartialEq)]
pub struct PreparedRequest {
    /// The messages, likely model and size from [`prepare_turn`].
    pub turn: PreparedTurn,
    /// The likely model, else the default model.
    pub likely_model: Option<String>,
    /// Whether to compact.
    pub compaction: Compaction,
}

/// Prepares the next request (see the module documentation). With a cache, only messages new
/// since the last call are counted.
pub fn prepare_request(
    inputs: &RequestInputs<'_>,
    transcript: &[spine_protocol::message::Message],
    cache: Option<&mut TokenCache>,
    trace: &Trace,
) -> PreparedRequest {
    let settings = inputs.settings;
    // The snapshot is taken before the prompt is assembled.
    let snapshot = settings.operator_layers().then(|| {
        let extra = inputs.operator_state.map(|s| s.sections()).unwrap_or_default();
        operator_snapshot(inputs.workspace, extra)
    });
    let turn_inputs = TurnInputs {
        settings,
        workspace: inputs.workspace,
        skills: inputs.skills,
        operator_state: snapshot.as_ref(),
        memory: inputs.memory,
        estimator: inputs.estimator,
        tools: inputs.tools,
    };
    let turn = prepare_turn(&turn_inputs, transcript, cache, trace);
    let likely_model = turn.likely_model.clone().or_else(|| inputs.default_model.map(str::to_owned));
    let t = inputs.threshold;
    let threshold = compaction_threshold(t.budget_hints, t.configured, t.context_window);
    let compaction =
        if should_compact(turn.estimated_token_count, threshold, turn.messages.len()) && can_compact(&turn.messages) {
            Compaction::Due
        } else {
            record_not_compacted(turn.messages.len(), likely_model.as_deref(), trace);
            Compaction::NotNeeded
        };
    PreparedRequest { turn, likely_model, compaction }
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use spine_protocol::message::Message;

    use super::*;
    use crate::stages::prepare_turn::AgentProfile;
    use crate::tokens::WordsEstimator;

    fn transcript(n: usize) -> Vec<Message> {
        (0..n)
            .map(|i| {
                let text = format!("message {i} with a few more words in it");
                if i % 2 == 0 { Message::user(text) } else { Message::assistant_text(text) }
            })
            .collect()
    }

    fn prepare(settings: &TurnSettings, threshold: ThresholdSources<'_>, n: usize) -> (PreparedRequest, Trace) {
        prepare_with_tools(settings, threshold, n, &[])
    }

    fn prepare_with_tools(
        settings: &TurnSettings,
        threshold: ThresholdSources<'_>,
        n: usize,
        tools: &[spine_protocol::tool::ToolSpec],
    ) -> (PreparedRequest, Trace) {
        let dir = tempfile::tempdir().expect("tmp");
        let workspace = Workspace::new(dir.path()).expect("workspace");
        let skills = SkillCatalog::default();
        let inputs = RequestInputs {
            settings,
            workspace: &workspace,
            skills: &skills,
            estimator: &WordsEstimator,
            operator_state: None,
            memory: None,
            threshold,
            default_model: Some("fallback-model"),
            tools,
        };
        let trace = Trace::default();
        (prepare_request(&inputs, &transcript(n), None, &trace), trace)
    }

    #[test]
    fn a_request_over_the_threshold_is_due_for_compaction_and_not_yet_traced() {
        let hints = json!({"advisory_compaction_threshold_tokens": 8});
        let sources = ThresholdSources { budget_hints: Some(&hints), ..Default::default() };
        let (prepared, trace) = prepare(&TurnSettings::default(), sources, 12);
        assert_eq!(prepared.compaction, Compaction::Due);
        assert_eq!(trace.stage_names(), ["prepare_turn"]);
    }

    #[test]
    fn a_request_under_the_threshold_records_that_it_was_not_compacted() {
        let sources = ThresholdSources { configured: Some(1_000_000), ..Default::default() };
        let (prepared, trace) = prepare(&TurnSettings::default(), sources, 12);
        assert_eq!(prepared.compaction, Compaction::NotNeeded);
        assert_eq!(trace.stage_names(), ["prepare_turn", "compact_context"]);
    }

    #[test]
    fn a_request_that_cannot_shrink_is_not_due_even_over_the_threshold() {
        let hints = json!({"advisory_compaction_threshold_tokens": 1});
        let sources = ThresholdSources { budget_hints: Some(&hints), ..Default::default() };
        let (prepared, _) = prepare(&TurnSettings::default(), sources, 1);
        assert_eq!(prepared.compaction, Compaction::NotNeeded);
    }

    #[test]
    fn the_default_model_stands_in_when_the_settings_name_none() {
        let (prepared, _) = prepare(&TurnSettings::default(), ThresholdSources::default(), 2);
        assert_eq!(prepared.likely_model.as_deref(), Some("fallback-model"));
        let mut settings = TurnSettings::default();
        settings.model_context.likely_model = Some("hinted".into());
        let (prepared, _) = prepare(&settings, ThresholdSources::default(), 2);
        assert_eq!(prepared.likely_model.as_deref(), Some("hinted"));
    }

    #[test]
    fn only_the_operator_profile_gets_the_operator_state_snapshot() {
        let mut settings = TurnSettings::default();
        let (main, _) = prepare(&settings, ThresholdSources::default(), 2);
        settings.profile = AgentProfile::Named("researcher".into());
        let (named, _) = prepare(&settings, ThresholdSources::default(), 2);
        let system = |p: &PreparedRequest| match p.turn.messages.first() {
            Some(Message::System { content }) => content.clone(),
            other => panic!("expected a system message first, got {other:?}"),
        };
        assert!(system(&main).contains("Operator State:"), "{}", system(&main));
        assert!(!system(&named).contains("Operator State:"), "{}", system(&named));
    }

    #[test]
    fn the_token_estimate_counts_the_tool_schemas_so_compaction_is_due_in_time() {
        let tool = spine_protocol::tool::ToolSpec {
            name: "calculator".into(),
            description: "word ".repeat(200),
            input_schema: json!({"type": "object", "properties": {"expression": {"type": "string"}}}),
        };
        let tools = [tool];
        let bare = prepare(&TurnSettings::default(), ThresholdSources::default(), 12).0.turn.estimated_token_count;
        let schema_tokens = crate::tokens::count_tools(&WordsEstimator, &tools);
        assert!(schema_tokens >= 200, "{schema_tokens}");
        // A threshold between the transcript alone and the transcript with its tools.
        let threshold = ThresholdSources { configured: Some(bare + 10), ..Default::default() };
        let (without, _) = prepare(&TurnSettings::default(), threshold, 12);
        assert_eq!(without.compaction, Compaction::NotNeeded);
        let (with, trace) = prepare_with_tools(&TurnSettings::default(), threshold, 12, &tools);
        assert_eq!(with.turn.estimated_token_count, bare + schema_tokens);
        assert_eq!(with.compaction, Compaction::Due, "the tools' schemas push the request over the threshold");
        let fields = trace.entries().into_iter().find_map(|e| match e.record {
            spine_protocol::trace::TraceRecord::Stage(s) if s.hook == "prepare_turn" => Some(s.fields),
            _ => None,
        });
        assert_eq!(fields.expect("prepare_turn entry")["tool_tokens"], json!(schema_tokens));
    }
}
