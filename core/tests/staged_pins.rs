//! KubeFleet's staged update rules that worked without a test holding them: a stage's
//! `sortingLabelKey` orders clusters by the label's integer value (not as text), a strategy edit
//! after a run initialized does not change that run ("immune to subsequent strategy
//! modifications"), a cluster updating for five minutes makes the run
//! `UpdateRunStuck` (still running, not failed), and concurrent runs on one placement must use
//! identical strategies.

mod common;

use common::{Hub, namespace};
use flotilla_core::model::ObjectKey;
use flotilla_core::query::staged::run::UpdateRun;
use flotilla_core::{Input, WorkReport};
use serde_json::{Value, json};

fn strategy(name: &str, stages: Value) -> Value {
    json!({"apiVersion": "placement.kubernetes-fleet.io/v1beta1",
        "kind": "ClusterStagedUpdateStrategy", "metadata": {"name": name},
        "spec": {"stages": stages}})
}

fn run(name: &str, strategy: &str, state: &str) -> Value {
    json!({"apiVersion": "placement.kubernetes-fleet.io/v1beta1",
        "kind": "ClusterStagedUpdateRun", "metadata": {"name": name},
        "spec": {"placementName": "crp", "stagedRolloutStrategyName": strategy, "state": state}})
}

/// Members `(name, order label)`, namespace `test-ns` and an External PickAll placement.
fn fleet(clusters: &[(&str, &str)]) -> Hub {
    let mut hub = Hub::new();
    for (name, order) in clusters {
        hub.join(name, json!({"env": "prod", "order": order}), json!([]));
    }
    hub.apply(&namespace("test-ns"));
    hub.apply(&json!({"apiVersion": "placement.kubernetes-fleet.io/v1beta1",
        "kind": "ClusterResourcePlacement", "metadata": {"name": "crp"},
        "spec": {"resourceSelectors": [{"group": "", "kind": "Namespace", "version": "v1", "name": "test-ns"}],
                 "policy": {"placementType": "PickAll"}, "strategy": {"type": "External"}}}));
    hub
}

fn the_run<'a>(hub: &'a Hub, name: &str) -> &'a UpdateRun {
    let key = ObjectKey::cluster_scoped(
        "placement.kubernetes-fleet.io",
        "ClusterStagedUpdateRun",
        name,
    );
    &hub.state.update_runs()[&key]
}

/// `(stage, [clusters in update order])` of a run.
fn plan(hub: &Hub, name: &str) -> Vec<(String, Vec<String>)> {
    the_run(hub, name)
        .status
        .stages
        .iter()
        .map(|s| {
            let clusters = s.clusters.iter().map(|c| c.cluster.to_string()).collect();
            (s.name.clone(), clusters)
        })
        .collect()
}

fn condition(hub: &Hub, name: &str, which: &str) -> (String, String, String) {
    let status = &the_run(hub, name).status;
    let condition = match which {
        "Initialized" => status.initialized.as_ref(),
        "Progressing" => status.progressing.as_ref(),
        _ => status.succeeded.as_ref(),
    };
    condition.map_or_else(Default::default, |c| {
        (
            c.status.as_str().to_owned(),
            c.reason.to_string(),
            c.message.clone(),
        )
    })
}

fn report(hub: &mut Hub, cluster: &str) {
    hub.send(Input::WorkReport(WorkReport::available(cluster, "crp", 0)));
}

#[test]
fn a_sorting_label_orders_clusters_by_its_integer_value() {
    // As text, "10" < "2" < "9"; as integers 2 < 9 < 10. Names are in neither order.
    let mut hub = fleet(&[("member-a", "10"), ("member-b", "2"), ("member-c", "9")]);
    hub.apply(&strategy(
        "s",
        json!([{"name": "prod", "labelSelector": {"matchLabels": {"env": "prod"}}, "sortingLabelKey": "order"}]),
    ));
    hub.apply(&run("r", "s", "Initialize"));
    assert_eq!(
        plan(&hub, "r"),
        [(
            "prod".to_owned(),
            vec![
                "member-b".to_owned(),
                "member-c".to_owned(),
                "member-a".to_owned()
            ]
        )]
    );
    // Without the key, clusters go by name.
    hub.apply(&strategy(
        "plain",
        json!([{"name": "prod", "labelSelector": {}}]),
    ));
    hub.apply(&run("by-name", "plain", "Initialize"));
    let by_name = plan(&hub, "by-name");
    assert_eq!(by_name[0].1, ["member-a", "member-b", "member-c"]);
}

#[test]
fn a_strategy_edit_does_not_change_an_initialized_run() {
    let mut hub = fleet(&[("member-1", "1"), ("member-2", "2")]);
    let one_stage = json!([{"name": "all", "labelSelector": {}}]);
    hub.apply(&strategy("s", one_stage));
    hub.apply(&run("r", "s", "Initialize"));
    let snapshot = the_run(&hub, "r").status.strategy_snapshot.clone();
    let before = plan(&hub, "r");
    // The strategy now has two stages, with an approval between them.
    hub.apply(&strategy(
        "s",
        json!([
            {"name": "first", "labelSelector": {"matchLabels": {"order": "1"}},
             "afterStageTasks": [{"type": "Approval"}]},
            {"name": "second", "labelSelector": {"matchLabels": {"order": "2"}}}]),
    ));
    assert_eq!(the_run(&hub, "r").status.strategy_snapshot, snapshot);
    assert_eq!(plan(&hub, "r"), before);
    // Started after the edit, it still runs its snapshot: one stage, no approval asked for.
    let mut started = run("r", "s", "Run");
    started["spec"]["state"] = json!("Run");
    hub.apply(&started);
    report(&mut hub, "member-1");
    report(&mut hub, "member-2");
    assert_eq!(plan(&hub, "r"), before);
    assert_eq!(condition(&hub, "r", "Succeeded").0, "True");
    assert!(
        hub.state.approvals().is_empty(),
        "the edited strategy's approval never applies"
    );
}

#[test]
fn a_cluster_updating_for_five_minutes_makes_the_run_stuck_not_failed() {
    let mut hub = fleet(&[("member-1", "1")]);
    hub.apply(&strategy(
        "s",
        json!([{"name": "all", "labelSelector": {}}]),
    ));
    hub.apply(&run("r", "s", "Run"));
    assert_eq!(condition(&hub, "r", "Progressing").1, "UpdateRunStarted");
    // member-1 never reports. Heartbeats keep it healthy while time passes.
    hub.now += chrono::Duration::seconds(60);
    hub.beat("member-1");
    hub.advance(3 * 60);
    assert_eq!(
        condition(&hub, "r", "Progressing").1,
        "UpdateRunStarted",
        "4 minutes"
    );
    hub.beat("member-1");
    // At five minutes the threshold is reached (the core wakes itself there).
    hub.advance(60);
    assert_eq!(
        condition(&hub, "r", "Progressing"),
        (
            "False".to_owned(),
            "UpdateRunStuck".to_owned(),
            "a cluster in stage `all` has been updating for more than 5 minutes".to_owned()
        )
    );
    assert_eq!(
        condition(&hub, "r", "Succeeded").0,
        "",
        "stuck is not failed"
    );
    // The report comes at last: the run goes on and succeeds.
    report(&mut hub, "member-1");
    assert_eq!(condition(&hub, "r", "Succeeded").0, "True");
}

#[test]
fn concurrent_runs_on_one_placement_must_use_identical_strategies() {
    let mut hub = fleet(&[("member-1", "1"), ("member-2", "2")]);
    hub.apply(&strategy(
        "s",
        json!([{"name": "all", "labelSelector": {}}]),
    ));
    hub.apply(&strategy(
        "t",
        json!([{"name": "all", "labelSelector": {}, "sortingLabelKey": "order"}]),
    ));
    hub.apply(&strategy(
        "same",
        json!([{"name": "all", "labelSelector": {}}]),
    ));
    hub.apply(&run("first", "s", "Run"));
    assert_eq!(condition(&hub, "first", "Initialized").0, "True");
    hub.apply(&run("other", "t", "Initialize"));
    let (status, reason, message) = condition(&hub, "other", "Initialized");
    assert_eq!(
        (status.as_str(), reason.as_str()),
        ("False", "UpdateRunInitializedFailed")
    );
    assert!(
        message.ends_with("the strategy snapshot differs from the one of the concurrent ClusterStagedUpdateRun `first` on the same placement; concurrent runs must use identical strategies"),
        "{message}"
    );
    // An identical strategy under another name is fine.
    hub.apply(&run("twin", "same", "Initialize"));
    assert_eq!(condition(&hub, "twin", "Initialized").0, "True");
    // Once the first run finished, the initialized (not started) twin still holds the rule;
    // without it, a different strategy may run.
    report(&mut hub, "member-1");
    report(&mut hub, "member-2");
    assert_eq!(condition(&hub, "first", "Succeeded").0, "True");
    hub.apply(&run("later", "t", "Initialize"));
    let (status, _, message) = condition(&hub, "later", "Initialized");
    assert_eq!(status, "False");
    assert!(message.contains("`twin`"), "{message}");
    hub.delete("ClusterStagedUpdateRun", "twin");
    hub.apply(&run("last", "t", "Initialize"));
    assert_eq!(condition(&hub, "last", "Initialized").0, "True");
}
