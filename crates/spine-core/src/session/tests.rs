//! The transcript's rules: Claude Code's line shapes, one uuid chain, a lossless round trip
//! through `--resume`, and lenient reading of files Claude Code wrote.

use serde_json::{Value, json};
use spine_protocol::hook::HookEventName;
use spine_protocol::message::{ReasoningItem, ToolResultMessage};
use spine_protocol::tool::{ErrorCode, ToolArguments};

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

fn call(id: &str, name: &str, args: Value) -> ToolCall {
    ToolCall { id: id.into(), name: name.into(), arguments: ToolArguments::Json(args) }
}

fn result(id: &str, name: &str, content: &str, code: Option<ErrorCode>) -> Message {
    Message::Tool(ToolResultMessage {
        tool_call_id: id.into(),
        name: name.into(),
        content: content.into(),
        error_code: code,
        images: Vec::new(),
    })
}

fn lines(path: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).expect("read");
    text.lines().map(|l| serde_json::from_str(l).expect("json line")).collect()
}

/// A run with every kind of record: the session, a prompt, hook context, a model turn with a
/// call, its result, an error result, a final turn and the end.
fn write_run(t: &Transcript) -> Vec<Message> {
    let turn = AssistantMessage {
        reasoning: vec![
            ReasoningItem::Thinking { thinking: "Read it first.".into(), signature: "sig-1".into() },
            ReasoningItem::Reasoning { id: "rs_1".into(), summary: vec![], encrypted_content: Some("enc".into()) },
        ],
        content: Some("Looking.".into()),
        tool_calls: vec![
            call("c1", "Read", json!({"file_path": "a.txt"})),
            call("c2", "Bash", json!({"command": "rm -rf /"})),
        ],
    };
    let meta = ReplyMeta {
        model: "claude-sonnet-4-5".into(),
        usage: Some(Usage {
            input_tokens: 120,
            output_tokens: 7,
            cache_creation_input_tokens: 0,
            cache_read_input_tokens: 100,
        }),
        finish: Some(FinishReason::ToolCalls),
    };
    let messages = vec![
        Message::user("Read a.txt"),
        Message::context(HookEventName::UserPromptSubmit, "the repo is small"),
        Message::Assistant(turn.clone()),
        result("c1", "Read", "hello", None),
        result("c2", "Bash", "Error [permission_denied]: not allowed", Some(ErrorCode::PermissionDenied)),
        Message::assistant_text("It says hello."),
    ];
    let session = TranscriptRecord::Session {
        session_id: SESSION.into(),
        cwd: "/work/p".into(),
        model: "claude-sonnet-4-5".into(),
    };
    t.append(&session).expect("append");
    for m in &messages {
        let record = match m {
            Message::Assistant(a) if a.tool_calls.len() == 2 => {
                TranscriptRecord::Reply { message: a.clone(), meta: meta.clone() }
            }
            other => TranscriptRecord::Message { message: other.clone() },
        };
        t.append(&record).expect("append");
    }
    t.append(&TranscriptRecord::Result { subtype: RunSubtype::Success }).expect("append");
    messages
}

const SESSION: &str = "123e4567-e89b-42d3-a456-426614174000";

#[test]
fn lines_have_claude_codes_envelope_and_form_one_uuid_chain() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("s.jsonl");
    write_run(&Transcript::open(&path).expect("open"));
    let lines = lines(&path);
    let types: Vec<&str> = lines.iter().map(|l| l["type"].as_str().expect("type")).collect();
    assert_eq!(types, ["system", "user", "attachment", "assistant", "user", "user", "assistant", "system"]);
    let mut parent = Value::Null;
    for line in &lines {
        for key in ["uuid", "timestamp", "version"] {
            assert!(line[key].is_string(), "{key} in {line}");
        }
        assert_eq!(line["sessionId"], SESSION);
        assert_eq!(line["cwd"], "/work/p");
        assert_eq!(line["isSidechain"], false);
        assert_eq!(line["parentUuid"], parent, "each line's parent is the line before");
        parent = line["uuid"].clone();
    }
    assert_eq!(lines[1]["message"], json!({"role": "user", "content": "Read a.txt"}));
    let assistant = &lines[3]["message"];
    assert_eq!(assistant["role"], "assistant");
    assert_eq!(assistant["model"], "claude-sonnet-4-5");
    assert_eq!(assistant["stop_reason"], "tool_use");
    assert_eq!(assistant["usage"]["input_tokens"], 20, "uncached input, as Anthropic counts it");
    assert_eq!(assistant["usage"]["cache_read_input_tokens"], 100);
    assert_eq!(
        assistant["content"][0],
        json!({"type": "thinking", "thinking": "Read it first.", "signature": "sig-1"})
    );
    assert_eq!(assistant["content"][1]["type"], "reasoning", "kept exactly for --resume");
    assert_eq!(assistant["content"][2], json!({"type": "text", "text": "Looking."}));
    assert_eq!(assistant["content"][3]["type"], "tool_use");
    let tool = &lines[4];
    assert_eq!(tool["message"]["content"][0]["type"], "tool_result");
    assert_eq!(tool["message"]["content"][0]["tool_use_id"], "c1");
    assert_eq!(tool["sourceToolAssistantUUID"], lines[3]["uuid"]);
    assert_eq!(lines[5]["message"]["content"][0]["is_error"], true);
    assert_eq!(lines[2]["attachment"]["type"], "hook_additional_context");
    assert_eq!(lines[7]["subtype"], "spine_result");
}

#[test]
fn a_transcript_reads_back_exactly_with_its_cwd_and_model() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("s.jsonl");
    let written = write_run(&Transcript::open(&path).expect("open"));
    let loaded = Transcript::load(&path).expect("load");
    assert_eq!(loaded.messages, written);
    assert_eq!(loaded.cwd.as_deref(), Some(Path::new("/work/p")));
    assert_eq!(loaded.model.as_deref(), Some("claude-sonnet-4-5"));
    assert_eq!(loaded.deferred, None);
    assert!(loaded.repaired.is_empty());
}

#[test]
fn a_resumed_transcript_continues_the_chain_of_its_last_line() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("s.jsonl");
    write_run(&Transcript::open(&path).expect("open"));
    let last = lines(&path).last().expect("line")["uuid"].clone();
    let again = Transcript::open(&path).expect("reopen");
    again.append(&TranscriptRecord::Message { message: Message::user("more") }).expect("append");
    let after = lines(&path);
    let line = after.last().expect("line");
    assert_eq!(line["parentUuid"], last);
    assert_eq!(line["sessionId"], SESSION, "the session carries over before the run's own start line");
}

#[test]
fn a_deferral_is_pending_until_a_later_run_ends_otherwise() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("s.jsonl");
    let t = Transcript::open(&path).expect("open");
    let pending = call("c9", "Bash", json!({"command": "make deploy"}));
    t.append(&TranscriptRecord::Message { message: Message::user("deploy") }).expect("append");
    let turn = AssistantMessage { content: None, tool_calls: vec![pending.clone()], reasoning: Vec::new() };
    t.append(&TranscriptRecord::Message { message: Message::Assistant(turn) }).expect("append");
    t.append(&TranscriptRecord::Deferred { call: pending.clone() }).expect("append");
    t.append(&TranscriptRecord::Result { subtype: RunSubtype::Deferred }).expect("append");
    let loaded = Transcript::load(&path).expect("load");
    assert_eq!(loaded.deferred, Some(pending));
    assert!(loaded.repaired.is_empty(), "the deferred call stays unanswered");
    t.append(&TranscriptRecord::Result { subtype: RunSubtype::Canceled }).expect("append");
    let loaded = Transcript::load(&path).expect("load");
    assert_eq!(loaded.deferred, None);
    assert_eq!(loaded.repaired, ["c9"], "a call no longer deferred is answered canceled");
}

#[test]
fn a_compaction_boundary_replaces_what_came_before() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("s.jsonl");
    let t = Transcript::open(&path).expect("open");
    write_run(&t);
    let kept = vec![Message::system("Summary: read a.txt"), Message::user("next")];
    t.append(&TranscriptRecord::Compacted { messages: kept.clone() }).expect("append");
    let all = lines(&path);
    let boundary = &all[all.len() - 3];
    assert_eq!(boundary["subtype"], "compact_boundary");
    assert_eq!(boundary["parentUuid"], Value::Null);
    assert_eq!(boundary["logicalParentUuid"], all[all.len() - 4]["uuid"]);
    assert_eq!(Transcript::load(&path).expect("load").messages, kept);
}

#[test]
fn a_half_written_last_line_is_dropped_and_a_bad_middle_line_is_an_error() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("s.jsonl");
    let written = write_run(&Transcript::open(&path).expect("open"));
    let mut text = std::fs::read_to_string(&path).expect("read");
    text.push_str("{\"type\":\"user\",\"mess");
    std::fs::write(&path, &text).expect("write");
    assert_eq!(Transcript::load(&path).expect("load").messages, written);
    std::fs::write(&path, format!("not json\n{text}\n")).expect("write");
    let err = Transcript::load(&path).expect_err("bad line");
    assert!(err.to_string().contains("s.jsonl:1:"), "{err}");
}

#[test]
fn a_claude_code_transcript_loads_with_its_split_turns_joined() {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../spine-cli/tests/fixtures/claude-code-2.1.197/transcript.jsonl");
    let loaded = Transcript::load(&path).expect("load");
    let roles: Vec<&str> = loaded.messages.iter().map(Message::role).collect();
    assert_eq!(roles, ["user", "assistant", "tool", "assistant"]);
    assert_eq!(loaded.messages[0], Message::user("Say hi with a command"));
    let Message::Tool(result) = &loaded.messages[2] else { panic!("tool result") };
    assert_eq!((result.name.as_str(), result.content.as_str(), result.error_code), ("Bash", "hi", None));
    assert_eq!(loaded.model.as_deref(), Some("claude-opus-4-8"));
    assert_eq!(loaded.cwd.as_deref(), Some(Path::new("/tmp/ccrec/proj")));

    let dir = tempfile::tempdir().expect("tempdir");
    let split = dir.path().join("split.jsonl");
    let line = |content: Value| {
        json!({"type": "assistant", "message": {"id": "msg_1", "role": "assistant", "content": content}}).to_string()
    };
    let text = [
        json!({"type": "user", "message": {"role": "user", "content": "go"}}).to_string(),
        line(json!([{"type": "thinking", "thinking": "plan", "signature": "sig"}])),
        line(json!([{"type": "text", "text": "Running."}])),
        line(json!([{"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "ls"}}])),
    ]
    .join("\n");
    std::fs::write(&split, text + "\n").expect("write");
    let loaded = Transcript::load(&split).expect("load");
    assert_eq!(loaded.messages.len(), 3, "{:?}", loaded.messages);
    let Message::Assistant(turn) = &loaded.messages[1] else { panic!("assistant") };
    assert_eq!(turn.content.as_deref(), Some("Running."));
    assert_eq!(turn.tool_calls.len(), 1);
    assert_eq!(loaded.repaired, ["t1"], "the unanswered call is answered canceled");
}

#[test]
fn images_of_user_turns_and_tool_results_are_claude_blocks_and_read_back() {
    use spine_protocol::message::ImageBlock;
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("s.jsonl");
    let t = Transcript::open(&path).expect("open");
    let png = ImageBlock::new("image/png", "iVBORw0KGgo=");
    let jpeg = ImageBlock::new("image/jpeg", "/9j/4AAQ");
    let messages = vec![
        Message::user_with_images("what is this?", vec![png.clone()]),
        Message::Assistant(AssistantMessage {
            tool_calls: vec![call("c1", "Read", json!({"file_path": "b.jpg"}))],
            ..AssistantMessage::default()
        }),
        Message::Tool(ToolResultMessage {
            tool_call_id: "c1".into(),
            name: "Read".into(),
            content: "Image: b.jpg (2x2, 1 KB)".into(),
            error_code: None,
            images: vec![jpeg.clone()],
        }),
        Message::assistant_text("A cat."),
    ];
    for m in &messages {
        t.append(&TranscriptRecord::Message { message: m.clone() }).expect("append");
    }
    let written = lines(&path);
    assert_eq!(
        written[0]["message"]["content"],
        json!([
            {"type": "text", "text": "what is this?"},
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}}
        ])
    );
    assert_eq!(
        written[2]["message"]["content"][0]["content"],
        json!([
            {"type": "text", "text": "Image: b.jpg (2x2, 1 KB)"},
            {"type": "image", "source": {"type": "base64", "media_type": "image/jpeg", "data": "/9j/4AAQ"}}
        ])
    );
    assert_eq!(Transcript::load(&path).expect("load").messages, messages);
}

#[test]
fn a_user_line_with_only_an_image_block_loads_as_an_image_turn() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("cc.jsonl");
    let line = json!({"type": "user", "uuid": "u1", "parentUuid": null, "message": {"role": "user", "content": [
        {"type": "image", "source": {"type": "base64", "media_type": "image/webp", "data": "UklGRg=="}}
    ]}});
    std::fs::write(&path, format!("{line}\n")).expect("write");
    let loaded = Transcript::load(&path).expect("load");
    assert_eq!(
        loaded.messages,
        vec![Message::user_with_images("", vec![spine_protocol::message::ImageBlock::new("image/webp", "UklGRg==")])]
    );
}
