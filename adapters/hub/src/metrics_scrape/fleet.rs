//! The gauges computed when `/metrics` is scraped: fold lag from the log and the folded
//! sequence, the fleet's counts and ages from the folded state, and the hub's role. A scrape
//! costs one pass over the members, placements (with their clusters' progress, as `kubectl
//! get` shows it), runs and approval requests, under the view's read lock; folding costs
//! nothing for them.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Mutex, OnceLock, PoisonError};

use chrono::{DateTime, Utc};

use flotilla_core::State;
use flotilla_core::condition::ConditionStatus;
use flotilla_core::model::ObjectKey;
use flotilla_core::query::member::Member;
use flotilla_core::query::staged::run::UpdateRun;
use flotilla_eventstore::EventLog;

use super::attention::Attention;
use super::text::Family;
use crate::hub_metrics::{
    CLUSTERS, FOLD_LAG_EVENTS, FOLD_LAG_SECONDS, FOLDED_SEQ, HEARTBEAT_AGE_SECONDS, PLACEMENTS,
    UPDATE_RUNS, WRITER,
};
use crate::runtime::{Hub, HubError, View};

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

/// Every role a hub can have.
const ROLES: [&str; 3] = ["writer", "standby", "follower"];

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
        .map_or(0.0, |event| seconds_between(event.time, hub.now()));
    Ok((folded, events, waited))
}

/// Sets clusters by health (with their oldest heartbeat), placements by condition, runs by
/// state and this hub's role from the folded view; returns the per-object families of what
/// needs attention ([`Attention`]), gathered in the same pass.
///
/// # Errors
/// When the view's lock is poisoned.
pub(super) fn publish_fleet<L: EventLog>(hub: &Hub<L>) -> Result<Vec<Family>, HubError> {
    let now = hub.now();
    let view = hub.view()?;
    let mut roles = zeros("role", &ROLES);
    roles.insert(labels("role", role(&view)), 1);
    let state = &view.folder.state;
    let (clusters, ages) = members(state, now);
    let mut attention = Attention::default();
    let mut runs = zeros("state", &RUN_STATES);
    for (key, run) in state.update_runs() {
        let run_state = run_state(run);
        *runs.entry(labels("state", run_state)).or_default() += 1;
        attention.run(key, run, run_state);
    }
    let mut placements: BTreeMap<Labels, u64> = BTreeMap::new();
    for (key, placement) in state.placements() {
        let shown = placement_condition(state, key);
        attention.placement(state, key, placement, &shown);
        let series = vec![("condition", shown.condition), ("status", shown.status)];
        *placements.entry(series).or_default() += 1;
    }
    attention.approvals(state, now);
    drop(view);
    set_family(CLUSTERS, counted(clusters));
    set_family(HEARTBEAT_AGE_SECONDS, ages);
    set_family(UPDATE_RUNS, counted(runs));
    set_family(PLACEMENTS, counted(placements));
    set_family(WRITER, counted(roles));
    Ok(attention.families())
}

/// Members by health, and the oldest heartbeat's age in each health (0 without members):
/// the hub's now minus the last heartbeat, or minus the member's creation for one that never
/// sent any (`Unknown`).
fn members(state: &State, now: DateTime<Utc>) -> (BTreeMap<Labels, u64>, BTreeMap<Labels, f64>) {
    let mut counts = [0_u64; HEALTHS.len()];
    let mut ages = [0.0_f64; HEALTHS.len()];
    for member in state.members().values() {
        let health = health(member);
        let Some(index) = HEALTHS.iter().position(|known| *known == health) else {
            continue;
        };
        let since = member
            .agent
            .as_ref()
            .map_or(member.meta.creation_timestamp, |agent| agent.last_heartbeat);
        counts[index] += 1;
        ages[index] = ages[index].max(seconds_between(since, now));
    }
    let by_health = |index: usize| labels("health", HEALTHS[index]);
    (
        (0..HEALTHS.len())
            .map(|i| (by_health(i), counts[i]))
            .collect(),
        (0..HEALTHS.len())
            .map(|i| (by_health(i), ages[i]))
            .collect(),
    )
}

/// This hub's part: `writer` while it writes, `follower` when it only ever follows
/// (`--read-only`), `standby` otherwise (following a writer, or fenced, or declined).
fn role(view: &View) -> &'static str {
    if view.read_only {
        "follower"
    } else if view.following || view.fenced.is_some() || view.declined.is_some() {
        "standby"
    } else {
        "writer"
    }
}

/// Seconds from `since` to `now`, 0 when `since` is later.
pub(super) fn seconds_between(since: DateTime<Utc>, now: DateTime<Utc>) -> f64 {
    let millis = (now - since).num_milliseconds().max(0);
    as_f64(u64::try_from(millis).unwrap_or(0)) / 1000.0
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
pub(super) fn run_state(run: &UpdateRun) -> &'static str {
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

/// The last condition a placement shows: its type without the kind's prefix, its status and
/// reason.
pub(super) struct Shown {
    pub(super) condition: String,
    pub(super) status: String,
    pub(super) reason: String,
}

/// The last condition a placement shows; `None`/`Unknown` before the scheduler has looked at
/// it.
fn placement_condition(state: &State, key: &ObjectKey) -> Shown {
    let rendered = flotilla_projections::render_object(state, key);
    let last = rendered
        .as_ref()
        .and_then(|object| object["status"]["conditions"].as_array())
        .and_then(|conditions| conditions.last());
    let Some(last) = last else {
        return Shown {
            condition: "None".to_owned(),
            status: "Unknown".to_owned(),
            reason: String::new(),
        };
    };
    let condition_type = last["type"].as_str().unwrap_or_default();
    let short = condition_type
        .strip_prefix(key.kind.as_str())
        .unwrap_or(condition_type);
    Shown {
        condition: short.to_owned(),
        status: last["status"].as_str().unwrap_or("Unknown").to_owned(),
        reason: last["reason"].as_str().unwrap_or_default().to_owned(),
    }
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

fn counted(counts: BTreeMap<Labels, u64>) -> BTreeMap<Labels, f64> {
    counts
        .into_iter()
        .map(|(series, count)| (series, as_f64(count)))
        .collect()
}

/// Sets a gauge family to `values`; a series set by an earlier scrape and absent now is set to
/// 0, so a state nothing is in any more reads 0 rather than its last count.
fn set_family(name: &'static str, values: BTreeMap<Labels, f64>) {
    static SEEN: OnceLock<Mutex<BTreeMap<&'static str, BTreeSet<Labels>>>> = OnceLock::new();
    let mut seen = SEEN
        .get_or_init(Mutex::default)
        .lock()
        .unwrap_or_else(PoisonError::into_inner);
    let known = seen.entry(name).or_default();
    for gone in known.iter().filter(|series| !values.contains_key(*series)) {
        metrics::gauge!(name, to_labels(gone)).set(0.0);
    }
    for (series, value) in values {
        metrics::gauge!(name, to_labels(&series)).set(value);
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

#[cfg(test)]
mod tests {
    use crate::runtime::View;

    #[test]
    fn a_hub_is_the_writer_until_it_follows_and_a_follower_when_read_only() {
        let mut view = View::default();
        assert_eq!(super::role(&view), "writer");
        view.following = true;
        assert_eq!(super::role(&view), "standby");
        view.following = false;
        view.fenced = Some("lost the lease".to_owned());
        assert_eq!(super::role(&view), "standby");
        view.read_only = true;
        assert_eq!(super::role(&view), "follower");
    }
}
