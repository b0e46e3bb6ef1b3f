//! Package managers and the OTLP export through the proxy: pip and npm against loopback
//! registries, and the refusal note on the `execute` span.

use std::path::Path;

use serde_json::json;

use super::*;

/// Builds `tinypkg-0.1.0-py3-none-any.whl` (a module, METADATA, WHEEL, RECORD) at `path`;
/// returns its sha256.
fn build_wheel(path: &Path) -> String {
    let script = r#"
import base64, hashlib, sys, zipfile
files = {
    "tinypkg.py": b'VALUE = "tiny-pip-ok"\n',
    "tinypkg-0.1.0.dist-info/METADATA": b"Metadata-Version: 2.1\nName: tinypkg\nVersion: 0.1.0\n",
    "tinypkg-0.1.0.dist-info/WHEEL": b"Wheel-Version: 1.0\nGenerator: spine-test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
}
def digest(b):
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(b).digest()).rstrip(b"=").decode()
record = "".join(f"{p},{digest(b)},{len(b)}\n" for p, b in files.items()) + "tinypkg-0.1.0.dist-info/RECORD,,\n"
with zipfile.ZipFile(sys.argv[1], "w") as z:
    for p, b in files.items():
        z.writestr(p, b)
    z.writestr("tinypkg-0.1.0.dist-info/RECORD", record)
print(hashlib.sha256(open(sys.argv[1], "rb").read()).hexdigest())
"#;
    python(script, &[path.to_str().expect("utf-8")])
}

#[test]
fn pip_downloads_and_installs_from_a_loopback_index_through_the_proxy() {
    let s = Sandbox::new();
    let server = Served::start();
    let port = server.port();
    let wheel_name = "tinypkg-0.1.0-py3-none-any.whl";
    let wheel = s.dir.path().join(wheel_name);
    let sha = build_wheel(&wheel);
    let page = |body: String| format!("<!DOCTYPE html><html><body>{body}</body></html>\n").into_bytes();
    server.put("/simple/", "text/html", page("<a href=\"tinypkg/\">tinypkg</a>".to_owned()));
    let link = format!("<a href=\"{wheel_name}#sha256={sha}\">{wheel_name}</a>");
    server.put("/simple/tinypkg/", "text/html", page(link));
    let wheel_path = format!("/simple/tinypkg/{wheel_name}");
    server.put(&wheel_path, "application/octet-stream", std::fs::read(&wheel).expect("wheel"));
    // The interpreter itself, not a version manager's shim (pyenv's rehashes after `pip
    // install`, writing outside the workspace). `--isolated`: no pip configuration or
    // variables of the machine (find-links, extra indexes); $HOME is not writable, so no cache.
    let python3 = python("import sys; print(sys.executable)", &[]);
    let pip = format!(
        "{python3} -m pip --isolated --disable-pip-version-check --no-cache-dir --no-input \
         {{}} --no-deps --index-url http://localhost:{port}/simple/ tinypkg"
    );
    let download = pip.replace("{}", "download") + " -d \"$TMPDIR/dl\" && ls \"$TMPDIR/dl\"";
    let install = pip.replace("{}", "install")
        + &format!(
            " --target \"$TMPDIR/t\" && PYTHONPATH=\"$TMPDIR/t\" {python3} -c 'import tinypkg; print(tinypkg.VALUE)'"
        );
    let calls = run(&s, &settings(&["localhost"], true), &[&download, &install], &[]);
    assert_reached(&calls[0].0, &calls[0].1, wheel_name);
    assert_reached(&calls[1].0, &calls[1].1, "tiny-pip-ok");
    let seen = server.seen();
    assert_eq!(seen.iter().filter(|p| **p == wheel_path).count(), 2, "{seen:?}");
    assert_eq!(seen.iter().filter(|p| *p == "/simple/tinypkg/").count(), 2, "{seen:?}");
}

/// Builds the npm tarball of `tinypkg@0.1.0` (`package/package.json`, `package/index.js`) at
/// `path`; returns its `sha512-…` integrity.
fn build_npm_tarball(path: &Path) -> String {
    let script = r#"
import base64, hashlib, io, json, sys, tarfile
members = [
    ("package/package.json", json.dumps({"name": "tinypkg", "version": "0.1.0", "main": "index.js"}).encode()),
    ("package/index.js", b'module.exports = "tiny-npm-ok";\n'),
]
with tarfile.open(sys.argv[1], "w:gz") as t:
    for name, data in members:
        info = tarfile.TarInfo(name)
        info.size, info.mode = len(data), 0o644
        t.addfile(info, io.BytesIO(data))
print("sha512-" + base64.b64encode(hashlib.sha512(open(sys.argv[1], "rb").read()).digest()).decode())
"#;
    python(script, &[path.to_str().expect("utf-8")])
}

#[test]
fn npm_reads_and_installs_from_a_loopback_registry_through_the_proxy() {
    let s = Sandbox::new();
    let server = Served::start();
    let port = server.port();
    let tarball = s.dir.path().join("tinypkg-0.1.0.tgz");
    let integrity = build_npm_tarball(&tarball);
    let tarball_path = "/tinypkg/-/tinypkg-0.1.0.tgz";
    let packument = json!({
        "name": "tinypkg",
        "dist-tags": {"latest": "0.1.0"},
        "versions": {"0.1.0": {
            "name": "tinypkg", "version": "0.1.0", "description": "tiny served package",
            "dist": {"tarball": format!("http://localhost:{port}{tarball_path}"), "integrity": integrity}
        }}
    });
    server.put("/tinypkg", "application/json", packument.to_string().into_bytes());
    server.put(tarball_path, "application/octet-stream", std::fs::read(&tarball).expect("tarball"));
    // npm takes its proxy from HTTP_PROXY/HTTPS_PROXY; its cache goes to $TMPDIR ($HOME is
    // not writable).
    let npm = format!(
        "export npm_config_cache=\"$TMPDIR/npm\" npm_config_update_notifier=false npm_config_audit=false \
         npm_config_fund=false npm_config_registry=http://localhost:{port}/; "
    );
    let view = format!("{npm}npm view tinypkg description");
    let install = format!(
        "{npm}npm install tinypkg --prefix \"$TMPDIR/n\" && node -e 'console.log(require(process.env.TMPDIR + \"/n/node_modules/tinypkg\"))'"
    );
    let calls = run(&s, &settings(&["localhost"], true), &[&view, &install], &[]);
    assert_reached(&calls[0].0, &calls[0].1, "tiny served package");
    assert_reached(&calls[1].0, &calls[1].1, "tiny-npm-ok");
    assert!(server.seen().iter().any(|p| p == tarball_path), "{:?}", server.seen());
}

#[test]
fn the_otlp_execute_span_of_a_refused_connection_carries_the_proxys_note() {
    use crate::otel::{Receiver, attr, named};
    let s = Sandbox::new();
    let server = Served::start();
    let port = server.port();
    let receiver = Receiver::start();
    let command = format!("curl -sS http://localhost:{port}/otlp");
    let script = s.script(json!([{"tool_calls": [{"id": "c1", "name": "Bash", "arguments": {"command": command}}]},
                                 {"text": "done"}]));
    let out = spine(&s)
        .args(["run", "-p", "go", "--model", &format!("scripted:{}", script.display())])
        .args(["--permission-mode", "bypassPermissions", "--settings", &settings(&["127.0.0.1"], true).to_string()])
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.endpoint())
        .env_remove("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
        .output()
        .expect("spine runs");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let spans = receiver.spans();
    let execute = named(&spans, "execute");
    let execute = execute.iter().find(|span| span.name == "execute").expect("the execute span");
    let line = refused("localhost", port, "localhost is not an allowed domain");
    assert_eq!(attr(execute, "spine.stage.sandbox_notes"), json!([line]));
    assert!(server.seen().is_empty(), "{:?}", server.seen());
}
