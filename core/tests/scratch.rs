mod common;
use common::{Hub, namespace};
use serde_json::json;
#[test]
fn scratch() {
    let mut hub = Hub::new();
    for (c, env) in [("c0", "s"), ("c1", "s")] {
        hub.join(c, json!({"env": env}), json!([]));
    }
    hub.apply(&namespace("app"));
    hub.apply(&json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm", "namespace": "app"}, "data": {"v": "0"}}));
    let crp = |strategy: serde_json::Value| {
        json!({
        "apiVersion": "placement.kubernetes-fleet.io/v1beta1", "kind": "ClusterResourcePlacement",
        "metadata": {"name": "crp"},
        "spec": {"resourceSelectors": [{"group": "", "kind": "Namespace", "version": "v1", "name": "app"}],
                 "policy": {"placementType": "PickAll"}, "strategy": strategy}})
    };
    hub.apply(&crp(json!({"type": "External"})));
    hub.apply(&json!({"apiVersion": "placement.kubernetes-fleet.io/v1beta1", "kind": "ClusterStagedUpdateStrategy",
        "metadata": {"name": "strategy"}, "spec": {"stages": [{"name": "s", "labelSelector": {}}]}}));
    hub.apply(&json!({"apiVersion": "placement.kubernetes-fleet.io/v1beta1", "kind": "ClusterStagedUpdateRun",
        "metadata": {"name": "run"}, "spec": {"placementName": "crp", "stagedRolloutStrategyName": "strategy", "state": "Run"}}));
    let dump = |hub: &Hub, what: &str| {
        println!("== {what}");
        for b in hub.placement("crp").bindings.values() {
            println!(
                "  {} {:?} ri={:?} run={:?} rep={:?}",
                b.cluster,
                b.state,
                b.resource_index,
                b.update_run,
                b.report.as_ref().map(|r| r.resource_index)
            );
        }
    };
    dump(&hub, "run started");
    hub.apply(&json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm", "namespace": "app"}, "data": {"v": "1"}}));
    dump(&hub, "new snapshot");
    hub.apply(&crp(json!({"type": "RollingUpdate"})));
    dump(&hub, "rolling");
    hub.report("crp", "c0", true, true);
    dump(&hub, "c0 reports");
    hub.report("crp", "c0", true, false);
    dump(&hub, "c0 reports again");
    hub.advance(1);
}
