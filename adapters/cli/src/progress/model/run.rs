//! A staged update run (`ClusterStagedUpdateRun`, `StagedUpdateRun`) as progress: one bar per
//! entry of `status.stagesStatus`, counting the stage's clusters whose `Succeeded` is `True`.

use serde_json::Value;

use super::view::{Bar, BarKind, Outcome, View, condition, count, has, object_label, text};

/// The progress of a staged update run, from its JSON.
#[must_use]
pub fn run_view(run: &Value) -> View {
    let stages: Vec<&Value> = run
        .pointer("/status/stagesStatus")
        .and_then(Value::as_array)
        .map(|stages| stages.iter().collect())
        .unwrap_or_default();
    let bars: Vec<Bar> = stages.iter().map(|stage| stage_bar(stage)).collect();
    let placement = text(run, "/spec/placementName");
    let mut title = format!("{} (placement {placement}", object_label(run));
    if let Some(index) = run
        .pointer("/status/resourceSnapshotIndexUsed")
        .and_then(Value::as_str)
    {
        title.push_str(&format!(", resource index {index}"));
    }
    title.push(')');
    View {
        title,
        state: run_state(run),
        outcome: run_outcome(run, &stages),
        bars,
    }
}

/// The run's most telling condition reason: `Succeeded`'s, else `Progressing`'s, else
/// `Initialized`'s; `spec.state` before any.
fn run_state(run: &Value) -> String {
    let conditions = run.pointer("/status/conditions");
    ["Succeeded", "Progressing", "Initialized"]
        .into_iter()
        .find_map(|kind| condition(conditions, kind))
        .map(|c| text(c, "/reason").to_owned())
        .unwrap_or_else(|| format!("state {}", text(run, "/spec/state")))
}

fn run_outcome(run: &Value, stages: &[&Value]) -> Outcome {
    let conditions = run.pointer("/status/conditions");
    let name = text(run, "/metadata/name");
    if has(conditions, "Succeeded", "True") {
        let clusters: u64 = stages
            .iter()
            .map(|s| stage_clusters(s).len())
            .map(count)
            .sum();
        return Outcome::Completed(format!(
            "{} succeeded: {clusters} clusters in {} stages updated",
            object_label(run),
            stages.len()
        ));
    }
    for failed in ["Succeeded", "Initialized"] {
        if let Some(c) = condition(conditions, failed).filter(|c| text(c, "/status") == "False") {
            return Outcome::Failed(format!(
                "{} failed ({}): {}",
                object_label(run),
                text(c, "/reason"),
                text(c, "/message")
            ));
        }
    }
    match text(run, "/spec/state") {
        "Initialize" => {
            return Outcome::Waiting(format!(
                "{} is initialized but not started (spec.state Initialize): `flotilla run start \
                 {name}` starts it",
                object_label(run)
            ));
        }
        "Stop" if progressing_reason(run) == "UpdateRunStopped" => {
            return Outcome::Waiting(format!(
                "{} is stopped (spec.state Stop): `flotilla run start {name}` resumes it",
                object_label(run)
            ));
        }
        _ => {}
    }
    stages
        .iter()
        .find_map(|stage| Some((text(stage, "/stageName"), stage_wait(stage)?)))
        .map_or(Outcome::Progressing, |(stage, wait)| {
            Outcome::Waiting(format!("{}: {}", object_label(run), wait.sentence(stage)))
        })
}

fn progressing_reason(run: &Value) -> &str {
    condition(run.pointer("/status/conditions"), "Progressing")
        .map(|c| text(c, "/reason"))
        .unwrap_or_default()
}

fn stage_clusters(stage: &Value) -> Vec<&Value> {
    stage
        .get("clusters")
        .and_then(Value::as_array)
        .map(|clusters| clusters.iter().collect())
        .unwrap_or_default()
}

fn stage_bar(stage: &Value) -> Bar {
    let clusters = stage_clusters(stage);
    let succeeded = clusters
        .iter()
        .filter(|c| has(c.get("conditions"), "Succeeded", "True"))
        .count();
    Bar {
        kind: BarKind::Stage,
        name: text(stage, "/stageName").to_owned(),
        done: count(succeeded),
        total: count(clusters.len()),
        note: stage_note(stage, &clusters),
    }
}

/// Where a stage is: succeeded, failed on a cluster, waiting (see [`stage_wait`]), updating
/// clusters, or pending.
fn stage_note(stage: &Value, clusters: &[&Value]) -> String {
    let conditions = stage.get("conditions");
    if has(conditions, "Succeeded", "True") {
        return "succeeded".to_owned();
    }
    let name = |c: &Value| text(c, "/clusterName").to_owned();
    let failed: Vec<String> = clusters
        .iter()
        .filter(|c| has(c.get("conditions"), "Succeeded", "False"))
        .map(|c| name(c))
        .collect();
    if !failed.is_empty() {
        return format!("failed on {}", failed.join(", "));
    }
    if let Some(wait) = stage_wait(stage) {
        return wait.note();
    }
    let updating: Vec<String> = clusters
        .iter()
        .filter(|c| {
            let conditions = c.get("conditions");
            has(conditions, "Started", "True") && condition(conditions, "Succeeded").is_none()
        })
        .map(|c| name(c))
        .collect();
    if !updating.is_empty() {
        return format!("updating {}", updating.join(", "));
    }
    if condition(conditions, "Progressing").is_some() {
        return "started".to_owned();
    }
    "pending".to_owned()
}

/// What a stage waits for: an approval requested and not given (before or after the stage),
/// or, while the stage is `StageUpdatingWaiting`, a timed wait not elapsed.
#[derive(Debug, Clone, PartialEq, Eq)]
enum StageWait {
    /// The approval request's name.
    Approval(String),
    /// A `TimedWait` task.
    Timed,
    /// An Analysis task measuring.
    Analysis,
}

impl StageWait {
    /// The bar's note.
    fn note(&self) -> String {
        match self {
            StageWait::Approval(request) => format!("waits for approval {request}"),
            StageWait::Timed => "in a timed wait".to_owned(),
            StageWait::Analysis => "waiting on an analysis".to_owned(),
        }
    }

    /// The outcome's sentence: the note, and the command that ends an approval wait.
    fn sentence(&self, stage: &str) -> String {
        match self {
            StageWait::Approval(request) => format!(
                "stage {stage} {} (`flotilla approve {request}`)",
                self.note()
            ),
            StageWait::Timed | StageWait::Analysis => format!("stage {stage} is {}", self.note()),
        }
    }
}

fn stage_wait(stage: &Value) -> Option<StageWait> {
    let tasks = ["beforeStageTaskStatus", "afterStageTaskStatus"]
        .into_iter()
        .filter_map(|field| stage.get(field).and_then(Value::as_array))
        .flatten();
    let mut timed = false;
    for task in tasks {
        let conditions = task.get("conditions");
        match text(task, "/type") {
            "Approval"
                if has(conditions, "ApprovalRequestCreated", "True")
                    && !has(conditions, "ApprovalRequestApproved", "True") =>
            {
                let request = text(task, "/approvalRequestName").to_owned();
                return Some(StageWait::Approval(request));
            }
            "TimedWait" if !has(conditions, "WaitTimeElapsed", "True") => timed = true,
            "Analysis"
                if has(conditions, "AnalysisStarted", "True")
                    && condition(conditions, "AnalysisSucceeded").is_none() =>
            {
                return Some(StageWait::Analysis);
            }
            _ => {}
        }
    }
    let waiting = condition(stage.get("conditions"), "Progressing")
        .is_some_and(|c| text(c, "/reason") == "StageUpdatingWaiting");
    (waiting && timed).then_some(StageWait::Timed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn cluster(name: &str, started: bool, succeeded: Option<bool>) -> Value {
        let mut conditions = Vec::new();
        if started {
            conditions.push(json!({"type": "Started", "status": "True"}));
        }
        if let Some(ok) = succeeded {
            let status = if ok { "True" } else { "False" };
            conditions.push(json!({"type": "Succeeded", "status": status}));
        }
        json!({"clusterName": name, "conditions": conditions})
    }

    fn run(state: &str, conditions: Value, stages: Value) -> Value {
        json!({
            "kind": "ClusterStagedUpdateRun",
            "metadata": {"name": "shop-run"},
            "spec": {"placementName": "shop", "state": state},
            "status": {"conditions": conditions, "stagesStatus": stages,
                       "resourceSnapshotIndexUsed": "0"},
        })
    }

    fn started() -> Value {
        json!([{"type": "Initialized", "status": "True", "reason": "UpdateRunInitializedSuccessfully"},
               {"type": "Progressing", "status": "True", "reason": "UpdateRunStarted"}])
    }

    #[test]
    fn an_approval_after_a_finished_stage_is_a_wait() {
        let stages = json!([
            {"stageName": "staging", "clusters": [cluster("member-1", true, Some(true))],
             "conditions": [{"type": "Progressing", "status": "False", "reason": "StageUpdatingWaiting"}],
             "afterStageTaskStatus": [{"type": "Approval", "approvalRequestName": "shop-run-after-staging",
                "conditions": [{"type": "ApprovalRequestCreated", "status": "True"}]}]},
            {"stageName": "production", "clusters": [cluster("member-2", false, None), cluster("member-3", false, None)]},
        ]);
        let view = run_view(&run("Run", started(), stages));
        assert_eq!(
            view.title,
            "clusterstagedupdaterun/shop-run (placement shop, resource index 0)"
        );
        assert_eq!(view.state, "UpdateRunStarted");
        assert_eq!(
            view.bars[0].line(),
            "stage staging: 1/1 clusters, waits for approval shop-run-after-staging"
        );
        assert_eq!(
            view.bars[1].line(),
            "stage production: 0/2 clusters, pending"
        );
        assert_eq!(
            view.outcome,
            Outcome::Waiting(
                "clusterstagedupdaterun/shop-run: stage staging waits for approval \
                 shop-run-after-staging (`flotilla approve shop-run-after-staging`)"
                    .to_owned()
            )
        );
    }

    #[test]
    fn updating_clusters_progress_and_success_completes() {
        let stages = json!([
            {"stageName": "production", "clusters": [cluster("member-2", true, Some(true)), cluster("member-3", true, None)],
             "conditions": [{"type": "Progressing", "status": "True", "reason": "StageUpdatingStarted"}]},
        ]);
        let view = run_view(&run("Run", started(), stages.clone()));
        assert_eq!(
            view.bars[0].line(),
            "stage production: 1/2 clusters, updating member-3"
        );
        assert_eq!(view.outcome, Outcome::Progressing);

        let mut done = started();
        if let Some(list) = done.as_array_mut() {
            list.push(
                json!({"type": "Succeeded", "status": "True", "reason": "UpdateRunSucceeded"}),
            );
        }
        let view = run_view(&run("Run", done, stages));
        assert_eq!(view.state, "UpdateRunSucceeded");
        assert!(
            matches!(&view.outcome, Outcome::Completed(t) if t.contains("2 clusters in 1 stages"))
        );
    }

    #[test]
    fn a_failed_run_and_an_unstarted_run() {
        let failed = json!([{"type": "Succeeded", "status": "False", "reason": "UpdateRunFailed", "message": "boom"}]);
        let view = run_view(&run("Run", failed, json!([])));
        assert_eq!(
            view.outcome,
            Outcome::Failed(
                "clusterstagedupdaterun/shop-run failed (UpdateRunFailed): boom".to_owned()
            )
        );
        let view = run_view(&run("Initialize", json!([]), json!([])));
        assert!(matches!(&view.outcome, Outcome::Waiting(w) if w.contains("run start shop-run")));
    }

    #[test]
    fn a_timed_wait_counts_only_while_the_stage_waits() {
        let stage = |reason: &str| {
            json!({"stageName": "canary", "clusters": [],
            "conditions": [{"type": "Progressing", "status": "False", "reason": reason}],
            "afterStageTaskStatus": [{"type": "TimedWait"}]})
        };
        let wait = stage_wait(&stage("StageUpdatingWaiting"));
        assert_eq!(
            wait.map(|w| w.sentence("canary")).as_deref(),
            Some("stage canary is in a timed wait")
        );
        assert_eq!(stage_wait(&stage("StageUpdatingStarted")), None);
    }
}
