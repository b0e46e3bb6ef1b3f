"""Driver of bench/prompt-cache.sh: a fake Anthropic Messages server, one spine session of ten
tool turns and an answer, and the byte shares of turn 10's request (see the shell script)."""
import json
import os
import subprocess
import sys
import tempfile

from fake_anthropic import serve

TURNS = 10


def size(value):
    return len(json.dumps(value, separators=(",", ":")).encode())


def main():
    spine = sys.argv[1]
    server, bodies = serve(TURNS)
    with tempfile.TemporaryDirectory() as work:
        project = os.path.join(work, "project")
        os.makedirs(project)
        rules = "\n".join(f"- Rule {i}: keep functions small and named after what they do." for i in range(60))
        with open(os.path.join(project, "CLAUDE.md"), "w") as f:
            f.write(f"# Project\n\n{rules}\n")
        env = dict(os.environ, HOME=work, SPINE_HOME=os.path.join(work, ".spine"), ANTHROPIC_API_KEY="sk-bench",
                   ANTHROPIC_BASE_URL=f"http://127.0.0.1:{server.server_port}")
        out = subprocess.run([spine, "-p", "run the steps", "--model", "anthropic:claude-sonnet-4-5",
                              "--allowedTools", "Bash(echo *)"], cwd=project, env=env, capture_output=True, text=True)
        if out.returncode != 0:
            sys.exit(f"spine failed: {out.stderr}")
    server.shutdown()
    last, previous = bodies[TURNS - 1], bodies[TURNS - 2]
    tools, system, messages = last.get("tools", []), last["system"], last["messages"]
    total = size(tools) + size(system) + size(messages)
    stable = size(tools) + size(system[0])
    # The previous request's last breakpoint covers its whole prompt: readable when the
    # volatile system block did not change since (else only the stable prefix is).
    same_volatile = system[1:] == previous["system"][1:]
    readable = stable + (size(system[1:]) + size(messages[:len(previous["messages"])]) if same_volatile else 0)
    print(f"turn {TURNS} request ({len(bodies)} requests): {total} bytes; stable prefix (tools + stable system block) "
          f"{stable} bytes = {100 * stable / total:.1f}%; cache-readable (up to turn {TURNS - 1}'s last breakpoint) "
          f"{readable} bytes = {100 * readable / total:.1f}%")


main()
