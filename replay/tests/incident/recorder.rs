//! A small hub for the tests: appends inputs to a log in memory at exact event times, folds
//! them as the hub's writer does and records their decisions, so the log reads back as one a
//! hub wrote.

use chrono::{DateTime, Duration, Utc};
use flotilla_core::wire::DECISION_VERSION;
use flotilla_core::{Envelope, Heartbeat, Input, State, WorkReport};
use flotilla_eventstore::memory_log::MemoryLog;
use flotilla_eventstore::{AppendTime, DecisionBatch, EventLog, LogReader};
use flotilla_replay::Folder;
use serde_json::Value;
use uuid::Uuid;

/// Who the test's inputs come from.
const SOURCE: &str = "test";

pub struct Recorder {
    pub log: MemoryLog,
    folder: Folder,
    now: DateTime<Utc>,
    issued: u128,
}

impl Recorder {
    /// An empty log whose clock starts at `start` (RFC 3339).
    pub fn new(start: &str) -> Self {
        Self {
            log: MemoryLog::new(),
            folder: Folder::default(),
            now: start.parse().expect("an RFC 3339 start"),
            issued: 0,
        }
    }

    pub fn advance(&mut self, secs: i64) {
        self.now += Duration::seconds(secs);
    }

    pub fn state(&self) -> &State {
        &self.folder.state
    }

    pub fn seq(&self) -> u64 {
        self.folder.seq
    }

    /// Appends the inputs at the current time, folds them and records their decisions; the
    /// sequence of the last.
    pub async fn send(&mut self, inputs: Vec<Input>) -> u64 {
        let envelopes: Vec<Envelope> = inputs
            .into_iter()
            .map(|input| {
                self.issued += 1;
                Envelope::new(Uuid::from_u128(self.issued), self.now, SOURCE, input)
            })
            .collect();
        let count = envelopes.len();
        self.log
            .append(envelopes, AppendTime::AsGiven)
            .await
            .expect("appended");
        let first = self.folder.seq + 1;
        let events = self.log.read(first, count).await.expect("read back");
        let folded = self
            .folder
            .fold_page(&self.log, &events, &[])
            .await
            .expect("folded");
        self.log
            .record_folded(&folded.first_seen)
            .await
            .expect("ids recorded");
        let decisions = folded
            .decisions
            .into_iter()
            .filter(|(_, decided)| !decided.is_empty())
            .collect();
        let batch = DecisionBatch {
            version: DECISION_VERSION,
            first_input_seq: first,
            last_input_seq: self.folder.seq,
            decisions,
        };
        self.log.append_decisions(&batch).await.expect("decided");
        self.folder.seq
    }

    /// Applies manifests (JSON), one input each.
    pub async fn apply(&mut self, manifests: &[Value]) -> u64 {
        let inputs = manifests
            .iter()
            .map(|manifest| Input::Apply {
                manifest: manifest.to_string(),
            })
            .collect();
        self.send(inputs).await
    }

    pub async fn heartbeats(&mut self, clusters: &[&str]) -> u64 {
        let inputs = clusters
            .iter()
            .map(|cluster| {
                Input::Heartbeat(Heartbeat {
                    cluster: (*cluster).to_owned(),
                    ..Heartbeat::default()
                })
            })
            .collect();
        self.send(inputs).await
    }

    /// A report on a ClusterResourcePlacement's work at `index`: applied, available or not.
    pub async fn report(&mut self, cluster: &str, placement: &str, index: u64, available: bool) {
        let report = WorkReport {
            cluster: cluster.to_owned(),
            placement: placement.to_owned(),
            namespace: None,
            resource_index: index,
            applied: Some(true),
            available: Some(available),
            trackable: true,
            message: if available {
                String::new()
            } else {
                "deployment web: 0 of 2 replicas available".to_owned()
            },
            failed_manifests: Vec::new(),
            differences: flotilla_core::Differences::default(),
        };
        self.send(vec![Input::WorkReport(report)]).await;
    }

    pub async fn approve(&mut self, name: &str) -> u64 {
        let input = Input::Approve {
            name: name.to_owned(),
            namespace: None,
            reason: None,
            message: None,
        };
        self.send(vec![input]).await
    }

    /// Appends heartbeats without deciding them: a log whose writer has not caught up.
    pub async fn heartbeats_undecided(&mut self, clusters: &[&str]) {
        let envelopes = clusters
            .iter()
            .map(|cluster| {
                self.issued += 1;
                let beat = Input::Heartbeat(Heartbeat {
                    cluster: (*cluster).to_owned(),
                    ..Heartbeat::default()
                });
                Envelope::new(Uuid::from_u128(self.issued), self.now, SOURCE, beat)
            })
            .collect();
        self.log
            .append(envelopes, AppendTime::AsGiven)
            .await
            .expect("appended");
    }
}

/// A MemberCluster with these labels.
pub fn member(name: &str, labels: &Value) -> Value {
    serde_json::json!({
        "apiVersion": "cluster.kubernetes-fleet.io/v1beta1",
        "kind": "MemberCluster",
        "metadata": {"name": name, "labels": labels},
        "spec": {}
    })
}

impl Recorder {
    /// Saves a checkpoint of the state folded so far, as the hub's writer does every K inputs.
    pub async fn checkpoint(&self) {
        let checkpoint = self.folder.checkpoint().expect("the state encodes");
        self.log
            .save_checkpoint(&checkpoint)
            .await
            .expect("checkpoint saved");
    }

    pub async fn tick(&mut self) -> u64 {
        self.send(vec![Input::Tick]).await
    }
}
