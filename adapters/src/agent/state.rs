//! The agent's memory in `--state DIR` (`agent.json`): per Work, the fingerprint it applied, the
//! objects it placed and the report the hub acknowledged. A restarted agent reads it, so it
//! re-applies nothing already applied and reports only what the hub has not acknowledged.
//! Written atomically (a temporary file in the same directory, then a rename).

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

/// The agent's state, kept in a file.
#[derive(Debug)]
pub struct StateFile {
    path: PathBuf,
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
        Ok(Self { path, state })
    }

    /// Writes the state.
    ///
    /// # Errors
    /// When it cannot be written.
    pub fn save(&self) -> Result<(), ApplierError> {
        write_json(&self.path, &self.state)
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
            },
        );
        file.save()?;
        assert_eq!(StateFile::open(directory.path(), "m1")?.state, file.state);
        assert!(StateFile::open(directory.path(), "m2").is_err());
        Ok(())
    }
}
