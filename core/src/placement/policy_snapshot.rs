//! Scheduling policy snapshots (`ClusterSchedulingPolicySnapshot` /
//! `SchedulingPolicySnapshot`): an immutable copy of the placement policy with an index.
//!
//! A new snapshot is taken when the policy changes. The hash leaves out `numberOfClusters`, so
//! a PickN scale-out or scale-in only updates the latest snapshot's `number-of-clusters`
//! annotation and nothing already scheduled moves (KubeFleet's scheduling policy snapshots).

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::binding::ClusterDecision;
use crate::condition::Condition;
use crate::model::placement::PlacementPolicy;

/// One scheduling policy snapshot.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PolicySnapshot {
    /// `kubernetes-fleet.io/policy-index`.
    pub index: u64,
    /// The policy when it was taken (`numberOfClusters` as first seen).
    pub policy: PlacementPolicy,
    /// `spec.policyHash`.
    pub policy_hash: String,
    /// `kubernetes-fleet.io/number-of-clusters` (PickN), updated on scale-out/in.
    pub number_of_clusters: Option<i64>,
    /// `kubernetes-fleet.io/CRP-generation`: the placement generation it reflects.
    pub placement_generation: u64,
    /// Creation time.
    pub created: DateTime<Utc>,
    /// The not-selected part of `status.targetClusters` (the selected part is the bindings'
    /// decisions), at most `NOT_SELECTED_DECISIONS_MAX`, by name.
    pub not_selected: Vec<ClusterDecision>,
    /// `status.conditions[Scheduled]`.
    pub scheduled: Option<Condition>,
    /// `status.observedCRPGeneration`.
    pub observed_placement_generation: u64,
    /// The selected decisions as they stood when a newer snapshot replaced this one: the
    /// scheduler only writes the latest snapshot's status, so an old one keeps its last word.
    pub selected_when_superseded: Option<Vec<ClusterDecision>>,
}

/// The policy hash KubeFleet writes: SHA-256 of the policy (without `numberOfClusters`) as Go
/// marshals it, as hex, then base64. Go writes struct fields in declaration order and leaves
/// empty ones out (`omitempty`); the top level follows that exactly (the seed's
/// `{"placementType":"PickN"}` hashes to its sample), nested objects are written with their
/// keys in order.
#[must_use]
pub fn policy_hash(policy: &PlacementPolicy) -> String {
    let mut hashed = policy.clone();
    hashed.number_of_clusters = None;
    let text = go_json(&hashed);
    let hex = hex::encode(Sha256::digest(text.as_bytes()));
    base64(hex.as_bytes())
}

/// `PlacementPolicy` as Go's `encoding/json` with `omitempty` writes it.
fn go_json(policy: &PlacementPolicy) -> String {
    let value = serde_json::to_value(policy).unwrap_or_default();
    let mut fields = Vec::new();
    for key in [
        "placementType",
        "clusterNames",
        "numberOfClusters",
        "affinity",
        "topologySpreadConstraints",
        "tolerations",
    ] {
        let Some(field) = value.get(key).map(prune_empty).filter(|v| !is_empty(v)) else {
            continue;
        };
        fields.push(format!("{}:{field}", serde_json::Value::from(key)));
    }
    format!("{{{}}}", fields.join(","))
}

fn is_empty(value: &serde_json::Value) -> bool {
    use serde_json::Value;
    match value {
        Value::Null => true,
        Value::String(s) => s.is_empty(),
        Value::Array(a) => a.is_empty(),
        Value::Object(o) => o.is_empty(),
        Value::Bool(_) | Value::Number(_) => false,
    }
}

fn prune_empty(value: &serde_json::Value) -> serde_json::Value {
    use serde_json::Value;
    match value {
        Value::Object(fields) => Value::Object(
            fields
                .iter()
                .map(|(k, v)| (k.clone(), prune_empty(v)))
                .filter(|(_, v)| !is_empty(v))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(prune_empty).collect()),
        other => other.clone(),
    }
}

/// Standard base64 with padding (RFC 4648 §4).
fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for (i, shift) in [18, 12, 6, 0].into_iter().enumerate() {
            if i <= chunk.len() {
                out.push(char::from(ALPHABET[((n >> shift) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_matches_rfc_4648_vectors() {
        assert_eq!(base64(b""), "");
        assert_eq!(base64(b"f"), "Zg==");
        assert_eq!(base64(b"fo"), "Zm8=");
        assert_eq!(base64(b"foo"), "Zm9v");
        assert_eq!(base64(b"foobar"), "Zm9vYmFy");
    }

    #[test]
    fn the_seeds_pick_n_sample_hash_is_reproduced() {
        let policy = PlacementPolicy {
            placement_type: crate::model::placement::PlacementType::PickN,
            number_of_clusters: Some(2),
            ..PlacementPolicy::default()
        };
        assert_eq!(
            policy_hash(&policy),
            "NDc5ZjQwNWViNzgwOGNmYzU4MzY2YjI2NDg2ODBhM2E4MTVlZjkxNGZlNjc1NmFlOGRmMGQ2Zjc0ODg1NDE2YQ=="
        );
    }

    #[test]
    fn the_hash_ignores_the_cluster_count() {
        let mut policy = PlacementPolicy {
            number_of_clusters: Some(2),
            ..PlacementPolicy::default()
        };
        let two = policy_hash(&policy);
        policy.number_of_clusters = Some(5);
        assert_eq!(two, policy_hash(&policy));
        policy.cluster_names = vec!["a".into()];
        assert_ne!(two, policy_hash(&policy));
    }
}
