//! A full disk degrades the hub and never breaks it. A real `flotilla serve` keeps its data on a
//! 32 MiB tmpfs; once a filler file takes the rest, writes through the flotilla API and the
//! Kubernetes API answer 507 with a `Status` naming the data directory, reads answer 200 from
//! the hub's memory, and `/metrics` and the hub's log show the condition once. When the filler
//! is deleted the same process writes again, and after it stops every acknowledged event is in
//! its log exactly once and `flotilla replay verify` passes.
//!
//! Mounting a tmpfs needs root (the CI runs as root); elsewhere the test says so and passes.
//! The writer loop's side is also shown in process, on any machine, through the redb log's
//! fault-injecting backend: a round whose decisions find no room is recorded once space returns,
//! and a hub stopped while the disk is full stops cleanly.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use std::sync::Arc;

use flotilla_core::{Envelope, Input};
use flotilla_eventstore::redb_log::faults::FaultPlan;
use flotilla_eventstore::redb_log::reader::RedbReader;
use flotilla_eventstore::redb_log::{RedbLog, RedbOptions};
use flotilla_eventstore::{LogError, LogReader};
use flotilla_hub::runtime::{Hub, HubConfig, HubError};
use flotilla_tests::refusal::{self, send};
use flotilla_tests::scrape::{Scrape, scrape};
use flotilla_tests::support::{HarnessResult, HubProcess};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

/// The tmpfs the hub's data lives on: room for a young hub's log, small enough to fill fast.
const TMPFS_OPTIONS: &str = "size=32m";
/// The filler is written in pieces this large, then in small ones to take the last bytes.
const FILLER_CHUNK_BYTES: usize = 1 << 20;
/// Most pieces written into the filler (more than the tmpfs holds).
const FILLER_CHUNKS_MAX: usize = 80;
/// Most appends made after the filler before the log finds no room (its file has free pages).
const FILL_APPENDS_MAX: u32 = 2_000;
/// Bytes of each filling event's ConfigMap data, so the log's free pages go in few appends.
const PAYLOAD_BYTES: usize = 64 * 1024;
/// How long the hub may take to write again after the filler is deleted.
const RESUME_WITHIN: Duration = Duration::from_secs(20);
/// Heartbeats published before the disk fills.
const HEARTBEATS: usize = 30;
/// The sentence the hub logs when the storage fills up, and when it has room again.
const FULL_LINE: &str = "the storage of the log is full";
const ROOM_LINE: &str = "the storage of the log has room again";

fn binary() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_flotilla-e2e"))
}

/// A tmpfs mounted on a temporary directory, unmounted (lazily, so a straggling file handle
/// cannot keep it) when dropped, whether the test passed or not.
struct Tmpfs {
    dir: tempfile::TempDir,
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let unmounted = Command::new("umount")
            .arg("-l")
            .arg(self.dir.path())
            .status();
        if !unmounted.is_ok_and(|status| status.success()) {
            eprintln!("disk_full: could not unmount {}", self.dir.path().display());
        }
    }
}

/// Mounts the tmpfs; `None` (with the reason printed) where this process may not mount.
fn mount_tmpfs() -> HarnessResult<Option<Tmpfs>> {
    if !rustix::process::geteuid().is_root() {
        println!("disk_full: NOT RUN: mounting a tmpfs needs root, and this test runs as a user");
        return Ok(None);
    }
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let output = Command::new("mount")
        .args(["-t", "tmpfs", "-o", TMPFS_OPTIONS, "tmpfs"])
        .arg(dir.path())
        .output()
        .map_err(|e| format!("cannot run mount: {e}"))?;
    if output.status.success() {
        return Ok(Some(Tmpfs { dir }));
    }
    let said = String::from_utf8_lossy(&output.stderr)
        .trim()
        .to_lowercase();
    if ["permission denied", "not permitted", "superuser"]
        .iter()
        .any(|refusal| said.contains(refusal))
    {
        println!("disk_full: NOT RUN: mount refused a tmpfs (EPERM, no CAP_SYS_ADMIN): {said}");
        return Ok(None);
    }
    Err(format!("mount -t tmpfs failed: {said}"))
}

/// Writes into `path` until the file system has no byte left; returns the bytes written.
fn fill_up(path: &Path) -> HarnessResult<usize> {
    let mut file = File::options()
        .create(true)
        .append(true)
        .open(path)
        .map_err(|e| e.to_string())?;
    let mut written = 0;
    for size in [FILLER_CHUNK_BYTES, 4096, 1] {
        let piece = vec![0xf1_u8; size];
        for _ in 0..FILLER_CHUNKS_MAX * (FILLER_CHUNK_BYTES / size).min(1024) {
            match file.write_all(&piece) {
                Ok(()) => written += size,
                Err(e) if e.kind() == std::io::ErrorKind::StorageFull => break,
                Err(e) => return Err(format!("filler: {e}")),
            }
        }
    }
    match file.sync_all() {
        Ok(()) => Ok(written),
        Err(e) if e.kind() == std::io::ErrorKind::StorageFull => Ok(written),
        Err(e) => Err(format!("filler: {e}")),
    }
}

/// The test's own view of the hub: its address, its data directory and the ids it
/// acknowledged, with the sequence each got.
struct Run<'hub> {
    hub: &'hub HubProcess,
    client: reqwest::Client,
    url: String,
    data: PathBuf,
    acked: BTreeMap<String, u64>,
}

impl Run<'_> {
    /// POSTs events to `/v1/events` (waiting for their fold with `wait`); the status, and the
    /// body. Every event the hub answered with a sequence is recorded as acknowledged.
    async fn post(&mut self, events: Vec<Value>, wait: bool) -> HarnessResult<(StatusCode, Value)> {
        let url = format!("{}/v1/events?wait={wait}", self.url);
        let body = Value::Array(events);
        let (status, answer) = send(
            &self.client,
            Method::POST,
            url,
            Some(("application/json", &body)),
        )
        .await?;
        if status.is_success() {
            for result in answer.as_array().ok_or("no results")? {
                let id = result["id"].as_str().ok_or("no id")?.to_owned();
                let seq = result["seq"].as_u64().ok_or("no seq")?;
                self.acked.insert(id, seq);
            }
        }
        Ok((status, answer))
    }

    /// A request to the hub's Kubernetes API.
    async fn kube(
        &self,
        method: Method,
        path: &str,
        body: Option<(&str, &Value)>,
    ) -> HarnessResult<(StatusCode, Value)> {
        send(&self.client, method, format!("{}{path}", self.url), body).await
    }

    async fn get(&self, path: &str) -> HarnessResult<(StatusCode, Value)> {
        self.kube(Method::GET, path, None).await
    }
}

fn id() -> String {
    uuid::Uuid::now_v7().to_string()
}

fn apply(manifest: Value) -> Value {
    json!({"id": id(), "type": "apply", "manifest": manifest})
}

fn heartbeat(cluster: &str) -> Value {
    json!({"id": id(), "type": "heartbeat", "cluster": cluster})
}

fn config_map(name: &str, data: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": "fill"}, "data": {"d": data}})
}

/// Objects and events of a working hub, through both APIs.
async fn publish(run: &mut Run<'_>) -> HarnessResult<()> {
    let member = json!({"apiVersion": "cluster.kubernetes-fleet.io/v1beta1",
        "kind": "MemberCluster", "metadata": {"name": "member-1"},
        "spec": {"heartbeatPeriodSeconds": 60}});
    let namespace = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "fill"}});
    let (status, body) = run
        .post(vec![apply(member), apply(namespace)], true)
        .await?;
    assert_eq!(status, StatusCode::OK, "{body}");
    let beats = (0..HEARTBEATS).map(|_| heartbeat("member-1")).collect();
    let (status, body) = run.post(beats, true).await?;
    assert_eq!(status, StatusCode::OK, "{body}");
    let before = config_map("before", "written before the disk filled");
    let path = "/api/v1/namespaces/fill/configmaps";
    let (status, body) = run
        .kube(Method::POST, path, Some(("application/json", &before)))
        .await?;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    Ok(())
}

/// Appends large events until the log finds no room; the first refusal's body.
async fn append_until_refused(run: &mut Run<'_>) -> HarnessResult<Value> {
    let payload = "p".repeat(PAYLOAD_BYTES);
    for n in 0..FILL_APPENDS_MAX {
        let event = apply(config_map(&format!("filling-{n}"), &payload));
        let (status, body) = run.post(vec![event], false).await?;
        match status {
            StatusCode::OK => {}
            StatusCode::INSUFFICIENT_STORAGE => return Ok(body),
            other => return Err(format!("while filling: {other}: {body}")),
        }
    }
    Err(format!(
        "{FILL_APPENDS_MAX} appends and the log never filled up"
    ))
}

/// A `Status` of a write refused for a full disk, naming the data directory.
fn assert_insufficient_storage(status: StatusCode, body: &Value, data: &Path, what: &str) {
    let message = refusal::insufficient_storage(status, body, what);
    let dir = data.display().to_string();
    assert!(
        message.contains(&format!("data directory {dir} is full")),
        "{what}: {message}"
    );
    assert!(
        message.contains(&format!("Free space in {dir}")),
        "{what}: {message}"
    );
}

/// Every kind of write answers 507 while the disk is full: events (an agent's heartbeat
/// included) and the Kubernetes API's create, patch and delete.
async fn writes_refused(run: &mut Run<'_>) -> HarnessResult<()> {
    let data = run.data.clone();
    let (status, body) = run.post(vec![heartbeat("member-1")], true).await?;
    assert_insufficient_storage(status, &body, &data, "an agent's heartbeat");
    let (status, body) = run
        .post(vec![heartbeat("member-1"), heartbeat("member-1")], false)
        .await?;
    assert_insufficient_storage(status, &body, &data, "a batch of events");
    let path = "/api/v1/namespaces/fill/configmaps";
    let new = config_map("while-full", "never stored");
    let (status, body) = run
        .kube(Method::POST, path, Some(("application/json", &new)))
        .await?;
    assert_insufficient_storage(status, &body, &data, "kube create");
    let patch = json!({"data": {"d": "patched while full"}});
    let (status, body) = run
        .kube(
            Method::PATCH,
            &format!("{path}/before"),
            Some(("application/merge-patch+json", &patch)),
        )
        .await?;
    assert_insufficient_storage(status, &body, &data, "kube patch");
    let (status, body) = run
        .kube(Method::DELETE, &format!("{path}/before"), None)
        .await?;
    assert_insufficient_storage(status, &body, &data, "kube delete");
    Ok(())
}

/// Reads answer 200 from memory while the disk is full, and `/metrics` shows the condition.
async fn reads_answered(run: &Run<'_>) -> HarnessResult<()> {
    for path in [
        "/healthz",
        "/",
        "/v1/status",
        "/v1/objects/MemberCluster",
        "/v1/table/ConfigMap?namespace=fill",
        "/v1/summary",
        "/v1/log?from=1&max=10",
        "/api/v1/namespaces/fill/configmaps",
        "/api/v1/namespaces/fill/configmaps/before",
        "/apis/cluster.kubernetes-fleet.io/v1beta1/memberclusters/member-1",
        "/api/v1/namespaces/fill/configmaps?watch=true&timeoutSeconds=1",
    ] {
        let (status, body) = run.get(path).await?;
        let shown = body.to_string();
        assert_eq!(
            status,
            StatusCode::OK,
            "GET {path}: {}",
            &shown[..shown.len().min(300)]
        );
    }
    let metrics: Scrape = scrape(run.hub)?;
    assert_eq!(
        metrics.get("flotilla_storage_full"),
        Some(&1.0),
        "{metrics:?}"
    );
    let refused = metrics.get("flotilla_storage_full_refusals_total");
    assert!(refused.is_some_and(|n| *n >= 3.0), "{metrics:?}");
    Ok(())
}

/// After the filler is gone: the same hub takes writes again, through both APIs.
async fn writes_resume(run: &mut Run<'_>) -> HarnessResult<Duration> {
    let began = Instant::now();
    // The same event until it is taken: a retry of a refused write is safe.
    let beat = heartbeat("member-1");
    loop {
        let (status, body) = run.post(vec![beat.clone()], true).await?;
        match status {
            StatusCode::OK => break,
            StatusCode::INSUFFICIENT_STORAGE if began.elapsed() < RESUME_WITHIN => {
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            other => return Err(format!("after the filler was deleted: {other}: {body}")),
        }
    }
    let resumed = began.elapsed();
    let after = config_map("after", "written after space returned");
    let path = "/api/v1/namespaces/fill/configmaps";
    let (status, body) = run
        .kube(Method::POST, path, Some(("application/json", &after)))
        .await?;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let metrics = scrape(run.hub)?;
    assert_eq!(
        metrics.get("flotilla_storage_full"),
        Some(&0.0),
        "{metrics:?}"
    );
    Ok(resumed)
}

/// Waits until the hub has folded its whole log.
async fn caught_up(run: &Run<'_>) -> HarnessResult<()> {
    for _ in 0..200 {
        let (_, status) = run.get("/v1/status").await?;
        if status["seq"].as_u64().is_some() && status["seq"] == status["logSeq"] {
            return Ok(());
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    Err("the hub did not fold its log".into())
}

/// Every acknowledged id is in the log exactly once, at the sequence it was acknowledged with.
async fn each_acknowledged_once(data: &Path, acked: &BTreeMap<String, u64>) -> HarnessResult<()> {
    let log = RedbReader::open(&data.join("flotilla.redb")).map_err(|e| e.to_string())?;
    let mut logged: BTreeMap<String, Vec<u64>> = BTreeMap::new();
    let mut from = 1;
    for _ in 0..10_000 {
        let page = log.read(from, 1_000).await.map_err(|e| e.to_string())?;
        let Some(last) = page.last().map(|stored| stored.seq) else {
            break;
        };
        for stored in page {
            let id = stored.event().map(|event| event.id.to_string());
            logged
                .entry(id.unwrap_or_default())
                .or_default()
                .push(stored.seq);
        }
        from = last + 1;
    }
    for (id, seq) in acked {
        assert_eq!(logged.get(id), Some(&vec![*seq]), "acknowledged event {id}");
    }
    Ok(())
}

fn replay_verify(data: &Path) -> HarnessResult<String> {
    let output = Command::new(binary())
        .arg("replay")
        .arg("--data")
        .arg(data)
        .arg("verify")
        .output()
        .map_err(|e| e.to_string())?;
    let text = String::from_utf8_lossy(&output.stdout).into_owned();
    if !output.status.success() {
        return Err(format!(
            "replay verify: {text}{}",
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    Ok(text)
}

/// How often the hub logged `line`.
fn logged(log: &Path, line: &str) -> HarnessResult<usize> {
    let text = std::fs::read_to_string(log).map_err(|e| e.to_string())?;
    Ok(text.matches(line).count())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_disk_answers_507_keeps_reads_and_resumes_without_a_restart() -> HarnessResult<()> {
    let Some(tmpfs) = mount_tmpfs()? else {
        return Ok(());
    };
    let outside = tempfile::tempdir().map_err(|e| e.to_string())?;
    let hub_log = outside.path().join("hub.log");
    let data = tmpfs.dir.path().join("data");
    let hub = HubProcess::start_logged(&binary(), &data, &["--checkpoint-every", "20"], &hub_log)?;
    let pid = hub.pid();
    let mut run = Run {
        hub: &hub,
        client: flotilla_tests::support::http_client(),
        url: hub.url.clone(),
        data: data.clone(),
        acked: BTreeMap::new(),
    };
    publish(&mut run).await?;

    let filler = tmpfs.dir.path().join("filler");
    let filled = fill_up(&filler)?;
    let refused = append_until_refused(&mut run).await?;
    assert_insufficient_storage(
        StatusCode::INSUFFICIENT_STORAGE,
        &refused,
        &data,
        "the first",
    );
    // Whatever the hub freed meanwhile (a checkpoint it could not finish) is taken too.
    fill_up(&filler)?;
    writes_refused(&mut run).await?;
    reads_answered(&run).await?;
    // Full for a while: the writer keeps trying and never exits.
    tokio::time::sleep(Duration::from_secs(3)).await;
    reads_answered(&run).await?;

    std::fs::remove_file(&filler).map_err(|e| e.to_string())?;
    let resumed = writes_resume(&mut run).await?;
    assert_eq!(hub.pid(), pid);
    assert!(
        Path::new(&format!("/proc/{pid}")).exists(),
        "the hub restarted"
    );
    caught_up(&run).await?;
    let acked = run.acked;
    hub.stop()?;

    assert_eq!(
        logged(&hub_log, FULL_LINE)?,
        1,
        "the start of the condition, once"
    );
    assert_eq!(logged(&hub_log, ROOM_LINE)?, 1, "its end, once");
    each_acknowledged_once(&data, &acked).await?;
    let verified = replay_verify(&data)?;
    assert!(verified.contains("verified"), "{verified}");
    println!(
        "disk_full: {} acknowledged events kept; filler {filled} bytes; writes resumed {resumed:?} \
         after the filler was deleted",
        acked.len()
    );
    Ok(())
}

/// An apply of a ConfigMap of [`PAYLOAD_BYTES`], for the in-process hub.
fn envelope(name: &str) -> Envelope {
    let manifest = config_map(name, &"q".repeat(PAYLOAD_BYTES)).to_string();
    Envelope::new(
        uuid::Uuid::now_v7(),
        chrono::Utc::now(),
        "test",
        Input::Apply { manifest },
    )
}

/// Submits large events until the log refuses one for want of room; the sequences taken.
async fn submit_until_full(hub: &Hub<RedbLog>, label: &str) -> HarnessResult<Vec<u64>> {
    let mut taken = Vec::new();
    for n in 0..FILL_APPENDS_MAX {
        match hub.submit(vec![envelope(&format!("{label}-{n}"))]).await {
            Ok(appended) => taken.extend(appended.iter().map(|a| a.seq)),
            Err(HubError::Log(LogError::StorageFull { .. })) => return Ok(taken),
            Err(error) => return Err(format!("{label}: {error}")),
        }
    }
    Err(format!("{label}: the disk never filled up"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_writer_loop_waits_out_a_full_disk_and_stops_cleanly_during_one() -> HarnessResult<()> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let plan = FaultPlan::default();
    let backends = plan.clone();
    let options = RedbOptions {
        space_probe_interval: Duration::from_millis(50),
        ..RedbOptions::default()
    };
    let log = RedbLog::open_creating_with(
        &dir.path().join("log.redb"),
        move |at: &Path| backends.backend(at),
        options,
    )
    .map_err(|e| e.to_string())?;
    let hub = Hub::open(Arc::new(log), HubConfig::default())
        .await
        .map_err(|e| e.to_string())?;
    let writer = tokio::spawn({
        let hub = hub.clone();
        async move { hub.run_writer().await }
    });

    plan.fill_disk();
    let taken = submit_until_full(&hub, "first").await?;
    // Full for a while: the writer (and the decisions of what it folded) waits, and never exits.
    tokio::time::sleep(Duration::from_millis(500)).await;
    if writer.is_finished() {
        let stopped = writer.await.map_err(|e| e.to_string())?;
        return Err(format!("the writer stopped on a full disk: {stopped:?}"));
    }
    plan.free_disk();
    let began = Instant::now();
    let last = loop {
        match hub.submit(vec![envelope("after")]).await {
            Ok(appended) => break appended[0].seq,
            Err(_) if began.elapsed() < RESUME_WITHIN => {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            Err(error) => return Err(format!("after space returned: {error}")),
        }
    };
    assert!(taken.iter().all(|seq| *seq < last));
    assert!(
        hub.wait_folded(last, RESUME_WITHIN).await,
        "not folded and recorded"
    );
    let decided = hub
        .log()
        .last_decided_seq()
        .await
        .map_err(|e| e.to_string())?;
    assert_eq!(decided, last, "every round recorded");

    // Stopped while full: the final checkpoint cannot be written, and that is not a failure.
    plan.fill_disk();
    submit_until_full(&hub, "second").await?;
    hub.shutdown();
    let stopped = tokio::time::timeout(RESUME_WITHIN, writer)
        .await
        .map_err(|_| "the writer did not stop")?
        .map_err(|e| e.to_string())?;
    stopped.map_err(|e| format!("the writer stopped with an error: {e}"))
}
