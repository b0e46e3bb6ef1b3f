//! `run`: stdin payload, concurrent capped reads, time limit, cancellation, drop, the child
//! environment; `join_readers` and `drain`.

use std::collections::BTreeMap;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use spine_process::run::pump;
use spine_process::{CappedText, ChildEnv, Ending, GroupChild, Limits, RunOptions, StdinOutcome, Stream, drain, run};
use tokio_util::sync::CancellationToken;

use crate::support::{NO_SETTINGS, eventually_dead, read_pid, sh};

fn limits(timeout_ms: u64, cap: usize) -> Limits {
    Limits { timeout: Duration::from_millis(timeout_ms), stdout_cap: cap, stderr_cap: cap }
}

#[tokio::test]
async fn stdin_payload_is_written_then_closed() {
    let payload = b"{\"hello\": \"world\"}".to_vec();
    let f = run(sh("cat; echo done >&2"), RunOptions::new(limits(5000, 1000), &NO_SETTINGS).stdin(payload))
        .await
        .expect("run");
    assert_eq!(f.ending, Ending::Exited);
    assert_eq!(f.status.and_then(|s| s.code()), Some(0));
    assert_eq!(f.stdout.text(), "{\"hello\": \"world\"}");
    assert_eq!(f.stderr.text(), "done\n");
    assert_eq!(f.stdin, StdinOutcome::Written);
}

#[tokio::test]
async fn a_large_payload_does_not_deadlock_against_a_child_that_writes_first() {
    // 1 MB in, 1 MB out: the child fills its stdout before reading all of stdin.
    let payload = vec![b'x'; 1 << 20];
    let f = run(sh("cat"), RunOptions::new(limits(10_000, 2 << 20), &NO_SETTINGS).stdin(payload)).await.expect("run");
    assert_eq!(f.stdout.total_chars(), 1 << 20);
    assert_eq!(f.stdin, StdinOutcome::Written);
}

#[tokio::test]
async fn a_child_that_never_reads_stdin_is_not_an_error() {
    for _ in 0..20 {
        let payload = vec![b'x'; 256 * 1024];
        let f = run(sh("true"), RunOptions::new(limits(5000, 100), &NO_SETTINGS).stdin(payload)).await.expect("run");
        assert_eq!(f.status.and_then(|s| s.code()), Some(0));
        assert_eq!(f.stdin, StdinOutcome::NotRead);
    }
}

#[tokio::test]
async fn no_payload_means_stdin_is_dev_null() {
    let f = run(sh("cat; echo end"), RunOptions::new(limits(5000, 100), &NO_SETTINGS)).await.expect("run");
    assert_eq!(f.stdout.text(), "end\n");
    assert_eq!(f.stdin, StdinOutcome::Null);
}

#[tokio::test]
async fn output_is_capped_in_bounded_memory_and_overflow_is_visible() {
    let f = run(sh("head -c 10000000 /dev/zero | tr '\\0' a"), RunOptions::new(limits(20_000, 1000), &NO_SETTINGS))
        .await
        .expect("run");
    assert_eq!(f.stdout.total_chars(), 10_000_000);
    assert!(f.stdout.exceeded());
    assert!(f.stdout.text().len() < 1200);
}

#[tokio::test]
async fn time_limit_terminates_the_whole_group() {
    let dir = tempfile::tempdir().expect("tmp");
    let pidfile = dir.path().join("child.pid");
    let started = Instant::now();
    let script = format!("sleep 100 & echo $! > {}; wait", pidfile.display());
    let f = run(sh(&script), RunOptions::new(limits(300, 100), &NO_SETTINGS)).await.expect("run");
    assert_eq!(f.ending, Ending::TimedOut);
    assert!(started.elapsed() < Duration::from_secs(5));
    let pid = read_pid(&pidfile).await;
    assert!(eventually_dead(pid).await, "grandchild {pid} survived");
}

#[tokio::test]
async fn cancellation_terminates_the_group_fast() {
    let token = CancellationToken::new();
    let canceller = token.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(100)).await;
        canceller.cancel();
    });
    let started = Instant::now();
    let f = run(sh("sleep 100"), RunOptions::new(limits(60_000, 100), &NO_SETTINGS).cancel(&token)).await.expect("run");
    assert_eq!(f.ending, Ending::Canceled);
    assert!(started.elapsed() < Duration::from_secs(3));
}

#[tokio::test]
async fn background_children_do_not_outlive_the_command() {
    let dir = tempfile::tempdir().expect("tmp");
    let pidfile = dir.path().join("bg.pid");
    let script = format!("sleep 100 & echo $! > {}; echo done", pidfile.display());
    let f = run(sh(&script), RunOptions::new(limits(5000, 100), &NO_SETTINGS)).await.expect("run");
    assert_eq!(f.stdout.text(), "done\n");
    let pid = read_pid(&pidfile).await;
    assert!(eventually_dead(pid).await, "background child {pid} survived");
}

#[tokio::test]
async fn dropping_the_run_midway_kills_the_group() {
    let dir = tempfile::tempdir().expect("tmp");
    let pidfile = dir.path().join("child.pid");
    let script = format!("sleep 100 & echo $! > {}; wait", pidfile.display());
    let task = tokio::spawn(async move { run(sh(&script), RunOptions::new(limits(60_000, 100), &NO_SETTINGS)).await });
    let pid = read_pid(&pidfile).await;
    task.abort();
    let _ = task.await;
    assert!(eventually_dead(pid).await, "grandchild {pid} survived");
}

#[tokio::test]
async fn chunks_are_emitted_per_stream_as_they_arrive() {
    let seen: Arc<Mutex<Vec<(Stream, String)>>> = Arc::default();
    let sink = Arc::clone(&seen);
    let emit: spine_process::Emit =
        Arc::new(move |stream, text| sink.lock().expect("lock").push((stream, text.to_owned())));
    run(sh("echo out; echo err >&2"), RunOptions::new(limits(5000, 100), &NO_SETTINGS).emit(emit)).await.expect("run");
    let seen = seen.lock().expect("lock").clone();
    assert!(seen.contains(&(Stream::Stdout, "out\n".to_owned())));
    assert!(seen.contains(&(Stream::Stderr, "err\n".to_owned())));
}

#[tokio::test]
async fn a_missing_program_is_a_spawn_error() {
    let cmd = tokio::process::Command::new("/definitely/not/here");
    let err = run(cmd, RunOptions::new(limits(1000, 100), &NO_SETTINGS)).await.expect_err("spawn");
    assert_eq!(err.kind(), std::io::ErrorKind::NotFound);
}

#[tokio::test]
async fn join_readers_says_whether_every_reader_finished_within_the_limit() {
    let finished = tokio::spawn(async {});
    let mut readers = vec![finished];
    assert!(spine_process::join_readers(&mut readers, Duration::from_secs(60)).await);

    // A reader blocked on output someone else holds open: the wait gives up and leaves it to
    // the caller.
    let (_held_open, blocked) = tokio::sync::oneshot::channel::<()>();
    let mut readers = vec![
        tokio::spawn(async {}),
        tokio::spawn(async move {
            let _ = blocked.await;
        }),
    ];
    assert!(!spine_process::join_readers(&mut readers, Duration::from_millis(50)).await);
    assert!(!readers[1].is_finished(), "the blocked reader is left running");
    readers[1].abort();
}

#[tokio::test]
async fn each_run_gets_the_settings_vars_of_its_own_child_env_and_an_explicit_variable_wins() {
    let vars = |pairs: &[(&str, &str)]| -> BTreeMap<String, String> {
        pairs.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect()
    };
    let one = ChildEnv::new(vars(&[("SPINE_T_MARK", "one"), ("SPINE_T_OTHER", "settings")]), Vec::<String>::new());
    let two = ChildEnv::new(vars(&[("SPINE_T_MARK", "two")]), Vec::<String>::new());
    let mut explicit = sh("echo $SPINE_T_MARK $SPINE_T_OTHER");
    explicit.env("SPINE_T_OTHER", "explicit");
    let (a, b, none) = tokio::join!(
        run(explicit, RunOptions::new(limits(5000, 100), &one)),
        run(sh("echo $SPINE_T_MARK"), RunOptions::new(limits(5000, 100), &two)),
        run(sh("echo \"[${SPINE_T_MARK-unset}]\""), RunOptions::new(limits(5000, 100), &NO_SETTINGS)),
    );
    assert_eq!(a.expect("run").stdout.text(), "one explicit\n");
    assert_eq!(b.expect("run").stdout.text(), "two\n");
    assert_eq!(none.expect("run").stdout.text(), "[unset]\n");
}

#[tokio::test]
async fn drain_ends_what_the_leader_left_in_its_group_and_completes_the_output() {
    let dir = tempfile::tempdir().expect("tmp");
    let pidfile = dir.path().join("bg.pid");
    // The background member holds stdout open long after the leader exited.
    let mut cmd = sh(&format!("(sleep 100; echo never) & echo $! > {}; echo leader", pidfile.display()));
    cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::null());
    let mut child = GroupChild::spawn(&mut cmd, &NO_SETTINGS).expect("spawn");
    let out = Arc::new(Mutex::new(CappedText::new(100)));
    let pipe = child.take_stdout().expect("stdout");
    let mut readers = vec![tokio::spawn(pump(pipe, Arc::clone(&out), None, Stream::Stdout))];
    child.wait().await.expect("leader exits");
    let pid = read_pid(&pidfile).await;
    let started = Instant::now();
    drain(&mut child, &mut readers).await;
    assert!(started.elapsed() < Duration::from_secs(3), "drain took {:?}", started.elapsed());
    assert!(eventually_dead(pid).await, "background member {pid} survived");
    let _ = readers.pop().expect("reader").await;
    assert_eq!(out.lock().expect("lock").text(), "leader\n");
}
