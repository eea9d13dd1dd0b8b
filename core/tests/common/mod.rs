//! A small hub for given/when/then tests: folds events at a controllable event time.

#![allow(dead_code)]

use chrono::{DateTime, Duration, TimeZone, Utc};
use flotilla_core::decision::Decision;
use flotilla_core::placement::{BindingState, Placement};
use flotilla_core::{Envelope, Heartbeat, Input, ObjectRef, State, step};
use serde_json::{Value, json};
use uuid::Uuid;

pub struct Hub {
    pub state: State,
    pub now: DateTime<Utc>,
    issued: u128,
}

impl Hub {
    pub fn new() -> Self {
        let now = Utc
            .with_ymd_and_hms(2025, 3, 12, 23, 0, 0)
            .single()
            .unwrap_or_default();
        Self {
            state: State::default(),
            now,
            issued: 0,
        }
    }

    pub fn send(&mut self, payload: Input) -> Vec<Decision> {
        self.issued += 1;
        let event = Envelope::new(Uuid::from_u128(self.issued), self.now, "test", payload);
        step(&mut self.state, &event)
    }

    pub fn apply(&mut self, manifest: &Value) -> Vec<Decision> {
        self.send(Input::Apply {
            manifest: manifest.to_string(),
        })
    }

    pub fn beat(&mut self, cluster: &str) -> Vec<Decision> {
        self.send(Input::Heartbeat(Heartbeat {
            cluster: cluster.into(),
            ..Heartbeat::default()
        }))
    }

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

    pub fn advance(&mut self, secs: i64) -> Vec<Decision> {
        self.now += Duration::seconds(secs);
        self.send(Input::Tick)
    }

    pub fn delete(&mut self, kind: &str, name: &str) -> Vec<Decision> {
        self.send(Input::Delete {
            target: ObjectRef {
                kind: kind.into(),
                group: None,
                namespace: None,
                name: name.into(),
            },
        })
    }

    /// Registers and joins a member cluster with labels and optional taints.
    pub fn join(&mut self, name: &str, labels: Value, taints: Value) {
        self.apply(&member(name, labels, taints));
        self.beat(name);
    }

    pub fn placement(&self, name: &str) -> &Placement {
        self.state
            .placements
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
            .map(|b| b.cluster.clone())
            .collect()
    }

    /// Clusters whose binding is Unscheduled.
    pub fn unscheduled(&self, placement: &str) -> Vec<String> {
        self.placement(placement)
            .bindings
            .values()
            .filter(|b| b.state == BindingState::Unscheduled)
            .map(|b| b.cluster.clone())
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
            condition.reason,
            condition.message,
        )
    }
}

pub fn member(name: &str, labels: Value, taints: Value) -> Value {
    json!({
        "apiVersion": "cluster.kubernetes-fleet.io/v1beta1",
        "kind": "MemberCluster",
        "metadata": {"name": name, "labels": labels},
        "spec": {"heartbeatPeriodSeconds": 60, "taints": taints}
    })
}

pub fn namespace(name: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
}

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

pub fn names(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| (*s).to_owned()).collect()
}
