// A host program of the official TypeScript Agent SDK (@anthropic-ai/claude-agent-sdk 0.3.337),
// for testing the CLI it starts (spine, or Claude Code for comparison).
//
//   node ts_host.mjs SCENARIO CLI_PATH [--model M] [--model2 M2] [--agent-model M] [--cwd DIR]
//
// The SDK is loaded from $SPINE_SDK_TS_DIR/node_modules (scripts/sdk-peers.sh installs it in
// target/test-peers/sdk-ts). Uses only the SDK's public API: `query({prompt, options})` with
// `pathToClaudeCodeExecutable`, `canUseTool`, `hooks`, `mcpServers` (`createSdkMcpServer`,
// `tool`), `agents`, `includePartialMessages`, and the Query's `interrupt()`,
// `setPermissionMode()`, `setModel()`, `mcpServerStatus()`. The scenarios are py_host.py's, with
// the same summary line (`sdk: "typescript"`); exits 1 (summary with `error`) when the SDK threw.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const argv = process.argv.slice(2);
if (argv.length < 2) {
  console.error("usage: node ts_host.mjs SCENARIO CLI_PATH [--model M] [--model2 M2] [--cwd DIR]");
  process.exit(2);
}
const OPTS = { scenario: argv[0], cli: argv[1], model: undefined, model2: "haiku", "agent-model": undefined,
  cwd: process.cwd() };
for (let i = 2; i + 1 < argv.length; i += 2) OPTS[argv[i].replace(/^--/, "")] = argv[i + 1];

const SDK_DIR = process.env.SPINE_SDK_TS_DIR;
if (!SDK_DIR) {
  console.error("ts_host.mjs: set SPINE_SDK_TS_DIR to the directory scripts/sdk-peers.sh installed the SDK in");
  process.exit(2);
}

// The ESM entry of an installed package (its `exports["."]`), so that this file can live
// outside the install directory.
function entry(name) {
  const dir = join(SDK_DIR, "node_modules", name);
  const pkg = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
  let e = pkg.exports?.["."] ?? pkg.module ?? pkg.main;
  while (e && typeof e === "object") e = e.import ?? e.default;
  return pathToFileURL(join(dir, e)).href;
}
const sdk = await import(entry("@anthropic-ai/claude-agent-sdk"));
const { z } = await import(entry("zod"));

const S = { sdk: "typescript", scenario: OPTS.scenario, messages: [], results: [], callbacks: [], files: {}, extra: {},
  error: null };

function flatten(content) {
  if (Array.isArray(content)) return content.map((c) => (c && typeof c === "object" ? c.text ?? "" : "")).join("");
  return content ?? "";
}

function saw(m) {
  const p = m.parent_tool_use_id ?? null;
  if (m.type === "assistant") {
    const blocks = m.message.content;
    S.messages.push({ type: "assistant", parent_tool_use_id: p, model: m.message.model,
      text: blocks.filter((b) => b.type === "text").map((b) => b.text).join(""),
      tool_uses: blocks.filter((b) => b.type === "tool_use").map((b) => ({ id: b.id, name: b.name, input: b.input })) });
  } else if (m.type === "user") {
    const c = m.message.content;
    const blocks = typeof c === "string" ? [{ type: "text", text: c }] : c;
    S.messages.push({ type: "user", parent_tool_use_id: p,
      text: blocks.filter((b) => b.type === "text").map((b) => b.text).join(""),
      tool_results: blocks.filter((b) => b.type === "tool_result")
        .map((b) => ({ tool_use_id: b.tool_use_id, is_error: !!b.is_error, content: flatten(b.content) })) });
  } else if (m.type === "system") {
    const e = { type: "system", subtype: m.subtype };
    if (m.subtype === "init") Object.assign(e, { model: m.model, permissionMode: m.permissionMode, session_id: m.session_id });
    S.messages.push(e);
  } else if (m.type === "stream_event") {
    const e = { type: "stream_event", event: m.event.type, parent_tool_use_id: p };
    if (m.event.delta?.type === "text_delta") e.delta = m.event.delta.text;
    S.messages.push(e);
  } else if (m.type === "result") {
    S.messages.push({ type: "result", subtype: m.subtype });
    S.results.push({ subtype: m.subtype, is_error: m.is_error, result: m.result ?? null, num_turns: m.num_turns,
      session_id: m.session_id, permission_denials: m.permission_denials ?? [] });
  } else {
    S.messages.push({ type: m.type, subtype: m.subtype });
  }
}

const callback = (kind, data = {}) => S.callbacks.push({ kind, ...data });
const files = (...names) => {
  for (const n of names) {
    const p = join(OPTS.cwd, n);
    S.files[n] = existsSync(p) ? readFileSync(p, "utf8") : null;
  }
};
const options = (extra = {}) => ({ pathToClaudeCodeExecutable: OPTS.cli, cwd: OPTS.cwd, model: OPTS.model,
  env: { ...process.env }, ...extra });
const hasToolUse = (m) => m.type === "assistant" && m.message.content.some((b) => b.type === "tool_use");
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// A prompt stream the host feeds as it goes (a multi-turn session).
function inbox() {
  const queue = [];
  let wake = null;
  let done = false;
  return {
    push(text) {
      queue.push({ type: "user", message: { role: "user", content: text }, parent_tool_use_id: null, session_id: "" });
      wake?.();
    },
    end() { done = true; wake?.(); },
    async *[Symbol.asyncIterator]() {
      for (;;) {
        while (queue.length) yield queue.shift();
        if (done) return;
        await new Promise((r) => { wake = r; });
        wake = null;
      }
    },
  };
}

// Reads messages of `q` until the next result (included).
async function untilResult(it, onMessage) {
  for (;;) {
    const { value, done } = await it.next();
    if (done) return false;
    saw(value);
    if (onMessage) await onMessage(value);
    if (value.type === "result") return true;
  }
}

const SCENARIOS = {
  async oneshot() {
    for await (const m of sdk.query({ prompt: "Say hello", options: options() })) saw(m);
  },

  async can_use_tool() {
    const canUseTool = async (name, input, ctx) => {
      callback("can_use_tool", { tool: name, input, tool_use_id: ctx.toolUseID ?? null });
      if (String(input.command ?? "").includes("original")) {
        return { behavior: "allow", updatedInput: { ...input, command: "echo updated > approved.txt" } };
      }
      return { behavior: "deny", message: "denied by the host: no touching" };
    };
    for await (const m of sdk.query({ prompt: "Run the commands", options: options({ canUseTool }) })) saw(m);
    files("approved.txt", "denied.txt");
  },

  async hooks() {
    const pre = async (input, toolUseId) => {
      callback("PreToolUse", { input, tool_use_id: toolUseId ?? null });
      if (String(input.tool_input?.command ?? "").includes("touch")) {
        return { hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "deny",
          permissionDecisionReason: "hook says no touching" } };
      }
      return {};
    };
    const post = async (input, toolUseId) => {
      callback("PostToolUse", { input, tool_use_id: toolUseId ?? null });
      return { hookSpecificOutput: { hookEventName: "PostToolUse", additionalContext: "POST-CONTEXT-MARKER" } };
    };
    const hooks = { PreToolUse: [{ matcher: "Bash", hooks: [pre] }], PostToolUse: [{ matcher: "Bash", hooks: [post] }] };
    for await (const m of sdk.query({ prompt: "Run the commands", options: options({ allowedTools: ["Bash"], hooks }) })) saw(m);
    files("hooked.txt");
  },

  async sdk_mcp() {
    const add = sdk.tool("add", "Add two numbers", { a: z.number(), b: z.number() }, async (args) => {
      callback("add", { args });
      return { content: [{ type: "text", text: `SUM=${args.a + args.b}` }] };
    });
    const calc = sdk.createSdkMcpServer({ name: "calc", version: "1.0.0", tools: [add] });
    const prompt = inbox();
    const q = sdk.query({ prompt, options: options({ mcpServers: { calc }, allowedTools: ["mcp__calc__add"] }) });
    const it = q[Symbol.asyncIterator]();
    prompt.push("Add 2 and 3");
    await untilResult(it);
    const status = await q.mcpServerStatus();
    S.extra.mcp_status = status.map((s) => ({ name: s.name, status: s.status }));
    prompt.end();
    for (;;) { const { value, done } = await it.next(); if (done) break; saw(value); }
  },

  async interrupt() {
    const prompt = inbox();
    const q = sdk.query({ prompt, options: options({ allowedTools: ["Bash"] }) });
    const it = q[Symbol.asyncIterator]();
    prompt.push("FIRST: run the long command");
    let sent = false;
    await untilResult(it, async (m) => {
      if (!sent && hasToolUse(m)) {
        sent = true;
        await sleep(1500);
        await q.interrupt();
        callback("interrupt sent");
      }
    });
    prompt.push("SECOND prompt after the interrupt");
    await untilResult(it);
    prompt.end();
    for (;;) { const { value, done } = await it.next(); if (done) break; saw(value); }
    files("slept.txt");
  },

  async interrupt_pending() {
    let asked;
    const askedP = new Promise((r) => { asked = r; });
    const canUseTool = (name, input, { signal }) => new Promise((resolve, reject) => {
      callback("can_use_tool", { tool: name, input });
      asked();
      const timer = setTimeout(() => resolve({ behavior: "deny", message: "too late" }), 60000);
      signal.addEventListener("abort", () => {
        clearTimeout(timer);
        callback("can_use_tool cancelled");
        reject(new Error("aborted"));
      });
    });
    const prompt = inbox();
    const q = sdk.query({ prompt, options: options({ canUseTool }) });
    const it = q[Symbol.asyncIterator]();
    prompt.push("Touch the file");
    const interrupter = (async () => {
      await askedP;
      await sleep(500);
      await q.interrupt();
      callback("interrupt sent");
    })();
    await untilResult(it);
    await interrupter;
    prompt.push("SECOND prompt after the interrupt");
    await untilResult(it);
    prompt.end();
    for (;;) { const { value, done } = await it.next(); if (done) break; saw(value); }
    files("never.txt");
  },

  async modes() {
    const canUseTool = async (name, input) => {
      callback("can_use_tool", { tool: name, input });
      return { behavior: "allow", updatedInput: input };
    };
    const prompt = inbox();
    const q = sdk.query({ prompt, options: options({ canUseTool }) });
    const it = q[Symbol.asyncIterator]();
    prompt.push("FIRST: write first.txt");
    await untilResult(it);
    await q.setPermissionMode("acceptEdits");
    callback("set_permission_mode done");
    await q.setModel(OPTS.model2);
    callback("set_model done");
    prompt.push("SECOND: write second.txt");
    await untilResult(it);
    prompt.end();
    for (;;) { const { value, done } = await it.next(); if (done) break; saw(value); }
    files("first.txt", "second.txt");
  },

  async partial() {
    for await (const m of sdk.query({ prompt: "Say something", options: options({ includePartialMessages: true }) })) saw(m);
  },

  async subagent() {
    const agents = { echoer: { description: "Runs echo commands", prompt: "SUBAGENT-MARKER You run echo.", tools: ["Bash"],
      ...(OPTS["agent-model"] ? { model: OPTS["agent-model"] } : {}) } };
    for await (const m of sdk.query({ prompt: "Delegate", options: options({ agents, allowedTools: ["Bash", "Agent"] }) })) saw(m);
  },
};

const run = SCENARIOS[OPTS.scenario];
if (!run) {
  console.error(`unknown scenario ${OPTS.scenario}; one of ${Object.keys(SCENARIOS).join(", ")}`);
  process.exit(2);
}
let code = 0;
const timeout = setTimeout(() => {
  S.error = "timeout: the scenario did not finish in 90 s";
  console.log(JSON.stringify(S));
  process.exit(1);
}, 90000);
try {
  await run();
} catch (e) {
  S.error = `${e?.name ?? "Error"}: ${e?.message ?? e}`;
  console.error(e?.stack ?? e);
  code = 1;
}
clearTimeout(timeout);
console.log(JSON.stringify(S));
process.exit(code);
