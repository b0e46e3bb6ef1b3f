//! MCP servers for tests: a tiny stdio server in Python ([`write_mcp_server`]) and the
//! installed Node peers ([`peers`]).

use std::path::{Path, PathBuf};

use serde_json::Value;

/// The source of the script server [`write_mcp_server`] writes.
const MCP_SERVER_PY: &str = r#"import json, sys, time
# argv: NAME MARKER_FILE INIT_DELAY_MS
name, marker, delay_ms = sys.argv[1], sys.argv[2], int(sys.argv[3])
with open(marker, "a") as f:
    f.write("started\n")
def send(m):
    sys.stdout.write(json.dumps(m) + "\n")
    sys.stdout.flush()
for line in sys.stdin:
    line = line.strip()
    if not line:
        continue
    msg = json.loads(line)
    method, mid = msg.get("method"), msg.get("id")
    if mid is None:
        continue
    if method == "initialize":
        time.sleep(delay_ms / 1000.0)
        version = msg.get("params", {}).get("protocolVersion", "2025-06-18")
        send({"jsonrpc": "2.0", "id": mid, "result": {"protocolVersion": version, "capabilities": {"tools": {}},
              "serverInfo": {"name": name, "version": "0"}}})
    elif method == "tools/list":
        send({"jsonrpc": "2.0", "id": mid, "result": {"tools": [{"name": "ping", "description": "Answers pong.",
              "inputSchema": {"type": "object", "properties": {}}}]}})
    elif method == "tools/call":
        send({"jsonrpc": "2.0", "id": mid, "result": {"content": [{"type": "text", "text": "pong from " + name}]}})
    else:
        send({"jsonrpc": "2.0", "id": mid, "result": {}})
"#;

/// Writes a stdio MCP server script to `dir/mcp_server.py` and returns the `mcpServers` entry
/// that starts it: `/usr/bin/python3 mcp_server.py NAME MARKER INIT_DELAY_MS`. On start it
/// appends a line to `marker` (proof that it was started); it answers `initialize` after
/// `init_delay_ms`, lists one tool `ping`, and answers it with `pong from NAME`.
pub fn write_mcp_server(dir: &Path, name: &str, marker: &Path, init_delay_ms: u64) -> std::io::Result<Value> {
    let script = dir.join("mcp_server.py");
    std::fs::write(&script, MCP_SERVER_PY)?;
    Ok(serde_json::json!({
        "command": "/usr/bin/python3",
        "args": [script.display().to_string(), name, marker.display().to_string(), init_delay_ms.to_string()],
    }))
}

/// The packages `scripts/mcp-peers.sh` installs under `node_modules/@modelcontextprotocol/`.
const PEER_PACKAGES: [&str; 3] = ["server-everything", "server-filesystem", "sdk"];

/// The directory of the installed MCP test peers (`SPINE_TEST_MCP_DIR`, default
/// `<workspace>/target/test-peers`); panics, saying how to install them, when one is missing.
pub fn peers() -> PathBuf {
    let dir = std::env::var_os("SPINE_TEST_MCP_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/test-peers"));
    for package in PEER_PACKAGES {
        let path = dir.join("node_modules/@modelcontextprotocol").join(package);
        assert!(
            path.is_dir(),
            "the MCP test peers are not installed in {} (missing {}): run scripts/mcp-peers.sh \
             (it installs them there; set SPINE_TEST_MCP_DIR to use another directory)",
            dir.display(),
            path.display()
        );
    }
    dir
}

/// The entry script of an installed peer package (`server-everything`, `server-filesystem`).
pub fn peer_entry(package: &str) -> PathBuf {
    peers().join("node_modules/@modelcontextprotocol").join(package).join("dist/index.js")
}
