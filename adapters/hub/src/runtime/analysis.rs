//! The analysis adapter (`docs/rollout-safety.md`): runs the Prometheus query of every Analysis
//! stage task that is measuring, when its next measurement is due (at once when the gate is
//! reached, then every `interval`), and appends each result — a value, or why none could be taken —
//! as an `analysisResult` input. The gate itself is decided in the fold, from those inputs.
//!
//! A measurement's id is derived from the run's uid, the stage, the task and the measurement's
//! number, so a measurement sent twice (a retry, a second hub, a restart) is folded once.

use std::collections::BTreeSet;
use std::time::Duration;

use flotilla_core::query::staged::analysis::measure::{self, Measuring};
use flotilla_core::{AnalysisResult, Envelope, Input};
use flotilla_eventstore::EventLog;
use serde_json::Value;
use sha2::{Digest, Sha256};
use uuid::Uuid;

use super::hub::{Hub, HubError};

/// How often the adapter looks for due measurements.
pub const ANALYSIS_POLL: Duration = Duration::from_millis(500);
/// Source name of analysis results.
pub const ANALYSIS_SOURCE: &str = "analysis";
/// How long one query may take before it counts as a measurement error.
const QUERY_TIMEOUT: Duration = Duration::from_secs(10);

/// Runs until shutdown, measuring every due Analysis task.
///
/// # Errors
/// When the log refuses a result for a reason that is not passing.
pub async fn run<L: EventLog>(hub: Hub<L>) -> Result<(), HubError> {
    flotilla_adapters::tls::install_crypto_provider();
    let client = match reqwest::Client::builder().timeout(QUERY_TIMEOUT).build() {
        Ok(client) => client,
        Err(error) => {
            tracing::error!(%error, "cannot build the analysis HTTP client; no analyses run");
            return Ok(());
        }
    };
    let mut shutdown = hub.shutdown_signal();
    let mut folded = hub.folded_updates();
    // Ids of measurements sent and not yet seen folded: not queried again meanwhile.
    let mut sent: BTreeSet<Uuid> = BTreeSet::new();
    loop {
        tokio::select! {
            () = tokio::time::sleep(ANALYSIS_POLL) => {}
            _ = folded.changed() => {}
            _ = shutdown.changed() => return Ok(()),
        }
        let (due, writing) = {
            let view = hub.view()?;
            let writing = view.declined.is_none() && view.fenced.is_none() && !view.following;
            (measure::measuring(&view.folder.state), writing)
        };
        if !writing {
            continue;
        }
        let now = hub.now();
        let ids: Vec<(Uuid, Measuring)> =
            due.into_iter().map(|m| (measurement_id(&m), m)).collect();
        sent.retain(|id| ids.iter().any(|(due, _)| due == id));
        for (id, task) in ids {
            if task.due > now || sent.contains(&id) {
                continue;
            }
            let result = take(&client, &task).await;
            let event = Envelope::new(id, now, ANALYSIS_SOURCE, Input::AnalysisResult(result));
            match hub.submit(vec![event]).await {
                Ok(_) => {
                    sent.insert(id);
                }
                Err(error) if super::hub::transient(&error) => {
                    let full = super::hub::storage_full(&error);
                    super::hub::note_retry("appending an analysis result", &error, full);
                }
                Err(error) => return Err(error),
            }
        }
    }
}

/// The id of a task's next measurement.
fn measurement_id(task: &Measuring) -> Uuid {
    let name = format!(
        "analysis\n{}\n{}\n{}\n{}",
        task.run_uid,
        task.stage,
        task.at.path(),
        task.taken
    );
    let digest = Sha256::digest(name.as_bytes());
    let mut bytes = [0_u8; 16];
    bytes.copy_from_slice(&digest[..16]);
    Uuid::new_v8(bytes)
}

/// Runs the task's query once.
async fn take(client: &reqwest::Client, task: &Measuring) -> AnalysisResult {
    let mut result = AnalysisResult {
        run: task.run.name.to_string(),
        namespace: (!task.run.namespace.is_empty()).then(|| task.run.namespace.to_string()),
        stage: task.stage.clone(),
        task: task.at.path(),
        value: None,
        error: None,
    };
    let Some(prometheus) = &task.task.prometheus else {
        result.error = Some("the task has no prometheus query".into());
        return result;
    };
    match query(client, &prometheus.address, &prometheus.query).await {
        Ok(value) => result.value = Some(value),
        Err(error) => result.error = Some(error),
    }
    result
}

/// `GET <address>/api/v1/query?query=…`: the first sample's value, as Prometheus wrote it.
async fn query(client: &reqwest::Client, address: &str, promql: &str) -> Result<String, String> {
    let url = format!("{}/api/v1/query", address.trim_end_matches('/'));
    let response = client
        .get(&url)
        .query(&[("query", promql)])
        .send()
        .await
        .map_err(|e| format!("querying {url}: {e}"))?;
    let status = response.status();
    let body: Value = response
        .json()
        .await
        .map_err(|e| format!("reading the answer of {url} ({status}): {e}"))?;
    first_sample(&body)
}

/// The value of an instant query's first sample: a `vector`'s first element or a `scalar`.
fn first_sample(body: &Value) -> Result<String, String> {
    if body["status"] != "success" {
        let error = body["error"].as_str().unwrap_or("no error given");
        return Err(format!("prometheus answered {}: {error}", body["status"]));
    }
    let data = &body["data"];
    let sample = match data["resultType"].as_str() {
        Some("vector") => data["result"]
            .get(0)
            .map(|s| &s["value"])
            .ok_or("the query returned no sample")?,
        Some("scalar") => &data["result"],
        other => {
            return Err(format!(
                "the query returned a {other:?}, not a vector or scalar"
            ));
        }
    };
    sample
        .get(1)
        .and_then(Value::as_str)
        .map(str::to_owned)
        .ok_or_else(|| format!("the sample {sample} has no value"))
}

#[cfg(test)]
mod tests {
    use super::first_sample;
    use serde_json::json;

    #[test]
    fn the_first_sample_of_a_vector_or_a_scalar() {
        let vector = json!({"status": "success", "data": {"resultType": "vector",
            "result": [{"metric": {}, "value": [1.7e9, "0.0042"]}]}});
        assert_eq!(first_sample(&vector), Ok("0.0042".to_owned()));
        let scalar = json!({"status": "success", "data": {"resultType": "scalar",
            "result": [1.7e9, "NaN"]}});
        assert_eq!(first_sample(&scalar), Ok("NaN".to_owned()));
        let empty = json!({"status": "success", "data": {"resultType": "vector", "result": []}});
        assert!(first_sample(&empty).is_err());
        let failed = json!({"status": "error", "error": "parse error"});
        assert!(first_sample(&failed).is_err_and(|e| e.contains("parse error")));
    }
}
