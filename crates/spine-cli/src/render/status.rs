//! The live status line of a non-interactive run on a terminal: one line on stderr,
//! `⠿ turn 3 · Bash: npm test · 12 s · 4.2k tokens`, redrawn when the run's state changes and
//! once a second for the clock (an idle run wakes once a second, never more). Shown only when
//! stderr is a terminal and neither `-v` (which prints every event as its own line) nor `-q` is
//! given. Any other stderr output — a warning, a hook's message, the approval prompt — first
//! clears the line ([`StatusLine::suspend`]) and draws it again after; the line is cleared for
//! good before the run's output is printed ([`StatusLine::finish`]).
//!
//! The line is cut to the terminal's width (`COLUMNS`, else 80) so it never wraps: a wrapped
//! line could not be cleared with one carriage return. It is drawn with cursor control (`\r`,
//! erase line), never colour, and only when stderr is a terminal: an interactive session whose
//! stderr is redirected draws nothing there.

use std::io::{IsTerminal, Write};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use spine_core::CancellationToken;
use spine_core::observer::RunEvent;
use spine_protocol::message::Message;
use spine_protocol::tool::ToolArguments;

/// How often the clock is redrawn.
const TICK: Duration = Duration::from_secs(1);

/// The longest main argument shown.
const MAX_ARG: usize = 40;

/// The live status line (see the module documentation).
pub struct StatusLine {
    state: Mutex<State>,
    stop: CancellationToken,
    /// Wakes the clock when the line is drawn again (a suspended line's clock sleeps).
    wake: Arc<tokio::sync::Notify>,
    width: usize,
    /// Whether stderr is a terminal (nothing is drawn otherwise).
    terminal: bool,
}

struct State {
    started: Instant,
    turn: u32,
    tools: Vec<String>,
    tokens: u64,
    /// Whether the line is on the screen now.
    shown: bool,
    /// Whether drawing is allowed (false while other output owns the terminal, and at the end).
    enabled: bool,
}

impl StatusLine {
    /// Starts the status line and its clock (on the current tokio runtime).
    pub fn start() -> Arc<Self> {
        Self::start_with(true)
    }

    /// Starts a status line that draws nothing until [`resume`](Self::resume) (an interactive
    /// session's, shown only while a prompt runs).
    pub fn start_paused() -> Arc<Self> {
        Self::start_with(false)
    }

    /// Starts the line over for a new prompt: clock, turn, tools and tokens.
    pub fn reset(&self) {
        let mut s = self.lock();
        s.started = Instant::now();
        s.turn = 0;
        s.tools.clear();
        s.tokens = 0;
    }

    fn start_with(enabled: bool) -> Arc<Self> {
        let width = std::env::var("COLUMNS").ok().and_then(|c| c.trim().parse().ok()).filter(|w| *w > 10).unwrap_or(80);
        let line = Arc::new(StatusLine {
            state: Mutex::new(State {
                started: Instant::now(),
                turn: 0,
                tools: Vec::new(),
                tokens: 0,
                shown: false,
                enabled,
            }),
            stop: CancellationToken::new(),
            wake: Arc::new(tokio::sync::Notify::new()),
            width,
            terminal: std::io::stderr().is_terminal(),
        });
        // The clock holds the line weakly: when the run drops it (an early error included), the
        // clock stops and the line is cleared. While the line is suspended (an interactive
        // session waiting at its prompt) the clock sleeps until it is resumed: an idle session
        // does not wake up.
        let ticker = Arc::downgrade(&line);
        let stop = line.stop.clone();
        let wake = Arc::clone(&line.wake);
        tokio::spawn(async move {
            let mut interval = tokio::time::interval(TICK);
            interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                let suspended = match ticker.upgrade() {
                    Some(line) => !line.lock().enabled,
                    None => break,
                };
                if suspended {
                    tokio::select! {
                        () = wake.notified() => interval.reset(),
                        () = stop.cancelled() => break,
                    }
                    continue;
                }
                tokio::select! {
                    _ = interval.tick() => match ticker.upgrade() {
                        Some(line) => line.redraw(),
                        None => break,
                    },
                    () = stop.cancelled() => break,
                }
            }
        });
        line
    }

    /// Takes a run event into the line's state and redraws it.
    pub fn on_event(&self, event: &RunEvent<'_>) {
        {
            let mut s = self.lock();
            match event {
                RunEvent::ModelRequest { turn } => {
                    s.turn = *turn;
                    s.tools.clear();
                }
                RunEvent::ModelReplied { usage: Some(usage), .. } => {
                    s.tokens += usage.input_tokens + usage.output_tokens;
                }
                RunEvent::Message { message: Message::Assistant(turn) } => {
                    s.tools = turn.tool_calls.iter().map(|c| describe(&c.name, &c.arguments)).collect();
                }
                RunEvent::ToolResult { result } => {
                    let name = &result.name;
                    if let Some(i) = s.tools.iter().position(|t| t == name || t.starts_with(&format!("{name}: "))) {
                        s.tools.remove(i);
                    }
                }
                _ => return,
            }
        }
        self.redraw();
    }

    /// Clears the line while other output is written; [`resume`](Self::resume) draws it again.
    pub fn suspend(&self) {
        let mut s = self.lock();
        s.enabled = false;
        clear(&mut s);
    }

    /// Draws the line again after [`suspend`](Self::suspend).
    pub fn resume(&self) {
        self.lock().enabled = true;
        self.wake.notify_one();
        self.redraw();
    }

    /// Clears the line for good and stops the clock.
    pub fn finish(&self) {
        self.stop.cancel();
        self.suspend();
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn redraw(&self) {
        let mut s = self.lock();
        if !s.enabled || !self.terminal {
            return;
        }
        let text = render(&s, self.width);
        let mut err = std::io::stderr().lock();
        let _ = write!(err, "\r\x1b[2K{text}");
        let _ = err.flush();
        s.shown = true;
    }
}

impl Drop for StatusLine {
    fn drop(&mut self) {
        self.stop.cancel();
        clear(&mut self.lock());
    }
}

fn clear(s: &mut State) {
    if s.shown {
        let mut err = std::io::stderr().lock();
        let _ = write!(err, "\r\x1b[2K");
        let _ = err.flush();
        s.shown = false;
    }
}

/// The line's text, cut to `width` characters.
fn render(s: &State, width: usize) -> String {
    let elapsed = s.started.elapsed().as_secs();
    let mut parts = vec![if s.turn == 0 { "starting".to_owned() } else { format!("turn {}", s.turn) }];
    match s.tools.as_slice() {
        [] if s.turn > 0 => parts.push("thinking".to_owned()),
        [] => {}
        [one] => parts.push(one.clone()),
        [first, rest @ ..] => parts.push(format!("{first} (+{} more)", rest.len())),
    }
    parts.push(format!("{elapsed} s"));
    if s.tokens > 0 {
        parts.push(tokens(s.tokens));
    }
    let line = format!("⠿ {}", parts.join(" · "));
    line.chars().take(width.saturating_sub(1)).collect()
}

fn tokens(n: u64) -> String {
    match n {
        0..1_000 => format!("{n} tokens"),
        1_000..1_000_000 => format!("{:.1}k tokens", n as f64 / 1_000.0),
        _ => format!("{:.1}M tokens", n as f64 / 1_000_000.0),
    }
}

/// `Tool: main argument` (the command, path, pattern or URL), one line, cut to [`MAX_ARG`].
pub(crate) fn describe(name: &str, arguments: &ToolArguments) -> String {
    match main_argument(arguments, MAX_ARG) {
        Some(arg) => format!("{name}: {arg}"),
        None => name.to_owned(),
    }
}

/// A call's main argument (the command, path, pattern, URL or query), its first line cut to
/// `max` characters.
pub(crate) fn main_argument(arguments: &ToolArguments, max: usize) -> Option<String> {
    let ToolArguments::Json(args) = arguments else { return None };
    let arg = ["command", "file_path", "path", "pattern", "url", "query", "description"]
        .iter()
        .find_map(|k| args.get(*k).and_then(|v| v.as_str()))?;
    let arg = arg.lines().next().unwrap_or_default();
    let mut shown: String = arg.chars().take(max).collect();
    if arg.chars().count() > max {
        shown.push('…');
    }
    Some(shown)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state(turn: u32, tools: &[&str], tokens: u64) -> State {
        State {
            started: Instant::now(),
            turn,
            tools: tools.iter().map(|t| (*t).to_owned()).collect(),
            tokens,
            shown: false,
            enabled: true,
        }
    }

    #[test]
    fn the_line_names_the_turn_the_running_tool_the_clock_and_the_tokens() {
        assert_eq!(render(&state(0, &[], 0), 80), "⠿ starting · 0 s");
        assert_eq!(render(&state(2, &[], 1_234), 80), "⠿ turn 2 · thinking · 0 s · 1.2k tokens");
        assert_eq!(render(&state(3, &["Bash: npm test"], 0), 80), "⠿ turn 3 · Bash: npm test · 0 s");
        assert_eq!(render(&state(3, &["Read: a", "Read: b", "Read: c"], 0), 80), "⠿ turn 3 · Read: a (+2 more) · 0 s");
    }

    #[test]
    fn the_line_never_wraps() {
        let long = "Bash: ".to_owned() + &"x".repeat(200);
        assert_eq!(render(&state(1, &[&long], 0), 30).chars().count(), 29);
    }

    #[test]
    fn a_tool_is_described_by_its_main_argument_on_one_line() {
        let args = ToolArguments::Json(serde_json::json!({"command": "npm test\nnpm run lint"}));
        assert_eq!(describe("Bash", &args), "Bash: npm test");
        let long = ToolArguments::Json(serde_json::json!({"file_path": "a/".repeat(30)}));
        assert!(describe("Read", &long).ends_with('…'));
        assert_eq!(describe("TodoWrite", &ToolArguments::Json(serde_json::json!({}))), "TodoWrite");
    }
}
