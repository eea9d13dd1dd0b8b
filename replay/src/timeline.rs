//! The timeline of one placement, member cluster or staged update run: every input that touched
//! it, in log order, with its event time, source and the decisions it caused.
//!
//! Contract:
//! - A timeline covers the inputs **after** point `after` up to and including point `until`
//!   (both default to the log's ends), the same span a [`crate::diff`] between the two points
//!   summarizes.
//! - An input touches a subject when its payload names it (a heartbeat or report of the
//!   cluster, an apply or delete of the object, an approval of one of the run's requests) or
//!   one of its decisions does (a binding of the placement to the cluster, a stage of the run
//!   starting). A run's decisions also touch the placement it rolls out. With several subjects
//!   given, an input must touch every one of them.
//! - The decisions shown are the recorded ones; inputs the log has no decisions for yet (the
//!   writer has not decided them) are folded again and marked `recorded: false`. An input whose
//!   payload names every subject shows all its decisions; one that only touched the subjects
//!   through some decisions shows those, and counts the others.
//! - Text: one line per input as `flotilla events` prints it (`#seq time source kind subject`),
//!   its decisions indented beneath. Deterministic: the order is the log's, times are the log's.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use flotilla_core::model::{CLUSTER_GROUP, MEMBER_CLUSTER, ObjectKey, PLACEMENT_GROUP};
use flotilla_core::staged::{self, Scope};
use flotilla_core::{Decision, Decisions, Envelope, Input, State};
use flotilla_eventstore::{EventLog, StoredEvent};
use flotilla_projections::{decision_line, event_line};
use serde::Serialize;
use serde_json::Value;

use crate::seek::{Point, fold_to, resolve};
use crate::{Folder, READ_BATCH_MAX, ReplayError};

/// A `ClusterResourcePlacement` (no namespace) or a `ResourcePlacement` in a namespace.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PlacementRef {
    /// The `ResourcePlacement`'s namespace; `None` for a `ClusterResourcePlacement`.
    pub namespace: Option<String>,
    /// Its name.
    pub name: String,
}

impl PlacementRef {
    /// The placement's object key.
    #[must_use]
    pub fn key(&self) -> ObjectKey {
        Scope {
            namespace: self.namespace.clone().unwrap_or_default(),
            run_name: String::new(),
        }
        .placement_key(&self.name)
    }
}

/// A `ClusterStagedUpdateRun` (no namespace) or a `StagedUpdateRun` in a namespace.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RunRef {
    /// The `StagedUpdateRun`'s namespace; `None` for a `ClusterStagedUpdateRun`.
    pub namespace: Option<String>,
    /// Its name.
    pub name: String,
}

impl RunRef {
    /// The run's object key.
    #[must_use]
    pub fn key(&self) -> ObjectKey {
        Scope {
            namespace: self.namespace.clone().unwrap_or_default(),
            run_name: self.name.clone(),
        }
        .run_key()
    }
}

/// What a timeline follows; every subject given must be touched.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct TimelineFilter {
    /// A placement.
    pub placement: Option<PlacementRef>,
    /// A member cluster.
    pub cluster: Option<String>,
    /// A staged update run.
    pub run: Option<RunRef>,
}

/// The inputs that touched the filter's subjects.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Timeline {
    /// The span starts after this input.
    pub after: u64,
    /// And ends with this one.
    pub until: u64,
    /// The inputs, in log order.
    pub entries: Vec<TimelineEntry>,
}

/// One input that touched the subjects.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TimelineEntry {
    /// Its sequence.
    pub seq: u64,
    /// Its event time (the log's).
    pub time: DateTime<Utc>,
    /// Who published it.
    pub source: String,
    /// Its kind (`apply`, `heartbeat`, `report`, …).
    pub input: String,
    /// Its line, as `flotilla events` prints it.
    pub line: String,
    /// Whether its decisions are the recorded ones (`false`: folded again).
    pub recorded: bool,
    /// The decisions shown.
    pub decisions: Vec<DecisionLine>,
    /// How many of its decisions touched none of the subjects and are not shown.
    pub decisions_omitted: usize,
}

/// One decision with its line.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DecisionLine {
    /// Its line, as `flotilla events` prints it.
    pub line: String,
    /// The decision.
    pub decision: Decision,
}

impl Timeline {
    /// One line per input, its decisions indented beneath.
    #[must_use]
    pub fn text(&self) -> String {
        let mut text = String::new();
        for entry in &self.entries {
            entry.write(&mut text);
        }
        if self.entries.is_empty() {
            text.push_str(&format!(
                "no input after #{} up to #{} touched it\n",
                self.after, self.until
            ));
        }
        text
    }
}

impl TimelineEntry {
    fn write(&self, text: &mut String) {
        text.push_str(&self.line);
        if !self.recorded {
            text.push_str(" (not decided yet: folded again)");
        }
        text.push('\n');
        for decision in &self.decisions {
            text.push_str(&format!("    {}\n", decision.line));
        }
        match self.decisions_omitted {
            0 => {}
            1 => text.push_str("    (1 other decision)\n"),
            count => text.push_str(&format!("    ({count} other decisions)\n")),
        }
    }
}

/// The timeline of the filter's subjects over the inputs after `after` up to `until` (`None`:
/// the log's start and end).
///
/// # Errors
/// A log read failure, or a fold failure where inputs have no recorded decisions.
pub async fn timeline<L: EventLog>(
    log: &L,
    filter: &TimelineFilter,
    after: Option<Point>,
    until: Option<Point>,
) -> Result<Timeline, ReplayError> {
    let after = match after {
        Some(point) => resolve(log, point).await?,
        None => 0,
    };
    let until = resolve(log, until.unwrap_or(Point::Seq(u64::MAX))).await?;
    let subjects = Subjects::of(filter);
    let mut known = if subjects.needs_relations() && after > 0 {
        Relations::of(&fold_to(log, after).await?.state)
    } else {
        Relations::default()
    };
    let mut inputs = Inputs::new(log, after, until).await?;
    let mut entries = Vec::new();
    loop {
        let page = inputs.next_page().await?;
        if page.is_empty() {
            break;
        }
        for input in page {
            known.learn(&input);
            if let Some(entry) = subjects.entry(&input, &known) {
                entries.push(entry);
            }
        }
    }
    Ok(Timeline {
        after,
        until,
        entries,
    })
}

/// The subjects as object keys.
#[derive(Debug, Clone, Default)]
pub(crate) struct Subjects {
    pub(crate) placement: Option<ObjectKey>,
    pub(crate) cluster: Option<String>,
    pub(crate) run: Option<ObjectKey>,
}

impl Subjects {
    pub(crate) fn of(filter: &TimelineFilter) -> Self {
        Self {
            placement: filter.placement.as_ref().map(PlacementRef::key),
            cluster: filter.cluster.clone(),
            run: filter.run.as_ref().map(RunRef::key),
        }
    }

    /// Whether matching needs to know which run belongs to which placement and request.
    fn needs_relations(&self) -> bool {
        self.placement.is_some() || self.run.is_some()
    }

    /// Which subjects `about` names, as `(placement, cluster, run)`.
    fn named(&self, about: &About, known: &Relations) -> [bool; 3] {
        let run = about.run.clone().or_else(|| {
            about
                .request
                .as_ref()
                .and_then(|request| known.run_of_request(request))
        });
        let placement_of_run = run.as_ref().and_then(|run| known.runs.get(run));
        let placement = self.placement.as_ref().is_some_and(|wanted| {
            about.placement.as_ref() == Some(wanted) || placement_of_run == Some(wanted)
        });
        let cluster = self
            .cluster
            .as_ref()
            .is_some_and(|wanted| about.cluster.as_deref() == Some(wanted.as_str()));
        let run = self
            .run
            .as_ref()
            .is_some_and(|wanted| run.as_ref() == Some(wanted));
        [placement, cluster, run]
    }

    fn wanted(&self) -> [bool; 3] {
        [
            self.placement.is_some(),
            self.cluster.is_some(),
            self.run.is_some(),
        ]
    }

    /// The entry of an input that touches every subject, with the decisions shown.
    pub(crate) fn entry(&self, input: &LoggedInput, known: &Relations) -> Option<TimelineEntry> {
        let envelope = input.envelope.as_ref()?;
        let wanted = self.wanted();
        let payload = self.named(&About::of_input(&envelope.payload), known);
        let decisions: Vec<[bool; 3]> = input
            .decisions
            .iter()
            .map(|decision| self.named(&About::of_decision(decision), known))
            .collect();
        let touched = (0..3).all(|i| !wanted[i] || payload[i] || decisions.iter().any(|d| d[i]));
        if !touched {
            return None;
        }
        let whole = (0..3).all(|i| !wanted[i] || payload[i]);
        Some(entry_of(input, envelope, |index| {
            whole || decisions[index].iter().any(|named| *named)
        }))
    }
}

/// The entry of one input, showing the decisions `shown` keeps (by position).
pub(crate) fn entry_of(
    input: &LoggedInput,
    envelope: &Envelope,
    shown: impl Fn(usize) -> bool,
) -> TimelineEntry {
    let decisions: Vec<DecisionLine> = input
        .decisions
        .iter()
        .enumerate()
        .filter(|(index, _)| shown(*index))
        .map(|(_, decision)| DecisionLine {
            line: decision_line(input.seq, decision),
            decision: decision.clone(),
        })
        .collect();
    TimelineEntry {
        seq: input.seq,
        time: envelope.time,
        source: envelope.source.clone(),
        input: envelope.payload.kind_name().to_owned(),
        line: event_line(input.seq, envelope),
        recorded: input.recorded,
        decisions_omitted: input.decisions.len() - decisions.len(),
        decisions,
    }
}

/// What one payload or decision names.
#[derive(Debug, Default)]
pub(crate) struct About {
    pub(crate) placement: Option<ObjectKey>,
    pub(crate) cluster: Option<String>,
    pub(crate) run: Option<ObjectKey>,
    pub(crate) request: Option<ObjectKey>,
}

impl About {
    fn of_object(key: &ObjectKey) -> Self {
        let mut about = About::default();
        let unknown_group = key.group.is_empty();
        if key.kind == MEMBER_CLUSTER
            && key.namespace.is_empty()
            && (key.group == CLUSTER_GROUP || unknown_group)
        {
            about.cluster = Some(key.name.clone());
        } else if key.group == PLACEMENT_GROUP || unknown_group {
            let placement_group = in_group(key, PLACEMENT_GROUP);
            if is_placement(&placement_group) {
                about.placement = Some(placement_group);
            } else if staged::is_run(&placement_group) {
                about.run = Some(placement_group);
            } else if is_request(&placement_group) {
                about.request = Some(placement_group);
            }
        }
        about
    }

    pub(crate) fn of_input(input: &Input) -> Self {
        match input {
            Input::Apply { manifest } => manifest_key(manifest)
                .map(|key| About::of_object(&key))
                .unwrap_or_default(),
            Input::Delete { target } => {
                let group = target.group.clone().unwrap_or_default();
                let key = ObjectKey {
                    group,
                    kind: target.kind.clone(),
                    namespace: target.namespace.clone().unwrap_or_default(),
                    name: target.name.clone(),
                };
                About::of_object(&key)
            }
            Input::Heartbeat(beat) => About {
                cluster: Some(beat.cluster.clone()),
                ..About::default()
            },
            Input::Leave { cluster } => About {
                cluster: Some(cluster.clone()),
                ..About::default()
            },
            Input::WorkReport(report) => About {
                cluster: Some(report.cluster.clone()),
                placement: Some(
                    PlacementRef {
                        namespace: report.namespace.clone(),
                        name: report.placement.clone(),
                    }
                    .key(),
                ),
                ..About::default()
            },
            Input::Approve { name, namespace } => About {
                request: Some(request_key(namespace.as_deref(), name)),
                ..About::default()
            },
            Input::Tick => About::default(),
        }
    }

    pub(crate) fn of_decision(decision: &Decision) -> Self {
        let placed = |placement: &ObjectKey, cluster: Option<&String>| About {
            placement: Some(placement.clone()),
            cluster: cluster.cloned(),
            ..About::default()
        };
        let of_run = |run: &ObjectKey, cluster: Option<&String>| About {
            run: Some(run.clone()),
            cluster: cluster.cloned(),
            ..About::default()
        };
        match decision {
            Decision::Rejected { .. } | Decision::OverrideSnapshotTaken { .. } => About::default(),
            Decision::ObjectStored { object, .. }
            | Decision::ObjectUnchanged { object }
            | Decision::ObjectDeleted { object } => About::of_object(object),
            Decision::ClusterJoined { cluster }
            | Decision::ClusterHealthChanged { cluster, .. }
            | Decision::ClusterLeft { cluster } => About {
                cluster: Some(cluster.clone()),
                ..About::default()
            },
            Decision::WorkReported {
                cluster, placement, ..
            }
            | Decision::ClusterScheduled { placement, cluster }
            | Decision::ClusterUnscheduled {
                placement, cluster, ..
            }
            | Decision::RolloutStarted {
                placement, cluster, ..
            }
            | Decision::BindingRemoved { placement, cluster }
            | Decision::EvictionReconciled {
                placement, cluster, ..
            } => placed(placement, Some(cluster)),
            Decision::PolicySnapshotTaken { placement, .. }
            | Decision::ResourceSnapshotTaken { placement, .. }
            | Decision::SchedulingChanged { placement, .. } => placed(placement, None),
            Decision::UpdateRunInitialized { run, .. }
            | Decision::UpdateRunStageChanged { run, .. }
            | Decision::UpdateRunStateChanged { run, .. }
            | Decision::UpdateRunFinished { run, .. } => of_run(run, None),
            Decision::UpdateRunClusterUpdated { run, cluster, .. } => of_run(run, Some(cluster)),
            Decision::ApprovalRequested { run, request } => About {
                run: Some(run.clone()),
                request: Some(request.clone()),
                ..About::default()
            },
            Decision::ApprovalGranted { request } => About {
                request: Some(request.clone()),
                ..About::default()
            },
        }
    }
}

/// The same key in `group` (a delete may leave the group to the kind).
fn in_group(key: &ObjectKey, group: &str) -> ObjectKey {
    ObjectKey {
        group: group.to_owned(),
        ..key.clone()
    }
}

fn is_placement(key: &ObjectKey) -> bool {
    let scope = Scope {
        namespace: key.namespace.clone(),
        run_name: String::new(),
    };
    scope.placement_key(&key.name) == *key
}

fn is_request(key: &ObjectKey) -> bool {
    request_key(
        Some(key.namespace.as_str()).filter(|n| !n.is_empty()),
        &key.name,
    ) == *key
}

fn request_key(namespace: Option<&str>, name: &str) -> ObjectKey {
    Scope {
        namespace: namespace.unwrap_or_default().to_owned(),
        run_name: String::new(),
    }
    .approval_key(name)
}

/// The key an applied manifest names (its group from `apiVersion`), read leniently.
fn manifest_key(manifest: &str) -> Option<ObjectKey> {
    let value: Value = serde_json::from_str(manifest).ok()?;
    let text = |pointer: &str| value.pointer(pointer).and_then(Value::as_str);
    Some(ObjectKey {
        group: flotilla_core::model::group_of(text("/apiVersion").unwrap_or_default()).to_owned(),
        kind: text("/kind")?.to_owned(),
        namespace: text("/metadata/namespace").unwrap_or_default().to_owned(),
        name: text("/metadata/name")?.to_owned(),
    })
}

/// Which run rolls out which placement, and which run each approval request belongs to: from
/// the state where the span starts, then learned from the inputs read.
#[derive(Debug, Clone, Default)]
pub(crate) struct Relations {
    runs: BTreeMap<ObjectKey, ObjectKey>,
    requests: BTreeMap<ObjectKey, ObjectKey>,
}

impl Relations {
    pub(crate) fn of(state: &State) -> Self {
        let mut relations = Relations::default();
        for (key, run) in state.update_runs() {
            let scope = Scope::of(key);
            let placement = scope.placement_key(&run.spec.placement_name);
            relations.runs.insert(key.clone(), placement);
        }
        for (key, request) in state.approvals() {
            let scope = Scope {
                namespace: key.namespace.clone(),
                run_name: request.run.clone(),
            };
            relations.requests.insert(key.clone(), scope.run_key());
        }
        relations
    }

    /// Learns from an applied run (its placement) and from requests its decisions created.
    pub(crate) fn learn(&mut self, input: &LoggedInput) {
        if let Some(Input::Apply { manifest }) = input.envelope.as_ref().map(|e| &e.payload)
            && let Some(key) = manifest_key(manifest).filter(|k| k.group == PLACEMENT_GROUP)
            && staged::is_run(&key)
            && let Ok(value) = serde_json::from_str::<Value>(manifest)
            && let Some(placement) = value.pointer("/spec/placementName").and_then(Value::as_str)
        {
            let placement = Scope::of(&key).placement_key(placement);
            self.runs.insert(key, placement);
        }
        for decision in &input.decisions {
            if let Decision::ApprovalRequested { run, request } = decision {
                self.requests.insert(request.clone(), run.clone());
            }
        }
    }

    /// The placement a run rolls out.
    pub(crate) fn placement_of_run(&self, run: &ObjectKey) -> Option<&ObjectKey> {
        self.runs.get(run)
    }

    /// The run a request belongs to: as created, or by its name (`<run>-before-<stage>`,
    /// `<run>-after-<stage>`) for an approval of a request that does not exist (yet).
    pub(crate) fn run_of_request(&self, request: &ObjectKey) -> Option<ObjectKey> {
        if let Some(run) = self.requests.get(request) {
            return Some(run.clone());
        }
        self.runs
            .keys()
            .filter(|run| run.namespace == request.namespace)
            .find(|run| {
                ["before", "after"]
                    .iter()
                    .any(|at| request.name.starts_with(&format!("{}-{at}-", run.name)))
            })
            .cloned()
    }
}

/// One stored input with its decisions.
#[derive(Debug, Clone)]
pub(crate) struct LoggedInput {
    pub(crate) seq: u64,
    /// `None` for a rejected or newer record.
    pub(crate) envelope: Option<Envelope>,
    pub(crate) decisions: Decisions,
    pub(crate) recorded: bool,
}

/// Reads the inputs after `after` up to `until` page by page, with their recorded decisions;
/// inputs past the last decided one are folded again for theirs.
pub(crate) struct Inputs<'a, L: EventLog> {
    log: &'a L,
    next: u64,
    until: u64,
    decided: u64,
    tail: Option<Folder>,
}

impl<'a, L: EventLog> Inputs<'a, L> {
    pub(crate) async fn new(log: &'a L, after: u64, until: u64) -> Result<Self, ReplayError> {
        Ok(Self {
            log,
            next: after + 1,
            until,
            decided: log.last_decided_seq().await?,
            tail: None,
        })
    }

    /// The next page of inputs (empty at the end).
    pub(crate) async fn next_page(&mut self) -> Result<Vec<LoggedInput>, ReplayError> {
        if self.next > self.until {
            return Ok(Vec::new());
        }
        let mut events = self.log.read(self.next, READ_BATCH_MAX).await?;
        events.retain(|event| event.seq <= self.until);
        let Some(last) = events.last().map(|event| event.seq) else {
            return Ok(Vec::new());
        };
        let mut decisions = self.recorded(self.next, last.min(self.decided)).await?;
        let undecided: Vec<StoredEvent> = events
            .iter()
            .filter(|event| event.seq > self.decided)
            .cloned()
            .collect();
        if let Some(first) = undecided.first().map(|event| event.seq) {
            decisions.extend(self.fold_again(first, &undecided).await?);
        }
        self.next = last + 1;
        Ok(events
            .into_iter()
            .map(|event| LoggedInput {
                seq: event.seq,
                recorded: event.seq <= self.decided,
                decisions: decisions.remove(&event.seq).unwrap_or_default(),
                envelope: event.record.event().cloned(),
            })
            .collect())
    }

    /// The recorded decisions of inputs `from..=to`.
    async fn recorded(&self, from: u64, to: u64) -> Result<BTreeMap<u64, Decisions>, ReplayError> {
        let mut found = BTreeMap::new();
        let mut next = from;
        while next <= to {
            let batches = self.log.read_decisions(next, READ_BATCH_MAX).await?;
            let Some(reached) = batches.last().map(|batch| batch.last_input_seq) else {
                break;
            };
            for batch in batches {
                let wanted = batch.decisions.into_iter();
                found.extend(wanted.filter(|(seq, _)| (from..=to).contains(seq)));
            }
            next = reached + 1;
        }
        Ok(found)
    }

    /// Decides undecided inputs again, from the state before the first of them.
    async fn fold_again(
        &mut self,
        first: u64,
        events: &[StoredEvent],
    ) -> Result<BTreeMap<u64, Decisions>, ReplayError> {
        let mut folder = match self.tail.take() {
            Some(folder) if folder.seq + 1 == first => folder,
            _ => fold_to(self.log, first - 1).await?,
        };
        let folded = folder.fold_page(self.log, events, &[]).await?;
        self.tail = Some(folder);
        if let Some(newer) = folded.stopped {
            return Err(newer);
        }
        Ok(folded.decisions.into_iter().collect())
    }
}
