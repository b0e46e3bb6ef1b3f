//! Credentials in the mailbox URL reach the server (a `nats-server` of the test's own, with
//! JetStream and a user or a token), and a refused connection never shows the secret.

use std::process::{Child, Command, Stdio};
use std::time::Duration;

use spine_worker::MailboxUrl;

/// A single `nats-server` with JetStream and the given auth flags, killed on drop.
struct Server {
    child: Child,
    port: u16,
    _store: tempfile::TempDir,
}

impl Server {
    fn start(auth: &[&str]) -> Self {
        let store = tempfile::tempdir().expect("store");
        let port = spine_testkit::http::free_port();
        let child = Command::new("nats-server")
            .args(["-a", "127.0.0.1", "-p", &port.to_string(), "-js", "-sd"])
            .arg(store.path())
            .args(auth)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("nats-server on PATH");
        Server { child, port, _store: store }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Opens `url`, retrying while the server starts (`connect_wait_ms`).
async fn open(url: &str) -> Result<(), String> {
    let url: MailboxUrl = url.parse().map_err(|e| format!("{e}"))?;
    let url = url.with_default_connect_wait(Duration::from_secs(30));
    url.open().await.map(drop).map_err(|e| e.to_string())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_user_and_password_in_the_url_log_in_and_a_wrong_password_fails_at_once_unshown() {
    let server = Server::start(&["--user", "alice", "--pass", "s3cret"]);
    open(&format!("nats://alice:s3cret@127.0.0.1:{}?prefix=auth", server.port)).await.expect("logs in");
    let url: MailboxUrl = format!("nats://alice:wr0ng@127.0.0.1:{}?prefix=auth", server.port).parse().expect("url");
    // Refused credentials are not retried, however long the connect wait.
    let url = url.with_default_connect_wait(Duration::from_secs(3600));
    let Err(error) = url.open().await else { panic!("a wrong password must be refused") };
    let line = error.to_string();
    assert!(!line.contains("wr0ng") && !line.contains("s3cret"), "{line}");
    assert!(line.contains(&format!("nats://127.0.0.1:{}", server.port)), "names the server: {line}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_token_in_the_query_or_the_user_part_logs_in() {
    let server = Server::start(&["--auth", "t0ken"]);
    open(&format!("nats://127.0.0.1:{}?prefix=tok&token=t0ken", server.port)).await.expect("query token");
    open(&format!("nats://t0ken@127.0.0.1:{}?prefix=tok", server.port)).await.expect("user-part token");
    let url: MailboxUrl = format!("nats://127.0.0.1:{}?prefix=tok&token=nope", server.port).parse().expect("url");
    let Err(error) = url.open().await else { panic!("a wrong token must be refused") };
    assert!(!error.to_string().contains("nope"), "{error}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_nkey_seed_file_logs_in_and_its_seed_is_never_shown() {
    let user = nkeys::KeyPair::new_user();
    let seed = user.seed().expect("seed");
    let dir = tempfile::tempdir().expect("dir");
    let config = dir.path().join("server.conf");
    std::fs::write(&config, format!("authorization {{ users = [ {{ nkey: {} }} ] }}\n", user.public_key()))
        .expect("config");
    let seed_file = dir.path().join("worker.nk");
    std::fs::write(&seed_file, format!("{seed}\n")).expect("seed file");
    let server = Server::start(&["-c", config.to_str().expect("utf-8 path")]);
    open(&format!("nats://127.0.0.1:{}?prefix=nk&nkey={}", server.port, seed_file.display())).await.expect("logs in");

    let other = nkeys::KeyPair::new_user();
    let other_seed = other.seed().expect("seed");
    std::fs::write(&seed_file, &other_seed).expect("another seed");
    let url: MailboxUrl =
        format!("nats://127.0.0.1:{}?prefix=nk&nkey={}", server.port, seed_file.display()).parse().expect("url");
    let Err(error) = url.open().await else { panic!("an unknown key must be refused") };
    let line = error.to_string();
    assert!(!line.contains(&other_seed) && !line.contains(&seed), "{line}");
    std::fs::write(&seed_file, "not a seed").expect("junk");
    let Err(error) = url.open().await else { panic!("a file without a seed must be refused") };
    assert!(error.to_string().contains("no user NKey seed"), "{error}");
}

/// A CA and a server certificate for 127.0.0.1, made with `openssl`, in `dir`.
fn certificates(dir: &std::path::Path) {
    let run = |args: &[&str]| {
        let out = Command::new("openssl").args(args).current_dir(dir).output().expect("openssl on PATH");
        assert!(out.status.success(), "openssl {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    };
    run(&[
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-keyout",
        "ca.key",
        "-out",
        "ca.pem",
        "-days",
        "2",
        "-subj",
        "/CN=spine-test-ca",
    ]);
    std::fs::write(dir.join("san.ext"), "subjectAltName=IP:127.0.0.1\n").expect("ext");
    run(&[
        "req",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-keyout",
        "server.key",
        "-out",
        "server.csr",
        "-subj",
        "/CN=127.0.0.1",
    ]);
    run(&[
        "x509",
        "-req",
        "-in",
        "server.csr",
        "-CA",
        "ca.pem",
        "-CAkey",
        "ca.key",
        "-CAcreateserial",
        "-out",
        "server.pem",
        "-days",
        "2",
        "-extfile",
        "san.ext",
    ]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tls_with_the_urls_ca_connects_and_an_untrusted_server_is_refused() {
    let dir = tempfile::tempdir().expect("dir");
    certificates(dir.path());
    let file = |name: &str| dir.path().join(name).display().to_string();
    let server = Server::start(&["--tls", "--tlscert", &file("server.pem"), "--tlskey", &file("server.key")]);
    let ca = file("ca.pem");
    open(&format!("tls://127.0.0.1:{}?prefix=tls&tls_ca={ca}", server.port)).await.expect("TLS with the CA");
    let url: MailboxUrl = format!("tls://127.0.0.1:{}?prefix=tls", server.port).parse().expect("url");
    let Err(error) = url.open().await else { panic!("a server signed by an unknown CA must be refused") };
    assert!(error.to_string().contains("cannot connect"), "{error}");
}
