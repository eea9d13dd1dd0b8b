//! How far the rollout got on each binding, in the three places KubeFleet writes it:
//!
//! - **The binding's `status.conditions`** (the rollout controller writes `RolloutStarted`, the
//!   work generator the rest): `RolloutStarted`, `Overridden`, `WorkSynchronized`, `Applied`,
//!   `Available` — or, for a placement whose `applyStrategy.type` is `ReportDiff`, `DiffReported`
//!   instead of the last two (KubeFleet's `CondTypesForReportDiffApplyStrategy`) — a chain that
//!   ends at the first condition that is not `True`; a condition not known yet (no report from
//!   the member) is left out. `observedGeneration` is the binding's.
//! - **The placement's per-cluster `placementStatuses[].conditions`** (after `Scheduled`): the
//!   binding's conditions copied (reason and message included) while the binding carries the
//!   latest resource snapshot rendered with the overrides that apply now, with the next unknown condition shown as `Unknown` (KubeFleet's
//!   `UnknownResourceConditionPerCluster`); for a binding that does not, `RolloutStarted` False
//!   "The rollout is being blocked by the rollout strategy" when the rollout held it back, else
//!   `RolloutStarted` Unknown. `observedGeneration` is the placement's.
//! - **The placement's own conditions** after `…Scheduled`: per condition, the first of Unknown
//!   (any cluster Unknown), False (any cluster False) or True (all) decides, counted in
//!   clusters; the first that is not True ends the list.
//!
//! Texts are the older (2023–2024) KubeFleet controller's (KubeFleet's `kubectl describe crp`
//! sample was produced by it), except the `RolloutStarted` Unknown texts, which follow KubeFleet's
//! staged update sample. The binding-level `RolloutStarted` False is "The resources cannot be
//! updated to the latest because of the rollout strategy".
//!
//! Times: `RolloutStarted`, `Overridden` and `WorkSynchronized` date from when the rollout bound
//! the binding to its resource snapshot; `Applied` from the member's report; `Available` from
//! when the availability was first reported as it is; a held-back binding from the later of its
//! creation and the latest resource snapshot's; an `Unknown` from the condition before it. A
//! placement condition takes the latest time among the clusters that decided it (the hub keeps no
//! history of the placement's own conditions).

use std::borrow::Cow;

use chrono::{DateTime, Utc};
use flotilla_core::State;
use flotilla_core::condition::ConditionStatus;
use flotilla_core::model::placement::StrategyType;
use flotilla_core::query::placement::{Binding, BindingState};
use flotilla_core::query::rollout::readiness::ApplyMode;
use serde_json::Value;

use crate::derived::Owner;
use crate::json;
use crate::work::{self, Renders};

mod all;
mod listed;
mod stage_texts;
mod tally;
mod work_chain;
pub(crate) use all::{progress_of_all, tally_of_all};
#[cfg(test)]
pub(crate) use all::{progress_on, tally_on};
pub(crate) use listed::Listed;
pub(crate) use tally::Tally;
use work_chain::work_chain;

pub(crate) use stage_texts::Stage;

/// One condition of the chain.
#[derive(Debug, Clone)]
pub(crate) struct Step {
    /// Which condition.
    pub(crate) stage: Stage,
    /// Its status.
    pub(crate) status: ConditionStatus,
    /// Its reason.
    pub(crate) reason: &'static str,
    /// Its message: most are fixed texts, borrowed rather than copied for each of a fleet's
    /// bindings.
    pub(crate) message: Cow<'static, str>,
    /// Its last transition time.
    pub(crate) since: DateTime<Utc>,
}

impl Step {
    fn new(
        stage: Stage,
        status: ConditionStatus,
        reason: &'static str,
        message: impl Into<Cow<'static, str>>,
        since: DateTime<Utc>,
    ) -> Self {
        Self {
            stage,
            status,
            reason,
            message: message.into(),
            since,
        }
    }

    /// The condition as `metav1.Condition` JSON.
    pub(crate) fn to_json(&self, observed_generation: u64) -> Value {
        condition_json(
            self.stage.type_name(),
            self.status,
            self.reason,
            &self.message,
            self.since,
            observed_generation,
        )
    }
}

/// A `metav1.Condition`.
pub(crate) fn condition_json(
    condition_type: &str,
    status: ConditionStatus,
    reason: &str,
    message: &str,
    since: DateTime<Utc>,
    observed_generation: u64,
) -> Value {
    crate::derived::metav1_condition(
        condition_type,
        status.as_str(),
        reason,
        message,
        since,
        observed_generation,
    )
}

/// One binding's progress.
pub(crate) struct Progress {
    /// The binding's own conditions.
    pub(crate) binding: Vec<Step>,
    /// Its cluster's conditions in the placement status (after `Scheduled`).
    pub(crate) cluster: Vec<Step>,
    /// `failedPlacements`, `driftedPlacements` and `diffedPlacements` from the member's report.
    pub(crate) listed: Listed,
    /// Whether the binding carries the latest resource snapshot (only then does the placement
    /// show its overrides and failed placements for the cluster).
    pub(crate) up_to_date: bool,
    /// The cluster resource override snapshots its work applies, sorted.
    pub(crate) cluster_resource_overrides: Vec<String>,
    /// The resource override snapshots its work applies (`namespace`, `name`), sorted.
    pub(crate) resource_overrides: Vec<(String, String)>,
}

impl Progress {
    /// Whether the cluster shows overrides applied: its binding carries the latest resources
    /// and its work applies an override snapshot.
    pub(crate) fn overrides_applied(&self) -> bool {
        self.up_to_date
            && (!self.cluster_resource_overrides.is_empty() || !self.resource_overrides.is_empty())
    }

    /// Adds the override snapshots the binding's work applies to `target`, each list under
    /// its own field and left out when empty: the binding's spec and the placement's status
    /// name the same two lists differently.
    pub(crate) fn insert_overrides(&self, target: &mut Value, cluster_field: &str, field: &str) {
        if !self.cluster_resource_overrides.is_empty() {
            json::insert(
                target,
                cluster_field,
                work::cluster_override_list(&self.cluster_resource_overrides),
            );
        }
        if !self.resource_overrides.is_empty() {
            json::insert(target, field, work::override_list(&self.resource_overrides));
        }
    }
}

/// The rollout's progress on one binding.
pub(crate) fn progress(state: &State, owner: &Owner<'_>, binding: &Binding) -> Progress {
    progress_sharing(state, owner, binding, &mut Renders::default())
}

/// [`progress`] for one of a placement's bindings, sharing `renders` with the others.
pub(crate) fn progress_sharing(
    state: &State,
    owner: &Owner<'_>,
    binding: &Binding,
    renders: &mut Renders,
) -> Progress {
    let placement = owner.placement;
    let latest = placement.latest_resources();
    // Up to date: the latest resource snapshot, rendered with the overrides that apply to the
    // cluster now (KubeFleet's binding carries both snapshot names; either changing is a new
    // rollout).
    let up_to_date = latest.is_some_and(|l| {
        binding.resource_index == Some(l.index)
            && (state.overrides().is_empty()
                || binding.override_snapshots
                    == flotilla_core::query::overrides::applicable_overrides(
                        state,
                        owner.key,
                        &l.resources,
                        &binding.cluster,
                    ))
    });
    let facts = work::facts_sharing(state, owner, binding, renders);
    let mode = ApplyMode::of(placement);
    let mut result = Progress {
        binding: Vec::new(),
        cluster: Vec::new(),
        listed: Listed::default(),
        up_to_date,
        cluster_resource_overrides: Vec::new(),
        resource_overrides: Vec::new(),
    };
    let Some(latest) = latest else {
        // Without resources there is no rollout.
        result.cluster = vec![unknown(Stage::RolloutStarted, binding.created)];
        return result;
    };
    let external = placement.spec.strategy.strategy_type == StrategyType::External;
    let held_back_since = binding.created.max(latest.created);
    match (binding.state, binding.resource_index, &facts) {
        (BindingState::Scheduled, _, _) | (_, None, _) => {
            if !external && binding.state == BindingState::Scheduled {
                result.binding.push(held_back(held_back_since));
            }
        }
        (BindingState::Bound, Some(_), _) if !up_to_date && !external => {
            let bound_at = binding.rollout_started_at.unwrap_or(binding.created);
            result
                .binding
                .push(held_back(held_back_since.max(bound_at)));
        }
        (_, Some(_), None) => {}
        (_, Some(_), Some(facts)) => {
            let bound_at = binding.rollout_started_at.unwrap_or(binding.created);
            let started = rollout_started_message(owner, binding);
            let chain = work_chain(facts, (bound_at, started), mode, &mut result.listed);
            result.binding = chain;
            if let Ok(rendered) = &*facts.rendered {
                result
                    .cluster_resource_overrides
                    .clone_from(&rendered.cluster_resource_overrides);
                result
                    .resource_overrides
                    .clone_from(&rendered.resource_overrides);
            }
        }
    }
    result.cluster = cluster_chain(&result.binding, mode, up_to_date, held_back_since);
    result
}

/// The `RolloutStarted` message; a staged update run's bind names the run and the resource
/// index (KubeFleet's staged-update placement sample).
fn rollout_started_message(owner: &Owner<'_>, binding: &Binding) -> String {
    const STARTED: &str =
        "Detected the new changes on the resources and started the rollout process";
    match (&binding.update_run, binding.resource_index) {
        (Some(run), Some(index)) => {
            let kind = if owner.key.namespace.is_empty() {
                "clusterStagedUpdateRun"
            } else {
                "stagedUpdateRun"
            };
            format!("{STARTED}, resourceSnapshotIndex: {index}, {kind}: {run}")
        }
        _ => STARTED.to_owned(),
    }
}

/// `RolloutStarted` False on a binding the rollout held back.
fn held_back(since: DateTime<Utc>) -> Step {
    Step::new(
        Stage::RolloutStarted,
        ConditionStatus::False,
        "RolloutNotStartedYet",
        "The resources cannot be updated to the latest because of the rollout strategy",
        since,
    )
}

fn unknown(stage: Stage, since: DateTime<Utc>) -> Step {
    let (reason, message) = stage.unknown_for_cluster();
    Step::new(stage, ConditionStatus::Unknown, reason, message, since)
}

/// The cluster's conditions in the placement status, from its binding's.
fn cluster_chain(
    binding: &[Step],
    mode: ApplyMode,
    up_to_date: bool,
    held_back_since: DateTime<Utc>,
) -> Vec<Step> {
    if !up_to_date {
        return match binding.first() {
            Some(step)
                if step.stage == Stage::RolloutStarted && step.status == ConditionStatus::False =>
            {
                vec![Step::new(
                    Stage::RolloutStarted,
                    ConditionStatus::False,
                    "RolloutNotStartedYet",
                    "The rollout is being blocked by the rollout strategy",
                    step.since,
                )]
            }
            _ => vec![unknown(Stage::RolloutStarted, held_back_since)],
        };
    }
    let mut chain = binding.to_vec();
    match chain.last() {
        None => chain.push(unknown(Stage::RolloutStarted, held_back_since)),
        Some(last) if last.status == ConditionStatus::True => {
            if let Some(next) = last.stage.next(mode) {
                chain.push(unknown(next, last.since));
            }
        }
        Some(_) => {}
    }
    chain
}
