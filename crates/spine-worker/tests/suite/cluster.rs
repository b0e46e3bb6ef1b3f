//! The mailbox on a real 3-node JetStream cluster (`spine_testkit::nats_cluster`): an R3
//! mailbox opened through a seed list runs items, and every stream it creates has 3 replicas.

use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use spine_testkit::nats::unique_prefix;
use spine_testkit::nats_cluster::NatsCluster;
use spine_worker::MailboxUrl;

use crate::support::{BYPASS, Backend, Harness, assignment, methods};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_r3_mailbox_over_several_seeds_runs_items_and_its_streams_have_three_replicas() {
    let cluster = NatsCluster::start(3).await.expect("a 3-node cluster");
    let prefix = unique_prefix("r3");
    let url = format!("{}?prefix={prefix}&replicas=3&lease_ms=5000", cluster.seed_url());
    let parsed: MailboxUrl = url.parse().expect("url");
    let mailbox = parsed.open().await.expect("the R3 mailbox opens");
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir_all(dir.path().join("ws")).expect("workspace");
    let h = Harness { backend: Backend::Nats, dir, url, mailbox: Arc::clone(&mailbox), settings: BYPASS.to_owned() };

    let script = h.workspace().join("script.json");
    spine_testkit::script::write_script_file(&script, json!([{"text": "done"}])).expect("script");
    let ids = ["r3-a", "r3-b", "r3-c"];
    for id in ids {
        let run = json!({"mode": "agent_run", "prompt": "go", "model": "scripted:script.json", "max_turns": 2});
        h.submit(&assignment(id, run, &[])).await;
    }
    h.run_once(2).await;
    for id in ids {
        let reports = h.wait_terminal(id, Duration::from_secs(60)).await;
        assert_eq!(methods(&reports).last(), Some(&"execution_complete"), "{id}: {:?}", methods(&reports));
    }

    // Each stream is replicated on the three nodes: a leader and two current followers.
    let js = async_nats::jetstream::new(async_nats::connect(cluster.client_url(0)).await.expect("connect"));
    for suffix in ["ITEMS", "REPORTS", "EXEC", "DEAD"] {
        let name = format!("{}_{suffix}", prefix.to_ascii_uppercase());
        let mut stream = js.get_stream(&name).await.expect("stream");
        let info = stream.info().await.expect("info");
        assert_eq!(info.config.num_replicas, 3, "{name}");
        let cluster_info = info.cluster.clone().expect("cluster info");
        assert_eq!(cluster_info.replicas.len(), 2, "{name}: the leader and two replicas");
        let leader = cluster.stream_leader(&name).await.expect("a stream leader");
        assert_eq!(cluster_info.leader.as_deref(), Some(cluster.node_name(leader)), "{name}");
    }
}

/// The replicas of every stream of `prefix`, as the cluster reports them (config, current peers).
async fn replicas(cluster: &NatsCluster, prefix: &str) -> Vec<(usize, usize)> {
    let seeds: Vec<async_nats::ServerAddr> =
        cluster.client_urls().iter().map(|u| u.parse().expect("address")).collect();
    let js = async_nats::jetstream::new(async_nats::connect(seeds).await.expect("connect"));
    let mut out = Vec::new();
    for suffix in ["ITEMS", "REPORTS", "EXEC", "DEAD"] {
        let mut stream = js.get_stream(format!("{}_{suffix}", prefix.to_ascii_uppercase())).await.expect("stream");
        let info = stream.info().await.expect("info");
        out.push((info.config.num_replicas, 1 + info.cluster.as_ref().map_or(0, |c| c.replicas.len())));
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_r1_mailbox_restarted_with_replicas_3_is_replicated_in_place_and_survives_a_killed_follower() {
    let mut cluster = NatsCluster::start(3).await.expect("a 3-node cluster");
    let prefix = unique_prefix("grow");
    let base = format!("{}?prefix={prefix}&lease_ms=5000", cluster.seed_url());
    let r1: MailboxUrl = base.parse().expect("url");
    let mailbox = r1.open().await.expect("the R1 mailbox opens");
    mailbox.submit(crate::support::example("before").to_string().as_bytes()).await.expect("submit");
    assert_eq!(replicas(&cluster, &prefix).await, [(1, 1); 4]);

    let r3: MailboxUrl = format!("{base}&replicas=3").parse().expect("url");
    let mailbox = r3.open().await.expect("R1 -> R3 is an update on a cluster");
    assert_eq!(replicas(&cluster, &prefix).await.iter().map(|r| r.0).collect::<Vec<_>>(), [3; 4]);
    // The consumer follows its stream: its leases survive a server loss too.
    let seeds: Vec<async_nats::ServerAddr> =
        cluster.client_urls().iter().map(|u| u.parse().expect("address")).collect();
    let js = async_nats::jetstream::new(async_nats::connect(seeds).await.expect("connect"));
    let items_stream = js.get_stream(format!("{}_ITEMS", prefix.to_ascii_uppercase())).await.expect("stream");
    let mut consumer = items_stream
        .get_consumer::<async_nats::jetstream::consumer::pull::Config>(&format!("{prefix}-workers"))
        .await
        .expect("consumer");
    let scaled = async {
        loop {
            // The new peers join as the server scales the consumer up.
            let info = consumer.info().await.expect("consumer info");
            if info.cluster.as_ref().map_or(0, |c| c.replicas.len()) == 2 {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
    };
    // A guard against a hang, not a timing assertion.
    tokio::time::timeout(Duration::from_secs(60), scaled).await.expect("the consumer has 3 replicas");

    // A follower of the items stream (not the meta leader when there is a choice) dies; the
    // stream keeps its quorum and the mailbox takes items.
    let items = format!("{}_ITEMS", prefix.to_ascii_uppercase());
    let leader = cluster.stream_leader(&items).await.expect("a leader");
    let meta = cluster.meta_leader().await.expect("a meta leader");
    let followers: Vec<usize> = (0..cluster.len()).filter(|i| *i != leader).collect();
    let victim = followers.iter().copied().find(|i| *i != meta).unwrap_or(followers[0]);
    cluster.kill(victim);
    assert!(!cluster.is_running(victim));
    mailbox.submit(crate::support::example("during").to_string().as_bytes()).await.expect("submit with a node down");
    cluster.restart(victim).await.expect("the node comes back");
    assert!(cluster.is_running(victim));
    let mut stream =
        async_nats::jetstream::new(async_nats::connect(cluster.client_url(victim)).await.expect("connect"))
            .get_stream(&items)
            .await
            .expect("the restarted node serves the stream");
    assert_eq!(stream.info().await.expect("info").state.messages, 2, "both items kept");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_item_in_flight_survives_its_workers_server_dying_and_completes_once() {
    let mut cluster = NatsCluster::start(3).await.expect("a 3-node cluster");
    let prefix = unique_prefix("hop");
    let options = format!("prefix={prefix}&replicas=3&lease_ms=2000");
    let seeds: MailboxUrl = format!("{}?{options}", cluster.seed_url()).parse().expect("url");
    let mailbox = seeds.open().await.expect("the R3 mailbox opens");

    // The worker connects through one server that leads neither the items stream nor its
    // consumer, so that its death is a reconnect and not a leader election.
    let items = format!("{}_ITEMS", prefix.to_ascii_uppercase());
    let stream_leader = cluster.stream_leader(&items).await.expect("a stream leader");
    let js = async_nats::jetstream::new(async_nats::connect(cluster.client_url(stream_leader)).await.expect("connect"));
    let mut consumer = js
        .get_stream(&items)
        .await
        .expect("stream")
        .get_consumer::<async_nats::jetstream::consumer::pull::Config>(&format!("{prefix}-workers"))
        .await
        .expect("consumer");
    let info = consumer.info().await.expect("consumer info");
    let consumer_leader = info.cluster.as_ref().and_then(|c| c.leader.as_deref()).and_then(|l| cluster.node_index(l));
    let Some(victim) = (0..cluster.len()).find(|i| *i != stream_leader && Some(*i) != consumer_leader) else {
        panic!("3 nodes always leave one that leads neither")
    };
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir_all(dir.path().join("ws")).expect("workspace");
    let url = format!("{}?{options}", cluster.client_url(victim));
    // The test itself reads reports through the stream leader, which stays up.
    drop(mailbox);
    let reader: MailboxUrl = format!("{}?{options}", cluster.client_url(stream_leader)).parse().expect("url");
    let mailbox = reader.open().await.expect("the reader's connection");
    let h = Harness { backend: Backend::Nats, dir, url, mailbox, settings: BYPASS.to_owned() };

    let marker = h.workspace().join("started");
    let runs = h.workspace().join("runs.txt");
    let command = format!("echo run >> {}; touch {}; sleep 5; echo finished", runs.display(), marker.display());
    h.submit(&crate::support::bash("hop-1", &command)).await;
    let worker = h.start(h.config(1, true)).await;
    spine_testkit::files::wait_for_file(&marker, Duration::from_secs(60)).await;
    // The item runs (past its 2 s lease thanks to keep-alives) while its server dies.
    cluster.kill(victim);
    let reports = terminal_through_elections(&h, "hop-1").await;
    tokio::time::timeout(Duration::from_secs(60), worker.handle).await.expect("the worker drains").expect("joins");
    assert_eq!(methods(&reports).last(), Some(&"execution_complete"), "{:?}", methods(&reports));
    assert_eq!(methods(&reports).iter().filter(|m| m.starts_with("execution_complete")).count(), 1);
    // Delivery is at least once: when the reconnect outlasts the lease, the item is delivered
    // again and its command may start again (the fencing keeps one completion); every run is
    // one of the item's attempts.
    let ran = std::fs::read_to_string(&runs).expect("runs").lines().count();
    let attempts = reports.iter().map(|r| r.attempt_no).max().unwrap_or(1);
    assert!(ran >= 1 && u32::try_from(ran).unwrap_or(u32::MAX) <= attempts, "{ran} runs, {attempts} attempts");
    cluster.restart(victim).await.expect("the node comes back");
}

/// The reports of an item once its terminal report is there, reading again when a read fails
/// (a stream whose leader died answers nothing until it elects another).
async fn terminal_through_elections(h: &Harness, item: &str) -> Vec<spine_protocol::report::Report> {
    use futures_util::StreamExt;
    let query = spine_worker::ReportQuery { item_id: Some(item.to_owned()), follow: false };
    let wait = async {
        loop {
            if let Ok(stream) = h.mailbox.reports(&query).await {
                let read: Vec<_> = stream.collect().await;
                if read.iter().all(Result::is_ok) {
                    let reports: Vec<_> = read.into_iter().filter_map(Result::ok).collect();
                    if reports.iter().any(|r| r.body.is_terminal()) {
                        return reports;
                    }
                }
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    };
    // A guard against a hang, not a timing assertion.
    tokio::time::timeout(Duration::from_secs(120), wait).await.expect("a terminal report")
}
