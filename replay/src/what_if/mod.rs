//! What would have happened had some objects been different: [`what_if`] forks the state at a
//! recorded input, applies the changed objects there, re-feeds the recorded facts that still
//! apply, and sets the fork's rollouts beside the recording's.
//!
//! The contract:
//! - **The fork point.** The state after input `from_seq`, folded as [`crate::fold_to`] does.
//!   The changed objects are applied there, in the order given, as `apply` inputs at that
//!   input's time (source [`WHAT_IF_SOURCE`]); a change the hub would reject fails the what-if.
//! - **What is re-fed**, input by input in the recorded order, with the recorded times:
//!   heartbeats, approvals, ticks and leaves always; applies and deletes of other objects
//!   always; applies and deletes of a changed object never (the change replaces them); a
//!   work report only when the fork's binding of that placement and cluster carries the
//!   report's resource index (the recording's binding index when the report names none) with
//!   the same content (the resource snapshot's hash on both sides), since a report on other
//!   work is no fact about the fork. Records the log rejected (undecodable, duplicates) are
//!   not re-fed.
//! - **What is compared.** Per placement and cluster, the course on each side: its resource
//!   index and status at the fork point and at every change after it, labelled with the
//!   recorded input that caused it; when it got its side's final index and was ready on it;
//!   whether the rollout finished (and since when) or stalled (since when, and who is behind).
//!   A cluster the fork gave work the recording holds no report on is marked
//!   ([`ClusterComparison::unrecorded`]): from there on the fork can only guess it.
//! - **Deterministic**: ids of the fork's inputs derive from the fork point, every map is
//!   ordered; the same log and changes give the same [`WhatIf`], text and JSON.
//!
//! Limits: a report is matched to the fork's work by resource index and snapshot hash, not by
//! the override snapshots the work was rendered with; the fork knows only recorded facts, so
//! a cluster it gives work nobody reported on stays pending (and is marked); every placement's
//! bindings are looked at after every input on both sides, so the cost grows with bindings ×
//! inputs after the fork point.

mod course;
mod render;

use std::collections::BTreeSet;

use chrono::{DateTime, Utc};
use flotilla_core::model::{
    CLUSTER_RESOURCE_PLACEMENT, ObjectKey, PLACEMENT_GROUP, RESOURCE_PLACEMENT,
};
use flotilla_core::query::manifest::parse_manifest;
use flotilla_core::wire::LogRecord;
use flotilla_core::{
    Decision, Envelope, Input, ObjectRef, RESOURCE_INDEX_CURRENT, State, WorkReport,
};
use flotilla_eventstore::{LogReader, StoredEvent};
use serde::Serialize;
use serde_json::Value;
use uuid::Uuid;

pub use course::{COURSE_STEPS_MAX, Course, Look, Moment, Outcome, Status, Step, look_text};

use crate::bisect::walk::Walk;
use crate::{Folder, ReplayError, fold_to};
use course::Observer;

/// Source of the fork's own applies.
pub const WHAT_IF_SOURCE: &str = "what-if";
/// Most changed objects one what-if applies.
pub const CHANGED_OBJECTS_MAX: usize = 100;

/// A what-if's result: both sides of every placement whose rollout moved on either.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct WhatIf {
    /// The fork point.
    pub from: Moment,
    /// The last recorded input compared.
    pub until_seq: u64,
    /// The changed objects (`Kind/[namespace/]name`), in the order applied.
    pub changed: Vec<String>,
    /// What happened to the recorded inputs after the fork point.
    pub refed: Refed,
    /// Placements whose bindings changed on either side, in key order.
    pub placements: Vec<PlacementComparison>,
}

/// Counts of the recorded inputs after the fork point.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Refed {
    /// Recorded inputs after the fork point.
    pub recorded: u64,
    /// Re-fed to the fork.
    pub kept: u64,
    /// Applies and deletes of a changed object, replaced by the change.
    pub dropped_changes: u64,
    /// Work reports on work the fork did not give.
    pub dropped_reports: u64,
    /// Records the log rejected (undecodable, duplicate events).
    pub skipped_records: u64,
    /// Re-fed inputs the fork rejected while the recording did not (an approval of a request
    /// the fork never made, a report the fork finds stale).
    pub refused: u64,
}

/// One placement on both sides.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PlacementComparison {
    /// `Kind/[namespace/]name`.
    pub placement: String,
    /// How the recording's rollout ended.
    pub recorded: Outcome,
    /// How the fork's would have.
    pub what_if: Outcome,
    /// Every cluster either side had a binding for, by name.
    pub clusters: Vec<ClusterComparison>,
}

/// One cluster of a placement on both sides.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ClusterComparison {
    /// The member cluster.
    pub cluster: String,
    /// Its course in the recording.
    pub recorded: Course,
    /// Its course in the fork.
    pub what_if: Course,
    /// Resource indexes the fork gave it on which no recorded report was re-fed: no recorded
    /// fact says how it would have fared.
    pub unrecorded: Vec<u64>,
}

/// Why a what-if could not run.
#[derive(Debug, thiserror::Error)]
pub enum WhatIfError {
    /// The log could not be folded.
    #[error(transparent)]
    Replay(#[from] ReplayError),
    /// No changed object, or more than [`CHANGED_OBJECTS_MAX`].
    #[error("a what-if applies 1 to {CHANGED_OBJECTS_MAX} objects, not {0}")]
    ObjectCount(usize),
    /// A changed object is not a manifest the hub accepts.
    #[error("changed object {position}: {message}")]
    Invalid {
        /// Its position in the list, from 1.
        position: usize,
        /// What is wrong, with the field.
        message: String,
    },
    /// The fork point is past the log's end.
    #[error("the log ends at input {last}; there is no input {from}")]
    PastEnd {
        /// The fork point asked for.
        from: u64,
        /// The log's last input.
        last: u64,
    },
    /// The log holds no event to take a time from.
    #[error("the log holds no event at or after input {0} to take the fork's time from")]
    NoTime(u64),
    /// The hub rejects a changed object at the fork point.
    #[error("{object} is rejected at input {seq}: {message}")]
    Rejected {
        /// The object.
        object: String,
        /// The fork point.
        seq: u64,
        /// The rejection.
        message: String,
    },
}

/// Forks at `from_seq`, applies `changed_objects` (manifests as JSON), re-feeds what still
/// applies up to the log's end, and compares (module docs).
///
/// # Errors
/// See [`WhatIfError`].
pub async fn what_if<L: LogReader>(
    log: &L,
    from_seq: u64,
    changed_objects: Vec<Value>,
) -> Result<WhatIf, WhatIfError> {
    if changed_objects.is_empty() || changed_objects.len() > CHANGED_OBJECTS_MAX {
        return Err(WhatIfError::ObjectCount(changed_objects.len()));
    }
    let changes = parse_changes(&changed_objects)?;
    let last = log.last_seq().await.map_err(ReplayError::from)?;
    if from_seq > last {
        return Err(WhatIfError::PastEnd {
            from: from_seq,
            last,
        });
    }
    let base = fold_to(log, from_seq).await?;
    if base.seq != from_seq {
        return Err(ReplayError::Incomplete { seq: base.seq + 1 }.into());
    }
    let from = Moment {
        seq: from_seq,
        time: fork_time(log, &base).await?,
    };
    let mut sides = Sides::new(base, from);
    sides.apply_changes(&changes, from)?;
    let refed = sides.refeed(log, &changes, last).await?;
    Ok(sides.compare(from, last, &changes, refed))
}

/// The time of the fork point: its state's time, or the first event's after it.
async fn fork_time<L: LogReader>(log: &L, base: &Folder) -> Result<DateTime<Utc>, WhatIfError> {
    if let Some(now) = base.state.now() {
        return Ok(now);
    }
    let records = log
        .read(base.seq + 1, crate::READ_BATCH_MAX)
        .await
        .map_err(ReplayError::from)?;
    records
        .iter()
        .find_map(|r| r.event().map(|e| e.time))
        .ok_or(WhatIfError::NoTime(base.seq))
}

/// Each change's key and canonical manifest text.
fn parse_changes(objects: &[Value]) -> Result<Vec<(ObjectKey, String)>, WhatIfError> {
    objects
        .iter()
        .enumerate()
        .map(|(i, object)| {
            let manifest = parse_manifest(object).map_err(|e| WhatIfError::Invalid {
                position: i + 1,
                message: e.to_string(),
            })?;
            Ok((manifest.key, object.to_string()))
        })
        .collect()
}

/// The recording and the fork, folded side by side.
struct Sides {
    recording: Folder,
    fork: Folder,
    recorded: Observer,
    forked: Observer,
    /// `(placement, cluster, index)` of every report re-fed to the fork.
    reported: BTreeSet<(ObjectKey, String, u64)>,
}

/// What to do with one recorded input.
enum Refeed {
    Keep,
    DropChange,
    DropReport,
}

impl Sides {
    fn new(base: Folder, from: Moment) -> Self {
        let mut sides = Self {
            recording: base.clone(),
            fork: base,
            recorded: Observer::default(),
            forked: Observer::default(),
            reported: BTreeSet::new(),
        };
        sides.recorded.observe(&sides.recording.state, from);
        sides.forked.observe(&sides.fork.state, from);
        sides
    }

    /// Folds one input into the fork, numbered after the fork's own last.
    fn fold_fork(&mut self, envelope: Envelope) -> Result<Vec<Decision>, ReplayError> {
        let record = StoredEvent {
            seq: self.fork.seq + 1,
            record: LogRecord::Event(envelope),
        };
        Ok(self.fork.fold(&record)?)
    }

    fn apply_changes(
        &mut self,
        changes: &[(ObjectKey, String)],
        from: Moment,
    ) -> Result<(), WhatIfError> {
        for (position, (key, manifest)) in changes.iter().enumerate() {
            let id = fork_id(from.seq, position);
            let input = Input::Apply {
                manifest: manifest.clone(),
            };
            let decisions = self.fold_fork(Envelope::new(id, from.time, WHAT_IF_SOURCE, input))?;
            if let Some(message) = decisions.iter().find_map(|d| match d {
                Decision::Rejected { code, message } => {
                    Some(format!("{}: {message}", code.as_str()))
                }
                _ => None,
            }) {
                return Err(WhatIfError::Rejected {
                    object: key.display(),
                    seq: from.seq,
                    message,
                });
            }
        }
        self.forked.observe(&self.fork.state, from);
        Ok(())
    }

    /// Walks the recorded inputs after the fork point, folding each into the recording and,
    /// when it still applies, into the fork.
    async fn refeed<L: LogReader>(
        &mut self,
        log: &L,
        changes: &[(ObjectKey, String)],
        last: u64,
    ) -> Result<Refed, WhatIfError> {
        let mut refed = Refed::default();
        let mut walk = Walk::new(log, last);
        let mut time = self.recording.state.now();
        loop {
            let Some(next) = walk.peek(&self.recording).await? else {
                break;
            };
            let envelope = next.event().cloned();
            let verdict = envelope.as_ref().map(|e| self.judge(&e.payload, changes));
            let Some(stepped) = walk.step(&mut self.recording).await? else {
                break;
            };
            refed.recorded += 1;
            time = envelope.as_ref().map(|e| e.time).or(time);
            let at = Moment {
                seq: stepped.seq,
                time: time.unwrap_or_default(),
            };
            self.recorded.observe(&self.recording.state, at);
            let (Some(envelope), Some(verdict), false) =
                (envelope, verdict, stepped.is_record_verdict())
            else {
                refed.skipped_records += 1;
                continue;
            };
            match verdict {
                Refeed::DropChange => refed.dropped_changes += 1,
                Refeed::DropReport => refed.dropped_reports += 1,
                Refeed::Keep => {
                    if let Input::WorkReport(report) = &envelope.payload {
                        let index = self.fork_index(report);
                        let key = placement_key(report);
                        self.reported.insert((
                            key,
                            report.cluster.clone(),
                            index.unwrap_or_default(),
                        ));
                    }
                    let decisions = self.fold_fork(envelope)?;
                    if rejects(&decisions) && !rejects(&stepped.decisions) {
                        refed.refused += 1;
                    }
                    self.forked.observe(&self.fork.state, at);
                    refed.kept += 1;
                }
            }
        }
        if self.recording.seq < last {
            return Err(ReplayError::Incomplete {
                seq: self.recording.seq + 1,
            }
            .into());
        }
        Ok(refed)
    }

    /// Whether a recorded input still applies to the fork (module docs), judged before the
    /// recording folds it.
    fn judge(&self, input: &Input, changes: &[(ObjectKey, String)]) -> Refeed {
        match input {
            Input::Apply { manifest } => {
                let key = serde_json::from_str::<Value>(manifest)
                    .ok()
                    .and_then(|v| parse_manifest(&v).ok())
                    .map(|m| m.key);
                if key.is_some_and(|key| changes.iter().any(|(k, _)| *k == key)) {
                    Refeed::DropChange
                } else {
                    Refeed::Keep
                }
            }
            Input::Delete { target } => {
                if changes.iter().any(|(k, _)| names(target, k)) {
                    Refeed::DropChange
                } else {
                    Refeed::Keep
                }
            }
            Input::WorkReport(report) => {
                if self.fork_carries(report) {
                    Refeed::Keep
                } else {
                    Refeed::DropReport
                }
            }
            Input::Heartbeat(_)
            | Input::Approve { .. }
            | Input::Tick
            | Input::Leave { .. }
            | Input::AnalysisResult(_) => Refeed::Keep,
        }
    }

    /// The index a report is about: its own, or the recording's binding's when it names none.
    fn report_index(&self, report: &WorkReport) -> Option<u64> {
        if report.resource_index != RESOURCE_INDEX_CURRENT {
            return Some(report.resource_index);
        }
        binding_index(&self.recording.state, report)
    }

    fn fork_index(&self, report: &WorkReport) -> Option<u64> {
        binding_index(&self.fork.state, report)
    }

    /// The fork's binding carries the reported work: the same index, with the same content.
    fn fork_carries(&self, report: &WorkReport) -> bool {
        let Some(index) = self.report_index(report) else {
            return false;
        };
        if self.fork_index(report) != Some(index) {
            return false;
        }
        let key = placement_key(report);
        let hash = |state: &State| {
            state
                .placements()
                .get(&key)?
                .resource_snapshots
                .iter()
                .find(|s| s.index == index)
                .map(|s| s.resource_hash.clone())
        };
        match (hash(&self.recording.state), hash(&self.fork.state)) {
            (Some(recorded), Some(forked)) => recorded == forked,
            // The recording pruned that snapshot: the index is all there is to compare.
            _ => true,
        }
    }

    fn compare(
        mut self,
        from: Moment,
        until_seq: u64,
        changes: &[(ObjectKey, String)],
        refed: Refed,
    ) -> WhatIf {
        self.recorded.settle(&self.recording.state);
        self.forked.settle(&self.fork.state);
        let mut keys: BTreeSet<ObjectKey> = self.recorded.courses.keys().cloned().collect();
        keys.extend(self.forked.courses.keys().cloned());
        let placements = keys
            .into_iter()
            .filter(|key| self.moved(key))
            .map(|key| self.compare_placement(&key, from))
            .collect();
        WhatIf {
            from,
            until_seq,
            changed: changes.iter().map(|(k, _)| k.display()).collect(),
            refed,
            placements,
        }
    }

    /// Whether either side's bindings of the placement changed after the fork point.
    fn moved(&self, key: &ObjectKey) -> bool {
        [&self.recorded, &self.forked].iter().any(|side| {
            side.courses.get(key).is_some_and(|courses| {
                courses
                    .values()
                    .any(|c| c.steps.len() > 1 || c.steps_dropped > 0)
            })
        })
    }

    fn compare_placement(&self, key: &ObjectKey, from: Moment) -> PlacementComparison {
        let empty = std::collections::BTreeMap::new();
        let recorded = self.recorded.courses.get(key).unwrap_or(&empty);
        let forked = self.forked.courses.get(key).unwrap_or(&empty);
        let clusters: BTreeSet<&String> = recorded.keys().chain(forked.keys()).collect();
        let clusters = clusters
            .into_iter()
            .map(|cluster| {
                let what_if = forked.get(cluster).cloned().unwrap_or_default();
                ClusterComparison {
                    cluster: cluster.clone(),
                    recorded: recorded.get(cluster).cloned().unwrap_or_default(),
                    unrecorded: self.unrecorded(key, cluster, &what_if),
                    what_if,
                }
            })
            .collect();
        PlacementComparison {
            placement: key.display(),
            recorded: self.recorded.outcome(&self.recording.state, key, from),
            what_if: self.forked.outcome(&self.fork.state, key, from),
            clusters,
        }
    }

    /// Indexes the fork gave the cluster after the fork point with no report re-fed on them.
    fn unrecorded(&self, key: &ObjectKey, cluster: &str, course: &Course) -> Vec<u64> {
        let given: BTreeSet<u64> = course
            .steps
            .windows(2)
            .filter(|pair| pair[1].look.resource_index != pair[0].look.resource_index)
            .filter_map(|pair| pair[1].look.resource_index)
            .collect();
        given
            .into_iter()
            .filter(|index| {
                !self
                    .reported
                    .contains(&(key.clone(), cluster.to_owned(), *index))
            })
            .collect()
    }
}

fn rejects(decisions: &[Decision]) -> bool {
    decisions
        .iter()
        .any(|d| matches!(d, Decision::Rejected { .. }))
}

/// A deterministic id for the fork's `position`-th apply at `seq`.
fn fork_id(seq: u64, position: usize) -> Uuid {
    let mut bytes = [0_u8; 16];
    bytes[..8].copy_from_slice(&seq.to_be_bytes());
    bytes[8..].copy_from_slice(&(position as u64).to_be_bytes());
    Uuid::new_v8(bytes)
}

/// Whether a delete's target names the key (a target without a group means the kind's).
fn names(target: &ObjectRef, key: &ObjectKey) -> bool {
    target.kind == key.kind
        && target.name == key.name
        && target.namespace.as_deref().unwrap_or_default() == key.namespace
        && target
            .group
            .as_ref()
            .is_none_or(|group| *group == key.group)
}

fn placement_key(report: &WorkReport) -> ObjectKey {
    match &report.namespace {
        Some(namespace) => ObjectKey::namespaced(
            PLACEMENT_GROUP,
            RESOURCE_PLACEMENT,
            namespace,
            &report.placement,
        ),
        None => ObjectKey::cluster_scoped(
            PLACEMENT_GROUP,
            CLUSTER_RESOURCE_PLACEMENT,
            &report.placement,
        ),
    }
}

/// The resource index the reporting cluster's binding carries in `state`.
fn binding_index(state: &State, report: &WorkReport) -> Option<u64> {
    state
        .placements()
        .get(&placement_key(report))?
        .bindings
        .get(report.cluster.as_str())?
        .resource_index
}
