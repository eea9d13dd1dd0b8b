//! Small logs built in the test: a fleet of member clusters, a namespace with a ConfigMap
//! placed by a RollingUpdate `ClusterResourcePlacement`, and the facts agents send — with
//! event times and ids the test chooses, so every sequence and time is exact.

#![allow(dead_code, missing_docs)]

pub mod staged;

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use chrono::{DateTime, Duration, TimeZone, Utc};
use flotilla_core::{Envelope, Heartbeat, Input, WorkReport};
use flotilla_eventstore::memory_log::MemoryLog;
use flotilla_eventstore::{
    AppendTime, Checkpoint, DecisionBatch, EventLog, LogError, LogReader, StoredEvent,
};
use flotilla_replay::Folder;
use serde_json::{Value, json};
use uuid::Uuid;

pub const SOURCE: &str = "test";

/// Events with the test's clock and ids.
pub struct History {
    pub events: Vec<Envelope>,
    pub now: DateTime<Utc>,
}

pub fn start() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2025, 3, 12, 23, 0, 0)
        .single()
        .expect("a valid time")
}

impl History {
    pub fn new() -> Self {
        Self {
            events: Vec::new(),
            now: start(),
        }
    }

    /// The sequence the next event gets.
    pub fn next_seq(&self) -> u64 {
        self.events.len() as u64 + 1
    }

    pub fn push(&mut self, input: Input) -> u64 {
        let id = Uuid::new_v8(u128::from(self.next_seq()).to_be_bytes());
        self.events.push(Envelope::new(id, self.now, SOURCE, input));
        self.events.len() as u64
    }

    pub fn advance(&mut self, seconds: i64) {
        self.now += Duration::seconds(seconds);
    }

    pub fn apply(&mut self, manifest: &Value) -> u64 {
        self.push(Input::Apply {
            manifest: manifest.to_string(),
        })
    }

    pub fn heartbeat(&mut self, cluster: &str) -> u64 {
        self.push(Input::Heartbeat(Heartbeat {
            cluster: cluster.into(),
            ..Heartbeat::default()
        }))
    }

    pub fn tick(&mut self) -> u64 {
        self.push(Input::Tick)
    }

    pub fn approve(&mut self, name: &str) -> u64 {
        self.push(Input::Approve {
            name: name.into(),
            namespace: None,
            reason: None,
            message: None,
        })
    }

    /// A work report on `crp-1`: applied and available as given.
    pub fn report(&mut self, cluster: &str, index: u64, applied: bool, available: bool) -> u64 {
        self.report_on("crp-1", cluster, index, (applied, available))
    }

    /// A work report on a placement: `(applied, available)` as given.
    pub fn report_on(
        &mut self,
        placement: &str,
        cluster: &str,
        index: u64,
        (applied, available): (bool, bool),
    ) -> u64 {
        self.push(Input::WorkReport(WorkReport {
            cluster: cluster.into(),
            placement: placement.into(),
            namespace: None,
            resource_index: index,
            applied: Some(applied),
            available: Some(available),
            trackable: true,
            message: String::new(),
            failed_manifests: Vec::new(),
            differences: flotilla_core::Differences::default(),
        }))
    }

    /// A work report on a placement whose apply failed on `failure`.
    pub fn report_failed(
        &mut self,
        placement: &str,
        cluster: &str,
        index: u64,
        failure: flotilla_core::ManifestFailure,
    ) -> u64 {
        self.push(Input::WorkReport(WorkReport {
            cluster: cluster.into(),
            placement: placement.into(),
            namespace: None,
            resource_index: index,
            applied: Some(false),
            available: None,
            trackable: true,
            message: failure.message.clone(),
            failed_manifests: vec![failure],
            differences: flotilla_core::Differences::default(),
        }))
    }

    /// Four members, joined; the namespace `app` with ConfigMap `settings` at version 1.
    pub fn fleet(&mut self, clusters: &[&str]) {
        for cluster in clusters {
            self.apply(&member(cluster));
        }
        for cluster in clusters {
            self.heartbeat(cluster);
        }
        self.apply(&json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "app"}}));
        self.apply(&settings("1"));
    }

    /// A heartbeat from every cluster, then a tick, `seconds` later.
    pub fn quiet(&mut self, clusters: &[&str], seconds: i64) {
        self.advance(seconds);
        for cluster in clusters {
            self.heartbeat(cluster);
        }
        self.tick();
    }
}

pub fn member(name: &str) -> Value {
    json!({
        "apiVersion": "cluster.kubernetes-fleet.io/v1beta1",
        "kind": "MemberCluster",
        "metadata": {"name": name, "labels": {"env": "prod"}},
        "spec": {}
    })
}

pub fn settings(version: &str) -> Value {
    json!({
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "settings", "namespace": "app"},
        "data": {"version": version}
    })
}

/// `crp-1`: PickAll of namespace `app`, RollingUpdate with this `maxUnavailable`.
pub fn placement(max_unavailable: &Value) -> Value {
    json!({
        "apiVersion": "placement.kubernetes-fleet.io/v1",
        "kind": "ClusterResourcePlacement",
        "metadata": {"name": "crp-1"},
        "spec": {
            "resourceSelectors": [{"group": "", "kind": "Namespace", "version": "v1", "name": "app"}],
            "policy": {"placementType": "PickAll"},
            "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": max_unavailable, "maxSurge": 0}}
        }
    })
}

/// A log in memory holding `events`: replay reads it as it reads a file.
pub async fn memory_log(events: &[Envelope]) -> MemoryLog {
    let log = MemoryLog::new();
    log.append(events.to_vec(), AppendTime::AsGiven)
        .await
        .expect("the events append");
    log
}

/// A log that keeps a checkpoint every K inputs (the multi-checkpoint storage to come),
/// around a log in memory; it counts how many checkpoints were loaded.
pub struct Checkpointed {
    pub inner: Arc<MemoryLog>,
    pub checkpoints: Mutex<BTreeMap<u64, Checkpoint>>,
    /// Calls of `load_checkpoint_before` (each a decode on a real store).
    pub loads: AtomicU64,
}

impl Checkpointed {
    /// Folds the log and keeps the state after every `every`-th input.
    pub async fn new(inner: Arc<MemoryLog>, every: u64) -> Self {
        let last = inner.last_seq().await.expect("the log answers");
        let mut folder = Folder::default();
        let mut checkpoints = BTreeMap::new();
        let mut seq = every;
        while seq <= last {
            folder
                .catch_up(inner.as_ref(), seq)
                .await
                .expect("the log folds");
            checkpoints.insert(seq, folder.checkpoint().expect("the state encodes"));
            seq += every;
        }
        Self {
            inner,
            checkpoints: Mutex::new(checkpoints),
            loads: AtomicU64::new(0),
        }
    }
}

impl LogReader for Checkpointed {
    async fn read(&self, from: u64, max: usize) -> Result<Vec<StoredEvent>, LogError> {
        self.inner.read(from, max).await
    }

    async fn last_seq(&self) -> Result<u64, LogError> {
        self.inner.last_seq().await
    }

    async fn wait_for(&self, after: u64, timeout: std::time::Duration) -> Result<u64, LogError> {
        self.inner.wait_for(after, timeout).await
    }

    async fn read_decisions(&self, from: u64, max: usize) -> Result<Vec<DecisionBatch>, LogError> {
        self.inner.read_decisions(from, max).await
    }

    async fn last_decided_seq(&self) -> Result<u64, LogError> {
        self.inner.last_decided_seq().await
    }

    async fn load_checkpoint(&self) -> Result<Option<Checkpoint>, LogError> {
        let kept = self.checkpoints.lock().expect("not poisoned");
        Ok(kept.values().next_back().cloned())
    }

    async fn load_checkpoint_before(&self, seq: u64) -> Result<Option<Checkpoint>, LogError> {
        self.loads.fetch_add(1, Ordering::Relaxed);
        let kept = self.checkpoints.lock().expect("not poisoned");
        Ok(kept.range(..=seq).next_back().map(|(_, c)| c.clone()))
    }

    async fn first_seq_of(&self, ids: &[Uuid]) -> Result<BTreeMap<Uuid, u64>, LogError> {
        self.inner.first_seq_of(ids).await
    }
}
