//! Headless Chromium (Debian's `chromium` package) driven over the DevTools protocol, for
//! tests of the pages spine writes. The protocol runs on a pipe (`--remote-debugging-pipe`:
//! JSON messages ended by a NUL byte, commands on the browser's fd 3, answers and events on
//! its fd 4), so no websocket client and no npm are needed. Host names resolve to nothing
//! (`--host-resolver-rules`), and every `Network.requestWillBeSent` event is kept so a test
//! can assert what the page asked for.
//!
//! A missing browser is an error carrying the install hint — a test fails with it, it never
//! skips. `SPINE_TEST_CHROMIUM` names another binary.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// How long one protocol command may take before the test fails (a liveness bound).
const COMMAND_TIMEOUT: Duration = Duration::from_secs(60);

/// The hint a test fails with when no browser is installed.
pub const INSTALL_HINT: &str = "chromium not found: install Debian's package (`apt-get install chromium`; \
     scripts/services.sh start installs it) or set SPINE_TEST_CHROMIUM to a Chromium binary";

/// The Chromium binary: `SPINE_TEST_CHROMIUM`, else `chromium` or `chromium-browser` on PATH.
pub fn binary() -> Result<PathBuf, String> {
    if let Some(path) = std::env::var_os("SPINE_TEST_CHROMIUM") {
        return Ok(PathBuf::from(path));
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    for dir in std::env::split_paths(&path) {
        for name in ["chromium", "chromium-browser"] {
            let candidate = dir.join(name);
            if candidate.is_file() {
                return Ok(candidate);
            }
        }
    }
    Err(INSTALL_HINT.to_owned())
}

/// The flags every headless run here uses: no sandbox (root in CI), no GPU, nothing
/// phoning home, and no host name that resolves.
pub fn headless_args(profile: &Path) -> Vec<String> {
    vec![
        "--headless".into(),
        "--no-sandbox".into(),
        "--disable-gpu".into(),
        "--disable-background-networking".into(),
        "--disable-component-update".into(),
        "--disable-sync".into(),
        "--disable-default-apps".into(),
        // Containers often have a small /dev/shm; shared memory then lives in /tmp.
        "--disable-dev-shm-usage".into(),
        "--no-first-run".into(),
        "--host-resolver-rules=MAP * ~NOTFOUND".into(),
        "--window-size=1400,800".into(),
        format!("--user-data-dir={}", profile.display()),
    ]
}

/// A running headless browser and its protocol pipe.
pub struct Chromium {
    child: Child,
    commands: ChildStdin,
    answers: Receiver<Value>,
    next_id: u64,
    events: Vec<Value>,
}

/// One page (a target the browser session is attached to).
#[derive(Debug, Clone)]
pub struct Page {
    /// The protocol session of the page.
    pub session: String,
}

impl Chromium {
    /// Starts the browser with its profile in `profile` (a fresh temporary directory).
    pub fn launch(profile: &Path) -> Result<Chromium, String> {
        let bin = binary()?;
        // The shell moves the pipes to fds 3 (commands) and 4 (answers), then becomes Chromium.
        let mut child = Command::new("/bin/sh")
            .arg("-c")
            .arg(r#"exec 3<&0 4>&1 0</dev/null 1>/dev/null; exec "$0" "$@""#)
            .arg(&bin)
            .args(headless_args(profile))
            .arg("--remote-debugging-pipe")
            .arg("about:blank")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("{}: {e} ({INSTALL_HINT})", bin.display()))?;
        let commands = child.stdin.take().ok_or("no stdin pipe")?;
        let mut output = child.stdout.take().ok_or("no stdout pipe")?;
        let (tx, answers) = channel();
        std::thread::spawn(move || {
            let mut pending: Vec<u8> = Vec::new();
            let mut buf = [0u8; 65536];
            loop {
                let n = match output.read(&mut buf) {
                    Ok(0) | Err(_) => return,
                    Ok(n) => n,
                };
                pending.extend_from_slice(&buf[..n]);
                while let Some(end) = pending.iter().position(|b| *b == 0) {
                    let message: Vec<u8> = pending.drain(..=end).collect();
                    if let Ok(value) = serde_json::from_slice::<Value>(&message[..message.len() - 1])
                        && tx.send(value).is_err()
                    {
                        return;
                    }
                }
            }
        });
        Ok(Chromium { child, commands, answers, next_id: 0, events: Vec::new() })
    }

    /// Sends a command (to the browser, or to a page's `session`) and waits for its answer.
    pub fn call(&mut self, session: Option<&str>, method: &str, params: Value) -> Result<Value, String> {
        self.next_id += 1;
        let id = self.next_id;
        let mut message = json!({"id": id, "method": method, "params": params});
        if let Some(s) = session {
            message["sessionId"] = Value::String(s.to_owned());
        }
        let mut bytes = message.to_string().into_bytes();
        bytes.push(0);
        self.commands.write_all(&bytes).and_then(|()| self.commands.flush()).map_err(|e| format!("{method}: {e}"))?;
        let deadline = Instant::now() + COMMAND_TIMEOUT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.answers.recv_timeout(left) {
                Ok(answer) if answer["id"] == id => {
                    if let Some(error) = answer.get("error") {
                        return Err(format!("{method}: {error}"));
                    }
                    return Ok(answer["result"].clone());
                }
                Ok(event) => self.events.push(event),
                Err(RecvTimeoutError::Timeout) => return Err(format!("{method}: no answer within 60 s")),
                Err(RecvTimeoutError::Disconnected) => return Err(format!("{method}: the browser exited")),
            }
        }
    }

    /// Opens `url` in a new page that records its network requests.
    pub fn open(&mut self, url: &str) -> Result<Page, String> {
        let target = self.call(None, "Target.createTarget", json!({"url": "about:blank"}))?;
        let target_id = target["targetId"].as_str().ok_or("no targetId")?.to_owned();
        let attached = self.call(None, "Target.attachToTarget", json!({"targetId": target_id, "flatten": true}))?;
        let session = attached["sessionId"].as_str().ok_or("no sessionId")?.to_owned();
        for domain in ["Network.enable", "Page.enable", "Runtime.enable"] {
            self.call(Some(&session), domain, json!({}))?;
        }
        self.call(Some(&session), "Page.navigate", json!({"url": url}))?;
        Ok(Page { session })
    }

    /// Evaluates `expression` in the page and returns its value (JSON-serializable values).
    pub fn eval(&mut self, page: &Page, expression: &str) -> Result<Value, String> {
        let result = self.call(
            Some(&page.session),
            "Runtime.evaluate",
            json!({"expression": expression, "returnByValue": true, "awaitPromise": true}),
        )?;
        if let Some(exception) = result.get("exceptionDetails") {
            return Err(format!("{expression}: {exception}"));
        }
        Ok(result["result"]["value"].clone())
    }

    /// Waits until `expression` is truthy (checked every 50 ms, for at most `timeout`). An
    /// expression that throws (the page is still loading) counts as not yet true.
    pub fn wait_for(&mut self, page: &Page, expression: &str, timeout: Duration) -> Result<(), String> {
        let deadline = Instant::now() + timeout;
        loop {
            let last = match self.eval(page, &format!("!!({expression})")) {
                Ok(Value::Bool(true)) => return Ok(()),
                Ok(value) => format!("it was {value}"),
                Err(e) => e,
            };
            if Instant::now() > deadline {
                return Err(format!("`{expression}` not true within {timeout:?}: {last}"));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// A real left click at the centre of the first element matching `selector` (mouse
    /// events through the input pipeline, as a user's click).
    pub fn click(&mut self, page: &Page, selector: &str) -> Result<(), String> {
        let expression = format!(
            "(() => {{ const e = document.querySelector({}); if (!e) return null; \
             e.scrollIntoView({{block: 'center'}}); const r = e.getBoundingClientRect(); \
             return [r.left + r.width / 2, r.top + r.height / 2]; }})()",
            Value::String(selector.to_owned())
        );
        let point = self.eval(page, &expression)?;
        let (Some(x), Some(y)) = (point[0].as_f64(), point[1].as_f64()) else {
            return Err(format!("no element matches {selector}"));
        };
        for kind in ["mouseMoved", "mousePressed", "mouseReleased"] {
            self.call(
                Some(&page.session),
                "Input.dispatchMouseEvent",
                json!({"type": kind, "x": x, "y": y, "button": "left", "clickCount": 1}),
            )?;
        }
        Ok(())
    }

    /// The URL of every request the browser's pages started so far (`Network.requestWillBeSent`).
    pub fn requests(&mut self) -> Vec<String> {
        while let Ok(event) = self.answers.try_recv() {
            self.events.push(event);
        }
        self.events
            .iter()
            .filter(|e| e["method"] == "Network.requestWillBeSent")
            .filter_map(|e| e["params"]["request"]["url"].as_str().map(str::to_owned))
            .collect()
    }
}

impl Drop for Chromium {
    fn drop(&mut self) {
        let _ = self.call(None, "Browser.close", json!({}));
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
