"""Driver of bench/provider-cost.sh (see there)."""
import http.server
import json
import os
import socketserver
import statistics
import subprocess
import sys
import tempfile

from fake_anthropic import TOOLS, serve

CALLS = int(os.environ.get("CALLS", "20"))
# KEEPALIVE=1: the fake server keeps connections open (HTTP/1.1, Nagle off), as the API does,
# so the client's pool reuses one connection; by default it answers in HTTP/1.0 and closes each
# connection, so every request pays a connection set-up.
KEEPALIVE = os.environ.get("KEEPALIVE", "0") == "1"
if KEEPALIVE:
    http.server.BaseHTTPRequestHandler.protocol_version = "HTTP/1.1"
    socketserver.StreamRequestHandler.disable_nagle_algorithm = True
# The goal: the provider path costs at most this much CPU per model request beyond the scripted model.
TARGET_MS = 0.5


def measure(cmd, cwd, env):
    """Peak RSS (KiB) and user+system CPU seconds of one run, from the kernel's rusage of the
    child (wait4: microsecond resolution; GNU time rounds to 10 ms)."""
    with tempfile.TemporaryFile() as err:
        child = subprocess.Popen(cmd, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err)
        _, status, usage = os.wait4(child.pid, 0)
        if status != 0:
            err.seek(0)
            sys.exit(f"{cmd[0]} failed: {err.read().decode(errors='replace')}")
    return usage.ru_maxrss, usage.ru_utime + usage.ru_stime


def summary(results):
    """The lowest RSS, the lowest CPU time and the median CPU time over the runs."""
    cpu = [r[1] for r in results]
    return min(r[0] for r in results), min(cpu), statistics.median(cpu)


def main():
    spine, runs = sys.argv[1], int(sys.argv[2])
    with tempfile.TemporaryDirectory() as work:
        project = os.path.join(work, "project")
        os.makedirs(project)
        with open(os.path.join(project, "CLAUDE.md"), "w") as f:
            f.write("# Project\n\nKeep functions small.\n")
        script = os.path.join(work, "script.json")
        turns = [{"tool_calls": [{"id": f"c{n}", "name": TOOLS[n % len(TOOLS)][0], "arguments": TOOLS[n % len(TOOLS)][1]}]}
                 for n in range(1, CALLS + 1)]
        with open(script, "w") as f:
            json.dump({"turns": turns + [{"text": "All steps done."}]}, f)
        env = dict(os.environ, HOME=work, SPINE_HOME=os.path.join(work, ".spine"), ANTHROPIC_API_KEY="sk-bench")
        common = ["-p", "run the steps", "--allowedTools", "Bash(echo *)", "--no-session-persistence"]
        scripted, anthropic = [], []
        # Alternated, so that both sides see the same load from whatever else runs on the machine.
        for _ in range(runs):
            scripted.append(measure([spine, *common, "--model", f"scripted:{script}"], project, env))
            server, bodies = serve(CALLS + 1)
            env["ANTHROPIC_BASE_URL"] = f"http://127.0.0.1:{server.server_port}"
            anthropic.append(measure([spine, *common, "--model", "anthropic:claude-sonnet-4-5"], project, env))
            server.shutdown()
            assert len(bodies) == CALLS + 1, len(bodies)
    s_rss, s_best, s_median = summary(scripted)
    a_rss, a_best, a_median = summary(anthropic)
    requests = CALLS + 1
    extra_best = (a_best - s_best) * 1000 / requests
    extra_median = (a_median - s_median) * 1000 / requests
    verdict = "within" if extra_best <= TARGET_MS else "OVER"
    server = "keep-alive server" if KEEPALIVE else "a connection per request"
    print(f"{CALLS}-call session ({requests} model requests, {server}), {runs} runs each, best (median):")
    print(f"  scripted model   {s_rss / 1024:5.1f} MiB  {s_best * 1000:6.1f} ms CPU ({s_median * 1000:.1f})")
    print(f"  anthropic wire   {a_rss / 1024:5.1f} MiB  {a_best * 1000:6.1f} ms CPU ({a_median * 1000:.1f})"
          f"  RSS ratio {a_rss / s_rss:.2f}")
    print(f"  extra CPU per model request: {extra_best:.2f} ms best ({extra_median:.2f} median); "
          f"target <= {TARGET_MS} ms: {verdict}")


main()
