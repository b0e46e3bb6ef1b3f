// spine trace html: draws the trace embedded in #trace-data as a timeline.
//
// Contract: every value from the trace is written with textContent (never as markup); the
// page loads nothing; rows are virtualized (only the visible ones exist in the DOM), so a
// trace of 10,000 entries scrolls like a short one. After the first paint the page sets
// data-ready="1" (and data-ready-ms, the time since navigation) on <html>. `#select=SEQ` in
// the URL opens the details of entry SEQ. The time axis spans the whole run, or only the rows
// in view ("rows in view": scrolling zooms to the entries on screen). Arrow keys move the
// selection.
(function () {
  "use strict";
  var ROW = 22, OVERSCAN = 10;
  var data = JSON.parse(document.getElementById("trace-data").textContent);
  var entries = data.entries || [];
  var summary = data.summary || {};
  var bySeq = new Map(), rowBySeq = new Map();
  var calls = new Map(); // tool_use_id -> {name, entries: [], outcome, start}

  function $(id) { return document.getElementById(id); }
  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }
  function dur(us) {
    if (us >= 1e6) return (us / 1e6).toFixed(2) + " s";
    if (us >= 1e3) return (us / 1e3).toFixed(1) + " ms";
    return us + " µs";
  }
  function tokens(u) {
    if (!u) return "no usage reported";
    var s = "in " + u.input_tokens;
    if (u.cache_creation_input_tokens || u.cache_read_input_tokens) {
      s += " (cache write " + (u.cache_creation_input_tokens || 0) + ", read " + (u.cache_read_input_tokens || 0) + ")";
    }
    return s + " · out " + u.output_tokens;
  }
  function json(v) { return typeof v === "string" ? v : JSON.stringify(v, null, 2); }
  function callId(e) {
    return e.tool_use_id === undefined || e.tool_use_id === null ? null : String(e.tool_use_id);
  }

  // ---- the header ----
  function header() {
    $("hdr-session").textContent = summary.session_id || "unknown";
    $("hdr-model").textContent = (summary.models && summary.models.length) ? summary.models.join(", ") : "unknown";
    $("hdr-start").textContent = summary.started_at || "unknown";
    $("hdr-duration").textContent = dur(summary.duration_us || 0);
    $("hdr-ended").textContent = summary.ended || "no end record";
    $("hdr-requests").textContent = summary.requests || 0;
    $("hdr-calls").textContent = summary.tool_calls || 0;
    $("hdr-tokens").textContent = tokens(summary.usage);
    $("hdr-cost").textContent = summary.cost_usd === undefined || summary.cost_usd === null
      ? "unknown" : "$" + Number(summary.cost_usd).toFixed(6);
    if (summary.prompt === undefined || summary.prompt === null) $("hdr-prompt-line").hidden = true;
    else { $("hdr-prompt").textContent = summary.prompt; $("hdr-prompt").title = summary.prompt; }
  }

  // ---- rows: one per entry; a decision record's bar spans its whole call ----
  var rows = [];
  function build() {
    var i, e, id, c;
    for (i = 0; i < entries.length; i++) {
      e = entries[i];
      bySeq.set(e.seq, e);
      id = callId(e);
      if (id === null) continue;
      c = calls.get(id);
      if (!c) { c = { name: null, entries: [], outcome: null, start: Infinity }; calls.set(id, c); }
      c.entries.push(e);
      c.start = Math.min(c.start, e.t_us - (e.duration_us || 0));
      if (e.kind === "tool_decision") { c.name = e.tool_name; c.outcome = e.outcome; }
      else if (c.name === null && e.tool_name) c.name = e.tool_name;
    }
    for (i = 0; i < entries.length; i++) { rows.push(row(entries[i])); rowBySeq.set(entries[i].seq, rows[i]); }
  }
  function row(e) {
    var id = callId(e), c = id === null ? null : calls.get(id);
    var r = { seq: e.seq, e: e, label: "", sub: "", cls: "k-point", start: e.t_us, end: e.t_us,
      tool: c ? c.name : null, outcome: c ? c.outcome : null, events: [e.kind], inCall: !!c, bad: false };
    var d = e.duration_us || 0;
    switch (e.kind) {
      case "stage":
        r.label = "stage " + e.hook; r.cls = "k-stage"; r.start = e.t_us - d; r.events.push(e.hook);
        r.sub = dur(d); r.bad = e.ok === false;
        break;
      case "hook":
        r.label = "hook " + e.event + " " + e.hook_id + " → " + e.decision + (e.applied ? "" : " (not applied)");
        r.cls = "k-hook"; r.start = e.t_us - d; r.events.push(e.event); r.sub = dur(d);
        r.bad = e.decision === "block" || e.decision === "failed" || e.decision === "deny";
        break;
      case "model":
        r.label = "model #" + e.turn + " " + e.model; r.cls = "k-model"; r.start = e.t_us - d;
        r.sub = tokens(e.usage) + " · " + dur(d); r.bad = !!e.error;
        break;
      case "model_attempt":
        r.label = "attempt " + e.turn + "." + e.attempt + " → " + e.outcome; r.cls = "k-model"; r.start = e.t_us - d;
        r.sub = dur(d); r.bad = e.outcome !== "ok";
        break;
      case "tool_decision":
        r.label = "tool " + e.tool_name + " → " + e.outcome; r.cls = "k-tool";
        r.start = c ? Math.min(c.start, e.t_us) : e.t_us; r.sub = e.error_code || dur(e.t_us - r.start);
        r.bad = e.outcome !== "executed";
        break;
      case "warning": r.label = "warning: " + e.message; r.bad = true; break;
      case "run_start": r.label = "run start"; r.sub = e.started_at; break;
      case "run_usage":
        r.label = "run usage"; r.sub = e.total_cost_usd === undefined ? "" : "$" + Number(e.total_cost_usd).toFixed(6);
        break;
      case "run_end": r.label = "run end: " + e.subtype; r.sub = e.num_turns + " request(s)"; break;
      default: r.label = String(e.kind);
    }
    r.start = Math.max(0, r.start);
    return r;
  }

  // ---- filters ----
  var shown = [];
  function options(select, values) {
    Array.from(values).sort().forEach(function (v) { select.appendChild(el("option", null, v)).value = v; });
  }
  function filters() {
    var tools = new Set(), events = new Set(), outcomes = new Set();
    rows.forEach(function (r) {
      if (r.tool) tools.add(r.tool);
      if (r.outcome) outcomes.add(r.outcome);
      r.events.forEach(function (n) { events.add(n); });
    });
    options($("f-tool"), tools); options($("f-event"), events); options($("f-outcome"), outcomes);
    ["f-tool", "f-event", "f-outcome", "f-scale"].forEach(function (id) { $(id).addEventListener("change", apply); });
  }
  function apply() {
    var tool = $("f-tool").value, event = $("f-event").value, outcome = $("f-outcome").value;
    shown = rows.filter(function (r) {
      return (!tool || r.tool === tool) && (!event || r.events.indexOf(event) >= 0) && (!outcome || r.outcome === outcome);
    });
    $("count").textContent = shown.length + " of " + rows.length + " entries";
    $("spacer").style.height = (shown.length * ROW) + "px";
    last = [-1, -1];
    draw();
  }

  // ---- the time axis and the virtualized rows ----
  var total = 1, from = 0, span = 1, axisKey = "";
  function runSpan() {
    rows.forEach(function (r) { total = Math.max(total, r.end); });
    total = Math.max(total, summary.duration_us || 0, 1);
  }
  // The window [from, from + span) the bars are drawn in: the whole run, or the rows in view.
  function windowFor(first, end) {
    if ($("f-scale").value !== "view" || end <= first) { from = 0; span = total; return; }
    var lo = Infinity, hi = 0;
    for (var i = first; i < end; i++) { lo = Math.min(lo, shown[i].start); hi = Math.max(hi, shown[i].end); }
    var pad = Math.max((hi - lo) * 0.02, 1);
    from = Math.max(0, lo - pad);
    span = Math.max(hi + pad - from, 1);
  }
  function axis() {
    var key = from + ":" + span;
    if (key === axisKey) return;
    axisKey = key;
    var track = $("axis-track"), raw = span / 8, mag = Math.pow(10, Math.floor(Math.log10(raw)));
    var step = [1, 2, 5, 10].map(function (m) { return m * mag; }).filter(function (s) { return s >= raw; })[0] || mag * 10;
    var frag = document.createDocumentFragment();
    for (var t = Math.ceil(from / step) * step; t <= from + span; t += step) {
      var tick = el("div", "tick", dur(Math.round(t)));
      tick.style.left = ((t - from) / span * 100) + "%";
      frag.appendChild(tick);
    }
    track.replaceChildren(frag);
  }
  var last = [-1, -1], selected = null, pending = false;
  function draw() {
    pending = false;
    var box = $("rows"), top = box.scrollTop, height = box.clientHeight || 600;
    var first = Math.max(0, Math.floor(top / ROW) - OVERSCAN);
    var end = Math.min(shown.length, Math.ceil((top + height) / ROW) + OVERSCAN);
    if (first === last[0] && end === last[1]) return;
    last = [first, end];
    windowFor(Math.max(first, Math.floor(top / ROW)), Math.min(end, Math.ceil((top + height) / ROW)));
    axis();
    var view = $("viewport"), frag = document.createDocumentFragment();
    for (var i = first; i < end; i++) frag.appendChild(rowElement(shown[i], i));
    view.replaceChildren(frag);
  }
  function rowElement(r, i) {
    var div = el("div", "row" + (r.inCall ? " in-call" : "") + (r.seq === selected ? " sel" : ""));
    div.style.top = (i * ROW) + "px";
    div.dataset.seq = r.seq;
    var label = el("div", "label", r.label);
    label.title = r.label;
    if (r.sub) label.appendChild(el("span", "sub", r.sub));
    var track = el("div", "track"), bar = el("div", "bar " + r.cls + (r.bad ? " bad" : ""));
    bar.dataset.seq = r.seq;
    bar.style.left = ((r.start - from) / span * 100) + "%";
    if (r.cls !== "k-point") bar.style.width = ((r.end - r.start) / span * 100) + "%";
    bar.title = r.label + " · " + dur(r.start) + " → " + dur(r.end);
    track.appendChild(bar);
    div.appendChild(label);
    div.appendChild(track);
    return div;
  }
  function schedule() { if (!pending) { pending = true; requestAnimationFrame(draw); } }

  // ---- details ----
  function section(body, title, content) {
    body.appendChild(el("h3", null, title));
    if (content instanceof Node) body.appendChild(content); else body.appendChild(el("pre", null, json(content)));
  }
  function link(seq, text) {
    var a = el("a", null, text);
    a.dataset.seq = seq;
    return a;
  }
  function select(seq) {
    var e = bySeq.get(seq);
    if (!e) return;
    selected = seq;
    last = [-1, -1];
    draw();
    var r = rowBySeq.get(e.seq) || row(e), body = $("d-body");
    $("details").hidden = false;
    $("d-title").textContent = "#" + e.seq + " " + r.label;
    body.replaceChildren();
    var meta = el("table");
    [["kind", e.kind], ["at", dur(e.t_us)], ["duration", e.duration_us === undefined ? "" : dur(e.duration_us)],
      ["tool call", callId(e) || ""]].forEach(function (kv) {
      if (kv[1] === "") return;
      var tr = el("tr");
      tr.appendChild(el("td", null, kv[0]));
      tr.appendChild(el("td", null, kv[1]));
      meta.appendChild(tr);
    });
    body.appendChild(meta);
    var c = callId(e) === null ? null : calls.get(callId(e));
    if (e.kind === "model") {
      section(body, "tokens", tokens(e.usage) + (e.cost_usd === undefined ? "" : " · $" + Number(e.cost_usd).toFixed(6)));
      if (e.error) section(body, "error", e.error);
      if (e.reasoning && e.reasoning.length) section(body, "reasoning", e.reasoning.join("\n\n"));
    }
    if (e.kind === "hook") section(body, "raw answer", e.detail === undefined ? "(none)" : e.detail);
    if (e.kind === "run_start" && e.prompt !== undefined) section(body, "prompt", e.prompt);
    if (c) {
      var decision = c.entries.filter(function (x) { return x.kind === "tool_decision"; })[0];
      if (decision && decision.arguments !== undefined) section(body, "arguments", decision.arguments);
      c.entries.forEach(function (x) {
        if (x.kind === "stage" && x.hook === "project_tool_result") {
          section(body, "result", x.content === undefined ? x : x.content);
          if (x.metadata !== undefined) section(body, "result metadata", x.metadata);
        }
        if (x.kind === "hook" && x !== e) section(body, "hook " + x.event + " " + x.hook_id + " → " + x.decision,
          x.detail === undefined ? "(no answer)" : x.detail);
      });
      if (decision) section(body, "decision record", decision);
      var list = el("div");
      c.entries.forEach(function (x) {
        list.appendChild(link(x.seq, "#" + x.seq + " " + (rowBySeq.get(x.seq) || row(x)).label));
        list.appendChild(el("br"));
      });
      section(body, "entries of this call", list);
    }
    section(body, "entry", e);
  }
  function seqOf(target) {
    var t = target && target.closest ? target.closest("[data-seq]") : null;
    return t ? Number(t.dataset.seq) : null;
  }
  function reveal(seq) {
    var i = shown.findIndex(function (r) { return r.seq === seq; });
    if (i >= 0) {
      var box = $("rows");
      if (i * ROW < box.scrollTop || (i + 1) * ROW > box.scrollTop + box.clientHeight) box.scrollTop = i * ROW - box.clientHeight / 3;
    }
  }

  // ---- start ----
  header();
  build();
  runSpan();
  filters();
  apply();
  $("rows").addEventListener("scroll", schedule, { passive: true });
  window.addEventListener("resize", function () { last = [-1, -1]; schedule(); });
  $("viewport").addEventListener("click", function (ev) { var s = seqOf(ev.target); if (s !== null) select(s); });
  $("d-body").addEventListener("click", function (ev) {
    var s = seqOf(ev.target);
    if (s !== null) { select(s); reveal(s); }
  });
  $("rows").addEventListener("keydown", function (ev) {
    var step = ev.key === "ArrowDown" ? 1 : ev.key === "ArrowUp" ? -1 : 0;
    if (!step || !shown.length) return;
    ev.preventDefault();
    var i = shown.findIndex(function (r) { return r.seq === selected; });
    var next = shown[Math.min(shown.length - 1, Math.max(0, i < 0 ? 0 : i + step))];
    select(next.seq);
    reveal(next.seq);
  });
  $("d-close").addEventListener("click", function () { $("details").hidden = true; selected = null; last = [-1, -1]; draw(); });
  var m = /^#select=(\d+)$/.exec(location.hash);
  if (m) { select(Number(m[1])); reveal(Number(m[1])); draw(); }
  requestAnimationFrame(function () {
    requestAnimationFrame(function () {
      document.documentElement.dataset.readyMs = performance.now().toFixed(1);
      document.documentElement.dataset.ready = "1";
    });
  });
})();
