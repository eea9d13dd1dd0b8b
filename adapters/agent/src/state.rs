//! The agent's memory in `--state DIR` (`agent.json`): per Work, the fingerprint it applied, the
//! objects it placed, and the report the hub acknowledged with the fingerprint of the content
//! that report is about. A restarted agent reads it, so it re-applies nothing already applied
//! and still owes a report on any content the hub has not acknowledged one for — also when the
//! publish failed before the restart. Written atomically (a temporary file in the same
//! directory, then a rename).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use super::applier::ApplierError;
use super::report::WorkReport;
use super::work::{ManifestId, WorkTarget};

/// The state file's name inside `--state DIR`.
pub const STATE_FILE: &str = "agent.json";
/// The largest state file read (a guard against reading an unrelated huge file).
pub const STATE_FILE_BYTES_MAX: u64 = 256 * 1024 * 1024;

/// What the agent did for one Work.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AppliedWork {
    /// The work's name and placement.
    pub target: WorkTarget,
    /// The fingerprint of what was applied (`DesiredWork::fingerprint`).
    pub fingerprint: String,
    /// The resource index applied.
    pub resource_index: u64,
    /// The objects this work placed (only these are ever removed for it).
    pub placed: Vec<ManifestId>,
    /// The last report the hub acknowledged, if any.
    pub reported: Option<WorkReport>,
    /// The fingerprint of the content `reported` is about. Absent from a state file written
    /// before reports were tied to content; such a report counts for no content, so it is
    /// owed once more (a report the hub already has changes nothing there).
    #[serde(default)]
    pub reported_fingerprint: Option<String>,
}

impl AppliedWork {
    /// The report the hub acknowledged on the content applied now (`fingerprint`), if any.
    #[must_use]
    pub fn acknowledged(&self) -> Option<&WorkReport> {
        self.reported
            .as_ref()
            .filter(|_| self.reported_fingerprint.as_deref() == Some(self.fingerprint.as_str()))
    }

    /// Whether nothing is owed for the content applied now: the hub acknowledged a report on
    /// it that will not change without a new Work.
    #[must_use]
    pub fn is_settled(&self) -> bool {
        self.acknowledged().is_some_and(WorkReport::is_settled)
    }
}

/// The whole state file.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct AgentState {
    /// The cluster this state belongs to (a state directory is not shared between clusters).
    pub cluster: String,
    /// Works by name.
    pub works: BTreeMap<String, AppliedWork>,
}

/// Reads a JSON file, or `None` when it does not exist.
///
/// # Errors
/// When it cannot be read, is too large or does not decode.
pub fn read_json<T: DeserializeOwned>(path: &Path) -> Result<Option<T>, ApplierError> {
    match std::fs::metadata(path) {
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(error) => return Err(ApplierError::io(path, error)),
        Ok(meta) if meta.len() > STATE_FILE_BYTES_MAX => {
            return Err(ApplierError::Encoding {
                path: path.display().to_string(),
                message: format!("larger than {STATE_FILE_BYTES_MAX} bytes"),
            });
        }
        Ok(_) => {}
    }
    let bytes = std::fs::read(path).map_err(|e| ApplierError::io(path, e))?;
    serde_json::from_slice(&bytes)
        .map(Some)
        .map_err(|e| ApplierError::Encoding {
            path: path.display().to_string(),
            message: e.to_string(),
        })
}

/// Replaces `path` with `bytes` atomically: a temporary file in the same directory, flushed,
/// then renamed over it, so a reader (or a crash) sees the old content or the new, never half.
///
/// # Errors
/// When the directory or file cannot be written.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), ApplierError> {
    use std::io::Write;
    let directory = path.parent().unwrap_or_else(|| Path::new("."));
    std::fs::create_dir_all(directory).map_err(|e| ApplierError::io(directory, e))?;
    let mut file =
        tempfile::NamedTempFile::new_in(directory).map_err(|e| ApplierError::io(directory, e))?;
    file.write_all(bytes)
        .and_then(|()| file.as_file().sync_all())
        .map_err(|e| ApplierError::io(file.path(), e))?;
    file.persist(path)
        .map_err(|e| ApplierError::io(path, e.error))?;
    Ok(())
}

/// Writes a value as pretty JSON, atomically.
///
/// # Errors
/// When it cannot be encoded or written.
pub fn write_json<T: Serialize>(path: &Path, value: &T) -> Result<(), ApplierError> {
    let bytes = serde_json::to_vec_pretty(value).map_err(|e| ApplierError::Encoding {
        path: path.display().to_string(),
        message: e.to_string(),
    })?;
    write_atomically(path, &bytes)
}

/// The agent's state, kept in a file (or only in memory, for agents run inside a scenario).
#[derive(Debug)]
pub struct StateFile {
    path: Option<PathBuf>,
    /// The state as last written.
    pub state: AgentState,
}

impl StateFile {
    /// Opens `DIR/agent.json` (empty when absent).
    ///
    /// # Errors
    /// When it cannot be read, or belongs to another cluster.
    pub fn open(directory: &Path, cluster: &str) -> Result<Self, ApplierError> {
        let path = directory.join(STATE_FILE);
        let state: AgentState = read_json(&path)?.unwrap_or_else(|| AgentState {
            cluster: cluster.to_owned(),
            works: BTreeMap::new(),
        });
        if state.cluster != cluster {
            return Err(ApplierError::Encoding {
                path: path.display().to_string(),
                message: format!("belongs to cluster {}, not {cluster}", state.cluster),
            });
        }
        Ok(Self {
            path: Some(path),
            state,
        })
    }

    /// An empty state kept only in memory: the agents a scenario runs inside its process,
    /// which live as long as the run.
    #[must_use]
    pub fn in_memory(cluster: &str) -> Self {
        Self {
            path: None,
            state: AgentState {
                cluster: cluster.to_owned(),
                works: BTreeMap::new(),
            },
        }
    }

    /// Writes the state (kept in memory: nothing to write).
    ///
    /// # Errors
    /// When it cannot be written.
    pub fn save(&self) -> Result<(), ApplierError> {
        match &self.path {
            Some(path) => write_json(path, &self.state),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_state_survives_a_reopen_and_refuses_another_cluster() -> Result<(), ApplierError> {
        let directory = tempfile::tempdir().map_err(|e| ApplierError::io(Path::new("."), e))?;
        let mut file = StateFile::open(directory.path(), "m1")?;
        file.state.works.insert(
            "w".to_owned(),
            AppliedWork {
                target: WorkTarget {
                    name: "w".to_owned(),
                    placement: "p".to_owned(),
                    namespace: None,
                },
                fingerprint: "f".to_owned(),
                resource_index: 2,
                placed: Vec::new(),
                reported: None,
                reported_fingerprint: None,
            },
        );
        file.save()?;
        assert_eq!(StateFile::open(directory.path(), "m1")?.state, file.state);
        assert!(StateFile::open(directory.path(), "m2").is_err());
        Ok(())
    }

    #[test]
    fn an_older_state_file_loads_and_owes_its_reports_again() -> Result<(), ApplierError> {
        let directory = tempfile::tempdir().map_err(|e| ApplierError::io(Path::new("."), e))?;
        let old = serde_json::json!({"cluster": "m1", "works": {"w": {
            "target": {"name": "w", "placement": "p", "namespace": null},
            "fingerprint": "f", "resource_index": 1, "placed": [],
            "reported": {"resource_index": 0, "applied": true, "available": true,
                "trackable": true, "message": "", "failed": []}}}});
        write_json(&directory.path().join(STATE_FILE), &old)?;
        let file = StateFile::open(directory.path(), "m1")?;
        let work = file.state.works.get("w");
        assert!(work.is_some_and(|w| w.reported.is_some() && w.acknowledged().is_none()));
        assert!(work.is_some_and(|w| !w.is_settled()));
        Ok(())
    }
}
