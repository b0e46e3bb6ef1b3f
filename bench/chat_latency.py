"""Keystroke-to-request latency and idle CPU of an open interactive session (`spine` in a real
terminal, tmux), against a minimal Python prompt loop that reads a line from the same terminal
and sends the same request (the baseline: tmux, the terminal and the HTTP client's share).

Latency: from `tmux send-keys Enter` to the request's arrival at a local fake Anthropic server,
median over PROMPTS prompts. Idle: CPU time (utime+stime, all threads) and context switches
of the process over IDLE seconds at the prompt, after the prompts.

    chat_latency.py SPINE_BINARY [PROMPTS] [IDLE_SECONDS]
"""
import json
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import http.server

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fake_anthropic  # noqa: E402

BIN = sys.argv[1]
PROMPTS = int(sys.argv[2]) if len(sys.argv) > 2 else 20
IDLE = float(sys.argv[3]) if len(sys.argv) > 3 else 10.0
TICK = os.sysconf("SC_CLK_TCK")

BASELINE = r'''
import json, sys, urllib.request
url = sys.argv[1]
while True:
    try:
        line = input("> ")
    except EOFError:
        break
    body = json.dumps({"model": "claude-sonnet-4-5", "max_tokens": 10, "stream": True,
                       "messages": [{"role": "user", "content": line}]}).encode()
    req = urllib.request.Request(url + "/v1/messages", data=body, headers={"content-type": "application/json"})
    with urllib.request.urlopen(req) as r:
        r.read()
    print("All steps done.")
'''


class Server:
    def __init__(self):
        self.arrivals = []
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                outer.arrivals.append(time.monotonic())
                self.rfile.read(int(self.headers["content-length"]))
                data = fake_anthropic.reply(len(outer.arrivals), 0)
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"


def tmux(sock, *args, capture=False):
    cmd = ["tmux", "-L", sock, "-f", "/dev/null", *args]
    if capture:
        return subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    subprocess.run(cmd, check=True)


def wait(predicate, what, limit=60):
    deadline = time.monotonic() + limit
    while not predicate():
        if time.monotonic() > deadline:
            raise SystemExit(f"timed out waiting for {what}")
        time.sleep(0.002)


def cpu_and_switches(pid):
    ticks, switches = 0, 0
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            stat = open(f"/proc/{pid}/task/{task}/stat").read().rsplit(")", 1)[1].split()
            ticks += int(stat[11]) + int(stat[12])
            for line in open(f"/proc/{pid}/task/{task}/status"):
                if line.startswith(("voluntary_ctxt_switches", "nonvoluntary_ctxt_switches")):
                    switches += int(line.split()[1])
        except FileNotFoundError:
            pass
    return ticks * 1000 / TICK, switches


def measure(name, command, server, work):
    sock = f"bench-chat-{os.getpid()}-{name}"
    tmux(sock, "new-session", "-d", "-x", "150", "-y", "50", "-s", "b", "-c", work, "exec " + command)
    try:
        pid = int(tmux(sock, "list-panes", "-t", "b", "-F", "#{pane_pid}", capture=True).strip())
        screen = lambda: tmux(sock, "capture-pane", "-p", "-S", "-5000", "-t", "b", capture=True)
        wait(lambda: any(line.startswith(">") for line in screen().splitlines()), "the prompt")
        start = len(server.arrivals)
        latencies = []
        for i in range(PROMPTS):
            tmux(sock, "send-keys", "-t", "b", "-l", f"prompt number {i}")
            time.sleep(0.05)
            sent = time.monotonic()
            tmux(sock, "send-keys", "-t", "b", "Enter")
            wait(lambda: len(server.arrivals) > start + i, "the request")
            latencies.append((server.arrivals[start + i] - sent) * 1000)
            wait(lambda: screen().count("All steps done.") > i, "the answer")
        time.sleep(1.0)
        cpu0, sw0 = cpu_and_switches(pid)
        time.sleep(IDLE)
        cpu1, sw1 = cpu_and_switches(pid)
        return statistics.median(latencies), max(latencies), cpu1 - cpu0, sw1 - sw0
    finally:
        subprocess.run(["tmux", "-L", sock, "-f", "/dev/null", "kill-server"], capture_output=True)


def main():
    server = Server()
    with tempfile.TemporaryDirectory() as work:
        os.makedirs(f"{work}/project")
        os.makedirs(f"{work}/home")
        base = open(f"{work}/baseline.py", "w")
        base.write(BASELINE)
        base.close()
        env = (f"env SPINE_HOME={work}/home HOME={work} ANTHROPIC_BASE_URL={server.url} "
               f"ANTHROPIC_API_KEY=bench-key ")
        spine = env + f"{shlex.quote(BIN)} --model anthropic:claude-sonnet-4-5"
        python = f"/usr/bin/python3 {work}/baseline.py {server.url}"
        b_med, b_max, b_cpu, b_sw = measure("baseline", python, server, f"{work}/project")
        s_med, s_max, s_cpu, s_sw = measure("spine", spine, server, f"{work}/project")
    print(f"prompts: {PROMPTS}, idle: {IDLE:.0f} s")
    print(f"{'':28} {'median ms':>10} {'max ms':>8} {'idle CPU ms':>12} {'switches':>9}")
    print(f"{'python input() + urllib':28} {b_med:>10.2f} {b_max:>8.2f} {b_cpu:>12.1f} {b_sw:>9}")
    print(f"{'spine session':28} {s_med:>10.2f} {s_max:>8.2f} {s_cpu:>12.1f} {s_sw:>9}")
    print(f"keystroke-to-request ratio (spine / baseline, median): {s_med / b_med:.2f}")
    print(f"idle: {s_cpu / IDLE:.2f} ms CPU per second, {s_sw / IDLE:.1f} context switches per second")


main()
