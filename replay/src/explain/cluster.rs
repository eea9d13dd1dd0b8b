//! [`explain_cluster`]: why one cluster carries the resource index it carries for a placement,
//! or none, at a point — from the state there and the inputs up to it.
//!
//! The history lists the inputs that touched the cluster's binding (scheduled, rolled out,
//! reported on, removed), the cluster's health, the placement's snapshots, and the placement's
//! staged runs (stages, approval requests, and every approval sent for them, refused ones
//! included); a step that touched the binding carries the budget after it
//! and, when it scheduled the cluster, its scores — recomputed from the state folded right
//! after that input, as the decisions record neither.

use std::collections::VecDeque;

use chrono::{DateTime, Utc};
use flotilla_core::model::ObjectKey;
use flotilla_core::model::placement::PlacementType;
use flotilla_core::query::placement::{BindingState, ClusterDecision, Placement};
use flotilla_core::{Decision, State};
use flotilla_eventstore::LogReader;
use serde::Serialize;

use super::budget::Budget;
use super::facts::{BindingNow, MemberNow, ReportNow, member_now};
use super::gates::{DEFAULT_MIN_SOAK_SECONDS, RunCluster, cluster_in_run, runs_of};
use super::placement::waits;
use super::{Wait, clock, point_text};
use crate::seek::{Point, fold_on, fold_to, resolve};
use crate::timeline::{
    About, Inputs, LoggedInput, PlacementRef, Relations, TimelineEntry, entry_of,
};
use crate::{Folder, ReplayError};

/// Why one cluster carries what it carries for one placement, at a point.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ClusterExplanation {
    /// The point: after this input.
    pub at: u64,
    /// The state's event time there.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub time: Option<DateTime<Utc>>,
    /// The placement (`Kind/name`, `Kind/namespace/name`).
    pub placement: String,
    /// The cluster.
    pub cluster: String,
    /// The answer in one sentence.
    pub summary: String,
    /// Its binding, if it has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub binding: Option<BindingNow>,
    /// What it last reported on the placement's work.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub report: Option<ReportNow>,
    /// Its member cluster's liveness.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub member: Option<MemberNow>,
    /// The scheduling decision about it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scheduling: Option<Scheduling>,
    /// Its place in the placement's staged runs, with the gates before its stage.
    pub runs: Vec<RunCluster>,
    /// Why the placement's rollout waits, when the cluster is not done.
    pub waits: Vec<Wait>,
    /// The inputs that brought it here, in log order (the newest [`HISTORY_STEPS_MAX`]).
    pub history: Vec<HistoryStep>,
    /// How many older steps were left out of `history`.
    pub history_omitted: u64,
}

/// Most history steps an explanation keeps (the newest).
pub const HISTORY_STEPS_MAX: usize = 10_000;

/// The latest scheduling policy snapshot's decision about the cluster.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Scheduling {
    /// The policy snapshot's index.
    pub policy_index: u64,
    /// `PickAll`, `PickN` or `PickFixed`.
    pub placement_type: String,
    /// PickN's `numberOfClusters`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub number_of_clusters: Option<i64>,
    /// The decision about this cluster, when the scheduler recorded one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decision: Option<ScoredCluster>,
    /// PickN: the clusters picked, by name.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub picked: Vec<ScoredCluster>,
    /// PickN: the clusters scored and not picked, best first.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub not_picked: Vec<ScoredCluster>,
}

/// One cluster decision of the scheduler.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ScoredCluster {
    /// The cluster.
    pub cluster: String,
    /// Whether it was picked.
    pub selected: bool,
    /// Its affinity score, when scored.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub affinity: Option<i32>,
    /// Its topology spread score, when scored.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub topology_spread: Option<i32>,
    /// The scheduler's reason.
    pub reason: String,
}

impl ScoredCluster {
    fn of(decision: &ClusterDecision) -> Self {
        Self {
            cluster: decision.cluster.to_string(),
            selected: decision.selected,
            affinity: decision.score.map(|s| s.affinity),
            topology_spread: decision.score.map(|s| s.topology_spread),
            reason: decision.reason.to_string(),
        }
    }

    /// `affinity 0, topology spread 0` (or `not scored`).
    fn scores(&self) -> String {
        match (self.affinity, self.topology_spread) {
            (Some(affinity), Some(spread)) => {
                format!("affinity {affinity}, topology spread {spread}")
            }
            _ => "not scored".to_owned(),
        }
    }

    /// `cluster-4 (affinity 0, topology spread 0)`.
    fn short(&self) -> String {
        format!("{} ({})", self.cluster, self.scores())
    }
}

/// One input of the cluster's history.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HistoryStep {
    /// The input and the decisions shown, as in a timeline.
    #[serde(flatten)]
    pub entry: TimelineEntry,
    /// The cluster's scores, when this input scheduled it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub score: Option<ScoredCluster>,
    /// The `RollingUpdate` budget right after this input, when it touched the binding.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub budget: Option<Budget>,
}

impl ClusterExplanation {
    /// Flags each approval of its runs' gates that came sooner than `min_soak` seconds after
    /// its request (`explain_cluster` flags against [`DEFAULT_MIN_SOAK_SECONDS`]).
    pub fn flag_soak(&mut self, min_soak: u64) {
        for gate in self.runs.iter_mut().flat_map(|run| run.gates.iter_mut()) {
            gate.flag_soak(min_soak);
        }
    }

    /// Names who approved each approval gate, from the approving input in the history.
    fn name_approvers(&mut self) {
        for gate in self.runs.iter_mut().flat_map(|run| run.gates.iter_mut()) {
            let Some(request) = gate.request.as_deref() else {
                continue;
            };
            let approving = self.history.iter().rev().find(|step| {
                step.entry.decisions.iter().any(|line| {
                    matches!(&line.decision,
                        Decision::ApprovalGranted { request: granted } if granted.name == request)
                })
            });
            gate.approved_by = approving.map(|step| step.entry.actor.clone());
        }
    }

    /// The explanation as text: the answer, the cluster now, the scheduling decision, its runs
    /// and gates, the waits, then its history.
    #[must_use]
    pub fn text(&self) -> String {
        let now = self.time;
        let mut text = format!(
            "{} on {} at {}\n{}\n",
            self.cluster,
            self.placement,
            point_text(self.at, now),
            self.summary
        );
        if let Some(member) = &self.member {
            text.push_str(&format!("member: {}\n", member.text(now)));
        }
        if let Some(scheduling) = &self.scheduling {
            text.push_str(&scheduling.text());
        }
        for run in &self.runs {
            text.push_str(&format!("{}\n", run.text(now)));
            for gate in &run.gates {
                text.push_str(&format!("  gate: {}\n", gate.text(now)));
            }
        }
        if !self.waits.is_empty() {
            text.push_str("the rollout waits:\n");
        }
        for wait in &self.waits {
            text.push_str(&format!("  - {}\n", wait.text));
        }
        match self.history_omitted {
            0 => text.push_str("history:\n"),
            omitted => text.push_str(&format!("history ({omitted} older steps left out):\n")),
        }
        for step in &self.history {
            text.push_str(&step.text());
        }
        text
    }
}

impl Scheduling {
    fn text(&self) -> String {
        let mut policy = format!(
            "scheduling: policy snapshot {}, {}",
            self.policy_index, self.placement_type
        );
        if let Some(count) = self.number_of_clusters {
            policy.push_str(&format!(" {count}"));
        }
        let mut text = match &self.decision {
            Some(d) if d.selected => format!("{policy}: picked, {} ({})\n", d.scores(), d.reason),
            Some(d) => format!("{policy}: not picked, {} ({})\n", d.scores(), d.reason),
            None => format!("{policy}: no decision recorded about it\n"),
        };
        let picked: Vec<String> = self.picked.iter().map(ScoredCluster::short).collect();
        if !picked.is_empty() {
            text.push_str(&format!("  picked: {}\n", picked.join(", ")));
        }
        for other in &self.not_picked {
            text.push_str(&format!(
                "  not picked: {}: {}\n",
                other.short(),
                other.reason
            ));
        }
        text
    }
}

impl HistoryStep {
    fn text(&self) -> String {
        let mut text = String::new();
        self.entry.write(&mut text);
        if let Some(score) = &self.score {
            text.push_str(&format!("    scores: {}\n", score.scores()));
        }
        if let Some(budget) = &self.budget {
            text.push_str(&format!("    budget after: {}\n", budget.text()));
        }
        text
    }
}

/// Why `cluster` carries what it carries for `placement` at `at` (`None`: the log's end).
///
/// # Errors
/// A log read or fold failure.
pub async fn explain_cluster<L: LogReader>(
    log: &L,
    cluster: &str,
    placement: &PlacementRef,
    at: Option<Point>,
) -> Result<ClusterExplanation, ReplayError> {
    let seq = resolve(log, at.unwrap_or(Point::Seq(u64::MAX))).await?;
    let key = placement.key();
    let (mut history, history_omitted) = read_history(log, &key, cluster, seq).await?;
    let mut folder: Option<Folder> = None;
    for step in &mut history {
        if !touches_binding(&step.entry, &key, cluster) {
            continue;
        }
        let folded = match folder.as_mut() {
            Some(folder) => {
                fold_on(log, folder, step.entry.seq).await?;
                folder
            }
            None => folder.insert(fold_to(log, step.entry.seq).await?),
        };
        annotate(step, &folded.state, &key, cluster);
    }
    let folder = match folder {
        Some(mut folder) => {
            fold_on(log, &mut folder, seq).await?;
            folder
        }
        None => fold_to(log, seq).await?,
    };
    let mut explanation = explain_state(&folder.state, seq, &key, cluster);
    explanation.history = history;
    explanation.history_omitted = history_omitted;
    explanation.name_approvers();
    explanation.flag_soak(DEFAULT_MIN_SOAK_SECONDS);
    Ok(explanation)
}

/// Reads the inputs up to `seq` and keeps the newest [`HISTORY_STEPS_MAX`] relevant to the
/// cluster's binding, with how many older ones were left out.
async fn read_history<L: LogReader>(
    log: &L,
    key: &ObjectKey,
    cluster: &str,
    seq: u64,
) -> Result<(Vec<HistoryStep>, u64), ReplayError> {
    let mut inputs = Inputs::new(log, 0, seq).await?;
    let mut known = Relations::default();
    let mut history = VecDeque::new();
    let mut omitted = 0;
    loop {
        let page = inputs.next_page().await?;
        if page.is_empty() {
            break;
        }
        for input in page {
            known.learn(&input);
            if let Some(entry) = relevant_entry(&input, &known, key, cluster) {
                history.push_back(HistoryStep {
                    entry,
                    score: None,
                    budget: None,
                });
                if history.len() > HISTORY_STEPS_MAX {
                    history.pop_front();
                    omitted += 1;
                }
            }
        }
    }
    Ok((history.into(), omitted))
}

/// The input as a history step, when its payload names both the placement and the cluster
/// (shown whole) or some of its decisions are relevant (shown alone).
fn relevant_entry(
    input: &LoggedInput,
    known: &Relations,
    key: &ObjectKey,
    cluster: &str,
) -> Option<TimelineEntry> {
    let envelope = input.envelope.as_ref()?;
    let payload = About::of_input(&envelope.payload);
    let approval_of_run = payload
        .request
        .as_ref()
        .and_then(|request| known.run_of_request(request))
        .is_some_and(|run| known.placement_of_run(&run) == Some(key));
    let whole = approval_of_run
        || (payload.placement.as_ref() == Some(key) && payload.cluster.as_deref() == Some(cluster));
    let relevant: Vec<bool> = input
        .decisions
        .iter()
        .map(|decision| is_relevant(decision, known, key, cluster))
        .collect();
    if !whole && !relevant.iter().any(|r| *r) {
        return None;
    }
    Some(entry_of(input, envelope, |index| whole || relevant[index]))
}

/// A decision about the binding, the cluster alone (health, membership), the placement's
/// snapshots, or the placement's runs (their stages and approvals, and this cluster in them).
fn is_relevant(decision: &Decision, known: &Relations, key: &ObjectKey, cluster: &str) -> bool {
    let about = About::of_decision(decision);
    let run = about.run.clone().or_else(|| {
        about
            .request
            .as_ref()
            .and_then(|request| known.run_of_request(request))
    });
    let names_cluster = about.cluster.as_deref() == Some(cluster);
    let names_placement = about.placement.as_ref() == Some(key);
    // Snapshots, and a rollout's safety rule halting or rolling it back, concern every
    // cluster of the placement.
    let snapshot = matches!(
        decision,
        Decision::PolicySnapshotTaken { .. }
            | Decision::ResourceSnapshotTaken { .. }
            | Decision::RolloutHalted { .. }
            | Decision::RollbackFinished { .. }
    );
    let of_placement_run = run
        .as_ref()
        .and_then(|run| known.placement_of_run(run))
        .is_some_and(|placement| placement == key);
    (names_placement && (names_cluster || snapshot))
        || (names_cluster && about.placement.is_none() && run.is_none())
        || (of_placement_run && (about.cluster.is_none() || names_cluster))
}

/// Whether a step changed the binding or its readiness (then its budget is worth showing).
fn touches_binding(entry: &TimelineEntry, key: &ObjectKey, cluster: &str) -> bool {
    entry.decisions.iter().any(|line| match &line.decision {
        Decision::ClusterScheduled {
            placement,
            cluster: c,
        }
        | Decision::ClusterUnscheduled {
            placement,
            cluster: c,
            ..
        }
        | Decision::RolloutStarted {
            placement,
            cluster: c,
            ..
        }
        | Decision::BindingRemoved {
            placement,
            cluster: c,
        }
        | Decision::WorkReported {
            placement,
            cluster: c,
            ..
        } => placement == key && c == cluster,
        _ => false,
    })
}

/// Adds the scores (when the step scheduled the cluster) and the budget after the step.
fn annotate(step: &mut HistoryStep, state: &State, key: &ObjectKey, cluster: &str) {
    let scheduled = step.entry.decisions.iter().any(|line| {
        matches!(&line.decision, Decision::ClusterScheduled { placement, cluster: c }
            if placement == key && c == cluster)
    });
    let placement = state.placements().get(key);
    if scheduled {
        step.score = placement
            .and_then(|p| p.bindings.get(cluster))
            .map(|b| ScoredCluster::of(&b.cluster_decision()));
    }
    step.budget = Budget::of(state, key);
}

/// Everything but the history, from the state at the point.
fn explain_state(state: &State, seq: u64, key: &ObjectKey, cluster: &str) -> ClusterExplanation {
    let now = state.now();
    let mut explanation = ClusterExplanation {
        at: seq,
        time: now,
        placement: key.to_string(),
        cluster: cluster.to_owned(),
        summary: String::new(),
        binding: None,
        report: None,
        member: member_now(state, cluster),
        scheduling: None,
        runs: Vec::new(),
        waits: Vec::new(),
        history: Vec::new(),
        history_omitted: 0,
    };
    let Some(placement) = state.placements().get(key) else {
        explanation.summary = format!("{key} does not exist at #{seq}");
        return explanation;
    };
    let at = now.unwrap_or(DateTime::<Utc>::UNIX_EPOCH);
    let binding = placement.bindings.get(cluster);
    let binding = binding.as_ref();
    explanation.binding = binding.map(|b| BindingNow::of((&key.name, placement), b, at));
    explanation.report = binding.and_then(|b| b.report.as_ref()).map(ReportNow::of);
    explanation.scheduling = scheduling(placement, cluster);
    explanation.runs = runs_of(state, key)
        .into_iter()
        .filter_map(|(run_key, run)| cluster_in_run(state, run_key, run, cluster))
        .collect();
    if !explanation
        .binding
        .as_ref()
        .is_some_and(BindingNow::is_done)
    {
        let budget = Budget::of(state, key);
        explanation.waits = waits(state, key, placement, budget.as_ref());
    }
    explanation.summary = summary(&explanation, now);
    explanation
}

fn scheduling(placement: &Placement, cluster: &str) -> Option<Scheduling> {
    let snapshot = placement.latest_policy()?;
    let live = || {
        placement
            .bindings
            .values()
            .filter(|b| b.state != BindingState::Unscheduled)
    };
    let decision = live()
        .find(|b| b.cluster == cluster)
        .map(|b| ScoredCluster::of(&b.cluster_decision()))
        .or_else(|| {
            snapshot
                .not_selected
                .iter()
                .find(|d| d.cluster == cluster)
                .map(ScoredCluster::of)
        });
    let pick_n = snapshot.policy.placement_type == PlacementType::PickN;
    Some(Scheduling {
        policy_index: snapshot.index,
        placement_type: format!("{:?}", snapshot.policy.placement_type),
        number_of_clusters: snapshot.number_of_clusters,
        decision,
        picked: if pick_n {
            live()
                .map(|b| ScoredCluster::of(&b.cluster_decision()))
                .collect()
        } else {
            Vec::new()
        },
        not_picked: if pick_n {
            snapshot
                .not_selected
                .iter()
                .filter(|d| d.score.is_some())
                .map(ScoredCluster::of)
                .collect()
        } else {
            Vec::new()
        },
    })
}

/// The answer in one sentence: what the cluster carries and why, and what it reported.
fn summary(explanation: &ClusterExplanation, now: Option<DateTime<Utc>>) -> String {
    let cluster = &explanation.cluster;
    let Some(binding) = &explanation.binding else {
        return match explanation
            .scheduling
            .as_ref()
            .and_then(|s| s.decision.as_ref())
        {
            Some(decision) => format!(
                "{cluster} carries nothing: not picked ({})",
                decision.reason
            ),
            None if explanation.member.is_none() => {
                format!("{cluster} carries nothing: it is not a member cluster")
            }
            None => format!("{cluster} carries nothing: the scheduler has not picked it"),
        };
    };
    let Some(index) = binding
        .resource_index
        .filter(|_| binding.state != "Scheduled")
    else {
        return format!(
            "{cluster} carries nothing: it is scheduled, and the rollout has not bound it"
        );
    };
    let mut text = format!("{cluster} carries resource index {index}");
    if let Some(bound) = binding.bound_at {
        text.push_str(&format!(" (bound {}", clock(bound, now)));
        if let Some(run) = &binding.update_run {
            text.push_str(&format!(" by run {run}"));
        }
        text.push(')');
    }
    let latest = binding.latest_resource_index;
    if binding.state == "Unscheduled" {
        text.push_str(" until its binding is removed: it is no longer scheduled");
    } else if latest == Some(index) {
        text.push_str(", the latest");
    } else {
        let latest = latest.map_or_else(|| "unknown".to_owned(), |l| l.to_string());
        text.push_str(&format!(
            "; the latest is {latest}, not rolled out to it yet"
        ));
    }
    match &explanation.report {
        Some(report) => text.push_str(&format!("; it reported {}", report.text(now))),
        None => text.push_str("; no report on it yet"),
    }
    text
}
