//! Running the scenario files under `tests/scenarios/` in-process, against a real temporary redb
//! log: the scenario's printed JSON, and the state a fresh fold of the resulting log gives.

use std::path::{Path, PathBuf};

use flotilla_adapters::store::AnyLog;
use flotilla_cli::scenario;
use flotilla_core::State;
use flotilla_eventstore::LogReader;
use serde_json::Value;

use crate::support::HarnessResult;

/// What a scenario run left.
pub struct ScenarioRun {
    /// The scenario's output (`objects`, `rejections`, `events`, `stateHash`) as JSON.
    pub output: Value,
    /// The state folded from zero out of the run's log.
    pub state: State,
}

/// The path of `tests/scenarios/<relative>`.
#[must_use]
pub fn scenario_path(relative: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("scenarios")
        .join(relative)
}

/// Runs `tests/scenarios/<relative>`, all of it or only its first `steps` steps.
///
/// # Errors
/// When the file cannot be read or parsed, or the run fails.
pub async fn run_scenario(relative: &str, steps: Option<usize>) -> HarnessResult<ScenarioRun> {
    let path = scenario_path(relative);
    let text =
        std::fs::read_to_string(&path).map_err(|e| format!("reading {}: {e}", path.display()))?;
    run_scenario_text(relative, &text, steps).await
}

/// Runs a scenario given as text (`name` labels its errors), all of it or its first `steps`.
///
/// # Errors
/// When the text does not parse, or the run fails.
pub async fn run_scenario_text(
    name: &str,
    text: &str,
    steps: Option<usize>,
) -> HarnessResult<ScenarioRun> {
    let mut parsed = scenario::parse(name, text).map_err(|e| e.to_string())?;
    if let Some(steps) = steps {
        parsed.steps.truncate(steps);
    }
    let dir = tempfile::tempdir().map_err(|e| format!("temporary directory: {e}"))?;
    let log = AnyLog::open_embedded(dir.path()).map_err(|e| e.to_string())?;
    let output = scenario::run(&parsed, &log)
        .await
        .map_err(|e| e.to_string())?;
    let last = log.last_seq().await.map_err(|e| e.to_string())?;
    let folder = flotilla_replay::fold_from_zero(&log, last)
        .await
        .map_err(|e| e.to_string())?;
    Ok(ScenarioRun {
        output: serde_json::to_value(output).map_err(|e| e.to_string())?,
        state: folder.state,
    })
}

/// `cluster@resource snapshot index` of every ClusterResourceBinding, by cluster.
#[must_use]
pub fn binding_indexes(output: &Value) -> Vec<String> {
    let mut out: Vec<String> = output["objects"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|o| o["kind"] == "ClusterResourceBinding")
        .map(|b| {
            let snapshot = b["spec"]["resourceSnapshotName"].as_str().unwrap_or("-");
            let index = snapshot
                .trim_end_matches("-snapshot")
                .rsplit('-')
                .next()
                .unwrap_or("-");
            format!(
                "{}@{index}",
                b["spec"]["targetCluster"].as_str().unwrap_or_default()
            )
        })
        .collect();
    out.sort();
    out
}
