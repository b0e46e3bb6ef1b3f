//! A recorded SDK session replayed to spine: the host's lines are written when the recording's
//! host wrote them — after the same line of the CLI's (the answer to one of its requests, the
//! n-th request of a subtype, the n-th result) — and spine's own requests are answered as the
//! recording's host answered Claude Code's: matched by subtype (an MCP message by its method)
//! and order, with spine's request id (and JSON-RPC id) in place of Claude Code's.

use std::collections::HashMap;
use std::io::Write;
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::Value;

/// How long the replay waits for one line before it fails with what it saw.
const LINE_WAIT: Duration = Duration::from_secs(60);

/// One entry of a recording (`{"dir": "in"|"out", "line"}`, `{"dir": "in", "eof": true}`,
/// `{"dir": "exit", "code"}`).
pub enum Entry {
    In(Value),
    Eof,
    Out(Value),
    Exit(i32),
}

/// A recorded session.
pub struct Recording {
    pub entries: Vec<Entry>,
}

impl Recording {
    pub fn load(path: &Path) -> Recording {
        let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let entries = text
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap_or_else(|e| panic!("{}: {e}: {l}", path.display())))
            .map(|e| match (e["dir"].as_str(), e.get("line")) {
                (Some("in"), Some(line)) => Entry::In(line.clone()),
                (Some("in"), None) => Entry::Eof,
                (Some("out"), Some(line)) => Entry::Out(line.clone()),
                (Some("exit"), _) => Entry::Exit(e["code"].as_i64().and_then(|c| i32::try_from(c).ok()).unwrap_or(-1)),
                _ => panic!("{}: an entry of no known shape: {e}", path.display()),
            })
            .collect();
        Recording { entries }
    }

    /// What the CLI printed.
    pub fn out(&self) -> Vec<Value> {
        self.entries.iter().filter_map(|e| if let Entry::Out(l) = e { Some(l.clone()) } else { None }).collect()
    }

    /// The CLI's exit status.
    pub fn exit(&self) -> Option<i32> {
        self.entries.iter().find_map(|e| if let Entry::Exit(code) = e { Some(*code) } else { None })
    }

    /// The host's requests, by id: their subtypes.
    pub fn host_requests(&self) -> HashMap<String, String> {
        self.entries
            .iter()
            .filter_map(|e| match e {
                Entry::In(l) if l["type"] == "control_request" => {
                    Some((l["request_id"].as_str()?.to_owned(), l["request"]["subtype"].as_str()?.to_owned()))
                }
                _ => None,
            })
            .collect()
    }
}

/// A CLI request's subtype, an MCP message's with its method (`mcp_message tools/call`).
pub fn request_key(line: &Value) -> String {
    let request = &line["request"];
    let subtype = request["subtype"].as_str().unwrap_or_default();
    match request["message"]["method"].as_str() {
        Some(method) if subtype == "mcp_message" => format!("mcp_message {method}"),
        _ => subtype.to_owned(),
    }
}

/// The CLI line after which the host wrote its next line.
#[derive(Clone, Debug)]
enum Anchor {
    /// The n-th request with this key.
    Request(String, usize),
    /// The answer to the host's request with this id.
    Response(String),
    /// The n-th result.
    Result(usize),
}

/// What spine printed, and how it ended.
pub struct Replayed {
    pub lines: Vec<Value>,
    pub exit: Option<i32>,
}

/// The spine process and what it printed so far.
struct Host<'a> {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<Value>,
    seen: Vec<Value>,
    asked: HashMap<String, usize>,
    /// The recording's answers to the CLI's requests, by key and order.
    answers: HashMap<(String, usize), Value>,
    adapt: &'a dyn Fn(&Value) -> Value,
}

impl Drop for Host<'_> {
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            self.child.kill().ok();
            self.child.wait().ok();
        }
    }
}

impl Host<'_> {
    fn send(&mut self, line: &Value) {
        if let Some(stdin) = self.stdin.as_mut() {
            // spine may have ended (the comparison then says what it printed).
            writeln!(stdin, "{line}").and_then(|()| stdin.flush()).ok();
        }
    }

    /// Keeps a line of spine's, answering it when it is a request the recording's host answered.
    fn take(&mut self, line: Value) {
        if line["type"] == "control_request" {
            let key = request_key(&line);
            let n = self.asked.entry(key.clone()).or_default();
            *n += 1;
            if let Some(answer) = self.answers.get(&(key, *n)) {
                let mut answer = (self.adapt)(answer);
                answer["response"]["request_id"] = line["request_id"].clone();
                let id = line["request"]["message"]["id"].clone();
                let rpc = answer.pointer_mut("/response/response/mcp_response").and_then(Value::as_object_mut);
                if let Some(rpc) = rpc.filter(|rpc| rpc.contains_key("id")) {
                    rpc.insert("id".to_owned(), id);
                }
                self.send(&answer);
            }
        }
        self.seen.push(line);
    }

    fn reached(&self, anchor: &Anchor) -> bool {
        let count = |f: &dyn Fn(&Value) -> bool| self.seen.iter().filter(|l| f(l)).count();
        match anchor {
            Anchor::Request(key, n) => {
                count(&|l: &Value| l["type"] == "control_request" && request_key(l) == *key) >= *n
            }
            Anchor::Response(id) => {
                count(&|l: &Value| l["type"] == "control_response" && l["response"]["request_id"] == *id) > 0
            }
            Anchor::Result(n) => count(&|l: &Value| l["type"] == "result") >= *n,
        }
    }

    fn wait(&mut self, anchor: &Anchor) {
        while !self.reached(anchor) {
            match self.lines.recv_timeout(LINE_WAIT) {
                Ok(line) => self.take(line),
                Err(_) => panic!("spine printed no line matching {anchor:?}; it printed:\n{}", text(&self.seen)),
            }
        }
    }
}

/// The lines, one a line.
pub fn text(lines: &[Value]) -> String {
    lines.iter().map(Value::to_string).collect::<Vec<_>>().join("\n")
}

/// Replays `recording` to `spine` (stdio is set here); `adapt` turns a recorded host line
/// into this run's (paths, model specs).
pub fn replay(recording: &Recording, mut spine: Command, adapt: &dyn Fn(&Value) -> Value) -> Replayed {
    // The CLI's requests by id, with their key and order, and the host's answers to them.
    let mut order: HashMap<String, usize> = HashMap::new();
    let mut requests: HashMap<String, (String, usize)> = HashMap::new();
    for entry in &recording.entries {
        if let Entry::Out(line) = entry
            && line["type"] == "control_request"
        {
            let key = request_key(line);
            let n = order.entry(key.clone()).or_default();
            *n += 1;
            requests.insert(line["request_id"].as_str().unwrap_or_default().to_owned(), (key, *n));
        }
    }
    let mut answers = HashMap::new();
    for entry in &recording.entries {
        if let Entry::In(line) = entry
            && line["type"] == "control_response"
            && let Some(request) = line["response"]["request_id"].as_str().and_then(|id| requests.get(id))
        {
            answers.insert(request.clone(), line.clone());
        }
    }

    spine.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::inherit());
    let mut child = spine.spawn().expect("spine starts");
    let lines = crate::support::json_lines(child.stdout.take().expect("stdout"));
    let stdin = child.stdin.take();
    let mut host = Host { child, stdin, lines, seen: Vec::new(), asked: HashMap::new(), answers, adapt };

    let (mut anchor, mut results) = (None, 0);
    for entry in &recording.entries {
        match entry {
            Entry::Out(line) if line["type"] == "control_request" => {
                let (key, n) = requests[line["request_id"].as_str().unwrap_or_default()].clone();
                anchor = Some(Anchor::Request(key, n));
            }
            Entry::Out(line) if line["type"] == "control_response" => {
                anchor = Some(Anchor::Response(line["response"]["request_id"].as_str().unwrap_or_default().to_owned()));
            }
            Entry::Out(line) if line["type"] == "result" => {
                results += 1;
                anchor = Some(Anchor::Result(results));
            }
            // Answers go out as spine asks (`take`).
            Entry::In(line) if line["type"] == "control_response" => {}
            Entry::In(line) => {
                if let Some(anchor) = &anchor {
                    host.wait(anchor);
                }
                host.send(&adapt(line));
            }
            Entry::Eof => {
                if let Some(anchor) = &anchor {
                    host.wait(anchor);
                }
                drop(host.stdin.take());
            }
            Entry::Out(_) | Entry::Exit(_) => {}
        }
    }
    drop(host.stdin.take());
    loop {
        match host.lines.recv_timeout(LINE_WAIT) {
            Ok(line) => host.take(line),
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
            Err(mpsc::RecvTimeoutError::Timeout) => {
                panic!("spine did not end after stdin closed; it printed:\n{}", text(&host.seen))
            }
        }
    }
    let exit = host.child.wait().ok().and_then(|s| s.code());
    Replayed { lines: std::mem::take(&mut host.seen), exit }
}
