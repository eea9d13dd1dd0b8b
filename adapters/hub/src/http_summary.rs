//! `GET /v1/summary` and `GET /v1/members`: what the web page opens on, sized by what a person
//! reads rather than by the fleet. The summary counts member health and lists placements, runs
//! not done and pending approvals (each list capped at [`LISTED_MAX`]); the members endpoint
//! answers one page of member clusters and how many match. Both read the state under the
//! view's read lock, or at `at=` the state folded at that point, as `/v1/objects` does.

use std::collections::BTreeMap;

use axum::Json;
use axum::extract::{Query, State};
use axum::response::{IntoResponse, Response};
use flotilla_core::condition::{Condition, ConditionStatus};
use flotilla_core::query::member::Member;
use flotilla_core::query::staged::run::UpdateRun;
use flotilla_eventstore::EventLog;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::http::{Snapshot, snapshot};
use crate::runtime::Hub;

/// Most placements, runs and approvals one summary lists; the totals say how many there were.
pub const LISTED_MAX: usize = 100;
/// Most runs whose placement the summary explains (why it waits): each explanation walks the
/// placement's bindings, so only a few are made per read.
pub const EXPLAINED_MAX: usize = 10;
/// Cluster names kept per wait in the summary; the wait's text already counts them.
const WAIT_CLUSTERS_MAX: usize = 5;
/// Rows of one members page unless `limit` says otherwise, and the most it may say.
pub const MEMBERS_PAGE: usize = 100;
pub const MEMBERS_PAGE_MAX: usize = 500;

#[derive(Deserialize)]
pub(crate) struct AtQuery {
    at: Option<String>,
}

/// `GET /v1/summary?at=`.
pub(crate) async fn summary<L: EventLog>(
    State(hub): State<Hub<L>>,
    Query(query): Query<AtQuery>,
) -> Response {
    let snapshot = match snapshot(&hub, query.at.as_deref()).await {
        Ok(snapshot) => snapshot,
        Err(response) => return response,
    };
    Json(summarize(&snapshot)).into_response()
}

fn summarize(snapshot: &Snapshot<'_>) -> Value {
    let state = snapshot.state();
    let mut health: BTreeMap<&str, usize> = HEALTHS.iter().map(|health| (*health, 0)).collect();
    for member in state.members().values() {
        *health.entry(health_of(member)).or_default() += 1;
    }
    let (runs, runs_total) = runs(snapshot);
    let (approvals, approvals_total) = pending_approvals(state);
    json!({
        "seq": snapshot.seq(),
        "time": state.now(),
        "members": { "total": state.members().len(), "health": health },
        "placements": placements(state),
        "placementsTotal": state.placements().len(),
        "runs": runs,
        "runsTotal": runs_total,
        "approvals": approvals,
        "approvalsTotal": approvals_total,
    })
}

/// The health a member shows, one of [`HEALTHS`].
const HEALTHS: [&str; 4] = ["Healthy", "Unhealthy", "Unknown", "Leaving"];

fn health_of(member: &Member) -> &'static str {
    match (&member.agent, member.is_leaving()) {
        (_, true) => "Leaving",
        (None, false) => "Unknown",
        (Some(agent), false) if agent.healthy => "Healthy",
        (Some(_), false) => "Unhealthy",
    }
}

fn condition(condition: Option<&Condition>) -> Value {
    condition.map_or(Value::Null, |c| {
        json!({
            "type": c.condition_type.as_str(),
            "status": status_text(c.status),
            "reason": c.reason.as_str(),
            "message": c.message,
            "lastTransitionTime": c.last_transition_time,
        })
    })
}

fn status_text(status: ConditionStatus) -> &'static str {
    match status {
        ConditionStatus::True => "True",
        ConditionStatus::False => "False",
        ConditionStatus::Unknown => "Unknown",
    }
}

/// Each placement (at most [`LISTED_MAX`]) with its scheduled condition and how many of its
/// bindings are in each state.
fn placements(state: &flotilla_core::State) -> Vec<Value> {
    state
        .placements()
        .iter()
        .take(LISTED_MAX)
        .map(|(key, placement)| {
            let mut bindings: BTreeMap<String, usize> = BTreeMap::new();
            placement.bindings.for_each(|_, binding| {
                *bindings.entry(format!("{:?}", binding.state)).or_default() += 1;
            });
            json!({
                "kind": key.kind.as_ref() as &str,
                "namespace": key.namespace.as_ref() as &str,
                "name": key.name.as_ref() as &str,
                "scheduled": condition(placement.scheduled.as_ref()),
                "selectionError": placement.selection_error,
                "bindings": bindings,
            })
        })
        .collect()
}

/// The runs that have not succeeded (at most [`LISTED_MAX`], and their count): progress,
/// current stage, conditions, and for the first [`EXPLAINED_MAX`] why their placement waits.
fn runs(snapshot: &Snapshot<'_>) -> (Vec<Value>, usize) {
    let state = snapshot.state();
    let open: Vec<_> = state
        .update_runs()
        .iter()
        .filter(|(_, run)| !is_true(run.status.succeeded.as_ref()))
        .collect();
    let listed = open
        .iter()
        .take(LISTED_MAX)
        .enumerate()
        .map(|(i, (key, run))| {
            let mut line = run_line(key, run);
            if i < EXPLAINED_MAX {
                line["waits"] = waits(snapshot, key.namespace.as_ref(), run);
            }
            line
        })
        .collect();
    (listed, open.len())
}

fn is_true(condition: Option<&Condition>) -> bool {
    condition.is_some_and(|c| c.status == ConditionStatus::True)
}

fn run_line(key: &flotilla_core::model::ObjectKey, run: &UpdateRun) -> Value {
    let stages = &run.status.stages;
    let total: usize = stages.iter().map(|s| s.clusters.len()).sum();
    let done: usize = stages
        .iter()
        .flat_map(|s| s.clusters.iter())
        .filter(|c| is_true(c.succeeded.as_deref()))
        .count();
    let stage = stages
        .iter()
        .find(|s| !is_true(s.succeeded.as_ref()))
        .map(|s| s.name.as_str());
    json!({
        "kind": key.kind.as_ref() as &str,
        "namespace": key.namespace.as_ref() as &str,
        "name": key.name.as_ref() as &str,
        "placement": run.spec.placement_name,
        "state": format!("{:?}", run.spec.state),
        "stage": stage,
        "clustersDone": done,
        "clustersTotal": total,
        "progressing": condition(run.status.progressing.as_ref()),
        "succeeded": condition(run.status.succeeded.as_ref()),
    })
}

/// Why the run's placement waits, as `/v1/explain` says, with cluster lists cut short.
fn waits(snapshot: &Snapshot<'_>, namespace: &str, run: &UpdateRun) -> Value {
    let placement = flotilla_replay::PlacementRef {
        namespace: (!namespace.is_empty()).then(|| namespace.to_owned()),
        name: run.spec.placement_name.clone(),
    };
    flotilla_replay::waits_in_state(snapshot.state(), snapshot.seq(), &placement.key())
        .iter()
        .map(|wait| {
            let clusters: Vec<&String> = wait.clusters.iter().take(WAIT_CLUSTERS_MAX).collect();
            json!({ "text": wait.text, "clusters": clusters, "since": wait.since })
        })
        .collect()
}

/// Approval requests neither approved nor accepted (at most [`LISTED_MAX`], and their count).
fn pending_approvals(state: &flotilla_core::State) -> (Vec<Value>, usize) {
    let pending: Vec<_> = state
        .approvals()
        .iter()
        .filter(|(_, a)| !is_true(a.approved.as_ref()) && !is_true(a.accepted.as_ref()))
        .collect();
    let listed = pending
        .iter()
        .take(LISTED_MAX)
        .map(|(key, approval)| {
            json!({
                "kind": key.kind.as_ref() as &str,
                "namespace": key.namespace.as_ref() as &str,
                "name": key.name.as_ref() as &str,
                "run": approval.run,
                "stage": approval.stage,
            })
        })
        .collect();
    (listed, pending.len())
}

#[derive(Deserialize)]
pub(crate) struct MembersQuery {
    at: Option<String>,
    #[serde(default)]
    offset: usize,
    limit: Option<usize>,
    /// Only members of this health (one of [`HEALTHS`]).
    health: Option<String>,
    /// Only members whose name contains this text.
    q: Option<String>,
}

/// `GET /v1/members?at=&offset=&limit=&health=&q=`: the matching members from `offset`, in
/// name order, as `/v1/objects/MemberCluster` renders them, and how many match in all.
pub(crate) async fn members<L: EventLog>(
    State(hub): State<Hub<L>>,
    Query(query): Query<MembersQuery>,
) -> Response {
    let snapshot = match snapshot(&hub, query.at.as_deref()).await {
        Ok(snapshot) => snapshot,
        Err(response) => return response,
    };
    let state = snapshot.state();
    let limit = query
        .limit
        .unwrap_or(MEMBERS_PAGE)
        .clamp(1, MEMBERS_PAGE_MAX);
    let text = query.q.as_deref().unwrap_or("");
    let matching = state.members().iter().filter(|(name, member)| {
        query
            .health
            .as_deref()
            .is_none_or(|h| health_of(member) == h)
            && name.as_str().contains(text)
    });
    let mut total = 0;
    let mut items = Vec::new();
    let info = flotilla_projections::resolve_kind(state, "MemberCluster");
    for (name, member) in matching {
        if total >= query.offset && items.len() < limit {
            let object = info
                .as_ref()
                .and_then(|info| flotilla_projections::render_object(state, &info.key(None, name)));
            items.push(json!({ "health": health_of(member), "object": object }));
        }
        total += 1;
    }
    Json(json!({
        "seq": snapshot.seq(),
        "time": state.now(),
        "total": total,
        "offset": query.offset,
        "items": items,
    }))
    .into_response()
}

/// Clusters kept per stage in `/v1/runs` unless `clusters` says otherwise, and the most it may.
pub const RUN_STAGE_CLUSTERS: usize = 20;
pub const RUN_STAGE_CLUSTERS_MAX: usize = 500;

#[derive(Deserialize)]
pub(crate) struct RunsQuery {
    at: Option<String>,
    clusters: Option<usize>,
}

/// `GET /v1/runs?at=&clusters=`: every staged update run of both kinds as `/v1/objects` renders
/// it, with each stage's `clusters` cut to the first `clusters` and `clustersOmitted` saying how
/// many were left out, so a run over the whole fleet answers in a bounded size.
pub(crate) async fn runs_list<L: EventLog>(
    State(hub): State<Hub<L>>,
    Query(query): Query<RunsQuery>,
) -> Response {
    let snapshot = match snapshot(&hub, query.at.as_deref()).await {
        Ok(snapshot) => snapshot,
        Err(response) => return response,
    };
    let state = snapshot.state();
    let keep = query
        .clusters
        .unwrap_or(RUN_STAGE_CLUSTERS)
        .min(RUN_STAGE_CLUSTERS_MAX);
    let runs = flotilla_projections::runs_cut(state, keep);
    Json(json!({ "seq": snapshot.seq(), "items": runs })).into_response()
}
