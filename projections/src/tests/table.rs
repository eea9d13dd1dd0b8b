//! Proves `get` tables have KubeFleet's columns, kubectl's alignment and event-time ages.

use serde_json::json;

use super::{Hub, crp_1, member_cluster, sample_heartbeat};
use crate::{resolve_kind, table};

/// member1 joins at t=30 and times out at t=330; member2 never joins; "now" is t=3600.
fn fleet() -> Hub {
    let mut hub = Hub::new();
    hub.apply(
        0,
        &json!({
            "apiVersion": "cluster.kubernetes-fleet.io/v1beta1",
            "kind": "MemberCluster",
            "metadata": {"name": "member1"},
            "spec": {"taints": [{"key": "maintenance", "value": "true", "effect": "NoSchedule"}]}
        }),
    );
    hub.apply(5, &member_cluster("member2-long-name"));
    hub.heartbeat(30, sample_heartbeat("member1"));
    hub.apply(
        100,
        &json!({
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "test-1", "namespace": "test"}, "data": {"a": "b"}
        }),
    );
    hub.apply(
        200,
        &json!({
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "app-config", "namespace": "application-1"}, "data": {}
        }),
    );
    hub.apply(
        300,
        &crp_1(json!({
            "resourceSelectors": [{"group": "", "version": "v1", "kind": "Namespace", "name": "test"}]
        })),
    );
    hub.tick(3600);
    hub
}

fn get(hub: &Hub, kind: &str, namespace: Option<&str>, wide: bool) -> String {
    let info = resolve_kind(&hub.state, kind).expect("known kind");
    table(&hub.state, &info, namespace, wide)
}

#[test]
fn member_clusters_show_kubefleets_printer_columns() {
    let hub = fleet();
    assert_eq!(
        get(&hub, "memberclusters", None, false),
        "NAME                JOINED    AGE   MEMBER-AGENT-LAST-SEEN   NODE-COUNT   AVAILABLE-CPU   \
         AVAILABLE-MEMORY\n\
         member1             True      60m   59m                      2            2               \
         800Mi\n\
         member2-long-name   Unknown   59m\n"
    );
}

#[test]
fn wide_member_clusters_add_allocatable_health_and_taints() {
    let hub = fleet();
    let text = get(&hub, "cluster", None, true);
    let lines: Vec<&str> = text.lines().collect();
    // member2's only wide cell is HEALTHY; it sits under its header.
    let healthy_at = lines[0].find("HEALTHY").expect("header");
    assert_eq!(lines[2].rfind("Unknown"), Some(healthy_at));
    assert_eq!(
        lines[2].get(..healthy_at).map(str::trim_end),
        Some("member2-long-name   Unknown   59m")
    );
    assert_eq!(
        lines[..2],
        [
            "NAME                JOINED    AGE   MEMBER-AGENT-LAST-SEEN   NODE-COUNT   AVAILABLE-CPU   \
             AVAILABLE-MEMORY   ALLOCATABLE-CPU   ALLOCATABLE-MEMORY   HEALTHY   TAINTS",
            "member1             True      60m   59m                      2            2               \
             800Mi              32                16Gi                 False     \
             maintenance=true:NoSchedule",
        ]
    );
}

#[test]
fn placements_show_the_scheduled_condition_and_empty_cells_for_the_rest() {
    let hub = fleet();
    assert_eq!(
        get(&hub, "crp", None, false),
        "NAME    GEN   SCHEDULED   SCHEDULED-GEN   AVAILABLE   AVAILABLE-GEN   AGE\n\
         crp-1   1     True        1                                           55m\n"
    );
    let text = get(&hub, "crp", None, true);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines[0],
        "NAME    GEN   TYPE      SCHEDULED   SCHEDULED-GEN   WORK-SYNCHRONIZED   \
         WORK-SYNCHRONIZED-GEN   AVAILABLE   AVAILABLE-GEN   AGE"
    );
    assert!(lines[1].starts_with("crp-1   1     PickAll   True        1                   "));
    assert_eq!(lines[1].find("55m"), lines[0].find("AGE"));
}

#[test]
fn namespaced_kinds_show_the_namespace_only_across_namespaces() {
    let hub = fleet();
    assert_eq!(
        get(&hub, "configmaps", None, false),
        "NAMESPACE       NAME         AGE\n\
         application-1   app-config   56m\n\
         test            test-1       58m\n"
    );
    assert_eq!(
        get(&hub, "cm", Some("test"), false),
        "NAME     AGE\ntest-1   58m\n"
    );
}

#[test]
fn an_empty_list_says_so_like_kubectl() {
    let hub = fleet();
    assert_eq!(
        get(&hub, "secrets", Some("test"), false),
        "No resources found in test namespace.\n"
    );
    assert_eq!(get(&hub, "ns", None, false), "No resources found\n");
}

#[test]
fn snapshots_show_kubefleets_generation_column() {
    let hub = fleet();
    assert_eq!(
        get(&hub, "csps", None, false),
        "NAME      GEN   AGE\ncrp-1-0   1     55m\n"
    );
    assert_eq!(
        get(&hub, "clusterresourcesnapshots", Some("ignored"), false),
        "NAME               GEN   AGE\ncrp-1-0-snapshot   1     55m\n"
    );
    // member1's taint is not tolerated and member2 never joined: no binding (the binding
    // columns are checked with a ResourcePlacement in `resource_placement.rs`).
    assert_eq!(get(&hub, "crb", None, false), "No resources found\n");
    assert_eq!(get(&hub, "rb", None, false), "No resources found\n");
}
