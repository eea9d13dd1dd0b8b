//! The gauges computed when `/metrics` is scraped: fold lag from the log and the folded
//! sequence, and the fleet's counts from the folded state. A scrape costs one pass over the
//! members, placements (with their clusters' progress, as `kubectl get` shows it) and runs,
//! under the view's read lock; folding costs nothing for them.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Mutex, OnceLock, PoisonError};

use flotilla_core::State;
use flotilla_core::condition::ConditionStatus;
use flotilla_core::member::Member;
use flotilla_core::model::ObjectKey;
use flotilla_core::staged::run::UpdateRun;
use flotilla_eventstore::EventLog;

use crate::hub_metrics::{
    CLUSTERS, FOLD_LAG_EVENTS, FOLD_LAG_SECONDS, FOLDED_SEQ, PLACEMENTS, UPDATE_RUNS,
};
use crate::runtime::{Hub, HubError};

/// Every `health` a cluster can have, so each series exists from the first scrape.
const HEALTHS: [&str; 4] = ["Healthy", "Unhealthy", "Unknown", "Leaving"];
/// Every `state` an update run can have.
const RUN_STATES: [&str; 9] = [
    "Initializing",
    "Initialized",
    "Progressing",
    "Waiting",
    "Stuck",
    "Stopping",
    "Stopped",
    "Succeeded",
    "Failed",
];

/// One series' labels, in order.
type Labels = Vec<(&'static str, String)>;

/// Sets the fold lag gauges and the folded sequence. A log that cannot be read leaves them as
/// they were (logged).
pub(super) async fn publish_lag<L: EventLog>(hub: &Hub<L>) {
    match fold_lag(hub).await {
        Ok((folded, events, seconds)) => {
            metrics::gauge!(FOLDED_SEQ).set(as_f64(folded));
            metrics::gauge!(FOLD_LAG_EVENTS).set(as_f64(events));
            metrics::gauge!(FOLD_LAG_SECONDS).set(seconds);
        }
        Err(error) => tracing::warn!(%error, "cannot read the fold lag for /metrics"),
    }
}

/// `(folded seq, unfolded inputs, seconds the oldest unfolded input has waited)`. The seconds
/// are 0 when nothing waits, or when the oldest unfolded record carries no time (a rejected
/// record).
async fn fold_lag<L: EventLog>(hub: &Hub<L>) -> Result<(u64, u64, f64), HubError> {
    let last = hub.log().last_seq().await?;
    let folded = hub.view()?.folder.seq;
    let events = last.saturating_sub(folded);
    if events == 0 {
        return Ok((folded, 0, 0.0));
    }
    let oldest = hub.log().read(folded + 1, 1).await?;
    let waited = oldest
        .first()
        .and_then(|stored| stored.event())
        .map_or(0.0, |event| {
            let millis = (hub.now() - event.time).num_milliseconds().max(0);
            as_f64(u64::try_from(millis).unwrap_or(0)) / 1000.0
        });
    Ok((folded, events, waited))
}

/// Sets clusters by health, placements by condition and runs by state from the folded view.
///
/// # Errors
/// When the view's lock is poisoned.
pub(super) fn publish_fleet<L: EventLog>(hub: &Hub<L>) -> Result<(), HubError> {
    let view = hub.view()?;
    let state = &view.folder.state;
    let mut clusters = zeros("health", &HEALTHS);
    for member in state.members().values() {
        *clusters
            .entry(labels("health", health(member)))
            .or_default() += 1;
    }
    let mut runs = zeros("state", &RUN_STATES);
    for run in state.update_runs().values() {
        *runs.entry(labels("state", run_state(run))).or_default() += 1;
    }
    let mut placements: BTreeMap<Labels, u64> = BTreeMap::new();
    for key in state.placements().keys() {
        let (condition, status) = placement_condition(state, key);
        let series = vec![("condition", condition), ("status", status)];
        *placements.entry(series).or_default() += 1;
    }
    drop(view);
    set_family(CLUSTERS, clusters);
    set_family(UPDATE_RUNS, runs);
    set_family(PLACEMENTS, placements);
    Ok(())
}

/// A cluster's health: leaving once deleted, unknown before its first heartbeat.
fn health(member: &Member) -> &'static str {
    match &member.agent {
        _ if member.is_leaving() => "Leaving",
        None => "Unknown",
        Some(agent) if agent.healthy => "Healthy",
        Some(_) => "Unhealthy",
    }
}

/// A run's state, from its conditions as KubeFleet's controller sets them (the `Progressing`
/// reasons `UpdateRunStuck`, `UpdateRunStopping`, `UpdateRunStopped`; a stage waiting on its
/// approval or timed wait makes the run `Waiting`).
fn run_state(run: &UpdateRun) -> &'static str {
    let status = &run.status;
    if let Some(succeeded) = &status.succeeded {
        return if succeeded.status == ConditionStatus::True {
            "Succeeded"
        } else {
            "Failed"
        };
    }
    match &status.initialized {
        None => return "Initializing",
        Some(initialized) if initialized.status != ConditionStatus::True => return "Failed",
        Some(_) => {}
    }
    let Some(progressing) = &status.progressing else {
        return "Initialized";
    };
    match progressing.reason.as_str() {
        "UpdateRunStuck" => "Stuck",
        "UpdateRunStopping" => "Stopping",
        "UpdateRunStopped" => "Stopped",
        _ if stage_waits(run) => "Waiting",
        _ => "Progressing",
    }
}

/// Whether a stage still waits: a finished stage keeps its `StageUpdatingWaiting` progressing
/// condition beside its `Succeeded` one, and waits on nothing any more.
fn stage_waits(run: &UpdateRun) -> bool {
    run.status.stages.iter().any(|stage| {
        stage.succeeded.is_none()
            && stage
                .progressing
                .as_ref()
                .is_some_and(|c| c.reason == "StageUpdatingWaiting")
    })
}

/// The last condition a placement shows (its type without the kind's prefix) and its status;
/// `("None", "Unknown")` before the scheduler has looked at it.
fn placement_condition(state: &State, key: &ObjectKey) -> (String, String) {
    let rendered = flotilla_projections::render_object(state, key);
    let last = rendered
        .as_ref()
        .and_then(|object| object["status"]["conditions"].as_array())
        .and_then(|conditions| conditions.last());
    let Some(last) = last else {
        return ("None".to_owned(), "Unknown".to_owned());
    };
    let condition_type = last["type"].as_str().unwrap_or_default();
    let short = condition_type
        .strip_prefix(key.kind.as_str())
        .unwrap_or(condition_type);
    let status = last["status"].as_str().unwrap_or("Unknown");
    (short.to_owned(), status.to_owned())
}

fn labels(name: &'static str, value: &str) -> Labels {
    vec![(name, value.to_owned())]
}

/// Every value of a label at 0.
fn zeros(name: &'static str, values: &[&str]) -> BTreeMap<Labels, u64> {
    values
        .iter()
        .map(|value| (labels(name, value), 0))
        .collect()
}

/// Sets a gauge family to `counts`; a series set by an earlier scrape and absent now is set to
/// 0, so a state nothing is in any more reads 0 rather than its last count.
fn set_family(name: &'static str, counts: BTreeMap<Labels, u64>) {
    static SEEN: OnceLock<Mutex<BTreeMap<&'static str, BTreeSet<Labels>>>> = OnceLock::new();
    let mut seen = SEEN
        .get_or_init(Mutex::default)
        .lock()
        .unwrap_or_else(PoisonError::into_inner);
    let known = seen.entry(name).or_default();
    for gone in known.iter().filter(|series| !counts.contains_key(*series)) {
        metrics::gauge!(name, to_labels(gone)).set(0.0);
    }
    for (series, count) in counts {
        metrics::gauge!(name, to_labels(&series)).set(as_f64(count));
        known.insert(series);
    }
}

fn to_labels(series: &Labels) -> Vec<metrics::Label> {
    series
        .iter()
        .map(|(key, value)| metrics::Label::new(*key, value.clone()))
        .collect()
}

#[allow(clippy::cast_precision_loss)] // counts and sequences stay far below 2^52
fn as_f64(count: u64) -> f64 {
    count as f64
}
