//! [`explain_placement`]: why a placement's rollout waits at a point — the budget of a
//! `RollingUpdate`, the runs of an `External` placement, the plan of a `Partitioned` one —
//! with the clusters not done and the placement's conditions that are not `True`, as `get`
//! shows them.

use chrono::{DateTime, Utc};
use flotilla_core::State;
use flotilla_core::condition::ConditionStatus;
use flotilla_core::model::ObjectKey;
use flotilla_core::model::placement::StrategyType;
use flotilla_core::query::placement::Placement;
use flotilla_core::query::staged::run::UpdateRun;
use flotilla_core::query::staged::run_failure;
use flotilla_eventstore::LogReader;
use serde::Serialize;
use serde_json::Value;

use super::budget::{Budget, names};
use super::facts::{BindingNow, binding_text, member_now};
use super::gates::{run_waits, runs_of};
use super::{Wait, WaitReason, clock, clusters, point_text};
use crate::ReplayError;
use crate::seek::{Point, fold_to, resolve};
use crate::text::string_field;
use crate::timeline::PlacementRef;

/// Why a placement's rollout waits at a point.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PlacementExplanation {
    /// The point: after this input.
    pub at: u64,
    /// The state's event time there.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub time: Option<DateTime<Utc>>,
    /// The placement (`Kind/name`, `Kind/namespace/name`).
    pub placement: String,
    /// `RollingUpdate`, `External` or `Partitioned` (absent when it does not exist).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub strategy: Option<String>,
    /// The latest resource snapshot index.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub latest_resource_index: Option<u64>,
    /// The `RollingUpdate` budget.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub budget: Option<Budget>,
    /// Why it waits; empty when it does not.
    pub waits: Vec<Wait>,
    /// The clusters not yet bound to the latest resource index and ready, by name.
    pub clusters: Vec<ClusterLine>,
    /// The placement's conditions that are not `True`, as `get` shows them.
    pub conditions: Vec<ConditionLine>,
}

/// One cluster that is not done.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ClusterLine {
    /// The cluster.
    pub cluster: String,
    /// Its binding.
    pub binding: BindingNow,
    /// Where it is, in words.
    pub text: String,
}

/// A condition of the placement.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ConditionLine {
    /// Its type.
    #[serde(rename = "type")]
    pub condition_type: String,
    /// `False` or `Unknown`.
    pub status: String,
    /// Its reason.
    pub reason: String,
    /// Its message.
    pub message: String,
}

impl PlacementExplanation {
    /// The explanation as text: a header, one `- ` line per wait (or `not waiting: …`), the
    /// budget, the clusters not done, and the conditions not `True`.
    #[must_use]
    pub fn text(&self) -> String {
        let mut text = format!("{} at {}", self.placement, point_text(self.at, self.time));
        if let Some(strategy) = &self.strategy {
            text.push_str(&format!(", {strategy}"));
        }
        if let Some(latest) = self.latest_resource_index {
            text.push_str(&format!(", latest resource index {latest}"));
        }
        text.push('\n');
        for wait in &self.waits {
            text.push_str(&format!("- {}\n", wait.text));
        }
        if self.waits.is_empty() {
            text.push_str(&format!("not waiting: {}\n", self.done_text()));
        }
        if let Some(budget) = &self.budget {
            text.push_str(&format!("budget: {}\n", budget.text()));
        }
        if !self.clusters.is_empty() {
            text.push_str("clusters not done:\n");
        }
        for line in &self.clusters {
            text.push_str(&format!("  {}: {}\n", line.cluster, line.text));
        }
        if !self.conditions.is_empty() {
            text.push_str("conditions not True:\n");
        }
        for condition in &self.conditions {
            text.push_str(&format!(
                "  {} {} ({}): {}\n",
                condition.condition_type, condition.status, condition.reason, condition.message
            ));
        }
        text
    }

    fn done_text(&self) -> String {
        match (self.latest_resource_index, &self.budget) {
            (Some(latest), Some(budget)) => format!(
                "all {} carry resource index {latest} and are available",
                clusters(usize::try_from(budget.target).unwrap_or(usize::MAX))
            ),
            (Some(latest), None) => {
                format!("every cluster carries resource index {latest} and is available")
            }
            (None, _) => "nothing to roll out".to_owned(),
        }
    }
}

/// Why `placement`'s rollout waits at `at` (`None`: the log's end).
///
/// # Errors
/// A log read or fold failure.
pub async fn explain_placement<L: LogReader>(
    log: &L,
    placement: &PlacementRef,
    at: Option<Point>,
) -> Result<PlacementExplanation, ReplayError> {
    let seq = resolve(log, at.unwrap_or(Point::Seq(u64::MAX))).await?;
    let folder = fold_to(log, seq).await?;
    Ok(explain_state(&folder.state, seq, &placement.key()))
}

/// The explanation from the state folded at `seq`: what [`explain_placement`] answers, for a
/// caller that already holds the state (the hub's summary, under its view's lock).
pub fn explain_state(state: &State, seq: u64, key: &ObjectKey) -> PlacementExplanation {
    let mut explanation = PlacementExplanation {
        at: seq,
        time: state.now(),
        placement: key.to_string(),
        strategy: None,
        latest_resource_index: None,
        budget: None,
        waits: Vec::new(),
        clusters: Vec::new(),
        conditions: Vec::new(),
    };
    let Some(placement) = state.placements().get(key) else {
        let text = format!("{key} does not exist at #{seq}");
        explanation.waits = vec![Wait::new(WaitReason::NoPlacement, text)];
        return explanation;
    };
    explanation.strategy = Some(placement.spec.strategy.strategy_type.as_str().to_owned());
    explanation.latest_resource_index = placement.latest_resources().map(|r| r.index);
    explanation.budget = Budget::of(state, key);
    explanation.waits = waits(state, key, placement, explanation.budget.as_ref());
    let now = state.now();
    let at = now.unwrap_or(DateTime::<Utc>::UNIX_EPOCH);
    explanation.clusters = placement
        .bindings
        .values()
        .map(|binding| {
            let line = BindingNow::of((&key.name, placement), &binding, at);
            (binding, line)
        })
        .filter(|(_, now)| !now.is_done())
        .map(|(binding, line)| ClusterLine {
            cluster: binding.cluster.to_string(),
            text: binding_text(state, &binding, now),
            binding: line,
        })
        .collect();
    explanation.conditions = conditions_not_true(state, key);
    explanation
}

/// Why the placement's rollout waits at this state: the `waits` of [`explain_state`] alone,
/// without its per-cluster lines and rendered conditions, which cost a walk over every binding
/// (the hub's summary asks only this).
#[must_use]
pub fn waits_in_state(state: &State, seq: u64, key: &ObjectKey) -> Vec<Wait> {
    let Some(placement) = state.placements().get(key) else {
        let text = format!("{key} does not exist at #{seq}");
        return vec![Wait::new(WaitReason::NoPlacement, text)];
    };
    let budget = Budget::of(state, key);
    waits(state, key, placement, budget.as_ref())
}

/// Every reason the placement's rollout waits, in a fixed order: existence and scheduling,
/// then the strategy's own, then clusters whose agents went silent.
pub(crate) fn waits(
    state: &State,
    key: &ObjectKey,
    placement: &Placement,
    budget: Option<&Budget>,
) -> Vec<Wait> {
    let mut waits = Vec::new();
    if let Some(scheduled) = placement
        .scheduled
        .as_ref()
        .filter(|c| c.status != ConditionStatus::True)
    {
        let text = format!("scheduling policy unfulfilled: {}", scheduled.message);
        let wait = Wait::new(WaitReason::Unscheduled, text);
        waits.push(wait.since(Some(scheduled.last_transition_time)));
    }
    let Some(latest) = placement.latest_resources().map(|r| r.index) else {
        let mut text = "no resource snapshot yet: nothing selected to roll out".to_owned();
        if let Some(error) = &placement.selection_error {
            text.push_str(&format!(" ({error})"));
        }
        waits.push(Wait::new(WaitReason::NoResources, text));
        return waits;
    };
    if let Some(wait) = halted(placement) {
        // A tripped rollout moves nothing towards its snapshot: the budget's waits do not apply.
        waits.push(wait);
        return waits;
    }
    match placement.spec.strategy.strategy_type {
        StrategyType::RollingUpdate => {
            if let Some(budget) = budget {
                waits.extend(budget.waits());
                waits.extend(failed(state, key, budget));
            }
        }
        StrategyType::External => waits.extend(external(state, key, placement, latest)),
        StrategyType::Partitioned => waits.extend(partitioned(state, key)),
    }
    waits.extend(silent(state, &waits));
    waits
}

/// The safety rule that stopped the rollout, with the clusters it counted as failed.
fn halted(placement: &Placement) -> Option<Wait> {
    let guard = placement.guard.as_ref()?;
    let (reason, message) = guard.condition()?;
    let text = format!(
        "the rollout to resource index {} is stopped by its safety rule ({reason}): {message}",
        guard.resource_index
    );
    let clusters = guard.failed.iter().cloned().collect();
    let since = guard.tripped.as_ref().map(|t| t.at);
    Some(
        Wait::new(WaitReason::Halted, text)
            .with_clusters(clusters)
            .since(since),
    )
}

/// One wait per cluster whose apply failed.
fn failed(state: &State, key: &ObjectKey, budget: &Budget) -> Vec<Wait> {
    let Some(placement) = state.placements().get(key) else {
        return Vec::new();
    };
    budget
        .failed
        .iter()
        .filter_map(|cluster| placement.bindings.get(cluster.as_str()))
        .filter_map(|binding| {
            let report = binding.report.as_ref()?;
            let mut text = format!(
                "apply failed on {} at resource index {}",
                binding.cluster, report.resource_index
            );
            if !report.message().is_empty() {
                text.push_str(&format!(": {}", report.message()));
            }
            let wait = Wait::new(WaitReason::ApplyFailed, text);
            let wait = wait.with_clusters(vec![binding.cluster.to_string()]);
            Some(wait.since(Some(report.reported_at)))
        })
        .collect()
}

/// The waits of the unfinished runs of an `External` placement; when there is none and not
/// every cluster carries the latest resources, that no run rolls it out.
fn external(state: &State, key: &ObjectKey, placement: &Placement, latest: u64) -> Vec<Wait> {
    let runs = runs_of(state, key);
    let now = state.now();
    let mut waits = run_failures(placement, &runs, now);
    waits.extend(
        runs.iter()
            .flat_map(|(run_key, run)| run_waits(state, run_key, run, now)),
    );
    let unfinished = runs.iter().any(|(_, run)| !run.is_finished());
    let behind: Vec<String> = placement
        .bindings
        .values()
        .filter(|b| b.state != flotilla_core::query::placement::BindingState::Unscheduled)
        .filter(|b| b.resource_index != Some(latest))
        .map(|b| b.cluster.to_string())
        .collect();
    if !unfinished && !behind.is_empty() {
        let text = format!(
            "strategy External: no unfinished staged update run rolls it out; {} not at resource \
             index {latest}: {}",
            clusters(behind.len()),
            names(&behind)
        );
        waits.push(Wait::new(WaitReason::NoRun, text).with_clusters(behind));
    }
    waits
}

/// The runs that failed and were not followed by a run that succeeded: first, since a failed
/// run is why the placement stays where it is. Each names its stage, its message, and each
/// failed cluster with the manifests its member reported failed.
fn run_failures(
    placement: &Placement,
    runs: &[(&ObjectKey, &UpdateRun)],
    now: Option<DateTime<Utc>>,
) -> Vec<Wait> {
    let succeeded_after = |at: DateTime<Utc>| {
        runs.iter().any(|(_, run)| {
            run.status
                .succeeded
                .as_ref()
                .is_some_and(|c| c.status == ConditionStatus::True && c.last_transition_time > at)
        })
    };
    runs.iter()
        .filter_map(|(run_key, run)| Some((run_key, run_failure(run)?)))
        .filter(|(_, failure)| !succeeded_after(failure.at))
        .map(|(run_key, failure)| {
            let stage = failure
                .stage
                .map(|s| format!(" at stage {s}"))
                .unwrap_or_default();
            let mut text = format!(
                "run {run_key} failed{stage} at {}: {}",
                clock(failure.at, now),
                failure.message
            );
            for (cluster, message) in &failure.clusters {
                // A run failed by one cluster carries that cluster's message: say it once.
                if *message != failure.message {
                    text.push_str(&format!("; {cluster}: {message}"));
                }
                for manifest in failed_manifests(placement, cluster) {
                    text.push_str(&format!("; {cluster} {manifest}"));
                }
            }
            let clusters = failure
                .clusters
                .iter()
                .map(|(c, _)| (*c).to_owned())
                .collect();
            Wait::new(WaitReason::RunFailed, text)
                .with_clusters(clusters)
                .since(Some(failure.at))
        })
        .collect()
}

/// `Deployment shop/shop-web (Available): MESSAGE` for each manifest the cluster's member reported failed.
fn failed_manifests(placement: &Placement, cluster: &str) -> Vec<String> {
    let Some(binding) = placement.bindings.get(cluster) else {
        return Vec::new();
    };
    let Some(report) = binding.report.as_ref() else {
        return Vec::new();
    };
    report
        .failed_manifests()
        .iter()
        .map(super::facts::failed_manifest)
        .collect()
}

/// A `Partitioned` placement's pause, as its status shows it (`status.display.message`).
fn partitioned(state: &State, key: &ObjectKey) -> Vec<Wait> {
    let rendered = flotilla_projections::render_object(state, key);
    let message = rendered
        .as_ref()
        .and_then(|object| object.pointer("/status/display/message"))
        .and_then(Value::as_str);
    match message {
        Some(message) => vec![Wait::new(WaitReason::Partitioned, message.to_owned())],
        None => Vec::new(),
    }
}

/// The clusters already waited for whose agents are unhealthy, leaving or gone.
fn silent(state: &State, waits: &[Wait]) -> Vec<Wait> {
    let mut waited: Vec<&String> = waits
        .iter()
        .filter(|w| w.reason != WaitReason::OutOfDate && w.reason != WaitReason::NoRun)
        .flat_map(|w| &w.clusters)
        .collect();
    waited.sort();
    waited.dedup();
    let now = state.now();
    waited
        .into_iter()
        .filter_map(|cluster| {
            let (text, since) = match member_now(state, cluster) {
                Some(member) if member.is_well() => return None,
                Some(member) => (
                    format!("{cluster} is {}", member.text(now)),
                    member.leaving_since.or(member.health_changed_at),
                ),
                None => (format!("{cluster} is not a member cluster any more"), None),
            };
            let wait = Wait::new(WaitReason::Unhealthy, text);
            Some(wait.with_clusters(vec![cluster.clone()]).since(since))
        })
        .collect()
}

/// The placement's conditions that are not `True`, from its rendered status.
fn conditions_not_true(state: &State, key: &ObjectKey) -> Vec<ConditionLine> {
    let Some(object) = flotilla_projections::render_object(state, key) else {
        return Vec::new();
    };
    let Some(Value::Array(conditions)) = object.pointer("/status/conditions") else {
        return Vec::new();
    };
    let text = |condition: &Value, field: &str| string_field(condition, field).to_owned();
    conditions
        .iter()
        .filter(|c| string_field(c, "status") != "True")
        .map(|c| ConditionLine {
            condition_type: text(c, "type"),
            status: text(c, "status"),
            reason: text(c, "reason"),
            message: text(c, "message"),
        })
        .collect()
}
