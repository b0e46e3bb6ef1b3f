//! The comparison of spine's stdout with Claude Code's, modulo ids, uuids, timestamps,
//! durations, costs, usage numbers, model names and paths:
//!
//! 1. Each line gets a kind: `type`/`subtype` (a session state with its state), a
//!    `control_response` by the host request it answers, spine's requests by subtype (an MCP
//!    message by its method), a withdrawal by the request it withdraws.
//! 2. The documented differences are normalised away (each step names its entry in docs/sdk.md,
//!    "What differs from Claude Code").
//! 3. The sequences of kinds must be the same; then, line by line, every key Claude Code writes
//!    must be in spine's line unless `left_out.rs` lists it for that kind ([`LEFT_OUT`]), and the
//!    values that are not volatile ([`SAME_VALUES`]) must be equal.

use std::collections::HashMap;

use serde_json::Value;

use super::left_out as lists;
use super::replay::request_key;

/// The keys Claude Code writes that spine does not, by line kind (a prefix) and path (`[]`:
/// any entry of a list), from the shared lists of `src/render/stream_json/left_out.rs`.
const LEFT_OUT: &[(&str, &str, &[&str])] = &[
    ("system/init", "", &lists::INIT),
    ("system/init", "mcp_servers[]", &lists::INIT_MCP_SERVER),
    ("result", "", &lists::RESULT),
    ("result", "", &lists::RESULT_SINCE_LAST),
    ("result", "usage", &lists::RESULT_USAGE),
    ("user:tool_result", "", &lists::TOOL_RESULT_LINE),
    ("assistant", "", &lists::ASSISTANT),
    ("stream_event:message_start", "", &lists::MESSAGE_START),
    ("control_response(initialize)", "response.response", &lists::INITIALIZE),
    ("control_response(initialize)", "response", &lists::INITIALIZE_ENVELOPE),
    ("control_response(initialize)", "response.response.models[]", &lists::INITIALIZE_MODEL),
    ("control_response(initialize)", "response.response.account", &lists::INITIALIZE_ACCOUNT),
    ("control_request(can_use_tool)", "request", &lists::CAN_USE_TOOL),
    ("control_request(hook_callback)", "request.input", &lists::HOOK_INPUT),
    ("control_response(mcp_status)", "response.response.mcpServers[]", &lists::MCP_STATUS_SERVER),
    ("control_request(mcp_message initialize)", "request.message.params.clientInfo", &lists::MCP_CLIENT_INFO),
    ("control_request(mcp_message tools/call)", "request.message.params._meta", &lists::MCP_CALL_META),
];

/// Subtrees whose keys and values are not compared: usage by model name, spine's own
/// permission suggestions (its rule syntax), the commands list (Claude Code's built-ins), the
/// MCP client's capabilities.
const OPAQUE: &[(&str, &str)] = &[
    ("result", "modelUsage"),
    ("control_request(can_use_tool)", "request.permission_suggestions"),
    ("control_response(initialize)", "response.response.commands"),
    ("control_request(mcp_message initialize)", "request.message.params.capabilities"),
];

/// The values that must be equal, by line kind (a prefix; `""`: every line) and path.
const SAME_VALUES: &[(&str, &[&str])] = &[
    ("", &["type", "subtype", "parent_tool_use_id", "is_error"]),
    ("system/session_state_changed", &["state", "sdk_host_only"]),
    (
        "system/init",
        &[
            "cwd",
            "permissionMode",
            "output_style",
            "additional_directories",
            "mcp_servers[].name",
            "mcp_servers[].status",
        ],
    ),
    ("system/status", &["status", "permissionMode"]),
    ("assistant", &["message.type", "message.role", "message.content", "message.stop_reason", "message.stop_sequence"]),
    (
        "user",
        &[
            "isReplay",
            "message.role",
            "message.content[].type",
            "message.content[].tool_use_id",
            "message.content[].is_error",
            "message.content[].content",
            "message.content[].text",
        ],
    ),
    ("result", &["result", "num_turns", "stop_reason", "permission_denials"]),
    (
        "control_request(can_use_tool)",
        &["request.tool_name", "request.display_name", "request.input", "request.tool_use_id", "request.description"],
    ),
    (
        "control_request(hook_callback)",
        &[
            "request.callback_id",
            "request.tool_use_id",
            "request.input.hook_event_name",
            "request.input.cwd",
            "request.input.permission_mode",
            "request.input.tool_name",
            "request.input.tool_input",
            "request.input.tool_use_id",
            "request.input.tool_response.stdout",
            "request.input.tool_response.stderr",
            "request.input.tool_response.interrupted",
            "request.input.tool_response.isImage",
            "request.input.tool_response.noOutputExpected",
        ],
    ),
    (
        "control_request(mcp_message",
        &["request.server_name", "request.message.jsonrpc", "request.message.method", "request.message.params.name"],
    ),
    ("control_request(mcp_message tools/call)", &["request.message.params.arguments"]),
    ("control_response(", &["response.subtype", "response.error", "response.error_code"]),
    ("control_response(interrupt)", &["response.response.still_queued"]),
    ("control_response(set_permission_mode)", &["response.response.mode"]),
    (
        "control_response(initialize)",
        &[
            "response.response.current_permission_mode",
            "response.response.session_state",
            "response.response.output_style",
            "response.response.hook_on_failure_supported",
            "response.response.hooks_applied",
        ],
    ),
    (
        "stream_event",
        &[
            "event.type",
            "event.index",
            "event.delta",
            "event.content_block",
            "event.message.type",
            "event.message.role",
            "event.message.content",
            "event.message.stop_reason",
        ],
    ),
];

/// The SDK MCP server's handshake: "An SDK MCP server … is connected when the session starts",
/// Claude Code's later; compared apart, by method.
const HANDSHAKE: [&str; 3] = [
    "control_request(mcp_message initialize)",
    "control_request(mcp_message notifications/initialized)",
    "control_request(mcp_message tools/list)",
];

/// One line: where it was in its stdout, its kind, its (normalised) value.
#[derive(Clone, Debug)]
struct Line {
    at: usize,
    kind: String,
    value: Value,
}

/// Compares spine's `ours` with Claude Code's `recorded` (`host_requests`: the host's request
/// ids and subtypes, the same on both sides); the differences, each naming its line and key.
pub fn compare(recorded: &[Value], ours: &[Value], host_requests: &HashMap<String, String>) -> Result<(), String> {
    let (recorded, cc_handshake) = split_handshake(recorded_lines(kinds(recorded, host_requests)));
    let (ours, our_handshake) = split_handshake(common(kinds(ours, host_requests)));
    let names = |lines: &[Line]| lines.iter().map(|l| l.kind.clone()).collect::<Vec<_>>();
    if names(&recorded) != names(&ours) {
        return Err(format!("the sequences of lines differ:\n{}", side_by_side(&recorded, &ours)));
    }
    let mut problems = Vec::new();
    if names(&cc_handshake) != names(&our_handshake) {
        problems.push(format!(
            "the SDK MCP handshake differs: Claude Code {:?}, spine {:?}",
            names(&cc_handshake),
            names(&our_handshake)
        ));
    }
    for (cc, line) in recorded.iter().zip(&ours).chain(cc_handshake.iter().zip(&our_handshake)) {
        let mut found = Vec::new();
        missing_keys(&line.kind, "", &cc.value, &line.value, &mut found);
        for (kind, paths) in SAME_VALUES {
            for path in paths.iter().filter(|_| line.kind.starts_with(kind)) {
                let segments: Vec<&str> = path.split('.').collect();
                different_values(&segments, &cc.value, &line.value, String::new(), &mut found);
            }
        }
        if line.kind.starts_with("control_response(mcp_status)") {
            servers_named_alike(&cc.value, &line.value, &mut found);
        }
        problems.extend(
            found
                .into_iter()
                .map(|p| format!("spine's line {} ({}), Claude Code's {}: {p}", line.at, line.kind, cc.at)),
        );
    }
    if problems.is_empty() { Ok(()) } else { Err(problems.join("\n")) }
}

/// Each line with its kind.
fn kinds(values: &[Value], host_requests: &HashMap<String, String>) -> Vec<Line> {
    let requests: HashMap<&str, String> = values
        .iter()
        .filter(|l| l["type"] == "control_request")
        .filter_map(|l| Some((l["request_id"].as_str()?, request_key(l))))
        .collect();
    let name = |v: &Value| v.as_str().unwrap_or("?").to_owned();
    values
        .iter()
        .enumerate()
        .map(|(at, l)| {
            let kind = match l["type"].as_str().unwrap_or("?") {
                "control_response" => {
                    let id = l["response"]["request_id"].as_str().unwrap_or_default();
                    let answers = host_requests.get(id).map_or("?", String::as_str);
                    format!("control_response({answers}):{}", name(&l["response"]["subtype"]))
                }
                "control_request" => format!("control_request({})", request_key(l)),
                "control_cancel_request" => {
                    let id = l["request_id"].as_str().unwrap_or_default();
                    format!("control_cancel_request({})", requests.get(id).map_or("?", String::as_str))
                }
                "system" if l["subtype"] == "session_state_changed" => {
                    format!("system/session_state_changed:{}", name(&l["state"]))
                }
                "system" => format!("system/{}", name(&l["subtype"])),
                "stream_event" => format!("stream_event:{}", name(&l["event"]["type"])),
                "user" if l["isReplay"] == true => "user:replay".to_owned(),
                "user" => {
                    let blocks = l["message"]["content"].as_array().into_iter().flatten();
                    let results = blocks.clone().any(|b| b["type"] == "tool_result");
                    if results { "user:tool_result".to_owned() } else { "user:text".to_owned() }
                }
                "assistant" => format!("assistant:{}", name(&l["message"]["content"][0]["type"])),
                other => other.to_owned(),
            };
            Line { at, kind, value: l.clone() }
        })
        .collect()
}

/// The recording, with the documented differences of docs/sdk.md normalised away, then the
/// normalisations of both sides.
fn recorded_lines(lines: Vec<Line>) -> Vec<Line> {
    let mut out: Vec<Line> = Vec::with_capacity(lines.len());
    for mut line in lines {
        // "`set_model` is not echoed as a `/model` user message".
        if line.kind == "user:replay"
            && line.value["message"]["content"].as_str().is_some_and(|c| c.starts_with("<local-command-stdout>"))
        {
            continue;
        }
        // "`can_use_tool`: `description` only when the input has one" (Claude Code also
        // describes other calls, a Write by its file name).
        if line.kind == "control_request(can_use_tool)"
            && !line.value["request"]["input"]["description"].is_string()
            && let Some(request) = line.value["request"].as_object_mut()
        {
            request.remove("description");
        }
        out.push(line);
    }
    common(out)
}

/// Normalisations of both sides.
fn common(lines: Vec<Line>) -> Vec<Line> {
    let mut out: Vec<Line> = Vec::with_capacity(lines.len());
    for mut line in lines {
        // "With partial messages, text streams in the provider's pieces": consecutive text
        // deltas of a block are one.
        if line.kind == "stream_event:content_block_delta"
            && let Some(last) = out.last_mut()
            && last.kind == line.kind
            && last.value["event"]["index"] == line.value["event"]["index"]
            && last.value["event"]["delta"]["type"] == "text_delta"
            && line.value["event"]["delta"]["type"] == "text_delta"
        {
            let text = format!(
                "{}{}",
                last.value["event"]["delta"]["text"].as_str().unwrap_or_default(),
                line.value["event"]["delta"]["text"].as_str().unwrap_or_default()
            );
            last.value["event"]["delta"]["text"] = Value::String(text);
            continue;
        }
        // "An interrupted turn's `num_turns` counts its model requests" (Claude Code's: 3 for one).
        if line.kind == "result"
            && line.value["is_error"] == true
            && let Some(result) = line.value.as_object_mut()
        {
            result.remove("num_turns");
        }
        if line.kind == "user:tool_result" {
            for block in line.value["message"]["content"].as_array_mut().into_iter().flatten() {
                if block["type"] == "tool_result" {
                    block["content"] = tool_result_gist(&block["content"]);
                }
            }
        }
        out.push(line);
    }
    out
}

/// A tool result's content, modulo the documented differences of wording ("Tool results are
/// spine's tools' own words", "An MCP tool's text content is one string"): what it says, in one
/// form for both.
fn tool_result_gist(content: &Value) -> Value {
    // Claude Code gives an MCP tool's text content as a list of text blocks.
    if let Some(blocks) = content.as_array()
        && blocks.iter().all(|b| b["type"] == "text")
    {
        return Value::String(blocks.iter().filter_map(|b| b["text"].as_str()).collect::<Vec<_>>().join("\n"));
    }
    let Some(text) = content.as_str() else { return content.clone() };
    // spine's refusals: `Error [permission_denied]: <reason>`; Claude Code's hook refusals
    // `PreToolUse:Bash hook error: <reason>`, its host's refusals the bare reason.
    let text = match text.strip_prefix("Error [permission_denied]: ") {
        Some(reason) => reason,
        None => match text.split_once(" hook error: ") {
            Some((hook, reason)) if !hook.contains(' ') => reason,
            _ => text,
        },
    };
    let gist = if text.starts_with("The user doesn't want to proceed with this tool use.")
        || (text.starts_with("permission to use ") && text.ends_with(": canceled"))
    {
        "[refused by the interrupt]".to_owned()
    } else if text == "(Bash completed with no output)" || text == "Command exited with status 0. It printed nothing." {
        "[Bash printed nothing]".to_owned()
    } else if let Some(out) = text.strip_prefix("Command exited with status 0.\n") {
        out.to_owned()
    } else if let Some(path) = text.strip_prefix("File created successfully at: ").and_then(|t| t.split(" (").next()) {
        format!("[created {path}]")
    } else if let Some((_, path)) =
        text.strip_prefix("Wrote ").and_then(|t| t.strip_suffix(" (created).")).and_then(|t| t.split_once(" bytes to "))
    {
        format!("[created {path}]")
    } else {
        text.to_owned()
    };
    Value::String(gist)
}

/// The lines of the SDK MCP handshake apart, in a fixed order.
fn split_handshake(lines: Vec<Line>) -> (Vec<Line>, Vec<Line>) {
    let (mut handshake, rest): (Vec<Line>, Vec<Line>) =
        lines.into_iter().partition(|l| HANDSHAKE.contains(&l.kind.as_str()));
    handshake.sort_by_key(|l| HANDSHAKE.iter().position(|k| *k == l.kind));
    (rest, handshake)
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() { key.to_owned() } else { format!("{path}.{key}") }
}

fn listed(table: &[(&str, &str)], kind: &str, path: &str) -> bool {
    table.iter().any(|(k, p)| kind.starts_with(k) && *p == path)
}

fn left_out(kind: &str, path: &str) -> bool {
    let (parent, key) = path.rsplit_once('.').unwrap_or(("", path));
    LEFT_OUT.iter().any(|(k, p, keys)| kind.starts_with(k) && *p == parent && keys.contains(&key))
}

/// Every key of Claude Code's `cc` that `ours` lacks (and is not left out), recursively.
fn missing_keys(kind: &str, path: &str, cc: &Value, ours: &Value, found: &mut Vec<String>) {
    if listed(OPAQUE, kind, path) {
        return;
    }
    match (cc, ours) {
        (Value::Object(cc), Value::Object(ours)) => {
            for (key, value) in cc {
                let at = join(path, key);
                match ours.get(key) {
                    Some(our) => missing_keys(kind, &at, value, our, found),
                    None if left_out(kind, &at) => {}
                    None => found.push(format!("spine lacks `{at}` (Claude Code's: {value})")),
                }
            }
        }
        (Value::Array(cc), Value::Array(ours)) => {
            for (value, our) in cc.iter().zip(ours) {
                missing_keys(kind, &format!("{path}[]"), value, our, found);
            }
        }
        (Value::Object(_) | Value::Array(_), our) => {
            found.push(format!("`{path}` is {our} in spine, Claude Code's is {cc}"));
        }
        _ => {}
    }
}

/// Where the values at `segments` differ (absent on either side: nothing to compare — the keys
/// are checked by [`missing_keys`]).
fn different_values(segments: &[&str], cc: &Value, ours: &Value, at: String, found: &mut Vec<String>) {
    let Some((first, rest)) = segments.split_first() else {
        if cc != ours {
            found.push(format!("`{at}` is {ours}, Claude Code's is {cc}"));
        }
        return;
    };
    let (key, each) = match first.strip_suffix("[]") {
        Some(key) => (key, true),
        None => (*first, false),
    };
    let (Some(cc), Some(ours)) = (cc.get(key), ours.get(key)) else { return };
    let at = join(&at, key);
    if !each {
        return different_values(rest, cc, ours, at, found);
    }
    match (cc.as_array(), ours.as_array()) {
        (Some(cc), Some(ours)) if cc.len() == ours.len() => {
            for (i, (cc, ours)) in cc.iter().zip(ours).enumerate() {
                different_values(rest, cc, ours, format!("{at}[{i}]"), found);
            }
        }
        _ => found.push(format!("`{at}` is {ours}, Claude Code's is {cc}")),
    }
}

/// "So an `mcp_status` before the first turn lists the server": every server Claude Code lists
/// is in spine's answer with the same status.
fn servers_named_alike(cc: &Value, ours: &Value, found: &mut Vec<String>) {
    let servers = |v: &Value| v["response"]["response"]["mcpServers"].as_array().cloned().unwrap_or_default();
    let ours = servers(ours);
    for server in servers(cc) {
        let same = ours.iter().find(|s| s["name"] == server["name"]);
        if same.map(|s| &s["status"]) != Some(&server["status"]) {
            found.push(format!("mcpServers: spine's {same:?}, Claude Code's {server}"));
        }
    }
}

/// The two sequences of kinds side by side, the first difference marked.
fn side_by_side(cc: &[Line], ours: &[Line]) -> String {
    let first = cc.iter().zip(ours).position(|(a, b)| a.kind != b.kind).unwrap_or(cc.len().min(ours.len()));
    let rows = cc.len().max(ours.len());
    (0..rows)
        .map(|i| {
            let get = |lines: &[Line]| lines.get(i).map_or(String::new(), |l| format!("{} {}", l.at, l.kind));
            let mark = if i == first { "=>" } else { "  " };
            format!("{mark} {i:>2} Claude Code: {:<60} spine: {}", get(cc), get(ours))
        })
        .collect::<Vec<_>>()
        .join("\n")
}
