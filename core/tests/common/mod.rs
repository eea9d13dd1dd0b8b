//! The one test harness for the fold: a hub that folds inputs at an explicit event time,
//! given/when/then style, and checks every invariant ([`flotilla_core::invariants`]) after
//! every step. Every `core/tests/*.rs` file folds through it.

#![allow(dead_code)]

use chrono::{DateTime, Duration, TimeZone, Utc};
use flotilla_core::decision::Decision;
use flotilla_core::invariants;
use flotilla_core::query::placement::{BindingState, Placement};
use flotilla_core::{Envelope, Heartbeat, Input, ObjectRef, State, WorkReport, step};
use serde_json::{Value, json};
use uuid::Uuid;

/// The time every harness starts at.
pub fn start() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2025, 3, 12, 23, 0, 0)
        .single()
        .unwrap_or_default()
}

/// Folds one event and checks the invariants of the step; panics naming the event and the
/// broken invariant.
pub fn step_checked(state: &mut State, event: &Envelope) -> Vec<Decision> {
    let before = state.clone();
    let decisions = step(state, event);
    if let Err(violation) = invariants::check_step(&before, event, state) {
        panic!("invariant broken by {event:?}: {violation}\ndecisions: {decisions:?}");
    }
    decisions
}

/// Anything that can be applied: a JSON value or JSON text.
pub trait Manifest {
    /// The manifest as JSON text.
    fn text(self) -> String;
}

impl Manifest for &Value {
    fn text(self) -> String {
        self.to_string()
    }
}

impl Manifest for &str {
    fn text(self) -> String {
        self.to_owned()
    }
}

impl Manifest for &String {
    fn text(self) -> String {
        self.clone()
    }
}

/// A hub for given/when/then tests: `now` is the event time of the next input.
pub struct Hub {
    /// The folded state.
    pub state: State,
    /// Event time of the next input.
    pub now: DateTime<Utc>,
    issued: u128,
}

impl Default for Hub {
    fn default() -> Self {
        Self::new()
    }
}

impl Hub {
    /// An empty hub at [`start`].
    pub fn new() -> Self {
        Self {
            state: State::default(),
            now: start(),
            issued: 0,
        }
    }

    /// Folds one input at `now`, checking the invariants.
    pub fn send(&mut self, payload: Input) -> Vec<Decision> {
        self.issued += 1;
        let event = Envelope::new(Uuid::from_u128(self.issued), self.now, "test", payload);
        step_checked(&mut self.state, &event)
    }

    /// Applies a manifest (a JSON value or JSON text).
    pub fn apply(&mut self, manifest: impl Manifest) -> Vec<Decision> {
        self.send(Input::Apply {
            manifest: manifest.text(),
        })
    }

    /// Applies every document of a YAML stream, in order; returns all decisions.
    pub fn apply_yaml(&mut self, yaml: &str) -> Vec<Decision> {
        let mut decisions = Vec::new();
        for document in yaml.split("\n---").filter(|d| !d.trim().is_empty()) {
            let value: Value = serde_saphyr::from_str(document).expect("valid YAML");
            decisions.extend(self.apply(&value));
        }
        decisions
    }

    /// A heartbeat without properties.
    pub fn beat(&mut self, cluster: &str) -> Vec<Decision> {
        self.send(Input::Heartbeat(Heartbeat {
            cluster: cluster.into(),
            ..Heartbeat::default()
        }))
    }

    /// A heartbeat with non-resource properties.
    pub fn beat_with(&mut self, cluster: &str, properties: &[(&str, &str)]) -> Vec<Decision> {
        let properties = properties
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        self.send(Input::Heartbeat(Heartbeat {
            cluster: cluster.into(),
            properties,
            resource_usage: None,
        }))
    }

    /// Moves event time forward and folds a tick.
    pub fn advance(&mut self, secs: i64) -> Vec<Decision> {
        self.now += Duration::seconds(secs);
        self.send(Input::Tick)
    }

    /// Folds a tick at an explicit time.
    pub fn tick_at(&mut self, time: DateTime<Utc>) -> Vec<Decision> {
        self.now = time;
        self.send(Input::Tick)
    }

    /// Deletes a cluster-scoped object by kind (the kind's own group).
    pub fn delete(&mut self, kind: &str, name: &str) -> Vec<Decision> {
        self.delete_in(kind, None, name)
    }

    /// Deletes an object by kind, optional namespace and name.
    pub fn delete_in(&mut self, kind: &str, namespace: Option<&str>, name: &str) -> Vec<Decision> {
        self.send(Input::Delete {
            target: ObjectRef {
                kind: kind.into(),
                group: None,
                namespace: namespace.map(str::to_owned),
                name: name.into(),
            },
        })
    }

    /// Approves an approval request (`namespace` for a namespaced one).
    pub fn approve(&mut self, name: &str, namespace: Option<&str>) -> Vec<Decision> {
        self.send(Input::Approve {
            name: name.into(),
            namespace: namespace.map(str::to_owned),
            reason: None,
            message: None,
        })
    }

    /// A member's report on its current work for a ClusterResourcePlacement (the binding's
    /// resource index): applied and available as given, trackable.
    pub fn report(
        &mut self,
        placement: &str,
        cluster: &str,
        applied: bool,
        available: bool,
    ) -> Vec<Decision> {
        let resource_index = self
            .placement(placement)
            .bindings
            .get(cluster)
            .and_then(|b| b.resource_index)
            .unwrap_or(0);
        self.send(Input::WorkReport(WorkReport {
            cluster: cluster.into(),
            placement: placement.into(),
            namespace: None,
            resource_index,
            applied: Some(applied),
            available: Some(available),
            trackable: true,
            message: String::new(),
            failed_manifests: Vec::new(),
            differences: Default::default(),
        }))
    }

    /// Registers and joins a member cluster with labels and optional taints.
    pub fn join(&mut self, name: &str, labels: Value, taints: Value) {
        self.apply(&member(name, labels, taints));
        self.beat(name);
    }

    /// Whether a member is healthy; `None` before it joined (or when it is not a member).
    pub fn healthy(&self, cluster: &str) -> Option<bool> {
        self.state
            .members()
            .get(cluster)?
            .agent
            .as_ref()
            .map(|a| a.healthy)
    }

    /// The indexes of the resource snapshots a ClusterResourcePlacement keeps, oldest first.
    pub fn snapshot_indexes(&self, placement: &str) -> Vec<u64> {
        self.placement(placement)
            .resource_snapshots
            .iter()
            .map(|s| s.index)
            .collect()
    }

    /// Asserts that every binding of the placement carries work from a snapshot it keeps.
    pub fn assert_work_exists(&self, placement: &str) {
        let kept = self.snapshot_indexes(placement);
        for binding in self.placement(placement).bindings.values() {
            let index = binding.resource_index.expect("carries work");
            assert!(
                kept.contains(&index),
                "{} carries {index} of {kept:?}",
                binding.cluster
            );
        }
    }

    /// The placement of this name (either scope).
    pub fn placement(&self, name: &str) -> &Placement {
        self.state
            .placements()
            .iter()
            .find(|(k, _)| k.name == name)
            .map(|(_, p)| p)
            .expect("placement exists")
    }

    /// Clusters bound or scheduled under the latest policy, by name.
    pub fn selected(&self, placement: &str) -> Vec<String> {
        let placement = self.placement(placement);
        let index = placement.latest_policy().map(|p| p.index);
        placement
            .bindings
            .values()
            .filter(|b| b.state != BindingState::Unscheduled && Some(b.policy_index) == index)
            .map(|b| b.cluster.to_string())
            .collect()
    }

    /// Clusters whose binding is Unscheduled.
    pub fn unscheduled(&self, placement: &str) -> Vec<String> {
        self.placement(placement)
            .bindings
            .values()
            .filter(|b| b.state == BindingState::Unscheduled)
            .map(|b| b.cluster.to_string())
            .collect()
    }

    /// The placement's Scheduled condition: (status, reason, message).
    pub fn scheduled(&self, placement: &str) -> (String, String, String) {
        let condition = self
            .placement(placement)
            .scheduled
            .clone()
            .expect("a Scheduled condition");
        (
            condition.status.as_str().to_owned(),
            condition.reason.to_string(),
            condition.message,
        )
    }
}

/// A MemberCluster manifest with a 60 s heartbeat period.
pub fn member(name: &str, labels: Value, taints: Value) -> Value {
    json!({
        "apiVersion": "cluster.kubernetes-fleet.io/v1beta1",
        "kind": "MemberCluster",
        "metadata": {"name": name, "labels": labels},
        "spec": {"heartbeatPeriodSeconds": 60, "taints": taints}
    })
}

/// A Namespace manifest.
pub fn namespace(name: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
}

/// A ClusterResourcePlacement of namespace `test-ns` with this policy.
pub fn crp(name: &str, policy: Value) -> Value {
    json!({
        "apiVersion": "placement.kubernetes-fleet.io/v1",
        "kind": "ClusterResourcePlacement",
        "metadata": {"name": name},
        "spec": {
            "resourceSelectors": [{"group": "", "kind": "Namespace", "version": "v1", "name": "test-ns"}],
            "policy": policy
        }
    })
}

/// Owned names.
pub fn names(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| (*s).to_owned()).collect()
}
