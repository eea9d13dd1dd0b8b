//! The workload and the platform engineer, drawn from the seed: 3–20 member clusters (about a
//! quarter labelled `environment: canary`), one to three PickAll placements — `RollingUpdate`
//! (maxUnavailable drawn), `External` (staged: canary, an approval, then production), or
//! `Partitioned` — each over a namespace with a ConfigMap that changes a few times while the
//! faults run. The engineer is level-triggered, as a person at `kubectl` is: for an `External`
//! placement whose latest resources no run rolls out, they start a `ClusterStagedUpdateRun`;
//! every approval request they see they approve after a moment, and again later if the hub
//! still does not show it approved.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use flotilla_cli::loadgen::fleet::{self, Strategy};
use flotilla_core::model::placement::StrategyType;
use flotilla_core::query::placement::BindingState;
use flotilla_core::{Envelope, Input, State};
use serde_json::{Value, json};

use super::rng::Rng;

/// Source of the engineer's events.
pub const SOURCE: &str = "cli";
/// The engineer waits this long before approving a request.
const APPROVE_AFTER_MS: (u64, u64) = (1_000, 8_000);
/// An approval, or a run, not yet visible on the hub is sent again after this long.
const RESEND_MS: u64 = 20_000;

/// One placement of the workload.
#[derive(Debug, Clone)]
pub struct PlannedPlacement {
    /// Its index (`sim-<index>`).
    pub index: u64,
    /// How it rolls out.
    pub strategy: Strategy,
    /// The ConfigMap's current version.
    pub version: u64,
    /// `maxUnavailable` of a rolling placement.
    pub max_unavailable: Value,
}

/// The engineer.
#[derive(Debug, Default)]
pub struct Operator {
    /// The placements.
    pub placements: Vec<PlannedPlacement>,
    /// When each approval request was first seen, and when it was last approved.
    approvals: BTreeMap<String, (u64, Option<u64>)>,
    /// When a run was last started, by run name.
    runs: BTreeMap<String, u64>,
}

impl Operator {
    /// Draws one to three placements.
    #[must_use]
    pub fn draw(rng: &mut Rng) -> Self {
        let count = rng.between(1, 3);
        let placements = (0..count)
            .map(|index| {
                let strategy = match rng.below(3) {
                    0 => Strategy::Rolling,
                    1 => Strategy::Staged,
                    _ => Strategy::Partitioned,
                };
                let max_unavailable = match rng.below(3) {
                    0 => json!("25%"),
                    1 => json!(1),
                    _ => json!("50%"),
                };
                PlannedPlacement {
                    index,
                    strategy,
                    version: 1,
                    max_unavailable,
                }
            })
            .collect();
        Self {
            placements,
            ..Self::default()
        }
    }

    /// Everything applied at the start: the member clusters, then each placement's objects.
    #[must_use]
    pub fn setup(&self, members: &[(String, bool, u64)], rng: &mut Rng) -> Vec<Envelope> {
        let mut objects: Vec<Value> = members
            .iter()
            .map(|(name, canary, period_secs)| member_cluster(name, *canary, *period_secs))
            .collect();
        for placement in &self.placements {
            let mut planned = fleet::placement_objects(placement.index, placement.strategy);
            if placement.strategy == Strategy::Rolling
                && let Some(rolling) = planned
                    .last_mut()
                    .and_then(|crp| crp.pointer_mut("/spec/strategy/rollingUpdate"))
            {
                rolling["maxUnavailable"] = placement.max_unavailable.clone();
            }
            objects.extend(planned);
        }
        objects.iter().map(|object| apply(rng, object)).collect()
    }

    /// A new version of one placement's ConfigMap: a new resource snapshot.
    pub fn change_resources(&mut self, rng: &mut Rng) -> Option<Envelope> {
        let pick = rng.index(self.placements.len());
        let placement = self.placements.get_mut(pick)?;
        placement.version += 1;
        let object = fleet::config_map(placement.index, placement.version);
        Some(apply(rng, &object))
    }

    /// What the engineer does after looking at the hub's state at `now_ms`.
    pub fn step(&mut self, state: &State, now_ms: u64, rng: &mut Rng) -> Vec<Envelope> {
        let mut out = self.start_runs(state, now_ms, rng);
        out.extend(self.approve(state, now_ms, rng));
        out
    }

    /// A run for every `External` placement whose latest resources are not on every cluster
    /// and no unfinished run rolls out; a run that finished without rolling them out (it failed
    /// to initialize, say, because it arrived before its strategy) is followed by a new one.
    fn start_runs(&mut self, state: &State, now_ms: u64, rng: &mut Rng) -> Vec<Envelope> {
        let mut out = Vec::new();
        for (key, placement) in state.placements() {
            if placement.spec.strategy.strategy_type != StrategyType::External {
                continue;
            }
            let Some(latest) = placement.latest_resources().map(|r| r.index) else {
                continue;
            };
            let runs: Vec<_> = state
                .update_runs()
                .iter()
                .filter(|(_, run)| run.spec.placement_name == key.name)
                .collect();
            let busy = runs.iter().any(|(_, run)| !run.is_finished());
            let behind = placement
                .bindings
                .values()
                .any(|b| b.state != BindingState::Unscheduled && b.resource_index != Some(latest));
            let fresh = format!("{}-run-{latest}", key.name);
            let exists = runs.iter().any(|(run_key, _)| run_key.name == fresh);
            if busy || (exists && !behind) {
                continue;
            }
            let retried = format!("{fresh}-");
            let attempt = runs
                .iter()
                .filter(|(k, _)| k.name == fresh || k.name.starts_with(&retried))
                .count();
            let name = if attempt == 0 {
                fresh
            } else {
                format!("{fresh}-{attempt}")
            };
            if self
                .runs
                .get(&name)
                .is_some_and(|at| at + RESEND_MS > now_ms)
            {
                continue;
            }
            self.runs.insert(name.clone(), now_ms);
            let Some(index) = key.name.strip_prefix("sim-").and_then(|n| n.parse().ok()) else {
                continue;
            };
            let mut run = fleet::update_run(index, latest);
            run["metadata"]["name"] = json!(name);
            out.push(apply(rng, &run));
        }
        out
    }

    /// Approves every request not shown approved, a moment after first seeing it.
    fn approve(&mut self, state: &State, now_ms: u64, rng: &mut Rng) -> Vec<Envelope> {
        let mut out = Vec::new();
        for (key, request) in state.approvals() {
            if request.approved.is_some() {
                continue;
            }
            let (low, high) = APPROVE_AFTER_MS;
            let (seen, sent) = *self
                .approvals
                .entry(key.name.to_string())
                .or_insert((now_ms + rng.between(low, high), None));
            let due = sent.map_or(seen, |at| at + RESEND_MS);
            if now_ms < due {
                continue;
            }
            self.approvals
                .insert(key.name.to_string(), (seen, Some(now_ms)));
            let namespace = (!key.namespace.is_empty()).then(|| key.namespace.to_string());
            let input = Input::Approve {
                name: key.name.to_string(),
                namespace,
                reason: None,
                message: None,
            };
            out.push(envelope(rng, input));
        }
        out
    }
}

/// A `MemberCluster` with its labels and heartbeat period.
fn member_cluster(name: &str, canary: bool, period_secs: u64) -> Value {
    let environment = if canary { "canary" } else { "production" };
    json!({
        "apiVersion": "cluster.kubernetes-fleet.io/v1beta1",
        "kind": "MemberCluster",
        "metadata": {"name": name, "labels": {"environment": environment}},
        "spec": {"heartbeatPeriodSeconds": period_secs}
    })
}

fn apply(rng: &mut Rng, object: &Value) -> Envelope {
    envelope(
        rng,
        Input::Apply {
            manifest: object.to_string(),
        },
    )
}

fn envelope(rng: &mut Rng, input: Input) -> Envelope {
    // The time is the log's, given on append.
    Envelope::new(rng.id(), DateTime::<Utc>::UNIX_EPOCH, SOURCE, input)
}
