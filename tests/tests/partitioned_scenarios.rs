//! Rancher Fleet's partitioned rollout (`docs/partitioned-rollout.md`) as scenario runs, each with
//! the outcome the docs state: at most 50 staged per pass and the next pass at once, the NotReady
//! threshold (strictly more than `maxUnavailable`),
//! automatic and manual partitions, `maxUnavailablePartitions`, offline clusters, and the
//! Bundle-shaped status (Pending on an initial deployment, OutOfSync on a change). Most fleets
//! (50 to 230 clusters) are generated here as scenario text; the seed's two maxNew cases are
//! files under `tests/scenarios/partitioned/`.

use flotilla_tests::scenario_files::{run_scenario, run_scenario_text};
use serde_json::{Value, json};

type TestResult = Result<(), String>;

/// A scenario file being written.
struct Script(String);

impl Script {
    /// Namespace `test-ns` with ConfigMap `cfg` version 1, then `clusters` members (name,
    /// labels) that join.
    fn fleet(clusters: &[(String, Value)]) -> Self {
        let mut script = Script("start: 2025-03-12T23:00:00Z\nsteps:\n".into());
        let items: Vec<Value> = clusters
            .iter()
            .map(|(name, labels)| {
                json!({"apiVersion": "cluster.kubernetes-fleet.io/v1beta1", "kind": "MemberCluster",
                    "metadata": {"name": name, "labels": labels}, "spec": {}})
            })
            .collect();
        script.apply(&json!({"apiVersion": "v1", "kind": "List", "items": items}));
        for (name, _) in clusters {
            script.step(&format!("heartbeat: {{cluster: {name}}}"));
        }
        script.apply(
            &json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "test-ns"}}),
        );
        script.config(1);
        script
    }

    fn step(&mut self, line: &str) -> &mut Self {
        self.0.push_str("  - ");
        self.0.push_str(line);
        self.0.push('\n');
        self
    }

    fn apply(&mut self, document: &Value) -> &mut Self {
        self.step(&format!("apply: '{document}'"))
    }

    fn config(&mut self, version: u32) -> &mut Self {
        self.apply(&json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "cfg", "namespace": "test-ns"}, "data": {"version": version.to_string()}}))
    }

    /// The partitioned placement `crp` over every cluster.
    fn placement(&mut self, rollout: Option<Value>) -> &mut Self {
        let mut strategy = json!({"type": "Partitioned"});
        if let Some(rollout) = rollout {
            strategy["rolloutStrategy"] = rollout;
        }
        self.apply(&json!({"apiVersion": "placement.kubernetes-fleet.io/v1",
            "kind": "ClusterResourcePlacement", "metadata": {"name": "crp"},
            "spec": {"resourceSelectors": [{"group": "", "kind": "Namespace", "version": "v1", "name": "test-ns"}],
                     "strategy": strategy}}))
    }

    /// `agents: {c: {available: false}, …}` for `clusters`.
    fn unavailable(&mut self, clusters: &[String]) -> &mut Self {
        let map: Vec<String> = clusters
            .iter()
            .map(|c| format!("{c}: {{available: false}}"))
            .collect();
        self.step(&format!("agents: {{{}}}", map.join(", ")))
    }

    /// `cluster` reports its work applied and available.
    fn recovers(&mut self, cluster: &str) -> &mut Self {
        self.step(&format!(
            "report: {{cluster: {cluster}, placement: crp, applied: true, available: true}}"
        ))
    }

    async fn run(&self) -> Result<Outcome, String> {
        let run = run_scenario_text("generated.yaml", &self.0, None).await?;
        Ok(Outcome(run.output))
    }
}

/// A scenario's output.
struct Outcome(Value);

impl Outcome {
    fn status(&self) -> &Value {
        self.0["objects"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|o| o["kind"] == "ClusterResourcePlacement")
            .map_or(&Value::Null, |o| &o["status"])
    }

    /// Clusters whose binding is Bound, by name.
    fn bound(&self) -> Vec<String> {
        let mut bound: Vec<String> = self.0["objects"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|o| o["kind"] == "ClusterResourceBinding" && o["spec"]["state"] == "Bound")
            .filter_map(|o| o["spec"]["targetCluster"].as_str().map(str::to_owned))
            .collect();
        bound.sort();
        bound
    }

    /// `(name, count, maxUnavailable, unavailable)` of every partition.
    fn partitions(&self) -> Vec<(String, u64, u64, u64)> {
        self.status()["partitions"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|p| {
                (
                    p["name"].as_str().unwrap_or_default().to_owned(),
                    p["count"].as_u64().unwrap_or(u64::MAX),
                    p["maxUnavailable"].as_u64().unwrap_or(u64::MAX),
                    p["unavailable"].as_u64().unwrap_or(u64::MAX),
                )
            })
            .collect()
    }

    fn summary(&self, state: &str) -> u64 {
        self.status()["summary"][state].as_u64().unwrap_or(u64::MAX)
    }

    fn ready_clusters(&self) -> &str {
        self.status()["display"]["readyClusters"]
            .as_str()
            .unwrap_or_default()
    }

    fn paused(&self) -> &str {
        self.status()["display"]["message"]
            .as_str()
            .unwrap_or_default()
    }
}

fn clusters(count: usize, labels: impl Fn(usize) -> Value) -> Vec<(String, Value)> {
    (0..count)
        .map(|i| (format!("cluster-{i:03}"), labels(i)))
        .collect()
}

fn names(range: std::ops::Range<usize>) -> Vec<String> {
    range.map(|i| format!("cluster-{i:03}")).collect()
}

#[tokio::test]
async fn fifty_clusters_in_one_partition_are_deployed_at_once_then_evaluated() -> TestResult {
    let mut script = Script::fleet(&clusters(50, |_| json!({})));
    script.placement(Some(json!({"maxUnavailable": "10%"})));
    let staged = script.run().await?;
    assert_eq!(staged.bound().len(), 50, "all 50 in one batch");
    assert_eq!(
        staged.partitions(),
        [("All".to_owned(), 50, 5, 50)],
        "one partition; nothing evaluated yet"
    );
    assert_eq!(staged.summary("waitApplied"), 50);
    assert_eq!(staged.summary("desiredReady"), 50);
    assert_eq!(staged.paused(), "", "nothing left to deploy");
    script.step("agents: auto");
    let evaluated = script.run().await?;
    assert_eq!(evaluated.partitions(), [("All".to_owned(), 50, 5, 0)]);
    assert_eq!(evaluated.ready_clusters(), "50/50");
    assert_eq!(evaluated.status()["display"].get("state"), None);
    Ok(())
}

#[tokio::test]
async fn a_hundred_clusters_deploy_fifty_then_pause_while_more_than_ten_are_not_ready() -> TestResult
{
    let mut script = Script::fleet(&clusters(100, |_| json!({})));
    script.unavailable(&names(0..11)).step("agents: auto");
    script.placement(Some(json!({"maxUnavailable": "10%"})));
    let paused = script.run().await?;
    assert_eq!(
        paused.bound(),
        names(0..50),
        "the first batch of 50, by name"
    );
    assert_eq!(
        paused.paused(),
        "partition All: 11 of 100 clusters NotReady, maxUnavailable 10"
    );
    assert_eq!(paused.summary("notReady"), 11);
    assert_eq!(paused.summary("ready"), 39);
    assert_eq!(paused.summary("pending"), 50);
    assert_eq!(paused.status()["display"]["state"], "Pending");
    assert_eq!(paused.status()["maxUnavailable"], 10);
    // One recovers: 10 NotReady is not more than 10, so the remaining 50 go out.
    script.recovers("cluster-010");
    let resumed = script.run().await?;
    assert_eq!(resumed.bound().len(), 100);
    assert_eq!(resumed.ready_clusters(), "90/100");
    assert_eq!(resumed.paused(), "");
    Ok(())
}

#[tokio::test]
async fn two_hundred_clusters_in_ten_partitions_of_twenty_pause_when_two_are_not_ready()
-> TestResult {
    let mut script = Script::fleet(&clusters(200, |_| json!({})));
    // The seed's block, with maxUnavailable 10% (2 of 20) so that a partition can be NotReady
    // (at the default 100% none ever is).
    script.placement(Some(
        json!({"maxUnavailablePartitions": 1, "autoPartitionSize": "10%",
        "maxUnavailable": "10%"}),
    ));
    let two = script.run().await?;
    let partitions = two.partitions();
    assert_eq!(partitions.len(), 10);
    assert_eq!(partitions[0], ("Partition 0 - 20".to_owned(), 20, 2, 20));
    assert_eq!(partitions[9], ("Partition 180 - 200".to_owned(), 20, 2, 20));
    assert_eq!(
        two.bound(),
        names(0..40),
        "one NotReady partition is allowed, so the second starts; the third waits"
    );
    assert_eq!(two.status()["unavailablePartitions"], 2);
    assert_eq!(
        two.paused(),
        "2 partitions NotReady, maxUnavailablePartitions 1; partition Partition 20 - 40: 20 of 20 clusters NotReady, maxUnavailable 2"
    );
    // The first partition becomes Ready: one NotReady partition, so the third starts.
    for cluster in names(0..20) {
        script.recovers(&cluster);
    }
    let three = script.run().await?;
    assert_eq!(three.bound(), names(0..60));
    script.step("agents: auto");
    let done = script.run().await?;
    assert_eq!(done.bound().len(), 200);
    assert_eq!(done.ready_clusters(), "200/200");
    assert_eq!(done.status()["unavailablePartitions"], 0);
    Ok(())
}

#[tokio::test]
async fn strict_manual_partitions_move_on_only_when_the_current_one_is_ready() -> TestResult {
    let stage =
        |i: usize| json!({"stage": if i.is_multiple_of(10) { "demoRollout" } else { "stable" }});
    let mut script = Script::fleet(&clusters(200, stage));
    script.unavailable(&names(10..11)).step("agents: auto");
    script.placement(Some(
        json!({"maxUnavailable": 0, "maxUnavailablePartitions": 0,
        "partitions": [
            {"name": "demoRollout", "clusterSelector": {"matchLabels": {"stage": "demoRollout"}}},
            {"name": "stable", "clusterSelector": {"matchLabels": {"stage": "stable"}}}]}),
    ));
    let paused = script.run().await?;
    let demo: Vec<String> = (0..200)
        .step_by(10)
        .map(|i| format!("cluster-{i:03}"))
        .collect();
    assert_eq!(paused.bound(), demo, "only demoRollout has work");
    assert_eq!(
        paused.partitions(),
        [
            ("demoRollout".to_owned(), 20, 0, 1),
            ("stable".to_owned(), 180, 0, 180)
        ]
    );
    assert_eq!(
        paused.paused(),
        "partition demoRollout: 1 of 20 clusters NotReady, maxUnavailable 0"
    );
    script.recovers("cluster-010");
    let done = script.run().await?;
    assert_eq!(done.bound().len(), 200);
    assert_eq!(done.ready_clusters(), "200/200");
    Ok(())
}

#[tokio::test]
async fn an_image_pull_storm_is_held_until_at_most_four_of_forty_are_not_ready() -> TestResult {
    let batch = |i: usize| json!({"batch": format!("b{}", i / 40)});
    let mut script = Script::fleet(&clusters(200, batch));
    script.unavailable(&names(0..5)).step("agents: auto");
    let partitions: Vec<Value> = (0..5)
        .map(|b| json!({"name": format!("b{b}"), "clusterSelector": {"matchLabels": {"batch": format!("b{b}")}}}))
        .collect();
    script.placement(Some(
        json!({"maxUnavailable": "10%", "maxUnavailablePartitions": 0,
        "partitions": partitions}),
    ));
    let held = script.run().await?;
    assert_eq!(held.bound(), names(0..40), "all 40 in one batch, then held");
    assert_eq!(
        held.paused(),
        "partition b0: 5 of 40 clusters NotReady, maxUnavailable 4"
    );
    script.recovers("cluster-004");
    let done = script.run().await?;
    assert_eq!(
        done.bound().len(),
        200,
        "4 NotReady is within 10%: it proceeds"
    );
    assert_eq!(done.ready_clusters(), "196/200");
    Ok(())
}

#[tokio::test]
async fn two_hundred_thirty_clusters_at_25_percent_are_four_partitions_of_57_and_one_of_2()
-> TestResult {
    // Unpadded names: partitions follow the plain string order (cluster-10 before cluster-2).
    let fleet: Vec<(String, Value)> = (0..230)
        .map(|i| (format!("cluster-{i}"), json!({})))
        .collect();
    let mut script = Script::fleet(&fleet);
    script.placement(Some(json!({"autoPartitionSize": "25%"})));
    let first = script.run().await?;
    // maxNew (50) limits each pass, and a pass stopped at it is followed by another at once:
    // at the default maxUnavailable 100% every partition is Ready, so all 230 get work
    // although none has reported.
    assert_eq!(first.bound().len(), 230);
    assert_eq!(
        first.partitions(),
        [
            ("Partition 0 - 57".to_owned(), 57, 57, 57),
            ("Partition 57 - 114".to_owned(), 57, 57, 57),
            ("Partition 114 - 171".to_owned(), 57, 57, 57),
            ("Partition 171 - 228".to_owned(), 57, 57, 57),
            ("Partition 228 - 230".to_owned(), 2, 2, 2),
        ]
    );
    assert_eq!(first.paused(), "", "nothing left to deploy");
    script.step("agents: auto");
    let done = script.run().await?;
    assert_eq!(done.bound().len(), 230);
    assert_eq!(done.ready_clusters(), "230/230");
    Ok(())
}

#[tokio::test]
async fn the_first_batch_follows_the_plain_string_order_of_names() -> TestResult {
    let fleet: Vec<(String, Value)> = (0..230)
        .map(|i| (format!("cluster-{i}"), json!({})))
        .collect();
    let mut script = Script::fleet(&fleet);
    // maxUnavailable 0 holds the partition after its first batch of 50 (none reported).
    script.placement(Some(
        json!({"autoPartitionSize": "25%", "maxUnavailable": 0}),
    ));
    let first = script.run().await?;
    let bound = first.bound();
    assert_eq!(bound.len(), 50);
    assert!(bound.contains(&"cluster-10".to_owned()) && !bound.contains(&"cluster-2".to_owned()));
    assert_eq!(
        first.paused(),
        "partition Partition 0 - 57: 50 of 57 clusters NotReady, maxUnavailable 0"
    );
    Ok(())
}

#[tokio::test]
async fn seed_000_defaults_give_all_two_hundred_clusters_work_without_any_report() -> TestResult {
    let run = run_scenario("partitioned/seed-000-defaults-200.yaml", None).await?;
    let done = Outcome(run.output);
    assert_eq!(
        done.bound().len(),
        200,
        "Fleet proceeds regardless of readiness"
    );
    assert_eq!(
        done.partitions(),
        [
            ("Partition 0 - 50".to_owned(), 50, 50, 50),
            ("Partition 50 - 100".to_owned(), 50, 50, 50),
            ("Partition 100 - 150".to_owned(), 50, 50, 50),
            ("Partition 150 - 200".to_owned(), 50, 50, 50),
        ]
    );
    assert_eq!(done.summary("waitApplied"), 200);
    assert_eq!(done.summary("pending"), 0);
    assert_eq!(done.paused(), "");
    // 200 members, 200 heartbeats, namespace and config, the placement, and the three ticks
    // that carried the second, third and fourth batch of 50.
    assert_eq!(done.0["events"], 200 + 200 + 2 + 1 + 3);
    assert_eq!(done.0["rejections"], json!([]));
    Ok(())
}

#[tokio::test]
async fn seed_000_nine_not_ready_of_the_first_fifty_let_the_remaining_fifty_go() -> TestResult {
    let run = run_scenario("partitioned/seed-000-hundred-nine-not-ready.yaml", None).await?;
    let done = Outcome(run.output);
    assert_eq!(
        done.bound().len(),
        100,
        "9 NotReady is within maxUnavailable 10"
    );
    assert_eq!(done.partitions(), [("All".to_owned(), 100, 10, 9)]);
    assert_eq!(done.summary("notReady"), 9);
    assert_eq!(done.ready_clusters(), "91/100");
    assert_eq!(done.paused(), "");
    Ok(())
}

#[tokio::test]
async fn defaults_give_four_partitions_of_fifty_that_all_proceed() -> TestResult {
    let mut script = Script::fleet(&clusters(200, |_| json!({})));
    script.unavailable(&names(0..30)).step("agents: auto");
    script.placement(None);
    let done = script.run().await?;
    assert_eq!(
        done.partitions(),
        [
            ("Partition 0 - 50".to_owned(), 50, 50, 30),
            ("Partition 50 - 100".to_owned(), 50, 50, 0),
            ("Partition 100 - 150".to_owned(), 50, 50, 0),
            ("Partition 150 - 200".to_owned(), 50, 50, 0),
        ]
    );
    assert_eq!(
        done.bound().len(),
        200,
        "100% treats every partition as Ready"
    );
    assert_eq!(done.ready_clusters(), "170/200");
    assert_eq!(done.status()["maxUnavailablePartitions"], 0);
    assert_eq!(done.status()["unavailablePartitions"], 0);
    Ok(())
}

#[tokio::test]
async fn clusters_in_no_manual_partition_never_get_work() -> TestResult {
    let env = |i: usize| json!({"env": if i < 3 { "prod" } else { "dev" }});
    let mut script = Script::fleet(&clusters(6, env));
    script.step("agents: auto");
    script.placement(Some(json!({"partitions": [
        {"name": "prod", "clusterSelector": {"matchLabels": {"env": "prod"}}}]})));
    let done = script.run().await?;
    assert_eq!(done.bound(), names(0..3));
    assert_eq!(done.summary("pending"), 3);
    assert_eq!(done.ready_clusters(), "3/6");
    Ok(())
}

#[tokio::test]
async fn a_partitions_max_unavailable_overrides_the_global_one() -> TestResult {
    let half = |i: usize| json!({"half": if i < 10 { "first" } else { "second" }});
    let mut script = Script::fleet(&clusters(20, half));
    script.unavailable(&names(0..2)).step("agents: auto");
    script.placement(Some(json!({"maxUnavailable": 0, "partitions": [
        {"name": "first", "maxUnavailable": 2, "clusterSelector": {"matchLabels": {"half": "first"}}},
        {"name": "second", "clusterSelector": {"matchLabels": {"half": "second"}}}]})));
    let done = script.run().await?;
    assert_eq!(
        done.partitions(),
        [
            ("first".to_owned(), 10, 2, 2),
            ("second".to_owned(), 10, 0, 0)
        ]
    );
    assert_eq!(
        done.bound().len(),
        20,
        "2 NotReady is within the partition's own 2"
    );
    Ok(())
}

#[tokio::test]
async fn an_offline_cluster_stays_not_ready_until_it_comes_back_and_deploys() -> TestResult {
    let group = |i: usize| json!({"group": if i < 5 { "a" } else { "b" }});
    let mut script = Script::fleet(&clusters(10, group));
    // Everyone but cluster-003 answers; cluster-003 is offline.
    let online: Vec<String> = names(0..10)
        .into_iter()
        .filter(|c| c != "cluster-003")
        .map(|c| format!("{c}: {{available: true}}"))
        .collect();
    script.step(&format!("agents: {{{}}}", online.join(", ")));
    script.placement(Some(json!({"maxUnavailable": 0, "partitions": [
        {"name": "a", "clusterSelector": {"matchLabels": {"group": "a"}}},
        {"name": "b", "clusterSelector": {"matchLabels": {"group": "b"}}}]})));
    script.step("advance: 1h");
    let waiting = script.run().await?;
    assert_eq!(waiting.bound(), names(0..5), "no timer moves it on");
    assert_eq!(waiting.summary("waitApplied"), 1);
    assert_eq!(
        waiting.paused(),
        "partition a: 1 of 5 clusters NotReady, maxUnavailable 0"
    );
    script.recovers("cluster-003");
    let done = script.run().await?;
    assert_eq!(done.bound().len(), 10);
    assert_eq!(done.ready_clusters(), "10/10");
    Ok(())
}

#[tokio::test]
async fn partitions_by_cluster_name_cluster_group_and_cluster_group_selector() -> TestResult {
    let region = |i: usize| json!({"region": if i.is_multiple_of(2) { "east" } else { "west" }});
    let mut script = Script::fleet(&clusters(6, region));
    script.apply(
        &json!({"apiVersion": "fleet.cattle.io/v1alpha1", "kind": "ClusterGroup",
        "metadata": {"name": "east", "namespace": "fleet-default", "labels": {"tier": "edge"}},
        "spec": {"selector": {"matchLabels": {"region": "east"}}}}),
    );
    script.apply(
        &json!({"apiVersion": "fleet.cattle.io/v1alpha1", "kind": "ClusterGroup",
        "metadata": {"name": "west", "namespace": "fleet-default", "labels": {"tier": "core"}},
        "spec": {"selector": {"matchLabels": {"region": "west"}}}}),
    );
    script.step("agents: auto");
    script.placement(Some(json!({"partitions": [
        {"name": "one", "clusterName": "cluster-005"},
        {"name": "east", "clusterGroup": "east"},
        {"name": "core", "clusterGroupSelector": {"matchLabels": {"tier": "core"}}}]})));
    let grouped = script.run().await?;
    let counts = |o: &Outcome| -> Vec<u64> { o.partitions().iter().map(|p| p.1).collect() };
    assert_eq!(counts(&grouped), [1, 3, 3]);
    assert_eq!(grouped.bound().len(), 6);
    // A member's label and a group's selector change: partitions are cut again.
    script.apply(
        &json!({"apiVersion": "cluster.kubernetes-fleet.io/v1beta1", "kind": "MemberCluster",
        "metadata": {"name": "cluster-001", "labels": {"region": "east"}}, "spec": {}}),
    );
    let relabelled = script.run().await?;
    assert_eq!(counts(&relabelled), [1, 4, 2]);
    script.apply(
        &json!({"apiVersion": "fleet.cattle.io/v1alpha1", "kind": "ClusterGroup",
        "metadata": {"name": "east", "namespace": "fleet-default", "labels": {"tier": "edge"}},
        "spec": {"selector": {"matchLabels": {"region": "nowhere"}}}}),
    );
    let regrouped = script.run().await?;
    assert_eq!(counts(&regrouped), [1, 0, 2]);
    Ok(())
}

#[tokio::test]
async fn pending_on_the_initial_deployment_and_out_of_sync_on_a_change() -> TestResult {
    let mut script = Script::fleet(&clusters(100, |_| json!({})));
    script.placement(Some(json!({"maxUnavailable": "10%"})));
    let initial = script.run().await?;
    assert_eq!(initial.summary("pending"), 50, "no work yet: Pending");
    assert_eq!(initial.summary("waitApplied"), 50);
    script.step("agents: auto");
    assert_eq!(script.run().await?.ready_clusters(), "100/100");
    script.step("agents: manual").config(2);
    let change = script.run().await?;
    assert_eq!(
        change.summary("waitApplied"),
        10,
        "maxUnavailable 10 switches ten"
    );
    assert_eq!(
        change.summary("outOfSync"),
        90,
        "not reached yet: OutOfSync"
    );
    assert_eq!(change.summary("pending"), 0);
    assert_eq!(change.status()["display"]["state"], "WaitApplied");
    script.step("agents: auto");
    let done = script.run().await?;
    assert_eq!(done.ready_clusters(), "100/100");
    Ok(())
}
