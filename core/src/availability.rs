//! When a placed object counts as available on a member cluster (KubeFleet's safe-rollout docs,
//! "Availability based Rollout"), judged from the object as the member observes it. Member agents
//! and the simulated cluster use this one implementation, so every applier reports availability the
//! same way.
//!
//! | kind | available when |
//! |---|---|
//! | Deployment | all replicas are updated, ready and available for the latest spec |
//! | DaemonSet | all desired pods are updated and available for the latest spec |
//! | StatefulSet | all replicas are ready and on the latest revision |
//! | Job | at least one pod succeeded or one is ready |
//! | Service | ClusterIP / NodePort: a cluster IP is assigned; LoadBalancer: an ingress with an IP or hostname; ExternalName: not trackable |
//! | Namespace, Secret, ConfigMap, Role, ClusterRole, RoleBinding, ClusterRoleBinding | at once (data only) |
//! | anything else | not trackable |

use serde_json::Value;

/// The verdict for one object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Availability {
    /// Available now.
    Available,
    /// Not (yet) available.
    NotYetAvailable,
    /// Availability cannot be tracked for this object; the rollout waits
    /// `unavailablePeriodSeconds` instead.
    NotTrackable,
}

/// Data-only kinds of the core and RBAC groups, available as soon as they exist.
const DATA_ONLY: [(&str, &str); 7] = [
    ("", "Namespace"),
    ("", "Secret"),
    ("", "ConfigMap"),
    ("rbac.authorization.k8s.io", "Role"),
    ("rbac.authorization.k8s.io", "ClusterRole"),
    ("rbac.authorization.k8s.io", "RoleBinding"),
    ("rbac.authorization.k8s.io", "ClusterRoleBinding"),
];

fn int(value: &Value, path: &[&str]) -> i64 {
    path.iter()
        .fold(value, |v, key| &v[*key])
        .as_i64()
        .unwrap_or(0)
}

fn text<'a>(value: &'a Value, path: &[&str]) -> &'a str {
    path.iter()
        .fold(value, |v, key| &v[*key])
        .as_str()
        .unwrap_or_default()
}

/// Whether the controller has seen the latest spec (`status.observedGeneration`).
fn observed_latest(object: &Value) -> bool {
    int(object, &["status", "observedGeneration"]) >= int(object, &["metadata", "generation"])
}

/// Judges an object as observed on the member (with its `status`).
#[must_use]
pub fn judge(object: &Value) -> Availability {
    let api_version = text(object, &["apiVersion"]);
    let group = crate::model::group_of(api_version);
    let kind = text(object, &["kind"]);
    if DATA_ONLY.contains(&(group, kind)) {
        return Availability::Available;
    }
    let ready = match (group, kind) {
        ("apps", "Deployment") => {
            let wanted = object["spec"]["replicas"].as_i64().unwrap_or(1);
            observed_latest(object)
                && int(object, &["status", "updatedReplicas"]) == wanted
                && int(object, &["status", "readyReplicas"]) == wanted
                && int(object, &["status", "availableReplicas"]) == wanted
        }
        ("apps", "DaemonSet") => {
            let wanted = int(object, &["status", "desiredNumberScheduled"]);
            observed_latest(object)
                && int(object, &["status", "updatedNumberScheduled"]) == wanted
                && int(object, &["status", "numberAvailable"]) == wanted
        }
        ("apps", "StatefulSet") => {
            let wanted = object["spec"]["replicas"].as_i64().unwrap_or(1);
            let current = text(object, &["status", "currentRevision"]);
            observed_latest(object)
                && int(object, &["status", "readyReplicas"]) == wanted
                && int(object, &["status", "currentReplicas"]) == wanted
                && !current.is_empty()
                && current == text(object, &["status", "updateRevision"])
        }
        ("batch", "Job") => {
            int(object, &["status", "succeeded"]) > 0 || int(object, &["status", "ready"]) > 0
        }
        ("", "Service") => return service(object),
        _ => return Availability::NotTrackable,
    };
    if ready {
        Availability::Available
    } else {
        Availability::NotYetAvailable
    }
}

fn service(object: &Value) -> Availability {
    match text(object, &["spec", "type"]) {
        "ExternalName" => Availability::NotTrackable,
        "LoadBalancer" => {
            let assigned = object["status"]["loadBalancer"]["ingress"]
                .as_array()
                .is_some_and(|ingress| {
                    ingress
                        .iter()
                        .any(|i| !text(i, &["ip"]).is_empty() || !text(i, &["hostname"]).is_empty())
                });
            if assigned {
                Availability::Available
            } else {
                Availability::NotYetAvailable
            }
        }
        // ClusterIP (the default) and NodePort.
        _ => {
            if text(object, &["spec", "clusterIP"]).is_empty() {
                Availability::NotYetAvailable
            } else {
                Availability::Available
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_deployment_is_available_when_every_replica_is_updated_ready_and_available() {
        let mut deployment = json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"generation": 2}, "spec": {"replicas": 3},
            "status": {"observedGeneration": 2, "updatedReplicas": 3, "readyReplicas": 3, "availableReplicas": 3}});
        assert_eq!(judge(&deployment), Availability::Available);
        deployment["status"]["readyReplicas"] = json!(2);
        assert_eq!(judge(&deployment), Availability::NotYetAvailable);
        deployment["status"]["readyReplicas"] = json!(3);
        deployment["status"]["observedGeneration"] = json!(1);
        assert_eq!(
            judge(&deployment),
            Availability::NotYetAvailable,
            "an old spec does not count"
        );
    }

    #[test]
    fn a_daemonset_needs_every_desired_pod_updated_and_available() {
        let daemonset = json!({"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"generation": 1},
            "status": {"observedGeneration": 1, "desiredNumberScheduled": 4, "updatedNumberScheduled": 4, "numberAvailable": 3}});
        assert_eq!(judge(&daemonset), Availability::NotYetAvailable);
    }

    #[test]
    fn a_statefulset_needs_every_replica_ready_on_the_latest_revision() {
        let mut set = json!({"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"generation": 1},
            "spec": {"replicas": 2}, "status": {"observedGeneration": 1, "readyReplicas": 2,
            "currentReplicas": 2, "currentRevision": "web-1", "updateRevision": "web-2"}});
        assert_eq!(judge(&set), Availability::NotYetAvailable);
        set["status"]["currentRevision"] = json!("web-2");
        assert_eq!(judge(&set), Availability::Available);
    }

    #[test]
    fn a_job_is_available_with_one_succeeded_or_ready_pod() {
        let job =
            |status: Value| json!({"apiVersion": "batch/v1", "kind": "Job", "status": status});
        assert_eq!(
            judge(&job(json!({"succeeded": 1}))),
            Availability::Available
        );
        assert_eq!(judge(&job(json!({"ready": 1}))), Availability::Available);
        assert_eq!(
            judge(&job(json!({"active": 2}))),
            Availability::NotYetAvailable
        );
    }

    #[test]
    fn services_by_type() {
        let service = |spec: Value, status: Value| json!({"apiVersion": "v1", "kind": "Service", "spec": spec, "status": status});
        assert_eq!(
            judge(&service(json!({"clusterIP": "10.0.0.1"}), json!({}))),
            Availability::Available
        );
        assert_eq!(
            judge(&service(json!({"type": "NodePort"}), json!({}))),
            Availability::NotYetAvailable
        );
        assert_eq!(
            judge(&service(
                json!({"type": "LoadBalancer"}),
                json!({"loadBalancer": {"ingress": [{"hostname": "lb.example"}]}})
            )),
            Availability::Available
        );
        assert_eq!(
            judge(&service(json!({"type": "LoadBalancer"}), json!({}))),
            Availability::NotYetAvailable
        );
        assert_eq!(
            judge(&service(json!({"type": "ExternalName"}), json!({}))),
            Availability::NotTrackable
        );
    }

    #[test]
    fn data_only_objects_are_available_at_once_and_others_are_not_trackable() {
        for (api_version, kind) in [
            ("v1", "Namespace"),
            ("v1", "Secret"),
            ("v1", "ConfigMap"),
            ("rbac.authorization.k8s.io/v1", "Role"),
            ("rbac.authorization.k8s.io/v1", "ClusterRole"),
            ("rbac.authorization.k8s.io/v1", "RoleBinding"),
            ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding"),
        ] {
            assert_eq!(
                judge(&json!({"apiVersion": api_version, "kind": kind})),
                Availability::Available,
                "{kind}"
            );
        }
        assert_eq!(
            judge(&json!({"apiVersion": "example.com/v1", "kind": "Widget"})),
            Availability::NotTrackable
        );
    }
}
