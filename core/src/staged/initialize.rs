//! Initialization of an update run: once, when it is created, in any state (KubeFleet's
//! `initialize`; docs/staged-updates.md). Every failure is permanent and leaves the run
//! `Initialized=False` with KubeFleet's message.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use chrono::{DateTime, Utc};

use super::model::{StrategySpec, TaskType};
use super::run::{ClusterStatus, StageStatus, TaskPosition, TaskStatus, UpdateRun};
use super::{Scope, approval_request_name};
use crate::condition::{Condition, ConditionStatus};
use crate::model::ClusterName;
use crate::model::placement::{PlacementType, StrategyType};
use crate::model::{LabelSelector, ObjectKey};
use crate::overrides;
use crate::placement::{BindingState, Placement};
use crate::staged::Store;

/// KubeFleet's prefix for every initialization failure.
const INITIALIZE_FAILED: &str = "cannot continue the updateRun: failed to initialize the updateRun";
/// KubeFleet's wording for a failure caused by the user's objects.
const USER_ERROR: &str = "failed to process the request due to a client error";
/// KubeFleet's wording for a state its controller does not expect.
const UNEXPECTED: &str = "unexpected behavior which cannot be handled by the controller";
/// How many missing clusters a failure message names.
const MISSING_CLUSTERS_SHOWN_MAX: usize = 10;

/// Why initialization failed, worded as KubeFleet words it.
pub(crate) enum InitError {
    /// The user's objects are wrong.
    User(String),
    /// The hub's own state is not as expected.
    Unexpected(String),
    /// Anything else (not scheduled yet, …).
    Plain(String),
}

impl InitError {
    /// The condition message.
    pub(crate) fn message(&self) -> String {
        match self {
            InitError::User(m) => format!("{INITIALIZE_FAILED}: {USER_ERROR}: {m}"),
            InitError::Unexpected(m) => format!("{INITIALIZE_FAILED}: {UNEXPECTED}: {m}"),
            InitError::Plain(m) => format!("{INITIALIZE_FAILED}: {m}"),
        }
    }
}

/// Initializes `run` against the hub as it is now; on success the status carries the policy
/// snapshot, the cluster count, the strategy snapshot, the stages and the delete stage.
pub(crate) fn initialize(
    state: &Store<'_>,
    scope: &Scope,
    run: &mut UpdateRun,
    now: DateTime<Utc>,
) -> Result<(), InitError> {
    let placement_key = scope.placement_key(&run.spec.placement_name);
    let placement = placement_of(state, &placement_key)?;
    let (selected, to_delete) = scheduled_clusters(placement, &placement_key, run)?;
    let strategy = strategy_of(state, scope, &run.spec.staged_rollout_strategy_name)?;
    run.status.strategy_snapshot = Some(strategy.clone());
    run.status.stages = stages(state, &strategy, &selected, &scope.run_name)?;
    run.status.positions = positions(&run.status.stages);
    run.status.deletion = Some(StageStatus::new(
        super::DELETE_STAGE_NAME.to_owned(),
        to_delete.into_iter().map(ClusterStatus::new),
    ));
    let index = resource_index(
        placement,
        scope,
        run.spec.resource_snapshot_index.as_deref(),
        &placement_key.name,
    )?;
    run.status.resource_snapshot_index_used = Some(index);
    record_overrides(state, &placement_key, placement, index, run);
    check_concurrent_runs(state, scope, run, &strategy)?;
    run.status.initialized = Some(Condition::new(
        "Initialized",
        ConditionStatus::True,
        "UpdateRunInitializedSuccessfully",
        format!("{} initialized successfully", scope.run_kind()),
        run.meta.generation,
        now,
    ));
    Ok(())
}

/// Records the placement's latest policy snapshot and the number of clusters it asks for on
/// the run, and returns the clusters it selected and those whose resources are to be removed.
/// Fails while the policy is not fully scheduled, with no binding at all, or when the bindings
/// selected are not as many as the policy asks for.
fn scheduled_clusters(
    placement: &Placement,
    placement_key: &ObjectKey,
    run: &mut UpdateRun,
) -> Result<(BTreeSet<ClusterName>, BTreeSet<ClusterName>), InitError> {
    let policy = placement.latest_policy().ok_or_else(|| {
        InitError::Plain(format!(
            "no latest policy snapshot associated with the placement: {}/{}",
            placement_key.namespace, placement_key.name
        ))
    })?;
    let policy_name = format!("{}-{}", placement_key.name, policy.index);
    run.status.policy_snapshot_index_used = Some(policy.index);
    let mut count = match placement.placement_type() {
        PlacementType::PickN => policy.number_of_clusters.unwrap_or(0),
        PlacementType::PickFixed => {
            i64::try_from(placement.policy().cluster_names.len()).unwrap_or(i64::MAX)
        }
        PlacementType::PickAll => -1,
    };
    run.status.policy_observed_cluster_count = Some(count);
    if !placement.is_fully_scheduled() {
        return Err(InitError::Plain(format!(
            "policy snapshot `{policy_name}` not fully scheduled yet"
        )));
    }
    let (selected, to_delete) = collect_clusters(placement);
    if selected.is_empty() && to_delete.is_empty() {
        return Err(InitError::Plain(format!(
            "no scheduled or to-be-deleted bindings found for the latest policy snapshot {policy_name}"
        )));
    }
    let selected_count = i64::try_from(selected.len()).unwrap_or(i64::MAX);
    if count == -1 {
        count = selected_count;
        run.status.policy_observed_cluster_count = Some(count);
    } else if count != selected_count {
        return Err(InitError::Unexpected(format!(
            "the number of selected bindings {selected_count} is not equal to the observed cluster count {count}"
        )));
    }
    Ok((selected, to_delete))
}

/// Where each cluster of the stages is: its stage and its position in the stage.
fn positions(stages: &[StageStatus]) -> BTreeMap<ClusterName, (usize, usize)> {
    stages
        .iter()
        .enumerate()
        .flat_map(|(stage, status)| {
            status
                .clusters
                .iter()
                .enumerate()
                .map(move |(position, c)| (c.cluster.as_str().into(), (stage, position)))
        })
        .collect()
}

fn placement_of<'a>(state: &'a Store<'_>, key: &ObjectKey) -> Result<&'a Placement, InitError> {
    let placement = state
        .placements
        .get(key)
        .ok_or_else(|| InitError::User("parent placement not found".to_owned()))?;
    let strategy = placement.spec.strategy.strategy_type;
    if strategy != StrategyType::External {
        return Err(InitError::User(format!(
            "parent placement does not have an external rollout strategy, current strategy: {}",
            strategy.as_str()
        )));
    }
    Ok(placement)
}

/// The selected clusters (bound or scheduled) and the ones whose resources are to be removed,
/// each sorted by name.
pub(crate) fn collect_clusters(
    placement: &Placement,
) -> (BTreeSet<ClusterName>, BTreeSet<ClusterName>) {
    // Collected, not inserted one by one: the bindings come in name order, and a set built
    // from a sorted run is built in one pass.
    let (to_delete, selected): (Vec<_>, Vec<_>) = placement
        .bindings
        .states()
        .partition(|(_, state)| *state == BindingState::Unscheduled);
    let names =
        |bindings: Vec<(ClusterName, BindingState)>| bindings.into_iter().map(|(c, _)| c).collect();
    (names(selected), names(to_delete))
}

fn strategy_of(state: &Store<'_>, scope: &Scope, name: &str) -> Result<StrategySpec, InitError> {
    state
        .strategies
        .get(&scope.strategy_key(name))
        .map(|s| s.spec.clone())
        .ok_or_else(|| {
            InitError::User(format!(
                "referenced {} not found: {name}",
                scope.strategy_kind_lower()
            ))
        })
}

/// Groups the selected clusters into the strategy's stages, in update order. One pass over the
/// clusters (a million-cluster run looks each member up once, not once per stage); of several
/// errors it returns the one a walk stage by stage, clusters in name order, meets first.
fn stages(
    state: &Store<'_>,
    strategy: &StrategySpec,
    selected: &BTreeSet<ClusterName>,
    run_name: &str,
) -> Result<Vec<StageStatus>, InitError> {
    let mut members: Vec<Vec<(i64, &str)>> = strategy.stages.iter().map(|_| Vec::new()).collect();
    let mut first_error: Option<(usize, InitError)> = None;
    let mut missing: Vec<&str> = Vec::new();
    for cluster in selected {
        let placed = match state.sources.members.get(cluster.as_str()) {
            Some(member) => place(strategy, member, cluster),
            None => Ok(None),
        };
        match placed {
            Ok(Some((index, order))) => members[index].push((order, cluster.as_str())),
            Ok(None) => missing.push(cluster.as_str()),
            Err((index, error)) => {
                if first_error.as_ref().is_none_or(|(at, _)| index < *at) {
                    first_error = Some((index, error));
                }
            }
        }
    }
    if let Some((_, error)) = first_error {
        return Err(error);
    }
    if !missing.is_empty() {
        let shown = &missing[..missing.len().min(MISSING_CLUSTERS_SHOWN_MAX)];
        return Err(InitError::User(format!(
            "some clusters are not placed in any stage, total {}, showing up to {MISSING_CLUSTERS_SHOWN_MAX}: {}",
            missing.len(),
            shown.join(", ")
        )));
    }
    let statuses = strategy
        .stages
        .iter()
        .zip(members)
        .map(|(stage, mut members)| {
            members.sort();
            let clusters = members
                .into_iter()
                .map(|(_, c)| ClusterStatus::new(c.into()));
            let mut status = StageStatus::new(stage.name.clone(), clusters);
            status.before_tasks = tasks(
                &stage.before_stage_tasks,
                run_name,
                &stage.name,
                TaskPosition::Before,
            );
            status.after_tasks = tasks(
                &stage.after_stage_tasks,
                run_name,
                &stage.name,
                TaskPosition::After,
            );
            status
        });
    Ok(statuses.collect())
}

/// The stage `cluster` goes to and its sorting value (`None`: no stage selects it), or the
/// stage where a walk stage by stage meets its error: a second stage selecting it, or a
/// sorting label that is not an integer.
fn place(
    strategy: &StrategySpec,
    member: &crate::member::Member,
    cluster: &str,
) -> Result<Option<(usize, i64)>, (usize, InitError)> {
    let mut placed = None;
    for (index, stage) in strategy.stages.iter().enumerate() {
        if !selects(stage.label_selector.as_ref(), &member.meta.labels) {
            continue;
        }
        if placed.is_some() {
            return Err((
                index,
                InitError::User(format!(
                    "cluster `{cluster}` appears in more than one stages"
                )),
            ));
        }
        let order = match &stage.sorting_label_key {
            Some(key) => sorting_value(key, member.meta.labels.get(key), cluster)
                .map_err(|error| (index, error))?,
            None => 0,
        };
        placed = Some((index, order));
    }
    Ok(placed)
}

/// An absent selector selects no cluster; an empty one selects all (KubeFleet's rule).
pub(crate) fn selects(selector: Option<&LabelSelector>, labels: &crate::model::StringMap) -> bool {
    selector.is_some_and(|s| s.matches(labels))
}

/// The sorting label's integer value, as Go's `strconv.Atoi` reads it.
fn sorting_value(
    key: &str,
    value: Option<&compact_str::CompactString>,
    cluster: &str,
) -> Result<i64, InitError> {
    let text = value.map_or("", compact_str::CompactString::as_str);
    text.parse::<i64>().map_err(|_| {
        InitError::User(format!(
            "the sorting label `{key}:{text}` on cluster `{cluster}` is not valid: strconv.Atoi: parsing {text:?}: invalid syntax"
        ))
    })
}

fn tasks(
    tasks: &[super::model::StageTask],
    run: &str,
    stage: &str,
    position: TaskPosition,
) -> Vec<TaskStatus> {
    tasks
        .iter()
        .map(|task| TaskStatus {
            task_type: task.task_type,
            approval_request_name: (task.task_type == TaskType::Approval)
                .then(|| approval_request_name(run, position, stage)),
            conditions: Vec::new(),
            analysis: (task.task_type == TaskType::Analysis)
                .then(crate::staged::analysis::AnalysisStatus::default),
        })
        .collect()
}

fn resource_index(
    placement: &Placement,
    scope: &Scope,
    wanted: Option<&str>,
    placement_name: &str,
) -> Result<u64, InitError> {
    let Some(text) = wanted.filter(|t| !t.is_empty()) else {
        return placement
            .latest_resources()
            .map(|s| s.index)
            .ok_or_else(|| {
                InitError::User(format!(
                    "no {} found for {} `{placement_name}`",
                    scope.resource_snapshot_kinds(),
                    scope.placement_kind_lower()
                ))
            });
    };
    let index = text.parse::<u64>().map_err(|_| {
        InitError::User(format!(
            "invalid resource snapshot index `{text}` provided, expected an integer >= 0"
        ))
    })?;
    if placement.resource_snapshot(index).is_some() {
        Ok(index)
    } else {
        Err(InitError::User(format!(
            "no {} with index `{index}` found for {} `{placement_name}`",
            scope.resource_snapshot_kinds(),
            scope.placement_kind_lower()
        )))
    }
}

/// Records, per cluster, the override snapshots its work will be rendered with.
fn record_overrides(
    state: &Store<'_>,
    placement_key: &ObjectKey,
    placement: &Placement,
    index: u64,
    run: &mut UpdateRun,
) {
    let Some(snapshot) = placement.resource_snapshot(index) else {
        return;
    };
    if state.sources.overrides.is_empty() {
        return;
    }
    for stage in &mut run.status.stages {
        for cluster in &mut stage.clusters {
            let cluster = Arc::make_mut(cluster);
            let (cro, ro) = overrides::applicable_overrides(
                state.sources,
                placement_key,
                &snapshot.resources,
                &cluster.cluster,
            );
            cluster.cluster_resource_overrides = cro;
            cluster.resource_overrides = ro;
        }
    }
}

/// Concurrent runs on one placement must follow identical strategies (their strategy snapshots;
/// docs/staged-updates.md).
fn check_concurrent_runs(
    state: &Store<'_>,
    scope: &Scope,
    run: &UpdateRun,
    strategy: &StrategySpec,
) -> Result<(), InitError> {
    let conflict = state.update_runs.iter().find(|(key, other)| {
        key.namespace == scope.namespace()
            && key.kind == scope.run_kind()
            && other.spec.placement_name == run.spec.placement_name
            && !other.is_finished()
            && other
                .status
                .strategy_snapshot
                .as_ref()
                .is_some_and(|s| s != strategy)
    });
    match conflict {
        Some((key, _)) => Err(InitError::User(format!(
            "the strategy snapshot differs from the one of the concurrent {} `{}` on the same placement; concurrent runs must use identical strategies",
            scope.run_kind(),
            key.name
        ))),
        None => Ok(()),
    }
}
