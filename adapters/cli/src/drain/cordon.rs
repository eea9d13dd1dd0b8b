//! The cordon taint on a `MemberCluster`: read the object, change only `spec.taints`, and write
//! it back with the `resourceVersion` that was read, so a change made in between is never
//! overwritten; on a conflict, read and write again.

use reqwest::Method;
use serde_json::{Value, json};

use super::error::DrainError;
use flotilla_adapters::client::Client;

/// KubeFleet's cordon taint (`tools/utils/common.go` `CordonTaint`): key.
pub const CORDON_TAINT_KEY: &str = "cordon-key";
/// KubeFleet's cordon taint: value.
pub const CORDON_TAINT_VALUE: &str = "cordon-value";
/// KubeFleet's cordon taint: effect.
pub const CORDON_TAINT_EFFECT: &str = "NoSchedule";

/// The field manager of every drain write (the taint's and the evictions'), named at the call
/// site rather than taken from the user agent.
pub(super) const FIELD_MANAGER: &str = "flotilla";

/// Where the hub serves `MemberCluster`s (KubeFleet's API group and version).
const MEMBER_CLUSTERS: &str = "/apis/cluster.kubernetes-fleet.io/v1beta1/memberclusters";

/// Read-and-write rounds before giving up on a member someone keeps changing (client-go's
/// `retry.DefaultRetry`, which KubeFleet's tool uses, makes five).
const CONFLICT_ATTEMPTS_MAX: usize = 5;

/// Adds the cordon taint; `false` when the cluster has it already (nothing is written).
pub(super) async fn cordon(client: &Client, cluster: &str) -> Result<bool, DrainError> {
    change_taints(client, cluster, add_cordon).await
}

/// Removes the cordon taint; `false` when the cluster does not have it (nothing is written).
pub(super) async fn uncordon(client: &Client, cluster: &str) -> Result<bool, DrainError> {
    change_taints(client, cluster, remove_cordon).await
}

/// Applies `change` to the member's spec and writes the member back when it changed.
async fn change_taints(
    client: &Client,
    cluster: &str,
    change: fn(&mut Value) -> Result<bool, DrainError>,
) -> Result<bool, DrainError> {
    let not_found = || DrainError::ClusterNotFound(cluster.to_owned());
    // A name that could not be a MemberCluster's is never put into a path.
    if !is_object_name(cluster) {
        return Err(not_found());
    }
    let path = format!("{MEMBER_CLUSTERS}/{cluster}");
    for _ in 0..CONFLICT_ATTEMPTS_MAX {
        let mut member = match client.kube(Method::GET, &path, None).await {
            Ok(member) => member,
            Err(error) if error.has_reason("NotFound") => return Err(not_found()),
            Err(error) => return Err(error.into()),
        };
        if !change(&mut member["spec"])? {
            return Ok(false);
        }
        if let Some(object) = member.as_object_mut() {
            // The hub computes the status; a write carries none.
            object.remove("status");
        }
        let written = client
            .kube(
                Method::PUT,
                &format!("{path}?fieldManager={FIELD_MANAGER}"),
                Some(("application/json", member.to_string())),
            )
            .await;
        match written {
            Ok(_) => return Ok(true),
            Err(error) if error.has_reason("Conflict") => {}
            Err(error) if error.has_reason("NotFound") => return Err(not_found()),
            Err(error) => return Err(error.into()),
        }
    }
    Err(DrainError::Contended {
        cluster: cluster.to_owned(),
        attempts: CONFLICT_ATTEMPTS_MAX,
    })
}

/// Whether `name` is made of what the hub allows in an object name (lowercase alphanumerics,
/// `-` and `.`), so that it is safe in a URL path.
fn is_object_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'.')
}

/// Whether a taint is KubeFleet's cordon taint: key, value and effect all equal, as its tool
/// compares them.
fn is_cordon(taint: &Value) -> bool {
    taint["key"] == CORDON_TAINT_KEY
        && taint["value"] == CORDON_TAINT_VALUE
        && taint["effect"] == CORDON_TAINT_EFFECT
}

/// Appends the cordon taint to a `MemberCluster` spec unless it is there; whether it was added.
fn add_cordon(spec: &mut Value) -> Result<bool, DrainError> {
    if spec.is_null() {
        *spec = json!({});
    }
    let Some(spec) = spec.as_object_mut() else {
        return Err(DrainError::Protocol(
            "a MemberCluster whose spec is not an object".into(),
        ));
    };
    let taints = spec.entry("taints").or_insert_with(|| json!([]));
    let Some(taints) = taints.as_array_mut() else {
        return Err(DrainError::Protocol(
            "a MemberCluster whose spec.taints is not a list".into(),
        ));
    };
    if taints.iter().any(is_cordon) {
        return Ok(false);
    }
    taints.push(json!({
        "key": CORDON_TAINT_KEY,
        "value": CORDON_TAINT_VALUE,
        "effect": CORDON_TAINT_EFFECT,
    }));
    Ok(true)
}

/// Removes the cordon taint from a `MemberCluster` spec, keeping every other taint in its
/// order; whether it was there.
fn remove_cordon(spec: &mut Value) -> Result<bool, DrainError> {
    let Some(taints) = spec.get_mut("taints").and_then(Value::as_array_mut) else {
        return Ok(false);
    };
    let before = taints.len();
    taints.retain(|taint| !is_cordon(taint));
    if taints.len() == before {
        return Ok(false);
    }
    if taints.is_empty()
        && let Some(spec) = spec.as_object_mut()
    {
        // As the hub shows a member without taints (Go's `omitempty`).
        spec.remove("taints");
    }
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cordon_taint() -> Value {
        json!({"key": "cordon-key", "value": "cordon-value", "effect": "NoSchedule"})
    }

    #[test]
    fn cordon_appends_the_taint_once_and_keeps_the_rest_of_the_spec() -> Result<(), DrainError> {
        let other = json!({"key": "cordon-key", "value": "planned", "effect": "NoSchedule"});
        let mut spec = json!({"heartbeatPeriodSeconds": 7, "taints": [other]});
        assert!(add_cordon(&mut spec)?);
        assert_eq!(
            spec,
            json!({"heartbeatPeriodSeconds": 7, "taints": [other, cordon_taint()]})
        );
        assert!(!add_cordon(&mut spec)?, "already cordoned");
        assert_eq!(spec["taints"].as_array().map(Vec::len), Some(2));
        Ok(())
    }

    #[test]
    fn cordon_creates_the_taint_list_of_a_spec_without_one() -> Result<(), DrainError> {
        let mut spec = json!({"heartbeatPeriodSeconds": 60});
        assert!(add_cordon(&mut spec)?);
        assert_eq!(spec["taints"], json!([cordon_taint()]));
        let mut absent = Value::Null;
        assert!(add_cordon(&mut absent)?);
        assert_eq!(absent, json!({"taints": [cordon_taint()]}));
        Ok(())
    }

    #[test]
    fn uncordon_removes_only_the_cordon_taint() -> Result<(), DrainError> {
        let near = json!({"key": "cordon-key", "value": "other", "effect": "NoSchedule"});
        let mut spec =
            json!({"taints": [near, cordon_taint(), {"key": "site", "effect": "NoSchedule"}]});
        assert!(remove_cordon(&mut spec)?);
        assert_eq!(
            spec["taints"],
            json!([near, {"key": "site", "effect": "NoSchedule"}])
        );
        assert!(!remove_cordon(&mut spec)?, "nothing left to remove");
        Ok(())
    }

    #[test]
    fn uncordon_of_the_last_taint_leaves_no_list() -> Result<(), DrainError> {
        let mut spec = json!({"heartbeatPeriodSeconds": 5, "taints": [cordon_taint()]});
        assert!(remove_cordon(&mut spec)?);
        assert_eq!(spec, json!({"heartbeatPeriodSeconds": 5}));
        assert!(!remove_cordon(&mut json!({}))?);
        Ok(())
    }

    #[test]
    fn only_object_names_reach_a_path() {
        assert!(is_object_name("member-2"));
        assert!(is_object_name("east.prod-1"));
        for bad in ["", "a/b", "Member", "a?b", "a b", "..%2f"] {
            assert!(!is_object_name(bad), "{bad:?}");
        }
    }
}
