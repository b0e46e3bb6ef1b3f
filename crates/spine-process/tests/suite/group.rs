//! `GroupChild`: a long-lived child whose group dies with it.

use std::process::Stdio;

use spine_process::GroupChild;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

use crate::support::{NO_SETTINGS, eventually_dead, read_pid, sh};

#[tokio::test]
async fn dropping_a_group_child_kills_its_whole_group() {
    let dir = tempfile::tempdir().expect("tmp");
    let pidfile = dir.path().join("child.pid");
    let mut cmd = sh(&format!("sleep 100 & echo $! > {}; wait", pidfile.display()));
    cmd.stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::null());
    let child = GroupChild::spawn(&mut cmd, &NO_SETTINGS).expect("spawn");
    let leader = child.id().expect("pid");
    let pid = read_pid(&pidfile).await;
    drop(child);
    assert!(eventually_dead(pid).await, "grandchild {pid} survived");
    assert!(eventually_dead(leader).await, "leader {leader} survived");
}

#[tokio::test]
async fn terminate_reaps_the_leader_and_a_line_protocol_works_before() {
    let mut cmd = sh("while read line; do echo \"got $line\"; done");
    cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::null());
    let mut child = GroupChild::spawn(&mut cmd, &NO_SETTINGS).expect("spawn");
    let mut stdin = child.take_stdin().expect("stdin");
    let mut lines = BufReader::new(child.take_stdout().expect("stdout")).lines();
    for i in 0..3 {
        stdin.write_all(format!("{i}\n").as_bytes()).await.expect("write");
        assert_eq!(lines.next_line().await.expect("read"), Some(format!("got {i}")));
    }
    let leader = child.id().expect("pid");
    let status = child.terminate().await;
    assert!(status.is_some());
    assert!(eventually_dead(leader).await);
}
