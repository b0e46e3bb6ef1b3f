//! Real clients through the proxy, configured as sandboxed programs are: curl with `-x` and
//! `--socks5-hostname`, Python's urllib with `HTTPS_PROXY` (a TLS server on loopback reached
//! through `CONNECT`, its self-signed certificate for `allowed.test` trusted by the script).
//! Skipped, with the reason printed, when the client is not installed.

use std::process::Output;

use spine_tools::proxy::{Outcome, PrivateNetworks, Protocol};
use tokio::process::Command;

use super::{allowing, http_server, start};

/// A self-signed certificate for `allowed.test` (valid 2000–2100) and its key; test only.
const CERT: &str = "-----BEGIN CERTIFICATE-----
MIIBjTCCATKgAwIBAgIBATAKBggqhkjOPQQDAjAXMRUwEwYDVQQDDAxhbGxvd2Vk
LnRlc3QwIBcNMDAwMTAxMDAwMDAwWhgPMjEwMDAxMDEwMDAwMDBaMBcxFTATBgNV
BAMMDGFsbG93ZWQudGVzdDBZMBMGByqGSM49AgEGCCqGSM49AwEHA0IABMYAjQRR
WfRO0Z8JiqJ0hScklHRiVytTuUKNwVvTDloyneTa4PT4UprNgPkZkVZmuGAEvZOX
ZdYUCHtYMf7g/XqjbTBrMBcGA1UdEQQQMA6CDGFsbG93ZWQudGVzdDAMBgNVHRMB
Af8EAjAAMA4GA1UdDwEB/wQEAwIHgDATBgNVHSUEDDAKBggrBgEFBQcDATAdBgNV
HQ4EFgQUnJVaw48fmRG1h0t1KhAZ82dPs6IwCgYIKoZIzj0EAwIDSQAwRgIhALAm
o9Gir0JPK9njnkh0m33AIWl4hslE8pwyl09FI15lAiEA6FxwyXljnwlnYQ/27KAn
CZi898Ee31il1l5dyp4Eyw8=
-----END CERTIFICATE-----
";
const KEY: &str = "-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgkaKUXKfjVSkdxE9+
8rxLa5J11+lGEaX5iCVG6yg9djGhRANCAATGAI0EUVn0TtGfCYqidIUnJJR0Ylcr
U7lCjcFb0w5aMp3k2uD0+FKazYD5GZFWZrhgBL2Tl2XWFAh7WDH+4P16
-----END PRIVATE KEY-----
";

/// Python: a TLS HTTP server on 127.0.0.1 in a thread, then urllib through `HTTPS_PROXY`
/// (from the environment) to `https://allowed.test:PORT/`, verifying the certificate.
const URLLIB: &str = r#"
import http.server, ssl, sys, threading, urllib.request
cert, key = sys.argv[1], sys.argv[2]
server_ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
server_ctx.load_cert_chain(cert, key)
class Hello(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = b"hello over tls"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *args):
        pass
server = http.server.HTTPServer(("127.0.0.1", 0), Hello)
server.socket = server_ctx.wrap_socket(server.socket, server_side=True)
threading.Thread(target=server.serve_forever, daemon=True).start()
client_ctx = ssl.create_default_context(cafile=cert)
url = "https://allowed.test:%d/" % server.server_address[1]
print(urllib.request.urlopen(url, context=client_ctx, timeout=20).read().decode())
try:
    urllib.request.urlopen("https://other.test/", context=client_ctx, timeout=20)
    print("other.test reached")
except OSError as e:
    print("refused:", e)
"#;

/// Whether `program` runs; prints why the test is skipped when it does not.
async fn installed(program: &str, test: &str) -> bool {
    let found = Command::new(program).arg("--version").output().await.is_ok_and(|o| o.status.success());
    if !found {
        eprintln!("skipping {test}: {program} is not installed");
    }
    found
}

/// A command with no proxy settings inherited from the test's environment.
fn clean(program: &str) -> Command {
    let mut command = Command::new(program);
    for name in ["http_proxy", "https_proxy", "all_proxy", "no_proxy"] {
        command.env_remove(name).env_remove(name.to_uppercase());
    }
    command.kill_on_drop(true);
    command
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

#[tokio::test]
async fn curl_reaches_allowed_hosts_through_the_http_proxy_and_socks5_hostname_and_sees_refusals() {
    if !installed("curl", "the curl test").await {
        return;
    }
    let upstream = http_server().await;
    let proxy = start(allowing(&["allowed.test"]), PrivateNetworks::Allow).await;
    let url = format!("http://allowed.test:{upstream}/hello");
    let http_proxy = format!("http://{}", proxy.addr);
    let socks = proxy.addr.to_string();
    let runs: [&[&str]; 3] =
        [&["-x", &http_proxy, &url], &["-x", &http_proxy, "--proxytunnel", &url], &["--socks5-hostname", &socks, &url]];
    for args in runs {
        let output = clean("curl").arg("-q").args(["-sS", "--max-time", "20"]).args(args).output().await.expect("curl");
        assert!(output.status.success(), "curl {args:?}: {}", String::from_utf8_lossy(&output.stderr));
        assert_eq!(stdout(&output), "hello from upstream", "curl {args:?}");
    }
    let protocols: Vec<Protocol> = proxy.events().iter().map(|e| e.protocol).collect();
    assert_eq!(protocols, [Protocol::HttpForward, Protocol::HttpConnect, Protocol::Socks5]);

    let refused = clean("curl")
        .args(["-q", "-sS", "--max-time", "20", "-x", &http_proxy, "http://other.test/"])
        .output()
        .await
        .expect("curl");
    assert_eq!(stdout(&refused), "spine sandbox proxy: other.test is not an allowed domain\n");
    let refused = clean("curl")
        .args(["-q", "-sS", "--max-time", "20", "--socks5-hostname", &socks, "http://other.test/"])
        .output()
        .await
        .expect("curl");
    assert!(!refused.status.success(), "SOCKS5 refusal fails the transfer");
    assert!(proxy.events().iter().rev().take(2).all(|e| matches!(e.outcome, Outcome::Denied(_))));
}

#[tokio::test]
async fn python_urllib_with_https_proxy_tunnels_tls_to_the_allowed_host() {
    if !installed("python3", "the urllib test").await {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let (cert, key, script) = (dir.path().join("cert.pem"), dir.path().join("key.pem"), dir.path().join("urllib.py"));
    for (path, text) in [(&cert, CERT), (&key, KEY), (&script, URLLIB)] {
        std::fs::write(path, text).expect("write fixture");
    }
    let proxy = start(allowing(&["allowed.test"]), PrivateNetworks::Allow).await;
    let output = clean("python3")
        .arg(&script)
        .arg(&cert)
        .arg(&key)
        .env("HTTPS_PROXY", format!("http://{}", proxy.addr))
        .output()
        .await
        .expect("python3");
    let out = stdout(&output);
    assert!(output.status.success(), "{out}{}", String::from_utf8_lossy(&output.stderr));
    let mut lines = out.lines();
    assert_eq!(lines.next(), Some("hello over tls"));
    let refusal = lines.next().unwrap_or_default();
    assert!(refusal.starts_with("refused:") && refusal.contains("403"), "{refusal}");
    let events = proxy.events();
    assert!(matches!(events[0].outcome, Outcome::Allowed { .. }) && events[0].protocol == Protocol::HttpConnect);
    assert_eq!(events[1].host, "other.test");
}
