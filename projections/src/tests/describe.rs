//! Proves `describe` follows kubectl's layout for custom resources, as in the seed's
//! `kubectl describe crp` sample: after three members report the work applied and available
//! but not trackable, the status reads like the sample's, condition by condition.

use flotilla_core::model::ObjectKey;
use serde_json::json;

use super::{Hub, Report, crp_1, member_cluster, sample_heartbeat};
use crate::describe;

#[test]
fn a_placement_reads_like_the_seeds_kubectl_describe_crp() {
    let mut hub = Hub::new();
    // The fleet of KubeFleet's `kubectl describe crp` sample: three joined clusters, the
    // namespace `application-1` with a ConfigMap, everything at the sample's time.
    for name in ["kind-cluster-1", "kind-cluster-2", "kind-cluster-3"] {
        hub.apply(0, &member_cluster(name));
        hub.heartbeat(0, sample_heartbeat(name));
    }
    hub.apply(
        0,
        &json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "application-1"}}),
    );
    hub.apply(
        0,
        &json!({
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "app-config-1", "namespace": "application-1"},
            "data": {"a": "b"}
        }),
    );
    // The spec of the sample.
    hub.apply(
        0,
        &crp_1(json!({
            "policy": {"placementType": "PickAll"},
            "resourceSelectors": [
                {"group": "", "kind": "Namespace", "name": "application-1", "version": "v1"}
            ],
            "revisionHistoryLimit": 10,
            "strategy": {
                "rollingUpdate": {
                    "maxSurge": "25%",
                    "maxUnavailable": "25%",
                    "unavailablePeriodSeconds": 2
                },
                "type": "RollingUpdate"
            }
        })),
    );
    // Each member applies the namespace and the ConfigMap: available, but not trackable.
    for name in ["kind-cluster-1", "kind-cluster-2", "kind-cluster-3"] {
        hub.report(0, Report::untrackable(name, "crp-1"));
    }
    let key = ObjectKey::cluster_scoped(
        "placement.kubernetes-fleet.io",
        "ClusterResourcePlacement",
        "crp-1",
    );
    // Field by field the seed's sample (times aside; flotilla shows the apply strategy the
    // webhook defaults, and records no Kubernetes events).
    // The sample's three clusters report the same conditions: only the names differ, and the
    // padding of the name line (kubectl's tab writer aligns the later ones with the conditions
    // above them).
    let expected = [
        SAMPLE_HEAD.to_owned(),
        sample_cluster_status("    Cluster Name:  kind-cluster-1", "kind-cluster-1"),
        sample_cluster_status(
            "    Cluster Name:            kind-cluster-2",
            "kind-cluster-2",
        ),
        sample_cluster_status(
            "    Cluster Name:            kind-cluster-3",
            "kind-cluster-3",
        ),
        SAMPLE_TAIL.to_owned(),
    ]
    .concat();
    assert_eq!(describe(&hub.state, &key).expect("stored"), expected);
}

#[test]
fn a_member_cluster_shows_labels_spec_and_status() {
    let mut hub = Hub::new();
    hub.apply(0, &json!({
        "apiVersion": "cluster.kubernetes-fleet.io/v1beta1",
        "kind": "MemberCluster",
        "metadata": {
            "name": "member1",
            "labels": {"environment": "staging", "region": "east"},
            "annotations": {"note": "first"}
        },
        "spec": {
            "identity": {"kind": "User", "name": "member1", "apiGroup": "rbac.authorization.k8s.io"},
            "heartbeatPeriodSeconds": 30
        }
    }));
    hub.heartbeat(30, sample_heartbeat("member1"));
    let key = ObjectKey::cluster_scoped("cluster.kubernetes-fleet.io", "MemberCluster", "member1");
    let expected = "\
Name:         member1
Namespace:
Labels:       environment=staging
              region=east
Annotations:  note: first
API Version:  cluster.kubernetes-fleet.io/v1beta1
Kind:         MemberCluster
Metadata:
  Creation Timestamp:  2024-04-29T09:58:20Z
  Generation:          1
  Resource Version:    1
  UID:                 00000000-0000-0000-0000-000000000001
Spec:
  Heartbeat Period Seconds:  30
  Identity:
    API Group:  rbac.authorization.k8s.io
    Kind:       User
    Name:       member1
Status:
  Agent Status:
    Conditions:
      Last Transition Time:   2024-04-29T09:58:50Z
      Message:
      Observed Generation:    1
      Reason:                 InternalMemberClusterJoined
      Status:                 True
      Type:                   Joined
      Last Transition Time:   2024-04-29T09:58:50Z
      Message:
      Observed Generation:    1
      Reason:                 InternalMemberClusterHealthy
      Status:                 True
      Type:                   Healthy
    Last Received Heartbeat:  2024-04-29T09:58:50Z
    Type:                     MemberAgent
  Conditions:
    Last Transition Time:  2024-04-29T09:58:20Z
    Message:               Member cluster is ready to join the fleet
    Observed Generation:   1
    Reason:                MemberClusterReadyToJoin
    Status:                True
    Type:                  ReadyToJoin
    Last Transition Time:  2024-04-29T09:58:50Z
    Message:               Member cluster has successfully joined the fleet
    Observed Generation:   1
    Reason:                MemberClusterJoined
    Status:                True
    Type:                  Joined
    Last Transition Time:  2024-04-29T09:58:50Z
    Message:               heartbeats from the member agent arrive within 150s
    Observed Generation:   1
    Reason:                HeartbeatReceived
    Status:                True
    Type:                  Healthy
  Properties:
    kubernetes-fleet.io/node-count:
      Observation Time:  2024-04-29T09:58:50Z
      Value:             2
  Resource Usage:
    Allocatable:
      Cpu:     32
      Memory:  16Gi
    Available:
      Cpu:     2
      Memory:  800Mi
    Capacity:
      Cpu:             40
      Memory:          20Gi
    Observation Time:  2024-04-29T09:58:50Z
";
    assert_eq!(describe(&hub.state, &key).expect("stored"), expected);
}

#[test]
fn a_namespaced_resource_names_its_namespace_and_missing_objects_are_none() {
    let mut hub = Hub::new();
    hub.apply(
        0,
        &json!({
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "app-config-1", "namespace": "application-1"},
            "data": {"config.yaml": "a: 1\nb: 2\n"}
        }),
    );
    let key = ObjectKey {
        group: "".into(),
        kind: "ConfigMap".into(),
        namespace: "application-1".into(),
        name: "app-config-1".into(),
    };
    let expected = "\
Name:         app-config-1
Namespace:    application-1
Labels:       <none>
Annotations:  <none>
API Version:  v1
Data:
  config.yaml:  a: 1
b: 2

Kind:  ConfigMap
Metadata:
  Creation Timestamp:  2024-04-29T09:58:20Z
  Generation:          1
  Resource Version:    1
  UID:                 00000000-0000-0000-0000-000000000001
";
    assert_eq!(describe(&hub.state, &key).expect("stored"), expected);
    let missing = ObjectKey {
        name: "nope".into(),
        ..key
    };
    assert_eq!(describe(&hub.state, &missing), None);
}

/// The sample's `kubectl describe crp` text down to its first placement status.
const SAMPLE_HEAD: &str = "\
Name:         crp-1
Namespace:
Labels:       <none>
Annotations:  <none>
API Version:  placement.kubernetes-fleet.io/v1
Kind:         ClusterResourcePlacement
Metadata:
  Creation Timestamp:  2024-04-29T09:58:20Z
  Generation:          1
  Resource Version:    6
  UID:                 00000000-0000-0000-0000-000000000009
Spec:
  Policy:
    Placement Type:  PickAll
  Resource Selectors:
    Group:
    Kind:                  Namespace
    Name:                  application-1
    Version:               v1
  Revision History Limit:  10
  Strategy:
    Apply Strategy:
      Comparison Option:  PartialComparison
      Server Side Apply Config:
        Force:            false
      Type:               ClientSideApply
      When To Apply:      Always
      When To Take Over:  Always
    Rolling Update:
      Max Surge:                   25%
      Max Unavailable:             25%
      Unavailable Period Seconds:  2
    Type:                          RollingUpdate
Status:
  Conditions:
    Last Transition Time:   2024-04-29T09:58:20Z
    Message:                found all the clusters needed as specified by the scheduling policy
    Observed Generation:    1
    Reason:                 SchedulingPolicyFulfilled
    Status:                 True
    Type:                   ClusterResourcePlacementScheduled
    Last Transition Time:   2024-04-29T09:58:20Z
    Message:                All 3 cluster(s) start rolling out the latest resource
    Observed Generation:    1
    Reason:                 RolloutStarted
    Status:                 True
    Type:                   ClusterResourcePlacementRolloutStarted
    Last Transition Time:   2024-04-29T09:58:20Z
    Message:                No override rules are configured for the selected resources
    Observed Generation:    1
    Reason:                 NoOverrideSpecified
    Status:                 True
    Type:                   ClusterResourcePlacementOverridden
    Last Transition Time:   2024-04-29T09:58:20Z
    Message:                Works(s) are succcesfully created or updated in the 3 target clusters' namespaces
    Observed Generation:    1
    Reason:                 WorkSynchronized
    Status:                 True
    Type:                   ClusterResourcePlacementWorkSynchronized
    Last Transition Time:   2024-04-29T09:58:20Z
    Message:                The selected resources are successfully applied to 3 clusters
    Observed Generation:    1
    Reason:                 ApplySucceeded
    Status:                 True
    Type:                   ClusterResourcePlacementApplied
    Last Transition Time:   2024-04-29T09:58:20Z
    Message:                The selected resources in 3 cluster are available now
    Observed Generation:    1
    Reason:                 ResourceAvailable
    Status:                 True
    Type:                   ClusterResourcePlacementAvailable
  Observed Resource Index:  0
  Placement Statuses:
";

/// One cluster's entry under the sample's `Placement Statuses`: its name line, then its conditions.
fn sample_cluster_status(name_line: &str, cluster: &str) -> String {
    let conditions = "    Conditions:
      Last Transition Time:  2024-04-29T09:58:20Z
      Message:               Successfully scheduled resources for placement in {cluster} (affinity score: 0, topology spread score: 0): picked by scheduling policy
      Observed Generation:   1
      Reason:                Scheduled
      Status:                True
      Type:                  Scheduled
      Last Transition Time:  2024-04-29T09:58:20Z
      Message:               Detected the new changes on the resources and started the rollout process
      Observed Generation:   1
      Reason:                RolloutStarted
      Status:                True
      Type:                  RolloutStarted
      Last Transition Time:  2024-04-29T09:58:20Z
      Message:               No override rules are configured for the selected resources
      Observed Generation:   1
      Reason:                NoOverrideSpecified
      Status:                True
      Type:                  Overridden
      Last Transition Time:  2024-04-29T09:58:20Z
      Message:               All of the works are synchronized to the latest
      Observed Generation:   1
      Reason:                AllWorkSynced
      Status:                True
      Type:                  WorkSynchronized
      Last Transition Time:  2024-04-29T09:58:20Z
      Message:               All corresponding work objects are applied
      Observed Generation:   1
      Reason:                AllWorkHaveBeenApplied
      Status:                True
      Type:                  Applied
      Last Transition Time:  2024-04-29T09:58:20Z
      Message:               The availability of work object crp-1-work is not trackable
      Observed Generation:   1
      Reason:                WorkNotTrackable
      Status:                True
      Type:                  Available
";
    format!("{name_line}\n{}", conditions.replace("{cluster}", cluster))
}

/// The sample's text after the placement statuses: the selected resources and the events.
const SAMPLE_TAIL: &str = "  Selected Resources:
    Kind:       Namespace
    Name:       application-1
    Version:    v1
    Kind:       ConfigMap
    Name:       app-config-1
    Namespace:  application-1
    Version:    v1
Events:
  Type    Reason                        Age   From                                   Message
  ----    ------                        ----  ----                                   -------
  Normal  PlacementRolloutStarted       0s    cluster-resource-placement-controller  Started rolling out the latest resources
  Normal  PlacementOverriddenSucceeded  0s    cluster-resource-placement-controller  Placement has been successfully overridden
  Normal  PlacementWorkSynchronized     0s    cluster-resource-placement-controller  Work(s) have been created or updated successfully for the selected cluster(s)
  Normal  PlacementApplied              0s    cluster-resource-placement-controller  Resources have been applied to the selected cluster(s)
  Normal  PlacementRolloutCompleted     0s    cluster-resource-placement-controller  Resources are available in the selected clusters
";
