//! A sandbox per test: a project directory, a private SPINE_HOME, and helpers to run `spine`.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Output;

use assert_cmd::Command;
use serde_json::{Value, json};

pub struct Sandbox {
    pub dir: tempfile::TempDir,
}

impl Sandbox {
    pub fn new() -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::create_dir_all(dir.path().join("project")).expect("project");
        std::fs::create_dir_all(dir.path().join("home")).expect("home");
        Sandbox { dir }
    }

    pub fn project(&self) -> PathBuf {
        self.dir.path().join("project")
    }

    pub fn home(&self) -> PathBuf {
        self.dir.path().join("home")
    }

    /// Every file of every project's session folder (`$SPINE_HOME/projects/*/`).
    pub fn session_files(&self) -> Vec<PathBuf> {
        let Ok(projects) = std::fs::read_dir(self.home().join("projects")) else { return Vec::new() };
        let mut files: Vec<PathBuf> = projects
            .filter_map(Result::ok)
            .filter_map(|p| std::fs::read_dir(p.path()).ok())
            .flatten()
            .filter_map(Result::ok)
            .map(|e| e.path())
            .collect();
        files.sort();
        files
    }

    /// The file `<id>.<extension>` in whichever project's session folder holds it.
    pub fn session_file(&self, id: &str, extension: &str) -> Option<PathBuf> {
        let name = format!("{id}.{extension}");
        self.session_files().into_iter().find(|p| p.file_name().is_some_and(|n| n.to_str() == Some(name.as_str())))
    }

    /// Writes a file under the project (parents created) and returns its path.
    pub fn write(&self, rel: &str, text: &str) -> PathBuf {
        spine_testkit::files::write_file(&self.project(), rel, text)
    }

    /// Writes a scripted-model file and returns its path.
    pub fn script(&self, turns: Value) -> PathBuf {
        let path = self.dir.path().join("script.json");
        spine_testkit::script::write_script_file(&path, turns).expect("script");
        path
    }

    /// `spine` with the sandbox's environment, as an `assert_cmd` command.
    pub fn spine(&self) -> Command {
        Command::from_std(self.spine_process())
    }

    /// `spine trust` on the project: its own settings files (hooks, allow rules, MCP servers)
    /// apply from now on.
    pub fn trust(&self) {
        let out = self.spine().arg("trust").output().expect("spine trust runs");
        assert_eq!(out.status.code(), Some(0), "spine trust: {}", stderr(&out));
    }

    /// `spine` as a plain process (for signals and custom stdio), with the sandbox's
    /// environment.
    pub fn spine_process(&self) -> std::process::Command {
        let mut cmd = std::process::Command::new(assert_cmd::cargo::cargo_bin("spine"));
        cmd.current_dir(self.project())
            .env("SPINE_HOME", self.home())
            .env("HOME", self.dir.path())
            .env_remove("OPENAI_API_KEY")
            .env_remove("ANTHROPIC_API_KEY")
            .env_remove("ANTHROPIC_AUTH_TOKEN")
            .env_remove("ANTHROPIC_MODEL")
            .env_remove("ANTHROPIC_CUSTOM_HEADERS");
        cmd
    }

    /// `spine run -p PROMPT --resume ID --model scripted:SCRIPT`.
    pub fn resume(&self, id: &str, prompt: &str, script: &Path) -> Output {
        self.spine()
            .args(["run", "-p", prompt, "--resume", id, "--model", &format!("scripted:{}", script.display())])
            .output()
            .expect("spine runs")
    }

    /// `spine run -p PROMPT --model scripted:SCRIPT ARGS…`.
    pub fn run(&self, script: &Path, args: &[&str]) -> Output {
        let mut cmd = self.spine();
        cmd.arg("run").arg("-p").arg("go").arg("--model").arg(format!("scripted:{}", script.display()));
        cmd.args(args);
        cmd.output().expect("spine runs")
    }
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

pub fn json(o: &Output) -> Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("stdout is one JSON object ({e}): {}", stdout(o)))
}

/// A server on 127.0.0.1 that answers each request with the next SSE body (then 500s saying
/// `script exhausted`) and records requests, on a runtime of its own (these tests are
/// synchronous).
pub struct SseServer {
    pub addr: std::net::SocketAddr,
    inner: spine_testkit::http::TestServer,
    _runtime: tokio::runtime::Runtime,
}

impl SseServer {
    pub fn start(replies: Vec<String>) -> SseServer {
        use spine_testkit::http::{End, Reply, TestServer, raw, server_runtime};
        let runtime = server_runtime();
        let replies = replies.iter().map(|sse| Reply::Sse(vec![raw(sse)], End::Close)).collect();
        let inner = runtime.block_on(TestServer::start(replies));
        SseServer { addr: inner.addr(), inner, _runtime: runtime }
    }

    /// The JSON bodies of the requests so far.
    pub fn bodies(&self) -> Vec<Value> {
        self.inner.requests().into_iter().map(|r| r.body).collect()
    }

    /// The headers of the requests so far.
    pub fn headers(&self) -> Vec<axum::http::HeaderMap> {
        self.inner.requests().into_iter().map(|r| r.headers).collect()
    }

    /// The one request this server got (fails the test on another count).
    pub fn only(&self) -> (axum::http::HeaderMap, Value) {
        let requests = self.inner.requests();
        assert_eq!(requests.len(), 1, "one request");
        let r = requests.into_iter().next().expect("request");
        (r.headers, r.body)
    }
}

/// A scripted model that calls Bash with `command`, then answers `done`.
pub fn bash_then_answer(command: &str) -> Value {
    serde_json::json!([
        {"tool_calls": [{"id": "call_1", "name": "Bash", "arguments": {"command": command}}]},
        {"text": "done"}
    ])
}

/// The content of the first tool result in a JSON result's `messages` (empty when none).
/// Every tool result's content in a `--include-messages` JSON result, in order.
pub fn tool_results(v: &Value) -> Vec<String> {
    v["messages"]
        .as_array()
        .map(|m| {
            m.iter()
                .filter(|m| m["role"] == "tool")
                .map(|m| m["content"].as_str().unwrap_or_default().to_owned())
                .collect()
        })
        .unwrap_or_default()
}

pub fn first_tool_result(v: &Value) -> String {
    v["messages"]
        .as_array()
        .and_then(|m| m.iter().find(|m| m["role"] == "tool"))
        .and_then(|m| m["content"].as_str())
        .unwrap_or_default()
        .to_owned()
}

/// Anthropic stream events as SSE (`event:` and `data:` lines).
pub fn sse_named(events: &[Value]) -> String {
    events.iter().map(|e| format!("event: {}\ndata: {e}\n\n", e["type"].as_str().unwrap_or(""))).collect()
}

/// An Anthropic streamed reply with one text block; `usage` is `message_start`'s.
pub fn anthropic_text_with_usage(text: &str, usage: Value) -> String {
    sse_named(&[
        json!({"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant", "content": [], "model": "m", "stop_reason": null, "usage": usage}}),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": text}}),
        json!({"type": "content_block_stop", "index": 0}),
        json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 2}}),
        json!({"type": "message_stop"}),
    ])
}

/// An Anthropic streamed reply with one text block.
pub fn anthropic_text(text: &str) -> String {
    anthropic_text_with_usage(text, json!({"input_tokens": 5, "output_tokens": 1}))
}

/// An Anthropic streamed reply with one `tool_use` block.
pub fn anthropic_tool_use(id: &str, name: &str, input: &Value) -> String {
    sse_named(&[
        json!({"type": "message_start", "message": {"id": "msg_t", "type": "message", "role": "assistant", "content": [], "model": "m", "stop_reason": null, "usage": {"input_tokens": 40, "output_tokens": 1}}}),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "tool_use", "id": id, "name": name, "input": {}}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": input.to_string()}}),
        json!({"type": "content_block_stop", "index": 0}),
        json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 12}}),
        json!({"type": "message_stop"}),
    ])
}

/// A tmux server of its own (`-L`), killed when dropped.
pub struct Tmux {
    socket: String,
}

impl Tmux {
    pub fn start(dir: &Path, command: &str) -> Tmux {
        static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let socket = format!("spine-test-{}-{n}", std::process::id());
        let tmux = Tmux { socket };
        let status = tmux
            .cmd()
            .args(["new-session", "-d", "-x", "120", "-y", "30", "-s", "t", "-c"])
            .arg(dir)
            .arg(command)
            .status()
            .expect("tmux runs");
        assert!(status.success(), "tmux new-session");
        tmux
    }

    pub fn cmd(&self) -> std::process::Command {
        let mut cmd = std::process::Command::new("tmux");
        cmd.args(["-L", &self.socket, "-f", "/dev/null"]);
        cmd
    }

    pub fn screen(&self) -> String {
        let out = self.cmd().args(["capture-pane", "-p", "-t", "t"]).output().expect("capture-pane");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// The screen with its colours and attributes as escape codes (`capture-pane -e`): text
    /// printed without colour has none.
    pub fn screen_with_escapes(&self) -> String {
        let out = self.cmd().args(["capture-pane", "-p", "-e", "-t", "t"]).output().expect("capture-pane");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// The screen with its scrollback (everything the session printed, up to 2,000 lines).
    pub fn all(&self) -> String {
        let out = self.cmd().args(["capture-pane", "-p", "-S", "-2000", "-t", "t"]).output().expect("capture-pane");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Waits (at most 30 s) until the screen with its scrollback shows `text` `times` times.
    pub fn wait_for_count(&self, text: &str, times: usize) -> String {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        loop {
            let all = self.all();
            if all.matches(text).count() >= times {
                return all;
            }
            assert!(std::time::Instant::now() < deadline, "`{text}` never appeared {times} times:\n{all}");
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
    }

    /// Waits (at most 30 s) until the last non-blank line of the screen is `line` (trailing
    /// spaces ignored): the prompt is back and shows exactly that, so keys sent next reach the
    /// line editor, not the terminal of a turn still ending.
    pub fn wait_for_last_line(&self, line: &str) -> String {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        loop {
            let screen = self.screen();
            if screen.lines().rev().map(str::trim_end).find(|l| !l.is_empty()) == Some(line) {
                return screen;
            }
            assert!(std::time::Instant::now() < deadline, "the last line never became `{line}`:\n{screen}");
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
    }

    /// Types `text` (literally) and presses Enter.
    pub fn send_line(&self, text: &str) {
        let sent = self.cmd().args(["send-keys", "-t", "t", "-l", text]).status().expect("send-keys");
        assert!(sent.success());
        self.send_key("Enter");
    }

    /// Presses one key (`Enter`, `C-c`, `C-d`).
    pub fn send_key(&self, key: &str) {
        let sent = self.cmd().args(["send-keys", "-t", "t", key]).status().expect("send-keys");
        assert!(sent.success());
    }

    /// Waits (at most 30 s: a liveness bound, not a timing assertion) until the screen shows
    /// `text`, and returns the screen.
    pub fn wait_for(&self, text: &str) -> String {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        loop {
            let screen = self.screen();
            if screen.contains(text) {
                return screen;
            }
            assert!(std::time::Instant::now() < deadline, "`{text}` never appeared:\n{screen}");
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.cmd().arg("kill-server").status();
    }
}

/// `s` quoted for a POSIX shell.
pub fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// The shell command a tmux terminal runs for `spine ARGS` (ARGS already shell-quoted): `env`
/// with `env_args` (such as ` -u NAME` or ` NAME=value`, quoted), the sandbox's `SPINE_HOME`
/// and `HOME`; `EXIT=<status>` shows when it ends, and the screen stays up for a minute.
pub fn terminal_command(s: &Sandbox, env_args: &str, args: &str) -> String {
    let spine = assert_cmd::cargo::cargo_bin("spine");
    format!(
        "env{env_args} SPINE_HOME={} HOME={} {} {args}; echo EXIT=$?; sleep 60",
        shell_quote(&s.home().to_string_lossy()),
        shell_quote(&s.dir.path().to_string_lossy()),
        shell_quote(&spine.to_string_lossy()),
    )
}

/// A tmux terminal running an interactive session, `spine --model scripted:SCRIPT ARGS`, with
/// the sandbox's environment, no provider key, and `env` set; `EXIT=<status>` shows when it
/// ends. Returns once the session's banner is on screen.
pub fn chat_session(s: &Sandbox, script: &Path, env: &[(&str, &str)], args: &str) -> Tmux {
    let extra: String = env.iter().map(|(k, v)| format!(" {k}={}", shell_quote(v))).collect();
    let command = terminal_command(
        s,
        &format!(" -u OPENAI_API_KEY -u ANTHROPIC_API_KEY{extra}"),
        &format!("--model scripted:{} {args}", shell_quote(&script.to_string_lossy())),
    );
    let tmux = Tmux::start(&s.project(), &command);
    tmux.wait_for("/help lists the commands");
    tmux
}

/// A command hook that appends its stdin (one JSON line) to `log`, then prints `answer`.
pub fn logging(log: &Path, answer: &Value) -> Value {
    let answer = answer.to_string().replace('\'', "'\\''");
    json!({"type": "command", "command": format!("cat >> {}; echo >> {}; printf '%s' '{answer}'", log.display(), log.display())})
}

/// The JSON lines of `log` (hook inputs a [`logging`] hook appended); none when it is missing.
pub fn logged(log: &Path) -> Vec<Value> {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect()
}

/// Runs `spine -p go` on `script` in bypass mode, waits until a command writes its pid to
/// `pidfile`, sends SIGINT, and checks that spine exits 130 and that the process is gone (or a
/// zombie awaiting its reaper): Ctrl-C reaches what `what` started.
pub fn sigint_kills_the_recorded_process(s: &Sandbox, script: &Path, pidfile: &Path, what: &str) {
    use std::time::{Duration, Instant};
    let mut child = s
        .spine_process()
        .args(["run", "-p", "go", "--model", &format!("scripted:{}", script.display())])
        .args(["--permission-mode", "bypassPermissions"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn spine");
    let deadline = Instant::now() + Duration::from_secs(20);
    let pid: i32 = loop {
        if let Some(pid) = std::fs::read_to_string(pidfile).ok().and_then(|t| t.trim().parse().ok()) {
            break pid;
        }
        assert!(Instant::now() < deadline, "{what}'s Bash never started");
        std::thread::sleep(Duration::from_millis(20));
    };
    let spine = nix::unistd::Pid::from_raw(i32::try_from(child.id()).expect("pid"));
    nix::sys::signal::kill(spine, nix::sys::signal::Signal::SIGINT).expect("signal");
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        assert!(started.elapsed() < Duration::from_secs(10), "spine did not stop");
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(status.code(), Some(130));
    let proc = format!("/proc/{pid}");
    let zombie = std::fs::read_to_string(format!("{proc}/stat")).is_ok_and(|s| s.contains(") Z "));
    assert!(!Path::new(&proc).exists() || zombie, "{what}'s process was killed");
}

/// Runs git in `dir` with a fixed identity and default branch; its stdout.
pub fn git(dir: &Path, args: &[&str]) -> String {
    let out = std::process::Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["-c", "user.name=t", "-c", "user.email=t@t", "-c", "init.defaultBranch=main"])
        .args(args)
        .output()
        .expect("git runs");
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

/// A reader thread over a child's stdout: each line parsed as JSON, in order (a line that is
/// not JSON fails the test, naming it); the channel closes at the end of stdout.
pub fn json_lines(stdout: std::process::ChildStdout) -> std::sync::mpsc::Receiver<Value> {
    use std::io::BufRead;
    let (tx, lines) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            let value =
                serde_json::from_str(&line).unwrap_or_else(|e| panic!("a stdout line is not JSON ({e}): {line}"));
            if tx.send(value).is_err() {
                break;
            }
        }
    });
    lines
}

/// Runs `cmd` (a `--input-format stream-json` session) with `prompts` as user messages on
/// stdin, closes stdin, and waits for it to exit.
pub fn drive_stream_json(cmd: &mut std::process::Command, prompts: &[&str]) -> Output {
    use std::io::Write;
    use std::process::Stdio;
    let mut child =
        cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("spine starts");
    {
        let mut stdin = child.stdin.take().expect("stdin");
        for text in prompts {
            let line = json!({"type": "user", "message": {"role": "user", "content": text}, "parent_tool_use_id": null, "session_id": ""});
            writeln!(stdin, "{line}").expect("write");
        }
    }
    child.wait_with_output().expect("spine exits")
}

/// The `result` lines of a stream-json run's stdout.
pub fn result_lines(out: &Output) -> Vec<Value> {
    stdout(out)
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|l| l["type"] == "result")
        .collect()
}
