"""A fake Anthropic Messages API server for the benchmarks: request n (1-based) gets a
streamed `tool_use` reply while n < turns (Read, Bash, Glob in turn), then a text answer.
Request bodies are kept in `bodies`."""
import http.server
import json
import threading

TOOLS = [("Read", {"file_path": "CLAUDE.md"}), ("Bash", {"command": "echo step"}), ("Glob", {"pattern": "*.md"})]


def sse(events):
    return "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events).encode()


def reply(n, turns):
    start = {"type": "message_start", "message": {"id": f"msg_{n}", "type": "message", "role": "assistant", "content": [],
             "model": "m", "stop_reason": None, "usage": {"input_tokens": 100, "output_tokens": 1}}}
    if n < turns:
        tool, args = TOOLS[n % len(TOOLS)]
        block = {"type": "tool_use", "id": f"toolu_{n}", "name": tool, "input": {}}
        delta = {"type": "input_json_delta", "partial_json": json.dumps(args)}
        stop = "tool_use"
    else:
        block = {"type": "text", "text": ""}
        delta = {"type": "text_delta", "text": "All steps done."}
        stop = "end_turn"
    return sse([start, {"type": "content_block_start", "index": 0, "content_block": block},
                {"type": "content_block_delta", "index": 0, "delta": delta},
                {"type": "content_block_stop", "index": 0},
                {"type": "message_delta", "delta": {"stop_reason": stop}, "usage": {"output_tokens": 20}},
                {"type": "message_stop"}])


def serve(turns):
    """Starts the server; returns (server, bodies). Stop it with server.shutdown()."""
    bodies = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self):
            body = json.loads(self.rfile.read(int(self.headers["content-length"])))
            bodies.append(body)
            data = reply(len(bodies), turns)
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, bodies
