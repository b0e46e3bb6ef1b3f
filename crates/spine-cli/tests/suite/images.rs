//! Images end to end through the binary against a local Anthropic-format server: `--image`
//! attaches files to the prompt (missing or non-image files are configuration errors naming
//! the flag), `Read` of a PNG returns an image the next request carries (downscaled when
//! large; a corrupt file is an error result), PostToolUse hooks see Claude Code's image
//! response, and `--resume` sends a transcript's images again.

use serde_json::{Value, json};
use spine_testkit::images::{base64, dimensions_of_base64, png};

use crate::support::*;

const KEY: &str = "sk-test-secret-key-0123456789";

fn anthropic_run(s: &Sandbox, server: &SseServer) -> assert_cmd::Command {
    let mut cmd = s.spine();
    cmd.env("ANTHROPIC_BASE_URL", format!("http://{}", server.addr)).env("ANTHROPIC_API_KEY", KEY);
    cmd.args(["run", "--model", "sonnet", "--output-format", "json"]);
    cmd
}

fn image_block(media_type: &str, data: &str) -> Value {
    json!({"type": "image", "source": {"type": "base64", "media_type": media_type, "data": data}})
}

/// The blocks of a content value, without `cache_control` markers.
fn blocks(content: &Value) -> Vec<Value> {
    content
        .as_array()
        .expect("a block list")
        .iter()
        .map(|b| {
            let mut b = b.clone();
            if let Some(map) = b.as_object_mut() {
                map.remove("cache_control");
            }
            b
        })
        .collect()
}

#[test]
fn image_flags_attach_images_after_the_prompt_text() {
    let s = Sandbox::new();
    let small = png(8, 4);
    std::fs::write(s.dir.path().join("shot.png"), &small).expect("write");
    std::fs::write(s.project().join("second.png"), png(3, 3)).expect("write");
    let server = SseServer::start(vec![anthropic_text("a gradient")]);
    let out = anthropic_run(&s, &server)
        .args(["-p", "what is in these?", "--image", "../shot.png", "--image"])
        .arg(s.project().join("second.png"))
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(json(&out)["result"], "a gradient");
    let (_, body) = server.only();
    let user = &body["messages"][0];
    assert_eq!(user["role"], "user");
    let content = blocks(&user["content"]);
    assert_eq!(content[0], json!({"type": "text", "text": "what is in these?"}));
    assert_eq!(content[1], image_block("image/png", &base64(&small)), "small images go byte for byte");
    assert_eq!(content[2]["type"], "image");
    assert_eq!(content.len(), 3);
}

#[test]
fn a_missing_or_non_image_file_exits_2_naming_the_flag() {
    let s = Sandbox::new();
    let server = SseServer::start(vec![]);
    let out = anthropic_run(&s, &server).args(["-p", "look", "--image", "nowhere.png"]).output().expect("runs");
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("--image nowhere.png"), "{}", stderr(&out));
    s.write("notes.png", "just text");
    let out = anthropic_run(&s, &server).args(["-p", "look", "--image", "notes.png"]).output().expect("runs");
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("--image notes.png") && err.contains("not a PNG, JPEG, GIF or WebP image"), "{err}");
    assert!(server.bodies().is_empty(), "no request is made");
}

/// Runs a `Read` of `file` through the binary (the model reads, then answers `seen`), with a
/// PostToolUse hook that saves its input; returns the second request's body and the hook input.
fn read_through_the_binary(s: &Sandbox, file: &str) -> (Value, Value) {
    let server = SseServer::start(vec![
        anthropic_tool_use("toolu_1", "Read", &json!({"file_path": file})),
        anthropic_text("seen"),
    ]);
    let hook_input = s.dir.path().join("post.json");
    let settings = json!({
        "permissions": {"allow": ["Read"]},
        "hooks": {"PostToolUse": [{"matcher": "Read", "hooks": [{"type": "command", "command": format!("cat > {}", hook_input.display())}]}]}
    });
    let out = anthropic_run(s, &server)
        .args(["-p", "look at the picture", "--settings", &settings.to_string()])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let bodies = server.bodies();
    assert_eq!(bodies.len(), 2);
    let hook = std::fs::read_to_string(&hook_input).ok().and_then(|t| serde_json::from_str(&t).ok());
    (bodies[1].clone(), hook.unwrap_or(Value::Null))
}

fn tool_result(body: &Value) -> Value {
    let turn = &body["messages"][2];
    assert_eq!(turn["role"], "user");
    let mut result = turn["content"][0].clone();
    if let Some(map) = result.as_object_mut() {
        map.remove("cache_control");
    }
    assert_eq!(result["type"], "tool_result");
    result
}

#[test]
fn read_of_a_png_returns_an_image_the_next_request_carries_and_hooks_see_claude_codes_shape() {
    let s = Sandbox::new();
    let bytes = png(40, 30);
    std::fs::write(s.project().join("pic.dat"), &bytes).expect("write");
    let (body, hook) = read_through_the_binary(&s, "pic.dat");
    let result = tool_result(&body);
    assert_eq!(result["is_error"], false);
    let content = blocks(&result["content"]);
    let text = content[0]["text"].as_str().expect("text first");
    assert!(text.starts_with("Image: ") && text.contains("pic.dat (40x30, "), "{text}");
    assert_eq!(content[1], image_block("image/png", &base64(&bytes)), "recognised by magic bytes, not the name");

    let response = &hook["tool_response"];
    assert_eq!(response["type"], "image", "{hook}");
    assert_eq!(response["file"]["type"], "image/png");
    assert_eq!(response["file"]["base64"], base64(&bytes));
    assert_eq!(response["file"]["originalSize"], bytes.len());
    assert_eq!(response["file"]["dimensions"]["displayWidth"], 40);
}

#[test]
fn post_tool_use_sees_the_read_response_claude_code_gives_for_the_same_image() {
    let fixtures = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/claude-code-2.1.197");
    let recorded: Value = serde_json::from_str(
        &std::fs::read_to_string(fixtures.join("post-tool-use-read-image.json")).expect("fixture"),
    )
    .expect("json");
    let s = Sandbox::new();
    std::fs::copy(fixtures.join("read-image.png"), s.project().join("pic.png")).expect("copy");
    let (_, hook) = read_through_the_binary(&s, "pic.png");
    let mut response = hook["tool_response"].clone();
    let file = response["file"].as_object_mut().expect("file");
    assert!(file.remove("filePath").is_some(), "spine adds filePath");
    assert_eq!(response, recorded["tool_response"], "Claude Code 2.1.197's Read response for the same file");
}

#[test]
fn read_of_a_large_png_sends_it_downscaled_within_the_limit() {
    let s = Sandbox::new();
    std::fs::write(s.project().join("big.png"), png(3000, 1500)).expect("write");
    let (body, _) = read_through_the_binary(&s, "big.png");
    let content = blocks(&tool_result(&body)["content"]);
    assert!(
        content[0]["text"].as_str().is_some_and(|t| t.contains("1568x784") && t.contains("downscaled from 3000x1500"))
    );
    let data = content[1]["source"]["data"].as_str().expect("image data");
    assert_eq!(dimensions_of_base64(data), (1568, 784));
}

#[test]
fn read_of_a_corrupt_png_is_a_clear_error_result() {
    let s = Sandbox::new();
    let mut bytes = png(50, 50);
    bytes.truncate(60);
    std::fs::write(s.project().join("broken.png"), &bytes).expect("write");
    let (body, _) = read_through_the_binary(&s, "broken.png");
    let result = tool_result(&body);
    assert_eq!(result["is_error"], true);
    let text = result["content"].as_str().expect("plain error text");
    assert!(text.contains("broken.png") && text.contains("image/png image does not decode"), "{text}");
}

#[test]
fn a_resumed_session_sends_its_images_again() {
    let s = Sandbox::new();
    let bytes = png(5, 5);
    std::fs::write(s.project().join("a.png"), &bytes).expect("write");
    let server = SseServer::start(vec![anthropic_text("first"), anthropic_text("second")]);
    let out = anthropic_run(&s, &server).args(["-p", "remember this", "--image", "a.png"]).output().expect("runs");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let session = json(&out)["session_id"].as_str().expect("session id").to_owned();
    let out = anthropic_run(&s, &server).args(["-p", "what was it?", "--resume", &session]).output().expect("runs");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let bodies = server.bodies();
    assert_eq!(bodies.len(), 2);
    let first = blocks(&bodies[1]["messages"][0]["content"]);
    assert_eq!(first[0], json!({"type": "text", "text": "remember this"}));
    assert_eq!(first[1], image_block("image/png", &base64(&bytes)));

    let transcript = s.session_file(&session, "jsonl").expect("transcript");
    let text = std::fs::read_to_string(transcript).expect("read");
    let user_line: Value = text
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|l| l["type"] == "user")
        .expect("a user line");
    assert_eq!(
        user_line["message"]["content"],
        json!([{"type": "text", "text": "remember this"}, image_block("image/png", &base64(&bytes))])
    );
}
