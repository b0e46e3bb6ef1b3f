//! Processes: found by a marker in their command line while they live, gone once killed.

use spine_testkit::procs::{dead, eventually_dead, eventually_none_with, marker, peak_rss_kib, processes_with};

#[tokio::test]
async fn a_marked_process_is_found_while_it_lives_and_dead_once_killed_and_reaped() {
    let m = marker();
    let mut child =
        std::process::Command::new("/bin/sh").arg("-c").arg(format!("sleep 30; : {m}")).spawn().expect("spawn sh");
    let pid = child.id();
    // The command line is python's once it has exec'd (a liveness bound of five seconds).
    let mut found = false;
    for _ in 0..500 {
        found = processes_with(&m).contains(&pid);
        if found {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    assert!(found, "the command line holds the marker");
    assert!(!dead(pid));
    child.kill().expect("kill");
    assert!(eventually_dead(pid).await, "a killed child is a zombie or gone");
    child.wait().expect("reap");
    assert!(eventually_none_with(&m).await.is_empty());
}

#[test]
fn the_peak_resident_set_of_this_process_is_known() {
    assert!(peak_rss_kib().is_some_and(|kib| kib > 0));
}
