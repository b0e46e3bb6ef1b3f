"""Driver of bench/provider-cost.sh (see there)."""
import json
import os
import subprocess
import sys
import tempfile

from fake_anthropic import TOOLS, serve

CALLS = int(os.environ.get("CALLS", "20"))


def measure(cmd, cwd, env):
    """Peak RSS (KiB) and user+system CPU seconds of one run, from GNU time."""
    out = subprocess.run(["/usr/bin/time", "-f", "%M %U %S", *cmd], cwd=cwd, env=env, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"{cmd[0]} failed: {out.stderr}")
    rss, user, sys_ = out.stderr.strip().splitlines()[-1].split()
    return int(rss), float(user) + float(sys_)


def best(results):
    """The lowest RSS and the lowest CPU time over the runs."""
    return min(r[0] for r in results), min(r[1] for r in results)


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
        scripted = best([measure([spine, *common, "--model", f"scripted:{script}"], project, env) for _ in range(runs)])
        results = []
        for _ in range(runs):
            server, bodies = serve(CALLS + 1)
            env["ANTHROPIC_BASE_URL"] = f"http://127.0.0.1:{server.server_port}"
            results.append(measure([spine, *common, "--model", "anthropic:claude-sonnet-4-5"], project, env))
            server.shutdown()
            assert len(bodies) == CALLS + 1, len(bodies)
        anthropic = best(results)
    rss_ratio = anthropic[0] / scripted[0]
    extra_ms = (anthropic[1] - scripted[1]) * 1000 / (CALLS + 1)
    print(f"{CALLS}-call session, best of {runs}: scripted {scripted[0] / 1024:.1f} MiB, {scripted[1] * 1000:.0f} ms CPU; "
          f"anthropic wire {anthropic[0] / 1024:.1f} MiB, {anthropic[1] * 1000:.0f} ms CPU; RSS ratio {rss_ratio:.2f}; "
          f"extra CPU per request {extra_ms:.2f} ms")


main()
