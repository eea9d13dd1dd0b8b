//! `MemberCluster` (`cluster.kubernetes-fleet.io/v1beta1`): a cluster's registration on the hub.

use serde::{Deserialize, Serialize};

/// Default `heartbeatPeriodSeconds` (KubeFleet's).
pub const HEARTBEAT_PERIOD_SECS_DEFAULT: u32 = 60;
/// Largest allowed `heartbeatPeriodSeconds` (KubeFleet's API bound).
pub const HEARTBEAT_PERIOD_SECS_MAX: u32 = 600;
/// Most taints one member cluster may carry (KubeFleet's API bound).
pub const TAINTS_MAX: usize = 100;

/// `spec` of a `MemberCluster`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MemberClusterSpec {
    /// The identity the member agent uses to reach the hub (an RBAC subject). Boxed: members
    /// are stored inline in the state's map nodes, and most carry no identity.
    #[serde(default)]
    pub identity: Option<Box<Subject>>,
    /// How often the member agent reports; health is judged against it.
    #[serde(default = "default_heartbeat_period")]
    pub heartbeat_period_seconds: u32,
    /// Taints that keep placements without a matching toleration away.
    #[serde(default)]
    pub taints: Vec<Taint>,
}

fn default_heartbeat_period() -> u32 {
    HEARTBEAT_PERIOD_SECS_DEFAULT
}

/// An RBAC subject (`kind`, `name`, `apiGroup`, `namespace`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Subject {
    /// `User`, `Group` or `ServiceAccount`.
    pub kind: String,
    /// Subject name.
    pub name: String,
    /// API group of the subject kind.
    #[serde(default)]
    pub api_group: Option<String>,
    /// Namespace of a service account.
    #[serde(default)]
    pub namespace: Option<String>,
}

/// A taint on a member cluster (KubeFleet's `spec.taints`).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Taint {
    /// Taint key.
    pub key: String,
    /// Taint value.
    #[serde(default)]
    pub value: Option<String>,
    /// Only `NoSchedule` exists for now.
    pub effect: TaintEffect,
}

/// What a taint does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub enum TaintEffect {
    /// Keep new placements without a toleration away; existing ones stay.
    NoSchedule,
}

impl MemberClusterSpec {
    /// Reads an empty `apiGroup` or `namespace` of the identity as absent, as Go's `omitempty`
    /// does, so that the object `get` shows (which leaves them out) re-applies unchanged.
    pub fn normalize(&mut self) {
        if let Some(identity) = &mut self.identity {
            identity.api_group = identity.api_group.take().filter(|g| !g.is_empty());
            identity.namespace = identity.namespace.take().filter(|n| !n.is_empty());
        }
    }

    /// Checks the API's bounds; returns `(field, message)` for the first problem.
    ///
    /// # Errors
    /// The field path and what is wrong with it.
    pub fn validate(&self) -> Result<(), (String, String)> {
        if !(1..=HEARTBEAT_PERIOD_SECS_MAX).contains(&self.heartbeat_period_seconds) {
            return Err((
                "spec.heartbeatPeriodSeconds".into(),
                format!(
                    "must be between 1 and {HEARTBEAT_PERIOD_SECS_MAX}, got {}",
                    self.heartbeat_period_seconds
                ),
            ));
        }
        if self.taints.len() > TAINTS_MAX {
            return Err(("spec.taints".into(), format!("at most {TAINTS_MAX} taints")));
        }
        for (index, taint) in self.taints.iter().enumerate() {
            if taint.key.is_empty() {
                return Err((
                    format!("spec.taints[{index}].key"),
                    "must not be empty".into(),
                ));
            }
            let duplicate = self.taints[..index]
                .iter()
                .any(|other| other.key == taint.key && other.value == taint.value);
            if duplicate {
                return Err((format!("spec.taints[{index}]"), "duplicate taint".into()));
            }
        }
        Ok(())
    }
}
