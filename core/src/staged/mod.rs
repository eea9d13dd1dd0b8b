//! Staged update runs (KubeFleet's `ClusterStagedUpdateRun` and `StagedUpdateRun`): strategies that
//! group a placement's clusters into ordered stages, runs that roll one resource snapshot out stage
//! by stage, and the approval requests that gate stages. Both scopes: `ClusterStagedUpdateStrategy`
//! / `ClusterStagedUpdateRun` / `ClusterApprovalRequest` for ClusterResourcePlacements, and
//! `StagedUpdateStrategy` / `StagedUpdateRun` / `ApprovalRequest` for ResourcePlacements in the
//! run's own namespace — a namespaced run never reaches outside it.
//!
//! A run initializes once, on creation, whatever its state; it executes only while
//! `state: Run`. It is driven after every step that can move it: its own spec changing, an
//! approval given or its request deleted, a work report or a scheduling change on its
//! placement, and the deadlines it asks for (a TimedWait elapsing, a cluster becoming stuck).

pub mod analysis;
pub mod approval;
mod execute;
pub mod gates;
mod initialize;
pub mod model;
pub mod rollback_watch;
pub mod run;
pub(crate) mod shared;
pub(crate) mod store;

use std::collections::{BTreeMap, BTreeSet};

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::change::{Change, Changes};
use crate::condition::{Condition, ConditionStatus};
use crate::decision::Decision;
use crate::model::ClusterName;
use crate::model::{
    CLUSTER_RESOURCE_PLACEMENT, ObjectKey, ObjectMeta, PLACEMENT_GROUP, RESOURCE_PLACEMENT,
};
use model::StrategySpec;
use run::TaskPosition;

pub use crate::model::{
    APPROVAL_REQUEST, CLUSTER_APPROVAL_REQUEST, CLUSTER_STAGED_UPDATE_RUN,
    CLUSTER_STAGED_UPDATE_STRATEGY, STAGED_UPDATE_RUN, STAGED_UPDATE_STRATEGY,
};
/// The name of the final stage that removes work from unscheduled clusters.
pub const DELETE_STAGE_NAME: &str = "kubernetes-fleet.io/deleteStage";

/// A stored strategy.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Strategy {
    /// Metadata.
    pub meta: ObjectMeta,
    /// Spec.
    pub spec: StrategySpec,
}

/// The name of the approval request for a task of a run's stage (KubeFleet's
/// `<run>-before|after-<stage>` names).
#[must_use]
pub fn approval_request_name(run: &str, position: TaskPosition, stage: &str) -> String {
    format!("{run}-{}-{stage}", position.as_str())
}

pub use crate::model::run_scope::Scope;

/// Whether a key is a run of either scope.
#[must_use]
pub fn is_run(key: &ObjectKey) -> bool {
    key.group == PLACEMENT_GROUP
        && matches!(
            key.kind.as_str(),
            CLUSTER_STAGED_UPDATE_RUN | STAGED_UPDATE_RUN
        )
}

/// Whether a key is an approval request of either scope.
#[must_use]
pub fn is_approval_request(key: &ObjectKey) -> bool {
    key.group == PLACEMENT_GROUP
        && matches!(
            key.kind.as_str(),
            CLUSTER_APPROVAL_REQUEST | APPROVAL_REQUEST
        )
}

/// Drives every run the step's changes may have moved, and runs whose deadline passed.
pub(crate) fn drive_touched(
    state: &mut Store<'_>,
    changes: &mut Changes,
    now: DateTime<Utc>,
) -> Vec<Decision> {
    if state.update_runs.is_empty() {
        return Vec::new();
    }
    let mut touched = Touched::default();
    for change in changes.iter() {
        touched.note(state, change);
    }
    mark_rescheduled(state, &touched.rescheduled);
    let mut keys = touched.runs(state);
    while let Some((deadline, key)) = state.run_deadlines.first().cloned() {
        if deadline > now {
            break;
        }
        state.run_deadlines.pop_first();
        keys.insert(key, None);
    }
    let mut out = Vec::new();
    for (key, focus) in keys {
        out.extend(drive(state, &key, now, focus, changes));
    }
    out
}

/// Runs whose placement's scheduling changed must check their clusters again before they go on.
fn mark_rescheduled(state: &mut Store<'_>, placements: &BTreeSet<ObjectKey>) {
    if placements.is_empty() {
        return;
    }
    for (key, run) in state.update_runs.iter_mut() {
        let placement = Scope::of(key).placement_key(&run.spec.placement_name);
        if placements.contains(&placement) {
            run.status.needs_validation = true;
        }
    }
}

/// What a step's changes mean for the runs.
#[derive(Debug, Default)]
struct Touched {
    /// Placements whose scheduling may have changed (their runs validate again).
    rescheduled: BTreeSet<ObjectKey>,
    /// Placements whose runs need a full check.
    full: BTreeSet<ObjectKey>,
    /// Placements with only work reports, and the clusters that reported.
    reported: BTreeMap<ObjectKey, BTreeSet<ClusterName>>,
    /// Runs named directly (their own spec, an approval).
    runs: BTreeMap<ObjectKey, Focus>,
}

impl Touched {
    fn note(&mut self, state: &Store<'_>, change: &Change) {
        match change {
            Change::ObjectStored(key) | Change::ObjectDeleted(key) => {
                self.rescheduled.insert(key.clone());
                if state.update_runs.contains_key(key) {
                    self.runs.insert(key.clone(), None);
                } else {
                    self.full.insert(key.clone());
                }
            }
            Change::ApprovalGranted { request } => {
                if let Some(approval) = state.approvals.get(request) {
                    let scope = Scope {
                        namespace: request.namespace.clone(),
                        run_name: approval.run.as_str().into(),
                    };
                    self.runs.insert(scope.run_key(), None);
                }
            }
            Change::AnalysisMeasured { run } | Change::ApprovalDeleted { run } => {
                self.runs.insert(run.clone(), None);
            }
            Change::WorkReported { placement, cluster } => {
                self.reported
                    .entry(placement.clone())
                    .or_default()
                    .insert(cluster.clone());
            }
            Change::ClusterScheduled { placement, .. }
            | Change::ClusterUnscheduled { placement, .. }
            | Change::SchedulingChanged { placement }
            | Change::PolicySnapshotTaken { placement }
            | Change::BindingRemoved { placement, .. } => {
                self.rescheduled.insert(placement.clone());
                self.full.insert(placement.clone());
            }
            Change::ResourceSnapshotTaken { placement } => {
                self.full.insert(placement.clone());
            }
            // Cluster health and membership reach runs through scheduling; a binding bound is
            // a run's (or the rollout's) own doing; evictions through the binding they remove.
            Change::ClusterJoined { .. }
            | Change::ClusterHealthChanged { .. }
            | Change::ClusterLeft { .. }
            | Change::BindingBound { .. }
            | Change::OverrideSnapshotTaken { .. }
            | Change::EvictionReconciled { .. } => {}
        }
    }

    /// The runs to drive, each with the clusters to check: `Some` when only work reports
    /// touched it (only those clusters can have finished), `None` for a full check.
    fn runs(self, state: &Store<'_>) -> BTreeMap<ObjectKey, Focus> {
        let Self {
            full,
            reported,
            mut runs,
            ..
        } = self;
        if full.is_empty() && reported.is_empty() {
            return runs;
        }
        for (key, run) in state.update_runs.iter() {
            if run.is_finished() {
                continue;
            }
            // Compared in place: this runs on every work report, so it allocates nothing.
            let its_placement = |placement: &ObjectKey| runs_placement(key, run, placement);
            if full.iter().any(its_placement) {
                runs.insert(key.clone(), None);
            } else if let Some((_, clusters)) = reported
                .iter()
                .find(|(placement, _)| its_placement(placement))
                && let Some(focus) = runs
                    .entry(key.clone())
                    .or_insert_with(|| Some(BTreeSet::new()))
            {
                focus.extend(clusters.iter().cloned());
            }
        }
        runs
    }
}

/// Whether `placement` is the one the run `key` names (what [`Scope::placement_key`] builds).
fn runs_placement(key: &ObjectKey, run: &run::UpdateRun, placement: &ObjectKey) -> bool {
    let kind = if key.namespace.is_empty() {
        CLUSTER_RESOURCE_PLACEMENT
    } else {
        RESOURCE_PLACEMENT
    };
    placement.name == run.spec.placement_name
        && placement.namespace == key.namespace
        && placement.kind == kind
        && placement.group == PLACEMENT_GROUP
}

/// Which updating clusters a drive checks: `None` all of them, `Some` only these (the ones
/// that reported; the others cannot have changed).
type Focus = Option<BTreeSet<ClusterName>>;

crate::revision::stored_objects!(Strategy => StrategySpec, run::UpdateRun => model::RunSpec);

/// What a staged run's verbs change and read, borrowed from the state: the placements whose
/// bindings runs roll out, the strategies, runs, approval requests and run deadlines, the hub's
/// resource version counter, and what overrides render with (the overrides and the member
/// clusters).
pub(crate) struct Store<'a> {
    /// ClusterResourcePlacements and ResourcePlacements.
    pub placements: &'a mut BTreeMap<ObjectKey, crate::placement::Placement>,
    /// Staged update strategies of both scopes.
    pub strategies: &'a mut BTreeMap<ObjectKey, Strategy>,
    /// Staged update runs of both scopes, with their status.
    pub update_runs: &'a mut BTreeMap<ObjectKey, run::UpdateRun>,
    /// Approval requests the runs created.
    pub approvals: &'a mut BTreeMap<ObjectKey, run::ApprovalRequest>,
    /// When a run must look again.
    pub run_deadlines: &'a mut BTreeSet<(DateTime<Utc>, ObjectKey)>,
    /// The last resource version handed out.
    pub resource_version: &'a mut u64,
    /// The overrides, their retired snapshots and the member clusters.
    pub sources: crate::overrides::Sources<'a>,
}

impl Store<'_> {
    /// The same store, borrowed again for a shorter while (a pass holds it by value).
    pub(crate) fn reborrow(&mut self) -> Store<'_> {
        Store {
            placements: self.placements,
            strategies: self.strategies,
            update_runs: self.update_runs,
            approvals: self.approvals,
            run_deadlines: self.run_deadlines,
            resource_version: self.resource_version,
            sources: self.sources,
        }
    }

    /// Hands out the next resource version.
    pub(crate) fn next_resource_version(&mut self) -> u64 {
        crate::revision::next_version(self.resource_version)
    }
}

/// What the staged runs' public questions read, borrowed from the state: the runs and the
/// approval requests. A `&State` converts into it.
#[derive(Clone, Copy)]
pub struct View<'a> {
    /// Staged update runs of both scopes, with their status.
    pub update_runs: &'a BTreeMap<ObjectKey, run::UpdateRun>,
    /// Approval requests the runs created.
    pub approvals: &'a BTreeMap<ObjectKey, run::ApprovalRequest>,
}

/// Initializes (once) and executes one run as far as it can go now.
pub(crate) fn drive(
    state: &mut Store<'_>,
    key: &ObjectKey,
    now: DateTime<Utc>,
    focus: Focus,
    changes: &mut Changes,
) -> Vec<Decision> {
    let Some(mut run) = state.update_runs.remove(key) else {
        return Vec::new();
    };
    let scope = Scope::of(key);
    let mut decisions = Vec::new();
    if run.status.initialized.is_none() {
        let result = initialize::initialize(state, &scope, &mut run, now);
        let failure = result.err().map(|e| e.message());
        if let Some(message) = &failure {
            run.status.initialized = Some(Condition::new(
                "Initialized",
                ConditionStatus::False,
                "UpdateRunInitializedFailed",
                message.clone(),
                run.meta.generation,
                now,
            ));
        }
        decisions.push(Decision::UpdateRunInitialized {
            run: scope.run_key(),
            failure,
        });
    }
    // A strategy switch is a change of the placement, which drives its runs in full: a drive
    // focused on reporting clusters need not look.
    let switched = focus
        .is_none()
        .then(|| strategy_changed(state, &scope, &run))
        .flatten();
    if let Some(message) = switched {
        run.status.succeeded = Some(Condition::new(
            "Succeeded",
            ConditionStatus::False,
            "UpdateRunFailed",
            message.clone(),
            run.meta.generation,
            now,
        ));
        decisions.push(Decision::UpdateRunFinished {
            run: key.clone(),
            succeeded: false,
            message,
        });
    }
    let mut wake_at = None;
    if !run.is_finished() && run.spec.state != model::RunState::Initialize {
        let placement = scope.placement_key(&run.spec.placement_name);
        let mut pass = execute::Pass {
            state: state.reborrow(),
            scope: &scope,
            placement,
            run: &mut run,
            now,
            decisions: Vec::new(),
            wake_at: None,
            focus,
            changes,
        };
        execute::execute(&mut pass);
        wake_at = pass.wake_at;
        decisions.extend(pass.decisions);
    }
    if let Some(at) = wake_at.filter(|_| !run.is_finished()) {
        state.run_deadlines.insert((at, key.clone()));
    }
    state.update_runs.insert(key.clone(), run);
    decisions
}

/// Why an initialized, unfinished run cannot go on because its placement no longer uses the
/// `External` strategy (a user switched it to `RollingUpdate` or `Partitioned`): the run would
/// otherwise keep bindings the new strategy now drives.
fn strategy_changed(state: &Store<'_>, scope: &Scope, run: &run::UpdateRun) -> Option<String> {
    if run.is_finished() || run.status.initialized.is_none() {
        return None;
    }
    let placement = state
        .placements
        .get(&scope.placement_key(&run.spec.placement_name))?;
    let now_type = placement.spec.strategy.strategy_type;
    (now_type != crate::model::placement::StrategyType::External).then(|| {
        format!(
            "cannot continue the updateRun: the placement's rollout strategy type changed from \
             External to {}",
            now_type.as_str()
        )
    })
}
