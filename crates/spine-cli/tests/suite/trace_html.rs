//! `spine trace html`: the page opened in headless Chromium (Debian's `chromium`; a missing
//! browser fails the test with the install hint). The page must show the header and the bars,
//! open the details on a real click, fetch nothing, keep trace text as text, and keep only the
//! visible rows of a large trace in the DOM.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Value, json};
use spine_testkit::chromium::{Chromium, Page};

use crate::support::*;

const READY: Duration = Duration::from_secs(60);

/// `spine trace html TRACE -o PAGE`; returns the page's path.
fn render(s: &Sandbox, trace: &Path) -> PathBuf {
    let page = s.dir.path().join("trace.html");
    let out = s
        .spine()
        .args(["trace", "html", trace.to_str().expect("utf8"), "-o", page.to_str().expect("utf8")])
        .output()
        .expect("spine trace html");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out).trim(), page.display().to_string());
    page
}

/// A browser with its profile in the sandbox, the page opened and drawn.
fn open(s: &Sandbox, page: &Path, hash: &str) -> (Chromium, Page, String) {
    let mut browser = Chromium::launch(&s.dir.path().join("chromium-profile")).unwrap_or_else(|e| panic!("{e}"));
    let url = format!("file://{}{hash}", page.display());
    let tab = browser.open(&url).unwrap_or_else(|e| panic!("{e}"));
    browser.wait_for(&tab, "document.documentElement.dataset.ready === '1'", READY).unwrap_or_else(|e| panic!("{e}"));
    (browser, tab, url)
}

fn eval(browser: &mut Chromium, tab: &Page, expression: &str) -> Value {
    browser.eval(tab, expression).unwrap_or_else(|e| panic!("{e}"))
}

/// A run with a PreToolUse hook that allows `calculator` with a reason, then a denied `Write`.
fn traced_run(s: &Sandbox, prompt: &str) -> (PathBuf, String) {
    let hook = s.write(
        ".spine/hooks/allow.sh",
        "cat >/dev/null\nprintf '%s' '{\"hookSpecificOutput\": {\"hookEventName\": \"PreToolUse\", \
         \"permissionDecision\": \"allow\", \"permissionDecisionReason\": \"arithmetic is safe\"}}'\n",
    );
    let settings = json!({"hooks": {"PreToolUse": [{"matcher": "calculator", "hooks": [
        {"type": "command", "command": format!("sh {}", hook.display())}]}]}});
    let script = s.script(json!([
        {"tool_calls": [
            {"id": "c1", "name": "calculator", "arguments": {"expression": "6*7"}},
            {"id": "c2", "name": "Write", "arguments": {"file_path": "x.txt", "content": "x"}}
        ]},
        {"text": "42"}
    ]));
    let trace = s.dir.path().join("trace.jsonl");
    let out = s
        .spine()
        .args(["run", "-p", prompt, "--model", &format!("scripted:{}", script.display())])
        .args(["--output-format", "json", "--settings", &settings.to_string()])
        .args(["--trace", trace.to_str().expect("utf8")])
        .output()
        .expect("spine runs");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    (trace, json(&out)["session_id"].as_str().expect("session_id").to_owned())
}

/// Every `src=`/`href=` attribute value and `url(` of the page: none may point elsewhere.
fn external_references(html: &str) -> Vec<String> {
    let mut found = Vec::new();
    for attr in ["src=", "href=", "url(", "@import", "action="] {
        for (at, _) in html.match_indices(attr) {
            let value: String = html[at + attr.len()..].chars().take(40).collect();
            let value = value.trim_start_matches(['"', '\'']);
            if value.starts_with("http") || value.starts_with("//") || value.contains("://") {
                found.push(format!("{attr}{value}"));
            }
        }
    }
    found
}

#[test]
fn the_trace_page_shows_header_and_bars_and_a_click_opens_the_calls_details_with_no_request() {
    let s = Sandbox::new();
    let (trace, session) = traced_run(&s, "what is 6*7?");
    let page = render(&s, &trace);
    let html = std::fs::read_to_string(&page).expect("page");
    assert_eq!(external_references(&html), Vec::<String>::new());

    let (mut browser, tab, url) = open(&s, &page, "");
    assert_eq!(eval(&mut browser, &tab, "document.getElementById('hdr-session').textContent"), json!(session));
    assert_eq!(eval(&mut browser, &tab, "document.getElementById('hdr-model').textContent"), json!("scripted"));
    assert_eq!(eval(&mut browser, &tab, "document.getElementById('hdr-prompt').textContent"), json!("what is 6*7?"));
    assert_eq!(eval(&mut browser, &tab, "document.getElementById('hdr-ended').textContent"), json!("success"));
    assert_eq!(eval(&mut browser, &tab, "document.getElementById('hdr-calls').textContent"), json!("2"));
    let entries = spine_testkit::files::read_jsonl(&trace).len();
    assert_eq!(eval(&mut browser, &tab, "document.querySelectorAll('.bar').length"), json!(entries), "a bar per entry");
    for kind in ["k-model", "k-tool", "k-stage", "k-hook"] {
        assert!(
            eval(&mut browser, &tab, &format!("document.querySelectorAll('.bar.{kind}').length")) != json!(0),
            "{kind}"
        );
    }
    assert_eq!(eval(&mut browser, &tab, "document.getElementById('details').hidden"), json!(true));

    // A real click on the calculator call's bar opens its details.
    let seq = spine_testkit::files::read_jsonl(&trace)
        .iter()
        .find(|e| e["kind"] == "tool_decision" && e["tool_use_id"] == "c1")
        .and_then(|e| e["seq"].as_u64())
        .expect("c1's decision");
    browser.click(&tab, &format!(".bar[data-seq=\"{seq}\"]")).unwrap_or_else(|e| panic!("{e}"));
    browser.wait_for(&tab, "!document.getElementById('details').hidden", READY).unwrap_or_else(|e| panic!("{e}"));
    let title = eval(&mut browser, &tab, "document.getElementById('d-title').textContent");
    assert_eq!(title, json!(format!("#{seq} tool calculator → executed")));
    let details = eval(&mut browser, &tab, "document.getElementById('d-body').innerText");
    let details = details.as_str().unwrap_or_default();
    for needle in [
        "ARGUMENTS",
        "\"expression\": \"6*7\"",
        "RESULT",
        "The calculator returned 42.",
        "DECISION RECORD",
        "arithmetic is safe",
    ] {
        assert!(details.contains(needle), "{needle} in the details:\n{details}");
    }
    assert_eq!(eval(&mut browser, &tab, "document.querySelectorAll('.row.sel').length"), json!(1));

    // The filters: the Write call's rows only, then its outcome.
    eval(
        &mut browser,
        &tab,
        "(() => { const f = document.getElementById('f-tool'); f.value = 'Write'; f.dispatchEvent(new Event('change')); })()",
    );
    let labels = eval(
        &mut browser,
        &tab,
        "Array.from(document.querySelectorAll('.row .label')).map(l => l.firstChild.textContent)",
    );
    assert_eq!(labels, json!(["stage review_tool_call", "tool Write → denied"]));
    let pick = |id: &str, value: &str| {
        format!(
            "(() => {{ const f = document.getElementById('{id}'); f.value = '{value}'; f.dispatchEvent(new Event('change')); }})()"
        )
    };
    eval(&mut browser, &tab, &pick("f-tool", ""));
    eval(&mut browser, &tab, &pick("f-outcome", "executed"));
    eval(&mut browser, &tab, &pick("f-event", "PreToolUse"));
    let labels = eval(
        &mut browser,
        &tab,
        "Array.from(document.querySelectorAll('.row .label')).map(l => l.firstChild.textContent)",
    );
    let labels: Vec<&str> = labels.as_array().map(|a| a.iter().filter_map(Value::as_str).collect()).unwrap_or_default();
    assert_eq!(labels.len(), 1, "the calculator call's PreToolUse hook only: {labels:?}");
    assert!(labels[0].starts_with("hook PreToolUse sh ") && labels[0].ends_with(" → allow"), "{labels:?}");

    let requests = browser.requests();
    assert!(requests.iter().all(|r| r == &url), "only the page itself was requested: {requests:?}");
}

#[test]
fn a_prompt_holding_script_tags_stays_text_in_the_trace_page() {
    let s = Sandbox::new();
    let prompt = "</script><script>window.__pwned = 1</script><img src=x onerror=\"window.__pwned = 2\"> & done";
    let (trace, _) = traced_run(&s, prompt);
    let page = render(&s, &trace);
    let (mut browser, tab, url) = open(&s, &page, "");
    assert_eq!(eval(&mut browser, &tab, "document.getElementById('hdr-prompt').textContent"), json!(prompt));
    assert_eq!(eval(&mut browser, &tab, "typeof window.__pwned"), json!("undefined"));
    assert_eq!(eval(&mut browser, &tab, "document.querySelectorAll('img').length"), json!(0));
    assert_eq!(eval(&mut browser, &tab, "document.scripts.length"), json!(2), "the data and the page's script");
    let requests = browser.requests();
    assert!(requests.iter().all(|r| r == &url), "{requests:?}");
}

/// A trace of `n` entries: rounds of `prepare_turn`, a model request, and one tool call (a
/// hook, the `execute` stage, the decision record).
fn synthetic_trace(n: usize) -> String {
    let mut lines = vec![json!({"seq": 0, "t_us": 0, "kind": "run_start", "session_id": "big", "model": "m",
        "prompt": "many calls", "started_at": "2026-12-01T10:00:00.000Z"})];
    let mut t = 0u64;
    while lines.len() < n - 1 {
        let seq = lines.len() as u64;
        let round = seq / 5;
        let id = format!("c{round}");
        let tool = if round.is_multiple_of(2) { "Read" } else { "Bash" };
        t += 900;
        let mut entry = match seq % 5 {
            0 => json!({"kind": "stage", "hook": "prepare_turn", "duration_us": 100, "message_count": seq}),
            1 => json!({"kind": "model", "turn": round + 1, "model": "m", "message_count": seq, "tool_calls": 1,
                "duration_us": 700, "usage": {"input_tokens": 1000 + seq, "output_tokens": 20}}),
            2 => json!({"kind": "hook", "event": "PreToolUse", "hook_id": "guard", "source": "settings",
                "tool_use_id": id, "decision": "proceed", "applied": true, "duration_us": 300}),
            3 => json!({"kind": "stage", "hook": "execute", "tool_use_id": id, "duration_us": 500,
                "tool_name": tool, "ok": true}),
            _ => json!({"kind": "tool_decision", "tool_use_id": id, "tool_name": tool,
                "arguments": {"command": "ls"}, "pre_tool_use": [], "post_tool_use": [], "outcome": "executed"}),
        };
        entry["seq"] = json!(seq);
        entry["t_us"] = json!(t);
        lines.push(entry);
    }
    lines.push(json!({"seq": n - 1, "t_us": t + 10, "kind": "run_end", "subtype": "success", "num_turns": n / 5}));
    lines.iter().map(|l| format!("{l}\n")).collect()
}

#[test]
fn a_10000_entry_trace_keeps_only_the_visible_rows_in_the_page() {
    let s = Sandbox::new();
    let trace = s.dir.path().join("big.jsonl");
    std::fs::write(&trace, synthetic_trace(10_000)).expect("trace");
    let page = render(&s, &trace);
    let (mut browser, tab, _) = open(&s, &page, "#select=5000");
    assert_eq!(
        eval(&mut browser, &tab, "document.getElementById('count').textContent"),
        json!("10000 of 10000 entries")
    );
    let rows = eval(&mut browser, &tab, "document.querySelectorAll('.row').length").as_u64().unwrap_or(0);
    assert!(rows > 0 && rows < 200, "virtualized: {rows} rows in the DOM");
    assert_eq!(
        eval(&mut browser, &tab, "document.getElementById('d-title').textContent.startsWith('#5000 ')"),
        json!(true)
    );
    assert_eq!(
        eval(&mut browser, &tab, "!!document.querySelector('.row.sel[data-seq=\"5000\"]')"),
        json!(true),
        "#select scrolls to the entry"
    );
    eval(&mut browser, &tab, "(() => { const r = document.getElementById('rows'); r.scrollTop = r.scrollHeight; })()");
    browser
        .wait_for(&tab, "!!document.querySelector('.row[data-seq=\"9999\"]')", READY)
        .unwrap_or_else(|e| panic!("{e}"));
    let rows = eval(&mut browser, &tab, "document.querySelectorAll('.row').length").as_u64().unwrap_or(0);
    assert!(rows < 200, "still virtualized after scrolling: {rows}");

    // The axis over the rows in view starts near the end of the run, not at 0.
    let first_tick = "document.querySelector('#axis-track .tick').textContent";
    assert_eq!(eval(&mut browser, &tab, first_tick), json!("0 µs"));
    eval(
        &mut browser,
        &tab,
        "(() => { const f = document.getElementById('f-scale'); f.value = 'view'; f.dispatchEvent(new Event('change')); })()",
    );
    assert!(eval(&mut browser, &tab, first_tick).as_str().is_some_and(|t| t.ends_with(" s")), "seconds into the run");

    // Arrow keys move the selection.
    browser.click(&tab, ".row[data-seq=\"9998\"] .label").unwrap_or_else(|e| panic!("{e}"));
    browser
        .wait_for(&tab, "document.getElementById('d-title').textContent.startsWith('#9998 ')", READY)
        .unwrap_or_else(|e| panic!("{e}"));
    eval(
        &mut browser,
        &tab,
        "document.getElementById('rows').dispatchEvent(new KeyboardEvent('keydown', {key: 'ArrowUp'}))",
    );
    assert_eq!(
        eval(&mut browser, &tab, "document.getElementById('d-title').textContent.startsWith('#9997 ')"),
        json!(true)
    );
}
