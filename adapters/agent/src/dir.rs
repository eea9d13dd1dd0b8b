//! The `dir:PATH` applier: writes each Work's manifests as YAML for a GitOps tool (Argo CD,
//! Flux) to pick up, under `PATH/<cluster>/<placement>/` (`<namespace>_<placement>` for a
//! `ResourcePlacement`), one file per manifest named `<kind>-<namespace>-<name>.yaml`
//! (`<kind>-<name>.yaml` for a cluster-scoped object), lowercase. Files are replaced atomically
//! and only when their content changes; a withdrawn manifest's file is removed, and its
//! directory too once empty. Availability is not trackable (applied means written).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use flotilla_core::query::availability::Availability;

use super::applier::{Applied, Applier, ApplierError, Findings, ManifestOutcome};
use super::state::write_atomically;
use super::work::{DesiredWork, ManifestId, WorkTarget};

/// The `dir` applier.
#[derive(Debug)]
pub struct DirApplier {
    label: String,
    root: PathBuf,
}

/// `<kind>-<namespace>-<name>.yaml`, or `<kind>-<name>.yaml` without a namespace, lowercase.
#[must_use]
pub fn file_name(id: &ManifestId) -> String {
    let name = if id.namespace.is_empty() {
        format!("{}-{}.yaml", id.kind, id.name)
    } else {
        format!("{}-{}-{}.yaml", id.kind, id.namespace, id.name)
    };
    // A name never leaves its directory, whatever the manifest says.
    name.to_lowercase().replace(['/', '\\'], "_")
}

impl DirApplier {
    /// Writes under `PATH/<cluster>/`.
    #[must_use]
    pub fn new(cluster: &str, path: &Path) -> Self {
        Self {
            label: format!("[dir {cluster}]"),
            root: path.join(cluster),
        }
    }

    fn directory(&self, target: &WorkTarget) -> PathBuf {
        self.root.join(target.directory().replace(['/', '\\'], "_"))
    }

    fn write(&self, directory: &Path, id: &ManifestId, manifest: &serde_json::Value) -> Applied {
        let path = directory.join(file_name(id));
        let text = match serde_saphyr::to_string(manifest) {
            Ok(text) => text,
            Err(error) => return Applied::Failed(format!("cannot write YAML: {error}")),
        };
        if std::fs::read(&path).is_ok_and(|existing| existing == text.as_bytes()) {
            return Applied::Applied;
        }
        match write_atomically(&path, text.as_bytes()) {
            Ok(()) => {
                println!("{} wrote {}", self.label, path.display());
                Applied::Applied
            }
            Err(error) => Applied::Failed(error.to_string()),
        }
    }

    fn outcomes(&self, work: &DesiredWork, write: bool) -> Vec<ManifestOutcome> {
        let directory = self.directory(&work.target);
        let mut names = BTreeSet::new();
        work.manifests
            .iter()
            .map(|manifest| {
                let Some(id) = ManifestId::of(manifest) else {
                    return ManifestOutcome::unnamed();
                };
                if !names.insert(file_name(&id)) {
                    return ManifestOutcome::failed(
                        id,
                        "another manifest of this work has the same file name",
                    );
                }
                let applied = if let Some(why) = scope_mismatch(&id) {
                    Applied::Failed(why)
                } else if write {
                    self.write(&directory, &id, manifest)
                } else if directory.join(file_name(&id)).is_file() {
                    Applied::Applied
                } else {
                    Applied::Failed("its file is missing".to_owned())
                };
                ManifestOutcome {
                    id,
                    applied,
                    availability: Availability::NotTrackable,
                    findings: Findings::default(),
                }
            })
            .collect()
    }
}

/// Why a manifest is refused for its scope: a kind known cluster-scoped (a Kubernetes built-in
/// or a kind the hub serves) that names a namespace would be created cluster-wide by whatever
/// reads the directory, though the hub holds it as a namespaced object.
fn scope_mismatch(id: &ManifestId) -> Option<String> {
    (!id.namespace.is_empty()
        && flotilla_core::query::kind_scope::is_cluster_scoped(&id.group, &id.kind))
    .then(|| {
        format!(
            "{} is cluster-scoped but the work names namespace {:?}; not written",
            id.kind, id.namespace
        )
    })
}

impl Applier for DirApplier {
    fn label(&self) -> &str {
        &self.label
    }

    async fn apply(&mut self, work: &DesiredWork) -> Result<Vec<ManifestOutcome>, ApplierError> {
        Ok(self.outcomes(work, true))
    }

    async fn observe(&mut self, work: &DesiredWork) -> Result<Vec<ManifestOutcome>, ApplierError> {
        Ok(self.outcomes(work, false))
    }

    async fn remove(
        &mut self,
        target: &WorkTarget,
        objects: &[ManifestId],
    ) -> Result<usize, ApplierError> {
        let directory = self.directory(target);
        let mut removed = 0;
        for id in objects {
            let path = directory.join(file_name(id));
            match std::fs::remove_file(&path) {
                Ok(()) => {
                    println!("{} removed {}", self.label, path.display());
                    removed += 1;
                }
                Err(error) if error.kind() == std::io::ErrorKind::NotFound => {}
                Err(error) => return Err(ApplierError::io(&path, error)),
            }
        }
        // Only empty directories go: remove_dir refuses a directory with anything left in it.
        for empty in [&directory, &self.root] {
            let _ = std::fs::remove_dir(empty);
        }
        Ok(removed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    fn work(manifests: Vec<Value>) -> DesiredWork {
        DesiredWork {
            target: WorkTarget {
                name: "crp-work".into(),
                placement: "crp".into(),
                namespace: None,
            },
            resource_index: 0,
            apply_strategy: crate::work::ApplyStrategy::default(),
            override_snapshots: None,
            manifests,
        }
    }

    #[tokio::test]
    async fn manifests_are_written_read_back_equal_and_removed() -> Result<(), ApplierError> {
        let root = tempfile::tempdir().map_err(|e| ApplierError::io(Path::new("."), e))?;
        let mut applier = DirApplier::new("m1", root.path());
        let config = json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "Cfg", "namespace": "app"}, "data": {"k": "v"}});
        let outcomes = applier.apply(&work(vec![config.clone()])).await?;
        assert_eq!(outcomes[0].applied, Applied::Applied);
        assert_eq!(outcomes[0].availability, Availability::NotTrackable);
        let path = root.path().join("m1/crp/configmap-app-cfg.yaml");
        let text = std::fs::read_to_string(&path).map_err(|e| ApplierError::io(&path, e))?;
        let back: Value = serde_saphyr::from_str(&text).map_err(|e| ApplierError::Encoding {
            path: path.display().to_string(),
            message: e.to_string(),
        })?;
        assert_eq!(back, config);
        let id = outcomes[0].id.clone();
        assert_eq!(applier.remove(&work(vec![]).target, &[id]).await?, 1);
        assert!(!path.exists() && !root.path().join("m1").exists());
        Ok(())
    }

    #[tokio::test]
    async fn a_cluster_scoped_kind_naming_a_namespace_is_not_written() -> Result<(), ApplierError> {
        let root = tempfile::tempdir().map_err(|e| ApplierError::io(Path::new("."), e))?;
        let mut applier = DirApplier::new("m1", root.path());
        let policy = json!({"apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "ValidatingAdmissionPolicy",
            "metadata": {"name": "deny", "namespace": "team-a"}, "spec": {}});
        let outcomes = applier.apply(&work(vec![policy])).await?;
        assert!(
            matches!(&outcomes[0].applied, Applied::Failed(why) if why.contains("cluster-scoped"))
        );
        assert!(!root.path().join("m1/crp").exists());
        Ok(())
    }
}
