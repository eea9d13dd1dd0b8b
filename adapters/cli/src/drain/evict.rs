//! The evictions of a drain: which placements are bound to the cluster, one
//! `ClusterResourcePlacementEviction` each under KubeFleet's generated name, and its outcome read
//! from its terminal conditions.

use std::collections::BTreeSet;
use std::time::Duration;

use flotilla_core::query::eviction::status::{
    CONDITION_EXECUTED, CONDITION_VALID, MESSAGE_MISSING_BINDING, MESSAGE_MISSING_PLACEMENT,
};
use reqwest::Method;
use serde_json::{Value, json};
use uuid::Uuid;

use super::cordon::FIELD_MANAGER;
use super::error::DrainError;
use flotilla_adapters::client::Client;

/// Where the hub serves the kinds a drain reads and writes (KubeFleet's group and version).
const EVICTIONS: &str =
    "/apis/placement.kubernetes-fleet.io/v1beta1/clusterresourceplacementevictions";
const BINDINGS: &str = "/apis/placement.kubernetes-fleet.io/v1beta1/clusterresourcebindings";
const PLACEMENTS: &str = "/apis/placement.kubernetes-fleet.io/v1beta1/clusterresourceplacements";

/// KubeFleet's `PlacementTrackingLabel`: the placement a binding belongs to.
const LABEL_PLACEMENT: &str = "kubernetes-fleet.io/parent-CRP";

/// Names tried for one eviction before giving up (client-go's `retry.DefaultBackoff`, which
/// KubeFleet's tool retries a taken name with, makes four attempts).
const NAME_ATTEMPTS_MAX: usize = 4;

/// Characters of the random tail of an eviction's name (KubeFleet's `uuidLength`).
const NAME_SUFFIX_CHARS: usize = 8;

/// Longest DNS-1123 subdomain, and so the longest object name.
const NAME_BYTES_MAX: usize = 253;

/// How often an eviction not yet reconciled is read again. The hub reconciles an eviction in
/// the step that stores it, so the answer to the create is almost always final already.
const POLL_INTERVAL: Duration = Duration::from_millis(200);

/// Invalid evictions that leave nothing to evict: the placement or its binding went away after
/// the bindings were listed (KubeFleet's tool lets the drain succeed for them).
const NOTHING_TO_EVICT: [&str; 2] = [MESSAGE_MISSING_PLACEMENT, MESSAGE_MISSING_BINDING];

/// What one eviction came to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Outcome {
    /// `Executed=True`: the binding is gone, and with it the cluster's work.
    Executed,
    /// `Valid=False` because the placement or its binding is gone: the condition's message.
    NothingToEvict(String),
    /// Not executed, or invalid for another reason: the deciding condition's message.
    NotExecuted(String),
}

/// The `ClusterResourcePlacement`s with a binding on `cluster` that is not being deleted, by
/// name.
pub(super) async fn placements_on(
    client: &Client,
    cluster: &str,
) -> Result<BTreeSet<String>, DrainError> {
    let list = client.kube(Method::GET, BINDINGS, None).await?;
    placements_bound(&list, cluster)
}

fn placements_bound(list: &Value, cluster: &str) -> Result<BTreeSet<String>, DrainError> {
    let items = list["items"]
        .as_array()
        .ok_or_else(|| DrainError::Protocol("a binding list without items".into()))?;
    let mut placements = BTreeSet::new();
    for binding in items {
        let metadata = &binding["metadata"];
        if binding["spec"]["targetCluster"] != cluster
            || metadata.get("deletionTimestamp").is_some()
        {
            continue;
        }
        let placement = metadata["labels"][LABEL_PLACEMENT]
            .as_str()
            .ok_or_else(|| {
                DrainError::Protocol(format!(
                    "failed to get CRP name from binding {}",
                    metadata["name"].as_str().unwrap_or("without a name")
                ))
            })?;
        placements.insert(placement.to_owned());
    }
    Ok(placements)
}

/// Creates an eviction of `placement` from `cluster`, says so, and waits for its terminal
/// status (bounded by the caller's timeout); its name and outcome.
pub(super) async fn evict(
    client: &Client,
    placement: &str,
    cluster: &str,
) -> Result<(String, Outcome), DrainError> {
    let (name, mut eviction) = create(client, placement, cluster).await?;
    println!("Created eviction {name} for CRP {placement} targeting member cluster {cluster}");
    let path = format!("{EVICTIONS}/{name}");
    loop {
        if let Some(outcome) = outcome_of(&eviction) {
            return Ok((name, outcome));
        }
        tokio::time::sleep(POLL_INTERVAL).await;
        eviction = client.kube(Method::GET, &path, None).await?;
    }
}

/// Creates the eviction under a fresh generated name, and another if that name is taken.
async fn create(
    client: &Client,
    placement: &str,
    cluster: &str,
) -> Result<(String, Value), DrainError> {
    for _ in 0..NAME_ATTEMPTS_MAX {
        let name = eviction_name(placement, cluster, &name_suffix())?;
        let eviction = json!({
            "apiVersion": "placement.kubernetes-fleet.io/v1beta1",
            "kind": "ClusterResourcePlacementEviction",
            "metadata": {"name": name},
            "spec": {"placementName": placement, "clusterName": cluster},
        });
        let created = client
            .kube(
                Method::POST,
                &format!("{EVICTIONS}?fieldManager={FIELD_MANAGER}"),
                Some(("application/json", eviction.to_string())),
            )
            .await;
        match created {
            Ok(stored) => return Ok((name, stored)),
            Err(error) if error.has_reason("AlreadyExists") => {}
            Err(error) => return Err(error.into()),
        }
    }
    Err(DrainError::NamesTaken {
        placement: placement.to_owned(),
        cluster: cluster.to_owned(),
        attempts: NAME_ATTEMPTS_MAX,
    })
}

/// Eight random hex characters. KubeFleet takes the head of a v1 UUID, which varies with its
/// clock; the head of a v7 UUID only changes every 65 s, so this takes the tail, which is
/// random.
fn name_suffix() -> String {
    let mut text = Uuid::now_v7().simple().to_string();
    text.split_off(text.len().saturating_sub(NAME_SUFFIX_CHARS))
}

/// KubeFleet's `drain-eviction-<placement>-<cluster>-<suffix>`, refused unless it is a valid
/// object name (a DNS-1123 subdomain), as its tool refuses it.
fn eviction_name(placement: &str, cluster: &str, suffix: &str) -> Result<String, DrainError> {
    let name = format!("drain-eviction-{placement}-{cluster}-{suffix}");
    match dns1123_subdomain_problem(&name) {
        Some(reason) => Err(DrainError::EvictionName {
            placement: placement.to_owned(),
            cluster: cluster.to_owned(),
            reason,
        }),
        None => Ok(name),
    }
}

/// What makes `name` no DNS-1123 subdomain (Kubernetes' `IsDNS1123Subdomain`), if anything.
fn dns1123_subdomain_problem(name: &str) -> Option<String> {
    if name.len() > NAME_BYTES_MAX {
        return Some(format!("must be no more than {NAME_BYTES_MAX} characters"));
    }
    let label_ok = |label: &str| {
        let edge = |b: Option<u8>| b.is_some_and(|b| b.is_ascii_lowercase() || b.is_ascii_digit());
        edge(label.bytes().next())
            && edge(label.bytes().last())
            && label
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
    };
    if name.split('.').all(label_ok) {
        return None;
    }
    Some(
        "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' \
         or '.', and must start and end with an alphanumeric character"
            .to_owned(),
    )
}

/// The condition of type `kind` of an object's status.
fn condition<'a>(object: &'a Value, kind: &str) -> Option<&'a Value> {
    object["status"]["conditions"]
        .as_array()?
        .iter()
        .find(|c| c["type"] == kind)
}

/// The outcome of a reconciled eviction, or `None` while it is not in a terminal state
/// (KubeFleet's `IsEvictionInTerminalState`: `Valid=False`, or any `Executed`).
fn outcome_of(eviction: &Value) -> Option<Outcome> {
    let message = |c: &Value| c["message"].as_str().unwrap_or_default().to_owned();
    if let Some(invalid) = condition(eviction, CONDITION_VALID).filter(|c| c["status"] == "False") {
        let message = message(invalid);
        return Some(if NOTHING_TO_EVICT.contains(&message.as_str()) {
            Outcome::NothingToEvict(message)
        } else {
            Outcome::NotExecuted(message)
        });
    }
    let executed = condition(eviction, CONDITION_EXECUTED)?;
    Some(if executed["status"] == "True" {
        Outcome::Executed
    } else {
        Outcome::NotExecuted(message(executed))
    })
}

/// Prints the cluster-scoped resources the placement selects, as KubeFleet's tool logs what an
/// executed eviction removed. A failure to read them is printed and does not fail the drain.
pub(super) async fn print_evicted_resources(client: &Client, placement: &str, cluster: &str) {
    match client
        .kube(Method::GET, &format!("{PLACEMENTS}/{placement}"), None)
        .await
    {
        Ok(object) => {
            for resource in cluster_scoped_resources(&object) {
                println!(
                    "evicted resource {resource} propagated by CRP {placement} targeting member \
                     cluster {cluster}"
                );
            }
        }
        Err(error) => println!(
            "failed to collect cluster scoped resources selected by CRP {placement}: {error}"
        ),
    }
}

/// `status.selectedResources` without a namespace, each as KubeFleet's
/// `group/version/kind/namespace/name` key with `''` for an empty group or namespace.
fn cluster_scoped_resources(placement: &Value) -> Vec<String> {
    let text = |r: &Value, field: &str| {
        r[field]
            .as_str()
            .filter(|s| !s.is_empty())
            .unwrap_or("''")
            .to_owned()
    };
    placement["status"]["selectedResources"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|r| r["namespace"].as_str().unwrap_or_default().is_empty())
        .map(|r| {
            let (group, version, kind, name) = (
                text(r, "group"),
                text(r, "version"),
                text(r, "kind"),
                text(r, "name"),
            );
            format!("{group}/{version}/{kind}/''/{name}")
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn binding(name: &str, placement: Option<&str>, cluster: &str) -> Value {
        let labels = placement.map_or(json!({}), |p| json!({LABEL_PLACEMENT: p}));
        json!({"metadata": {"name": name, "labels": labels}, "spec": {"targetCluster": cluster}})
    }

    #[test]
    fn the_placements_bound_to_the_cluster_each_once() -> Result<(), DrainError> {
        let mut leaving = binding("web-m2-b", Some("web"), "member-2");
        leaving["metadata"]["deletionTimestamp"] = json!("2026-01-01T00:00:00Z");
        let list = json!({"items": [
            binding("web-m2", Some("web"), "member-2"),
            binding("api-m2", Some("api"), "member-2"),
            binding("api-m1", Some("api"), "member-1"),
            binding("db-m2", Some("db"), "member-22"),
            leaving,
        ]});
        let found: Vec<String> = placements_bound(&list, "member-2")?.into_iter().collect();
        assert_eq!(found, ["api", "web"]);
        let unlabelled = json!({"items": [binding("x", None, "member-2")]});
        let refused = placements_bound(&unlabelled, "member-2").map_err(|e| e.to_string());
        assert_eq!(
            refused,
            Err("unexpected answer from the hub: failed to get CRP name from binding x".into())
        );
        Ok(())
    }

    #[test]
    fn eviction_names_follow_kubefleet_and_must_be_object_names() -> Result<(), DrainError> {
        assert_eq!(
            eviction_name("web", "member-2", "0a1b2c3d")?,
            "drain-eviction-web-member-2-0a1b2c3d"
        );
        let long = "p".repeat(240);
        let refused = eviction_name(&long, "member-2", "0a1b2c3d").map_err(|e| e.to_string());
        assert!(
            refused
                .as_ref()
                .is_err_and(|e| e.contains(
                    "failed to format a qualified name for drain eviction object with CRP name pppp"
                ) && e.ends_with("must be no more than 253 characters")),
            "{refused:?}"
        );
        assert!(dns1123_subdomain_problem("drain-eviction-a.b-c-1").is_none());
        assert!(dns1123_subdomain_problem("drain-eviction-a.-b-1").is_some());
        assert!(dns1123_subdomain_problem("drain-eviction-A-1").is_some());
        Ok(())
    }

    #[test]
    fn a_suffix_is_eight_hex_characters_that_differ_between_calls() {
        let (one, two) = (name_suffix(), name_suffix());
        assert_eq!(one.len(), NAME_SUFFIX_CHARS);
        assert!(one.bytes().all(|b| b.is_ascii_hexdigit()), "{one}");
        assert_ne!(one, two);
    }

    fn eviction(conditions: &Value) -> Value {
        json!({"status": {"conditions": conditions}})
    }

    #[test]
    fn outcomes_are_read_from_the_terminal_conditions() {
        let valid = json!({"type": "Valid", "status": "True", "message": "Eviction is valid"});
        assert_eq!(outcome_of(&json!({})), None, "not reconciled yet");
        assert_eq!(outcome_of(&eviction(&json!([valid]))), None);
        let done = json!({"type": "Executed", "status": "True", "message": "allowed"});
        assert_eq!(
            outcome_of(&eviction(&json!([valid, done]))),
            Some(Outcome::Executed)
        );
        let blocked =
            json!({"type": "Executed", "status": "False", "message": "blocked by budget"});
        assert_eq!(
            outcome_of(&eviction(&json!([valid, blocked]))),
            Some(Outcome::NotExecuted("blocked by budget".into()))
        );
        let gone = json!({"type": "Valid", "status": "False", "message": MESSAGE_MISSING_BINDING});
        assert_eq!(
            outcome_of(&eviction(&json!([gone]))),
            Some(Outcome::NothingToEvict(MESSAGE_MISSING_BINDING.into()))
        );
        let fixed = json!({"type": "Valid", "status": "False", "message": "PickFixed"});
        assert_eq!(
            outcome_of(&eviction(&json!([fixed]))),
            Some(Outcome::NotExecuted("PickFixed".into()))
        );
    }

    #[test]
    fn evicted_resources_are_the_cluster_scoped_ones_in_kubefleet_keys() {
        let placement = json!({"status": {"selectedResources": [
            {"group": "", "version": "v1", "kind": "Namespace", "name": "web-ns"},
            {"group": "", "version": "v1", "kind": "ConfigMap", "name": "c", "namespace": "web-ns"},
            {"group": "rbac.authorization.k8s.io", "version": "v1", "kind": "ClusterRole", "name": "r"},
        ]}});
        assert_eq!(
            cluster_scoped_resources(&placement),
            [
                "''/v1/Namespace/''/web-ns",
                "rbac.authorization.k8s.io/v1/ClusterRole/''/r"
            ]
        );
        assert!(cluster_scoped_resources(&json!({})).is_empty());
    }
}
