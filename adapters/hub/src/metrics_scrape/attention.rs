//! The per-object series an operator alerts on: only the runs, placements and approval
//! requests that need attention get one, so their number stays bounded by the trouble rather
//! than by the fleet, and a series is gone from the next scrape once its object stops
//! qualifying (they are rendered into the scrape's text, never kept in the recorder).
//!
//! An object is named `NAMESPACE/NAME`, or `NAME` when it is cluster-scoped.

use chrono::{DateTime, Utc};
use flotilla_core::State;
use flotilla_core::condition::ConditionStatus;
use flotilla_core::model::ObjectKey;
use flotilla_core::query::placement::BindingState;
use flotilla_core::query::staged::Scope;
use flotilla_core::query::staged::run::UpdateRun;

use super::fleet::{Shown, run_state, seconds_between};
use super::text::Family;

/// Runs in these states get a [`RUN_INFO`] series.
const RUN_STATES_SHOWN: [&str; 3] = ["Failed", "Stuck", "Waiting"];
/// Runs in these states wait on nothing any more: their approval requests are not pending.
const RUN_STATES_DONE: [&str; 4] = ["Succeeded", "Failed", "Stopping", "Stopped"];

/// One series per run that failed, is stuck or waits: `run`, `placement`, `state`.
pub const RUN_INFO: &str = "flotilla_update_run_info";
/// One series per placement whose last shown condition is False: `placement`, `condition`,
/// `reason`.
pub const PLACEMENT_FAILING: &str = "flotilla_placement_failing";
/// Per placement with any: its scheduled or bound clusters that are not healthy members.
pub const PLACEMENT_UNHEALTHY: &str = "flotilla_placement_clusters_unhealthy";
/// Per approval request not approved yet, of a run still going: seconds since it was created.
pub const APPROVAL_PENDING: &str = "flotilla_approval_pending_seconds";

/// The families being gathered.
#[derive(Debug)]
pub(super) struct Attention {
    runs: Family,
    failing: Family,
    unhealthy: Family,
    approvals: Family,
}

impl Default for Attention {
    fn default() -> Self {
        Self {
            runs: Family::gauge(
                RUN_INFO,
                "1 per staged update run that failed, is stuck or waits",
            ),
            failing: Family::gauge(
                PLACEMENT_FAILING,
                "1 per placement whose last shown condition is False",
            ),
            unhealthy: Family::gauge(
                PLACEMENT_UNHEALTHY,
                "Scheduled or bound clusters of a placement that are not healthy members",
            ),
            approvals: Family::gauge(
                APPROVAL_PENDING,
                "Seconds an approval request of a running update run has waited",
            ),
        }
    }
}

impl Attention {
    /// Notes a run in `state` ([`run_state`]) if it failed, is stuck or waits.
    pub(super) fn run(&mut self, key: &ObjectKey, run: &UpdateRun, state: &'static str) {
        if !RUN_STATES_SHOWN.contains(&state) {
            return;
        }
        let placement = Scope::of(key).placement_key(&run.spec.placement_name);
        self.runs.samples.push((
            vec![
                ("run", name_of(key)),
                ("placement", name_of(&placement)),
                ("state", state.to_owned()),
            ],
            1.0,
        ));
    }

    /// Notes a placement whose last shown condition is False, and one with clusters that are
    /// not healthy members (a look-up per binding, no scan).
    pub(super) fn placement(
        &mut self,
        state: &State,
        key: &ObjectKey,
        placement: &flotilla_core::state::Placement,
        shown: &Shown,
    ) {
        let name = name_of(key);
        if shown.status == "False" {
            self.failing.samples.push((
                vec![
                    ("placement", name.clone()),
                    ("condition", shown.condition.clone()),
                    ("reason", shown.reason.clone()),
                ],
                1.0,
            ));
        }
        let members = state.members();
        let unhealthy = placement
            .bindings
            .states()
            .filter(|(_, binding)| *binding != BindingState::Unscheduled)
            .filter(|(cluster, _)| {
                members
                    .get(cluster.as_str())
                    .is_none_or(|member| !member.is_eligible())
            })
            .count();
        if unhealthy > 0 {
            self.unhealthy
                .samples
                .push((vec![("placement", name)], count(unhealthy)));
        }
    }

    /// Notes every approval request not approved yet whose run still goes on, with how long
    /// it has waited at `now`.
    pub(super) fn approvals(&mut self, state: &State, now: DateTime<Utc>) {
        for (key, request) in state.approvals() {
            let approved = request
                .approved
                .as_ref()
                .is_some_and(|c| c.status == ConditionStatus::True);
            if approved {
                continue;
            }
            let run_key = Scope {
                namespace: key.namespace.clone(),
                run_name: request.run.as_str().into(),
            }
            .run_key();
            let going = state
                .update_runs()
                .get(&run_key)
                .is_some_and(|run| !RUN_STATES_DONE.contains(&run_state(run)));
            if !going {
                continue;
            }
            self.approvals.samples.push((
                vec![
                    ("run", name_of(&run_key)),
                    ("stage", request.stage.clone()),
                    ("task", request.position.as_str().to_owned()),
                ],
                seconds_between(request.meta.creation_timestamp, now),
            ));
        }
    }

    /// The families, in a fixed order.
    pub(super) fn families(self) -> Vec<Family> {
        vec![self.runs, self.failing, self.unhealthy, self.approvals]
    }
}

/// `NAMESPACE/NAME`, or `NAME` for a cluster-scoped object.
fn name_of(key: &ObjectKey) -> String {
    if key.namespace.is_empty() {
        key.name.to_string()
    } else {
        format!("{}/{}", key.namespace, key.name)
    }
}

#[allow(clippy::cast_precision_loss)] // a count of clusters stays far below 2^52
fn count(clusters: usize) -> f64 {
    clusters as f64
}
