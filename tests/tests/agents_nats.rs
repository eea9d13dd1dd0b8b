//! Real member agents over NATS, as separate processes against a real `nats-server` that
//! enforces per-agent permissions (nkey users made by `flotilla agent-creds`): two hubs on one
//! stream (a writer and a standby), three `sim` agents and one `dir` agent.
//!
//! A staged run with an approval completes; the `dir` agent's files equal its Works; a `sim`
//! agent killed mid-rollout and restarted re-applies nothing; an agent's credentials can neither
//! publish another cluster's heartbeat nor read its Works, and a payload naming another cluster
//! than its subject is rejected, recorded and announced on the rejection subject; killing the
//! writer lets the standby take over, `nats-server` is killed and restarted mid-run, the run
//! still completes, and the standby's state hash equals a clean fold of the stream from
//! sequence 1.

use std::path::{Path, PathBuf};
use std::time::Duration;

use async_nats::jetstream::{self, consumer, consumer::push::OrderedConfig};
use flotilla_adapters::nats_auth::{NatsConnection, agent_inbox_prefix};
use flotilla_eventstore::nats_log::{NatsLog, NatsOptions};
use flotilla_eventstore::nats_test_server::NatsTestServer;
use flotilla_replay::Folder;
use flotilla_tests::adversary::make_creds;
use flotilla_tests::agents::{
    Agent, check_dir_files, check_nothing_reapplied, get_json, items, ok, run_succeeded,
    sim_applies, wait_for,
};
use flotilla_tests::support::{HubProcess, fixture};
use futures::StreamExt;

const MEMBERS: [&str; 4] = ["member-1", "member-2", "member-3", "gitops-1"];

fn binary() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_flotilla-e2e"))
}

fn following(hub: &HubProcess) -> Result<Option<bool>, String> {
    Ok(hub.status().ok().and_then(|s| s["following"].as_bool()))
}

/// What member-1's credentials may and may not do.
async fn check_permissions(url: &str, seed: &Path) -> Result<(), String> {
    let connection = NatsConnection {
        creds: Some(seed.to_owned()),
        ca: None,
        inbox_prefix: Some(agent_inbox_prefix("member-1")),
    };
    let client = connection
        .connect(url, "permission-test")
        .await
        .map_err(|e| e.to_string())?;
    let js = jetstream::ContextBuilder::new()
        .timeout(Duration::from_secs(2))
        .build(client.clone());
    // Another cluster's heartbeat: the server refuses the publish, so no ack ever comes.
    let forged = r#"{"type":"heartbeat","cluster":"member-2","source":"forger"}"#;
    let sent = js
        .publish("flotilla.in.heartbeat.member-2", forged.into())
        .await;
    let acked = match sent {
        Ok(ack) => ack.await.is_ok(),
        Err(_) => false,
    };
    assert!(
        !acked,
        "member-1's credentials published member-2's heartbeat"
    );
    // Another cluster's works: the consumer cannot be created; its own can.
    let consumer_for = |key: &str| OrderedConfig {
        deliver_subject: client.new_inbox(),
        name: Some(format!("probe-{}", key.replace('-', ""))),
        filter_subject: format!("$KV.FLOTILLA_WORKS.{key}.>"),
        deliver_policy: consumer::DeliverPolicy::LastPerSubject,
        ..OrderedConfig::default()
    };
    let theirs = js
        .create_consumer_on_stream(consumer_for("gitops-1"), "KV_FLOTILLA_WORKS")
        .await;
    assert!(theirs.is_err(), "member-1 read gitops-1's works");
    let own = js
        .create_consumer_on_stream(consumer_for("member-1"), "KV_FLOTILLA_WORKS")
        .await;
    assert!(own.is_ok(), "member-1 cannot read its own works: {own:?}");
    // A body naming member-2 on member-1's subject: stored, then rejected and announced.
    let mut notices = client
        .subscribe("flotilla.rejected.*.member-1")
        .await
        .map_err(|e| e.to_string())?;
    let ack = js
        .publish("flotilla.in.heartbeat.member-1", forged.into())
        .await
        .map_err(|e| e.to_string())?
        .await
        .map_err(|e| e.to_string())?;
    let notice = tokio::time::timeout(Duration::from_secs(10), async {
        while let Some(notice) = notices.next().await {
            let body: serde_json::Value =
                serde_json::from_slice(&notice.payload).unwrap_or_default();
            if body["seq"] == ack.sequence {
                return Some(body);
            }
        }
        None
    })
    .await
    .map_err(|_| "no rejection notice for the forged heartbeat".to_owned())?
    .ok_or("the notice subscription ended")?;
    assert_eq!(notice["code"], "Undecodable", "{notice}");
    assert_eq!(notice["subject"], "flotilla.in.heartbeat.member-1");
    let reason = notice["reason"].as_str().unwrap_or_default();
    assert!(
        reason.contains("belongs on flotilla.in.heartbeat.member-2"),
        "{notice}"
    );
    Ok(())
}

/// Folds the stream from sequence 1 up to `seq` and returns the state hash.
async fn clean_fold_hash(url: &str, seed: &Path, seq: u64) -> Result<String, String> {
    let connection = NatsConnection {
        creds: Some(seed.to_owned()),
        ..NatsConnection::default()
    };
    let client = connection
        .connect(url, "clean-fold")
        .await
        .map_err(|e| e.to_string())?;
    let log = NatsLog::with_client(client, NatsOptions::default())
        .await
        .map_err(|e| e.to_string())?;
    let mut folder = Folder::default();
    folder
        .catch_up(&log, seq)
        .await
        .map_err(|e| e.to_string())?;
    assert_eq!(
        folder.seq, seq,
        "the clean fold reached the standby's sequence"
    );
    Ok(folder.state.hash().map_err(|e| e.to_string())?.0)
}

#[test]
fn agents_on_nats_survive_a_dead_writer_and_a_server_restart() -> Result<(), String> {
    let scratch = tempfile::tempdir().map_err(|e| e.to_string())?;
    let seed = |who: &str| scratch.path().join(format!("{who}.seed"));
    let mut entries = vec![make_creds(&binary(), None, &seed("hub"))?];
    for member in MEMBERS {
        entries.push(make_creds(&binary(), Some(member), &seed(member))?);
    }
    let auth = format!("authorization {{ users = [\n{}\n] }}", entries.join("\n"));
    let mut nats = NatsTestServer::start_with_config(auth).map_err(|e| e.to_string())?;
    let url = nats.url();
    let hub_seed = seed("hub").display().to_string();
    let hub_args = [
        "--nats",
        url.as_str(),
        "--nats-creds",
        hub_seed.as_str(),
        "--lease-seconds",
        "2",
    ];
    let writer = HubProcess::start(&binary(), &scratch.path().join("a"), &hub_args)?;
    wait_for("the first hub to write", || {
        Ok((following(&writer)? == Some(false)).then_some(()))
    })?;
    let standby = HubProcess::start(&binary(), &scratch.path().join("b"), &hub_args)?;
    assert_eq!(following(&standby)?, Some(true), "the second hub waits");
    ok(&writer, &["apply", "-f", &fixture("agents-fleet.yaml")])?;

    let state = |name: &str| scratch.path().join(format!("state-{name}"));
    let gitops = scratch.path().join("gitops");
    let start = |member: &str, applier: &str| {
        let creds = seed(member).display().to_string();
        let link = ["--nats", url.as_str(), "--creds", creds.as_str()];
        Agent::start(&binary(), &link, member, applier, &state(member))
    };
    let mut agents = Vec::new();
    for member in ["member-1", "member-2", "member-3"] {
        agents.push(start(member, "sim")?);
    }
    let dir_agent = start("gitops-1", &format!("dir:{}", gitops.display()))?;
    wait_for("four bindings", || {
        Ok((items(&get_json(&writer, &["clusterresourcebindings"])?).len() == 4).then_some(()))
    })?;
    ok(&writer, &["apply", "-f", &fixture("agents-run.yaml")])?;
    // The standby follows within a round; a write sent to it is appended to the stream and
    // decided by the writer.
    wait_for("the standby to see the run", || {
        Ok(get_json(&standby, &["csur", "shop-run"]).ok())
    })?;
    ok(&standby, &["run", "start", "shop-run"])?;
    let request = wait_for("the approval request after staging", || {
        let requests = items(&get_json(&writer, &["careq"])?);
        Ok(requests
            .first()
            .and_then(|r| r["metadata"]["name"].as_str().map(str::to_owned)))
    })?;
    wait_for("member-1's acknowledged report", || {
        let done = "reported work shop-work: index 0: applied, available";
        Ok(agents[0]
            .output()
            .iter()
            .any(|l| l.ends_with(done))
            .then_some(()))
    })?;
    let applies_before = sim_applies(&state("member-1"))?;
    assert_eq!(applies_before, [1, 1, 1]);
    agents.remove(0).kill_hard();
    let restarted = start("member-1", "sim")?;
    wait_for("the restarted agent to rejoin", || {
        Ok(restarted
            .output()
            .iter()
            .any(|l| l.contains("joined"))
            .then_some(()))
    })?;

    let runtime = tokio::runtime::Runtime::new().map_err(|e| e.to_string())?;
    runtime.block_on(check_permissions(&url, &seed("member-1")))?;

    // The writer dies; the standby takes over once the lease expires.
    writer.kill_hard();
    wait_for("the standby to take the writer role", || {
        Ok((following(&standby)? == Some(false)).then_some(()))
    })?;
    // nats-server crashes and comes back mid-run.
    nats.kill_and_restart().map_err(|e| e.to_string())?;
    wait_for("the approval to be accepted", || {
        Ok(ok(&standby, &["approve", &request]).ok())
    })?;
    wait_for("the run to succeed", || {
        Ok(run_succeeded(&standby)?.then_some(()))
    })?;

    check_nothing_reapplied(&state("member-1"), &applies_before, &restarted)?;
    for member in ["member-2", "member-3"] {
        assert_eq!(sim_applies(&state(member))?, [1, 1, 1], "{member}");
    }
    assert_eq!(check_dir_files(&standby, &gitops)?, 3);

    // member-3 leaves: its agent removes what it placed, confirms over NATS, and the hub
    // forgets the member.
    ok(&standby, &["delete", "membercluster", "member-3"])?;
    assert_eq!(
        agents[1].wait_exit()?,
        Some(true),
        "the agent stops cleanly"
    );
    assert_eq!(sim_applies(&state("member-3"))?, Vec::<u64>::new());
    wait_for("member-3 to be gone from the hub", || {
        Ok(get_json(&standby, &["membercluster", "member-3"])
            .is_err()
            .then_some(()))
    })?;

    let status = standby.status()?;
    let seq = status["seq"].as_u64().ok_or("no seq")?;
    let hash = status["stateHash"].as_str().ok_or("no hash")?.to_owned();
    let clean = runtime.block_on(clean_fold_hash(&url, &seed("hub"), seq))?;
    assert_eq!(
        hash, clean,
        "the standby's state equals a clean fold at {seq}"
    );
    drop((agents, restarted, dir_agent));
    standby.stop()
}
