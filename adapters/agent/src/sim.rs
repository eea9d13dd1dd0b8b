//! The `sim` applier: a simulated member cluster. Every output line says so (`[sim NAME]`).
//! Applying a manifest takes a seeded delay and fails at a seeded rate; an applied object
//! becomes ready after a seeded delay — except a Deployment running a "bad image" (an image
//! containing the marker), which applies but never becomes available. Availability is judged
//! by `flotilla_core::query::availability` from the status the simulated controllers would write.
//! The simulated cluster's objects live in `--state DIR` (`sim-cluster.json`), so a restarted
//! agent finds what it applied.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Duration;

use chrono::Utc;
use flotilla_core::query::availability::{Availability, judge};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::applier::{Applied, Applier, ApplierError, Findings, ManifestOutcome};
use super::sim_status::{delay_ms, draw, has_bad_image, observed};
use super::state::{read_json, write_json};
use super::voice::Voice;
use super::work::{DesiredWork, ManifestId, WorkTarget};

/// The simulated cluster's file inside `--state DIR`.
pub const SIM_FILE: &str = "sim-cluster.json";

/// How the simulated cluster behaves.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SimConfig {
    /// Seed of every delay and failure draw.
    pub seed: u64,
    /// Longest simulated apply delay per changed manifest.
    pub apply_delay_ms_max: u64,
    /// Longest delay before an applied object becomes ready.
    pub available_delay_ms_max: u64,
    /// Share of applies that fail, in `[0, 1]`.
    pub failure_rate: f64,
    /// A Deployment whose image contains this never becomes available (empty: off).
    pub bad_image_marker: String,
    /// Nodes of the simulated cluster (a DaemonSet's desired pods).
    pub nodes: u32,
    /// No applied object ever becomes available, whatever its kind: a cluster whose workloads
    /// never come up.
    pub never_available: bool,
    /// Every applied object's availability is unknowable (`NotTrackable`), whatever its kind.
    pub untrackable: bool,
}

/// The simulated cluster's clock: the wall clock for `flotilla agent`, the scenario's clock for
/// the agents a scenario runs (so an object's readiness follows the scenario's time).
#[derive(Debug, Clone, Default)]
pub enum SimClock {
    /// The wall clock.
    #[default]
    Wall,
    /// Milliseconds since the Unix epoch, set by whoever owns the time.
    Shared(Arc<AtomicI64>),
}

impl SimClock {
    fn now_ms(&self) -> i64 {
        match self {
            SimClock::Wall => Utc::now().timestamp_millis(),
            SimClock::Shared(ms) => ms.load(Ordering::SeqCst),
        }
    }
}

/// One object of the simulated cluster.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SimObject {
    /// Its identity.
    pub id: ManifestId,
    /// The manifest as last applied.
    pub manifest: Value,
    /// The Work that placed it.
    pub owner: String,
    /// When it becomes ready (milliseconds since the Unix epoch).
    pub ready_at_ms: i64,
    /// How many times it was applied (the restart test reads this).
    pub applies: u32,
}

/// The simulated cluster's objects, by identity.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SimCluster {
    /// Objects keyed by `group/version/kind/namespace/name`.
    pub objects: BTreeMap<String, SimObject>,
}

/// The `sim` applier.
#[derive(Debug)]
pub struct SimApplier {
    label: String,
    config: SimConfig,
    /// Where the simulated cluster is kept; `None` keeps it in memory only.
    path: Option<PathBuf>,
    cluster: SimCluster,
    clock: SimClock,
    voice: Voice,
}

fn key(id: &ManifestId) -> String {
    format!(
        "{}/{}/{}/{}/{}",
        id.group, id.version, id.kind, id.namespace, id.name
    )
}

impl SimApplier {
    /// Opens the simulated cluster kept in `state_dir`.
    ///
    /// # Errors
    /// When its file cannot be read.
    pub fn open(cluster: &str, state_dir: &Path, config: SimConfig) -> Result<Self, ApplierError> {
        let path = state_dir.join(SIM_FILE);
        let stored = read_json(&path)?.unwrap_or_default();
        Ok(Self {
            label: format!("[sim {cluster}]"),
            config,
            path: Some(path),
            cluster: stored,
            clock: SimClock::Wall,
            voice: Voice::Stdout,
        })
    }

    /// An empty simulated cluster kept in memory, on `clock`, printing nothing: the member of
    /// an agent a scenario runs inside its process.
    #[must_use]
    pub fn in_memory(cluster: &str, config: SimConfig, clock: SimClock) -> Self {
        Self {
            label: format!("[sim {cluster}]"),
            config,
            path: None,
            cluster: SimCluster::default(),
            clock,
            voice: Voice::Silent,
        }
    }

    /// Changes how the simulated cluster behaves from the next apply or observation on.
    pub fn set_config(&mut self, config: SimConfig) {
        self.config = config;
    }

    /// Writes the simulated cluster, unless it is kept in memory.
    fn save(&self) -> Result<(), ApplierError> {
        match &self.path {
            Some(path) => write_json(path, &self.cluster),
            None => Ok(()),
        }
    }

    fn availability(&self, object: &SimObject) -> Availability {
        if self.config.untrackable {
            return Availability::NotTrackable;
        }
        if self.config.never_available {
            return Availability::NotYetAvailable;
        }
        let ready = self.clock.now_ms() >= object.ready_at_ms
            && !has_bad_image(&object.manifest, &self.config.bad_image_marker);
        judge(&observed(&object.manifest, ready, self.config.nodes))
    }

    /// Applies one manifest (leaving it alone when it is already as desired).
    async fn apply_one(&mut self, work: &DesiredWork, manifest: &Value) -> ManifestOutcome {
        let Some(id) = ManifestId::of(manifest) else {
            return ManifestOutcome {
                id: unreachable_id(),
                applied: Applied::Failed("a manifest without apiVersion, kind or name".into()),
                availability: Availability::NotTrackable,
                findings: Findings::default(),
            };
        };
        let object_key = key(&id);
        if let Some(existing) = self.cluster.objects.get(&object_key)
            && existing.manifest == *manifest
        {
            let availability = self.availability(existing);
            return ManifestOutcome {
                id,
                applied: Applied::Applied,
                availability,
                findings: Findings::default(),
            };
        }
        let draw_key = format!("{object_key}@{}", work.resource_index);
        let pause = delay_ms(
            self.config.seed,
            &format!("apply {draw_key}"),
            self.config.apply_delay_ms_max,
        );
        tokio::time::sleep(Duration::from_millis(pause)).await;
        if draw(self.config.seed, &format!("fail {draw_key}")) < self.config.failure_rate {
            self.voice.say(format_args!(
                "{} simulated apply failure: {}",
                self.label,
                id.display()
            ));
            return ManifestOutcome {
                id,
                applied: Applied::Failed("simulated apply failure".into()),
                availability: Availability::NotTrackable,
                findings: Findings::default(),
            };
        }
        let ready_in = delay_ms(
            self.config.seed,
            &format!("ready {draw_key}"),
            self.config.available_delay_ms_max,
        );
        let applies = self
            .cluster
            .objects
            .get(&object_key)
            .map_or(0, |o| o.applies);
        let object = SimObject {
            id: id.clone(),
            manifest: manifest.clone(),
            owner: work.target.name.clone(),
            ready_at_ms: self
                .clock
                .now_ms()
                .saturating_add(i64::try_from(ready_in).unwrap_or(i64::MAX)),
            applies: applies.saturating_add(1),
        };
        self.voice.say(format_args!(
            "{} applied {} (simulated)",
            self.label,
            id.display()
        ));
        let availability = self.availability(&object);
        self.cluster.objects.insert(object_key, object);
        ManifestOutcome {
            id,
            applied: Applied::Applied,
            availability,
            findings: Findings::default(),
        }
    }
}

/// An identity for a manifest that has none (never shown as a real object).
fn unreachable_id() -> ManifestId {
    ManifestId {
        group: String::new(),
        version: "v1".into(),
        kind: "Unknown".into(),
        namespace: String::new(),
        name: "unknown".into(),
    }
}

impl Applier for SimApplier {
    fn label(&self) -> &str {
        &self.label
    }

    async fn apply(&mut self, work: &DesiredWork) -> Result<Vec<ManifestOutcome>, ApplierError> {
        let mut outcomes = Vec::with_capacity(work.manifests.len());
        for manifest in &work.manifests {
            outcomes.push(self.apply_one(work, manifest).await);
        }
        self.save()?;
        Ok(outcomes)
    }

    async fn observe(&mut self, work: &DesiredWork) -> Result<Vec<ManifestOutcome>, ApplierError> {
        let outcomes = work
            .manifests
            .iter()
            .map(|manifest| {
                let id = ManifestId::of(manifest).unwrap_or_else(unreachable_id);
                match self.cluster.objects.get(&key(&id)) {
                    Some(object) if object.manifest == *manifest => ManifestOutcome {
                        availability: self.availability(object),
                        id,
                        applied: Applied::Applied,
                        findings: Findings::default(),
                    },
                    _ => ManifestOutcome {
                        id,
                        applied: Applied::Failed("not on the simulated cluster".into()),
                        availability: Availability::NotTrackable,
                        findings: Findings::default(),
                    },
                }
            })
            .collect();
        Ok(outcomes)
    }

    async fn remove(
        &mut self,
        target: &WorkTarget,
        objects: &[ManifestId],
    ) -> Result<usize, ApplierError> {
        let mut removed = 0;
        for id in objects {
            let object_key = key(id);
            // Only what this work placed: another work may have taken the object over since.
            if self
                .cluster
                .objects
                .get(&object_key)
                .is_some_and(|o| o.owner == target.name)
            {
                self.cluster.objects.remove(&object_key);
                self.voice.say(format_args!(
                    "{} removed {} (simulated)",
                    self.label,
                    id.display()
                ));
                removed += 1;
            }
        }
        self.save()?;
        Ok(removed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn config() -> SimConfig {
        SimConfig {
            seed: 3,
            apply_delay_ms_max: 0,
            available_delay_ms_max: 0,
            failure_rate: 0.0,
            bad_image_marker: ":bad".into(),
            nodes: 3,
            ..SimConfig::default()
        }
    }

    fn work(name: &str, image: &str) -> DesiredWork {
        DesiredWork {
            target: WorkTarget {
                name: name.into(),
                placement: "p".into(),
                namespace: None,
            },
            resource_index: 0,
            apply_strategy: crate::work::ApplyStrategy::default(),
            override_snapshots: None,
            manifests: vec![json!({"apiVersion": "apps/v1", "kind": "Deployment",
                "metadata": {"name": "web", "namespace": "n"},
                "spec": {"template": {"spec": {"containers": [{"image": image}]}}}})],
        }
    }

    #[tokio::test]
    async fn the_same_work_applies_once_even_after_a_restart() -> Result<(), ApplierError> {
        let state = tempfile::tempdir().map_err(|e| ApplierError::io(Path::new("."), e))?;
        let mut sim = SimApplier::open("m1", state.path(), config())?;
        let outcomes = sim.apply(&work("w", "nginx:1")).await?;
        assert_eq!(outcomes[0].availability, Availability::Available);
        sim.apply(&work("w", "nginx:1")).await?;
        let mut reopened = SimApplier::open("m1", state.path(), config())?;
        reopened.apply(&work("w", "nginx:1")).await?;
        let applies: Vec<u32> = reopened
            .cluster
            .objects
            .values()
            .map(|o| o.applies)
            .collect();
        assert_eq!(applies, [1]);
        Ok(())
    }

    #[tokio::test]
    async fn a_bad_image_applies_but_never_becomes_available() -> Result<(), ApplierError> {
        let state = tempfile::tempdir().map_err(|e| ApplierError::io(Path::new("."), e))?;
        let mut sim = SimApplier::open("m1", state.path(), config())?;
        let outcomes = sim.apply(&work("w", "nginx:bad")).await?;
        assert_eq!(outcomes[0].applied, Applied::Applied);
        assert_eq!(outcomes[0].availability, Availability::NotYetAvailable);
        let observed = sim.observe(&work("w", "nginx:bad")).await?;
        assert_eq!(observed[0].availability, Availability::NotYetAvailable);
        Ok(())
    }

    #[tokio::test]
    async fn a_work_removes_only_what_it_placed() -> Result<(), ApplierError> {
        let state = tempfile::tempdir().map_err(|e| ApplierError::io(Path::new("."), e))?;
        let mut sim = SimApplier::open("m1", state.path(), config())?;
        let outcomes = sim.apply(&work("w", "nginx:1")).await?;
        let ids: Vec<ManifestId> = outcomes.iter().map(|o| o.id.clone()).collect();
        assert_eq!(sim.remove(&work("other", "x").target, &ids).await?, 0);
        assert_eq!(sim.remove(&work("w", "x").target, &ids).await?, 1);
        assert!(sim.cluster.objects.is_empty());
        Ok(())
    }

    #[tokio::test]
    async fn a_failure_rate_of_one_fails_every_apply() -> Result<(), ApplierError> {
        let state = tempfile::tempdir().map_err(|e| ApplierError::io(Path::new("."), e))?;
        let failing = SimConfig {
            failure_rate: 1.0,
            ..config()
        };
        let mut sim = SimApplier::open("m1", state.path(), failing)?;
        let outcomes = sim.apply(&work("w", "nginx:1")).await?;
        assert!(matches!(outcomes[0].applied, Applied::Failed(_)));
        assert!(sim.cluster.objects.is_empty());
        Ok(())
    }
}
