"""A host program of the official Python Agent SDK (claude-agent-sdk 0.2.189), for testing the CLI
it starts (spine, or Claude Code for comparison).

    PYTHON py_host.py SCENARIO CLI_PATH [--model M] [--model2 M2] [--agent-model M] [--cwd DIR]

PYTHON has claude-agent-sdk installed (scripts/sdk-peers.sh: target/test-peers/sdk-py/bin/python).
Uses only the SDK's public API: `query()`, `ClaudeSDKClient`, `ClaudeAgentOptions(cli_path=…)`,
`HookMatcher`, `PermissionResultAllow/Deny`, `create_sdk_mcp_server`, `tool`, `AgentDefinition`.
`--model` is passed as `model=`, `--model2` to `set_model()` in the `modes` scenario (without it:
"haiku"), `--agent-model` as the `model` of the subagent's definition in `subagent` (without it:
none, the subagent inherits). The CLI runs in --cwd (default: the current directory).

Prints one JSON line (the summary; see `Summary`) and exits 0, or prints the summary with
`error` set and exits 1 when the SDK raised. The scenarios and what the model is expected to do
in each (the tests script it so) are in SCENARIOS; tests/sdk/README.md lists them.
"""
import asyncio
import json
import os
import sys
import traceback

from claude_agent_sdk import (
    AgentDefinition,
    AssistantMessage,
    ClaudeAgentOptions,
    ClaudeSDKClient,
    HookMatcher,
    PermissionResultAllow,
    PermissionResultDeny,
    ResultMessage,
    StreamEvent,
    SystemMessage,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
    create_sdk_mcp_server,
    query,
    tool,
)


def args():
    a = sys.argv[1:]
    if len(a) < 2:
        sys.exit(__doc__)
    opts = {"scenario": a[0], "cli": a[1], "model": None, "model2": "haiku", "agent-model": None, "cwd": os.getcwd()}
    rest = a[2:]
    while rest:
        flag, value, rest = rest[0], rest[1], rest[2:]
        opts[flag.lstrip("-")] = value
    return opts


OPTS = args()


class Summary:
    """What the host saw: `messages` (each SDK message, reduced: type, subtype, parent_tool_use_id,
    model, text, tool_uses, tool_results, stream event type and text delta), `results` (each
    ResultMessage), `callbacks` (every callback the SDK invoked, with its inputs), `files` (the
    marker files of the scenario, content or null), `extra`."""

    def __init__(self):
        self.data = {"sdk": "python", "scenario": OPTS["scenario"], "messages": [], "results": [], "callbacks": [],
                     "files": {}, "extra": {}, "error": None}

    def saw(self, m):
        d = self.data
        if isinstance(m, AssistantMessage):
            d["messages"].append({
                "type": "assistant", "parent_tool_use_id": m.parent_tool_use_id, "model": m.model,
                "text": "".join(b.text for b in m.content if isinstance(b, TextBlock)),
                "tool_uses": [{"id": b.id, "name": b.name, "input": b.input} for b in m.content if isinstance(b, ToolUseBlock)]})
        elif isinstance(m, UserMessage):
            blocks = m.content if isinstance(m.content, list) else [TextBlock(text=m.content)]
            d["messages"].append({
                "type": "user", "parent_tool_use_id": m.parent_tool_use_id,
                "text": "".join(b.text for b in blocks if isinstance(b, TextBlock)),
                "tool_results": [{"tool_use_id": b.tool_use_id, "is_error": bool(b.is_error), "content": flatten(b.content)}
                                 for b in blocks if isinstance(b, ToolResultBlock)]})
        elif isinstance(m, SystemMessage):
            entry = {"type": "system", "subtype": m.subtype}
            if m.subtype == "init":
                entry["model"] = m.data.get("model")
                entry["permissionMode"] = m.data.get("permissionMode")
                entry["session_id"] = m.data.get("session_id")
            d["messages"].append(entry)
        elif isinstance(m, StreamEvent):
            ev = m.event
            entry = {"type": "stream_event", "event": ev.get("type"), "parent_tool_use_id": m.parent_tool_use_id}
            delta = ev.get("delta") or {}
            if delta.get("type") == "text_delta":
                entry["delta"] = delta.get("text")
            d["messages"].append(entry)
        elif isinstance(m, ResultMessage):
            d["messages"].append({"type": "result", "subtype": m.subtype})
            d["results"].append({"subtype": m.subtype, "is_error": m.is_error, "result": m.result,
                                 "num_turns": m.num_turns, "session_id": m.session_id,
                                 "permission_denials": m.permission_denials or []})
        else:
            d["messages"].append({"type": type(m).__name__})

    def callback(self, kind, **data):
        self.data["callbacks"].append({"kind": kind, **data})

    def files(self, *names):
        for n in names:
            p = os.path.join(OPTS["cwd"], n)
            self.data["files"][n] = open(p).read() if os.path.exists(p) else None


def flatten(content):
    if isinstance(content, list):
        return "".join(c.get("text", "") for c in content if isinstance(c, dict))
    return content or ""


S = Summary()


def options(**kw):
    return ClaudeAgentOptions(cli_path=OPTS["cli"], cwd=OPTS["cwd"], model=OPTS["model"], **kw)


def has_tool_use(m):
    return isinstance(m, AssistantMessage) and any(isinstance(b, ToolUseBlock) for b in m.content)


# --- scenarios ----------------------------------------------------------------------------------


async def oneshot():
    """query() with a string prompt; the model answers with text."""
    async for m in query(prompt="Say hello", options=options()):
        S.saw(m)


async def can_use_tool():
    """The model runs Bash `echo original > approved.txt`, then Bash `touch denied.txt`.
    can_use_tool allows the first with updatedInput `echo updated > approved.txt` and denies the
    second with a message."""
    async def decide(name, input, ctx):
        S.callback("can_use_tool", tool=name, input=input, tool_use_id=ctx.tool_use_id)
        if "original" in str(input.get("command", "")):
            return PermissionResultAllow(updated_input={**input, "command": "echo updated > approved.txt"})
        return PermissionResultDeny(message="denied by the host: no touching")

    async for m in query(prompt="Run the commands", options=options(can_use_tool=decide)):
        S.saw(m)
    S.files("approved.txt", "denied.txt")


async def hooks():
    """Bash is allowed by allowed_tools. The model runs `touch hooked.txt` (a PreToolUse callback
    denies it), then `echo fine` (a PostToolUse callback adds the context POST-CONTEXT-MARKER)."""
    async def pre(input, tool_use_id, ctx):
        S.callback("PreToolUse", input=input, tool_use_id=tool_use_id)
        if "touch" in str(input.get("tool_input", {}).get("command", "")):
            return {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                                           "permissionDecisionReason": "hook says no touching"}}
        return {}

    async def post(input, tool_use_id, ctx):
        S.callback("PostToolUse", input=input, tool_use_id=tool_use_id)
        return {"hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": "POST-CONTEXT-MARKER"}}

    opts = options(allowed_tools=["Bash"], hooks={"PreToolUse": [HookMatcher(matcher="Bash", hooks=[pre])],
                                                  "PostToolUse": [HookMatcher(matcher="Bash", hooks=[post])]})
    async for m in query(prompt="Run the commands", options=opts):
        S.saw(m)
    S.files("hooked.txt")


async def sdk_mcp():
    """An SDK MCP server `calc` with a tool `add` (allowed by allowed_tools); the model calls
    mcp__calc__add {a: 2, b: 3}, which returns the text SUM=5. ClaudeSDKClient, so that the
    MCP status is asked too (after the turn)."""
    @tool("add", "Add two numbers", {"a": float, "b": float})
    async def add(args):
        S.callback("add", args=args)
        return {"content": [{"type": "text", "text": f"SUM={args['a'] + args['b']:g}"}]}

    calc = create_sdk_mcp_server("calc", version="1.0.0", tools=[add])
    async with ClaudeSDKClient(options(mcp_servers={"calc": calc}, allowed_tools=["mcp__calc__add"])) as client:
        await client.query("Add 2 and 3")
        async for m in client.receive_response():
            S.saw(m)
        status = await client.get_mcp_status()
        S.data["extra"]["mcp_status"] = [{"name": s.get("name"), "status": s.get("status")}
                                         for s in status.get("mcpServers", [])]


async def interrupt():
    """Bash is allowed. FIRST prompt: the model runs a long Bash command that would touch
    slept.txt at its end; 1.5 s after the host sees the call it interrupts. SECOND prompt in the
    same session: the model answers with text."""
    async with ClaudeSDKClient(options(allowed_tools=["Bash"])) as client:
        await client.query("FIRST: run the long command")
        sent = False
        async for m in client.receive_response():
            S.saw(m)
            if not sent and has_tool_use(m):
                sent = True
                await asyncio.sleep(1.5)
                await client.interrupt()
                S.callback("interrupt sent")
        await client.query("SECOND prompt after the interrupt")
        async for m in client.receive_response():
            S.saw(m)
    S.files("slept.txt")


async def interrupt_pending():
    """The model runs Bash `touch never.txt`; can_use_tool never answers; 0.5 s after it is asked
    the host interrupts. The CLI must withdraw the question (control_cancel_request: the SDK
    cancels the callback) and end the turn. SECOND prompt in the same session: the model answers
    with text."""
    asked = asyncio.Event()

    async def decide(name, input, ctx):
        S.callback("can_use_tool", tool=name, input=input)
        asked.set()
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            S.callback("can_use_tool cancelled")
            raise
        return PermissionResultDeny(message="too late")

    async with ClaudeSDKClient(options(can_use_tool=decide)) as client:
        await client.query("Touch the file")

        async def interrupter():
            await asked.wait()
            await asyncio.sleep(0.5)
            await client.interrupt()
            S.callback("interrupt sent")
        task = asyncio.create_task(interrupter())
        async for m in client.receive_response():
            S.saw(m)
        await task
        await client.query("SECOND prompt after the interrupt")
        async for m in client.receive_response():
            S.saw(m)
    S.files("never.txt")


async def modes():
    """ClaudeSDKClient, two prompts. FIRST: the model Writes first.txt, can_use_tool is asked and
    allows. Then set_permission_mode("acceptEdits") and set_model(--model2). SECOND: the model
    Writes second.txt, which acceptEdits allows without asking."""
    async def decide(name, input, ctx):
        S.callback("can_use_tool", tool=name, input=input)
        return PermissionResultAllow()

    async with ClaudeSDKClient(options(can_use_tool=decide)) as client:
        await client.query("FIRST: write first.txt")
        async for m in client.receive_response():
            S.saw(m)
        await client.set_permission_mode("acceptEdits")
        S.callback("set_permission_mode done")
        await client.set_model(OPTS["model2"])
        S.callback("set_model done")
        await client.query("SECOND: write second.txt")
        async for m in client.receive_response():
            S.saw(m)
    S.files("first.txt", "second.txt")


async def partial():
    """include_partial_messages=True; the model answers with text."""
    async for m in query(prompt="Say something", options=options(include_partial_messages=True)):
        S.saw(m)


async def subagent():
    """An agent `echoer` (defined through initialize: agents=) with the tool Bash. The model calls
    Agent {subagent_type: echoer, run_in_background: false}; the subagent runs Bash `echo
    from-sub` and reports; the model answers."""
    agents = {"echoer": AgentDefinition(description="Runs echo commands", prompt="SUBAGENT-MARKER You run echo.",
                                        tools=["Bash"], model=OPTS["agent-model"])}
    async for m in query(prompt="Delegate", options=options(agents=agents, allowed_tools=["Bash", "Agent"])):
        S.saw(m)


SCENARIOS = {f.__name__: f for f in (oneshot, can_use_tool, hooks, sdk_mcp, interrupt, interrupt_pending, modes,
                                     partial, subagent)}


def main():
    fn = SCENARIOS.get(OPTS["scenario"])
    if fn is None:
        sys.exit(f"unknown scenario {OPTS['scenario']!r}; one of {', '.join(SCENARIOS)}")
    code = 0
    try:
        asyncio.run(asyncio.wait_for(fn(), 90))
    except BaseException as e:  # noqa: BLE001 - reported in the summary
        S.data["error"] = f"{type(e).__name__}: {e}"
        traceback.print_exc()
        code = 1
    print(json.dumps(S.data), flush=True)
    sys.exit(code)


if __name__ == "__main__":
    main()
