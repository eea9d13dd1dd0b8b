//! Following a rollout: poll the hub's JSON API (`GET /v1/objects/…`) every [`POLL_EVERY`],
//! show each new view, and stop at the first final [`Outcome`] — or, when the view has not
//! changed for [`QUIET_FOR`], when the hub's explain (`GET /v1/explain`) names a reason that
//! does not pass by itself (unavailable or unhealthy clusters, an unfulfilled schedule, a
//! paused partition, …). Then print the outcome and the explain text.
//!
//! Polling rather than the Kubernetes watch: one request per object per tick is cheap on the
//! loopback hub, needs no resource-version bookkeeping, and sees derived status (a placement's
//! conditions move when a binding's report does) exactly as `get` shows it.

use std::time::Duration;

use anyhow::Context;
use serde_json::Value;
use tokio::time::Instant;

use super::model::{Outcome, View, placement_view, run_view, text};
use super::render::Renderer;
use flotilla_adapters::client::Client;

/// How often the hub is asked.
pub const POLL_EVERY: Duration = Duration::from_millis(500);
/// The longest one request to the hub may take.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);
/// A view unchanged this long makes the hub's explain decide whether the rollout waits.
pub const QUIET_FOR: Duration = Duration::from_secs(3);
/// Explain's wait reasons that pass by themselves while the rollout moves.
const MOVING_REASONS: [&str; 4] = ["OutOfDate", "NotAvailable", "RunClusters", "Surge"];

/// What is followed.
#[derive(Debug, Clone)]
pub enum Target {
    /// A placement: its staged run when its strategy is `External`, else itself.
    Placement {
        /// Its name.
        name: String,
        /// Its namespace (a `ResourcePlacement`), or none (a `ClusterResourcePlacement`).
        namespace: Option<String>,
    },
    /// A staged update run.
    Run {
        /// `ClusterStagedUpdateRun` or `StagedUpdateRun`.
        kind: String,
        /// Its name.
        name: String,
        /// Its namespace, for a `StagedUpdateRun`.
        namespace: Option<String>,
    },
}

/// How following ended, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ending {
    /// Completed, failed or waiting.
    pub outcome: Outcome,
    /// The hub's explain text for the placement, when it was asked.
    pub why: Option<String>,
}

/// Follows `target` until it ends (at most `limit`, when given), drawing with `renderer`.
///
/// # Errors
/// An unreachable hub, a missing object, or `limit` passed.
pub async fn follow(
    client: &Client,
    target: &Target,
    renderer: &mut Renderer,
    limit: Option<Duration>,
) -> anyhow::Result<Ending> {
    let started = Instant::now();
    let mut last: Option<View> = None;
    let mut changed_at = started;
    let mut explained_at: Option<Instant> = None;
    loop {
        let (view, placement) = look(client, target).await?;
        if last.as_ref() != Some(&view) {
            renderer.show(&view);
            changed_at = Instant::now();
        }
        if view.outcome.is_final() {
            let why = match view.outcome {
                Outcome::Completed(_) => None,
                _ => Some(explain(client, &placement).await?.1),
            };
            return Ok(Ending {
                outcome: view.outcome,
                why,
            });
        }
        last = Some(view);
        let quiet = changed_at.elapsed() >= QUIET_FOR;
        if quiet && explained_at.is_none_or(|at| at.elapsed() >= QUIET_FOR) {
            explained_at = Some(Instant::now());
            let (blocking, why) = explain(client, &placement).await?;
            if let Some(wait) = blocking {
                return Ok(Ending {
                    outcome: Outcome::Waiting(wait),
                    why: Some(why),
                });
            }
        }
        if let Some(limit) = limit.filter(|limit| started.elapsed() >= *limit) {
            anyhow::bail!("timed out after {}s following the rollout", limit.as_secs());
        }
        tokio::time::sleep(POLL_EVERY).await;
    }
}

/// The placement explain is asked about: its name and namespace.
#[derive(Debug, Clone)]
struct PlacementRef {
    name: String,
    namespace: Option<String>,
}

/// The target's view now, and the placement it rolls out.
async fn look(client: &Client, target: &Target) -> anyhow::Result<(View, PlacementRef)> {
    match target {
        Target::Run {
            kind,
            name,
            namespace,
        } => {
            let run = object(client, kind, name, namespace.as_deref()).await?;
            let placement = PlacementRef {
                name: text(&run, "/spec/placementName").to_owned(),
                namespace: namespace.clone(),
            };
            Ok((run_view(&run), placement))
        }
        Target::Placement { name, namespace } => {
            let kind = placement_kind(namespace.as_deref());
            let placement = object(client, kind, name, namespace.as_deref()).await?;
            let reference = PlacementRef {
                name: name.clone(),
                namespace: namespace.clone(),
            };
            if text(&placement, "/spec/strategy/type") != "External" {
                return Ok((placement_view(&placement), reference));
            }
            let runs = runs_of(client, namespace.as_deref()).await?;
            let view = external_view(&placement, &runs);
            Ok((view, reference))
        }
    }
}

/// `ResourcePlacement` in a namespace, else `ClusterResourcePlacement`.
fn placement_kind(namespace: Option<&str>) -> &'static str {
    if namespace.is_some() {
        "ResourcePlacement"
    } else {
        "ClusterResourcePlacement"
    }
}

/// An `External` placement without a run that rolls out its latest resources.
fn no_run(placement: &Value) -> View {
    let label = super::model::object_label(placement);
    let latest = text(placement, "/status/observedResourceIndex");
    View {
        title: format!("{label} (External)"),
        state: "no staged update run".to_owned(),
        bars: Vec::new(),
        outcome: Outcome::Waiting(format!(
            "{label} is rolled out by staged update runs, and no unfinished one rolls out its \
             resource index {latest}"
        )),
    }
}

/// Whether a run has ended (its `Succeeded` condition is set, `True` or `False`).
fn is_finished(run: &Value) -> bool {
    super::model::condition(run.pointer("/status/conditions"), "Succeeded").is_some()
}

/// Whether a run succeeded.
fn succeeded(run: &Value) -> bool {
    super::model::has(run.pointer("/status/conditions"), "Succeeded", "True")
}

/// The resource snapshot index a run rolls out.
fn run_index(run: &Value) -> &str {
    text(run, "/status/resourceSnapshotIndexUsed")
}

/// One object, as `get -o json` shows it.
async fn object(
    client: &Client,
    kind: &str,
    name: &str,
    namespace: Option<&str>,
) -> anyhow::Result<Value> {
    let mut query = vec![("name", name.to_owned())];
    if let Some(namespace) = namespace {
        query.push(("namespace", namespace.to_owned()));
    }
    let path = format!("/v1/objects/{kind}");
    bounded(client.get_json(&path, &query))
        .await
        .with_context(|| format!("{kind} {name}"))
}

/// Every staged update run of the namespace (`StagedUpdateRun`) or cluster
/// (`ClusterStagedUpdateRun`), as a JSON list.
async fn runs_of(client: &Client, namespace: Option<&str>) -> anyhow::Result<Value> {
    let kind = if namespace.is_some() {
        "StagedUpdateRun"
    } else {
        "ClusterStagedUpdateRun"
    };
    let query: Vec<(&str, String)> = namespace
        .map(|ns| ("namespace", ns.to_owned()))
        .into_iter()
        .collect();
    bounded(client.get_json(&format!("/v1/objects/{kind}"), &query)).await
}

/// An `External` placement's view: its current run's (see [`current_run`]) — unless that run
/// succeeded on an older resource index than the placement's latest, or there is none, which
/// is a wait for a run. A failed run is shown failed.
fn external_view(placement: &Value, runs: &Value) -> View {
    let latest = text(placement, "/status/observedResourceIndex");
    match current_run(placement, runs) {
        Some(run) if !succeeded(run) || run_index(run) == latest => run_view(run),
        _ => no_run(placement),
    }
}

/// The newest unfinished run naming the placement, else its newest run (by creation time,
/// then name).
fn current_run<'a>(placement: &Value, runs: &'a Value) -> Option<&'a Value> {
    let name = text(placement, "/metadata/name");
    let mut runs: Vec<&Value> = runs
        .as_array()
        .into_iter()
        .flatten()
        .filter(|run| text(run, "/spec/placementName") == name)
        .collect();
    // Oldest first; RFC 3339 times of one format sort as text.
    runs.sort_by_key(|run| {
        (
            text(run, "/metadata/creationTimestamp"),
            text(run, "/metadata/name"),
        )
    });
    let unfinished = runs.iter().rposition(|run| !is_finished(run));
    match unfinished {
        Some(position) => Some(runs.swap_remove(position)),
        None => runs.pop(),
    }
}

/// Asks the hub why the placement's rollout waits: the first wait that does not pass by itself
/// (if any), and the explanation as text.
async fn explain(
    client: &Client,
    placement: &PlacementRef,
) -> anyhow::Result<(Option<String>, String)> {
    let mut query = vec![("placement", placement.name.clone())];
    if let Some(namespace) = &placement.namespace {
        query.push(("namespace", namespace.clone()));
    }
    let explanation = bounded(client.get_json("/v1/explain", &query))
        .await
        .context("asking the hub why the rollout waits")?;
    let blocking = waits(&explanation)
        .find(|wait| !MOVING_REASONS.contains(&text(wait, "/reason")))
        .map(|wait| text(wait, "/text").to_owned());
    Ok((blocking, explain_text(&explanation)))
}

fn waits(explanation: &Value) -> impl Iterator<Item = &Value> {
    explanation
        .get("waits")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
}

/// The explanation's waits and clusters not done, as `replay explain` words them.
pub(crate) fn explain_text(explanation: &Value) -> String {
    let at = explanation.get("at").and_then(Value::as_u64).unwrap_or(0);
    let mut out = format!("why (the hub's explain at #{at}):\n");
    let mut any = false;
    for wait in waits(explanation) {
        out.push_str(&format!("- {}\n", text(wait, "/text")));
        any = true;
    }
    if !any {
        out.push_str("- not waiting\n");
    }
    let clusters: Vec<&Value> = explanation
        .get("clusters")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .collect();
    if !clusters.is_empty() {
        out.push_str("clusters not done:\n");
    }
    for cluster in clusters {
        out.push_str(&format!(
            "  {}: {}\n",
            text(cluster, "/cluster"),
            text(cluster, "/text")
        ));
    }
    out
}

/// A hub request bounded by [`REQUEST_TIMEOUT`].
async fn bounded<T>(
    request: impl Future<Output = Result<T, flotilla_adapters::client::ClientError>>,
) -> anyhow::Result<T> {
    match tokio::time::timeout(REQUEST_TIMEOUT, request).await {
        Ok(answer) => Ok(answer?),
        Err(_) => anyhow::bail!(
            "the hub did not answer within {}s",
            REQUEST_TIMEOUT.as_secs()
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn run(name: &str, created: &str, succeeded: Option<&str>, index: &str) -> Value {
        let conditions: Vec<Value> = succeeded
            .map(|status| json!({"type": "Succeeded", "status": status, "reason": "R"}))
            .into_iter()
            .collect();
        json!({"kind": "ClusterStagedUpdateRun",
               "metadata": {"name": name, "creationTimestamp": created},
               "spec": {"placementName": "crp-1", "state": "Run"},
               "status": {"conditions": conditions, "resourceSnapshotIndexUsed": index}})
    }

    fn placement(latest: &str) -> Value {
        json!({"kind": "ClusterResourcePlacement", "metadata": {"name": "crp-1"},
               "spec": {"strategy": {"type": "External"}},
               "status": {"observedResourceIndex": latest}})
    }

    #[test]
    fn an_external_placement_is_shown_through_its_current_run() {
        let older = run("run-a", "2026-01-01T00:00:00Z", Some("True"), "0");
        let open = run("run-b", "2026-01-01T00:01:00Z", None, "1");
        let newest_done = run("run-c", "2026-01-01T00:02:00Z", Some("True"), "1");
        let other = json!({"metadata": {"name": "x"}, "spec": {"placementName": "crp-2"}});
        let runs = json!([newest_done, open, older, other]);
        // An unfinished run wins over a newer finished one.
        let chosen = current_run(&placement("1"), &runs).map(|r| text(r, "/metadata/name"));
        assert_eq!(chosen, Some("run-b"));

        let runs = json!([older]);
        assert!(
            external_view(&placement("0"), &runs)
                .title
                .contains("run-a")
        );
        let behind = external_view(&placement("1"), &runs);
        assert_eq!(behind.title, "clusterresourceplacement/crp-1 (External)");
        assert!(matches!(behind.outcome, Outcome::Waiting(w) if w.ends_with("resource index 1")));

        let failed = json!([run("run-f", "2026-01-01T00:00:00Z", Some("False"), "")]);
        assert!(matches!(
            external_view(&placement("1"), &failed).outcome,
            Outcome::Failed(_)
        ));
        assert!(matches!(
            external_view(&placement("1"), &json!([])).outcome,
            Outcome::Waiting(_)
        ));
    }

    #[test]
    fn explain_text_lists_waits_and_clusters() {
        let explanation = json!({
            "at": 42,
            "waits": [{"reason": "Approval", "text": "run shop-run waits for approval x"}],
            "clusters": [{"cluster": "member-2", "text": "not bound yet"}],
        });
        assert_eq!(
            explain_text(&explanation),
            "why (the hub's explain at #42):\n- run shop-run waits for approval x\n\
             clusters not done:\n  member-2: not bound yet\n"
        );
        assert_eq!(
            explain_text(&json!({"at": 1, "waits": []})),
            "why (the hub's explain at #1):\n- not waiting\n"
        );
    }
}
