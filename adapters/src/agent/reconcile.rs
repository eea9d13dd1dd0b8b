//! Keeping the cluster as the hub's Works say, idempotently. A Work whose fingerprint (resource
//! index and manifests) was already applied is not applied again — across restarts, since the
//! state file remembers it — only observed while its availability is still pending; a report is
//! posted only when it differs from the one the hub acknowledged. A withdrawn Work's objects, and
//! a changed Work's dropped manifests, are removed — only those this agent placed for it.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use super::applier::{Applied, Applier, ApplierError, ManifestOutcome};
use super::hub::{HubError, rejections};
use super::link::HubLink;
use super::report::{WorkReport, report_event};
use super::state::{AppliedWork, StateFile};
use super::watch::WorkChange;
use super::work::{DesiredWork, ManifestId, WorkError};

/// Works per cluster the agent follows; more are refused (and said so).
pub const WORKS_MAX: usize = 10_000;

/// Why one step of reconciling failed; the agent reports it and tries again later.
#[derive(Debug, thiserror::Error)]
pub enum ReconcileError {
    /// The cluster could not be changed or observed.
    #[error(transparent)]
    Applier(#[from] ApplierError),
    /// The hub could not be told.
    #[error(transparent)]
    Hub(#[from] HubError),
    /// A Work could not be read.
    #[error(transparent)]
    Work(#[from] WorkError),
}

/// The agent's reconciler: desired Works, the applier, and the state file.
pub struct Reconciler<A> {
    cluster: String,
    hub: HubLink,
    applier: A,
    state: StateFile,
    desired: BTreeMap<String, DesiredWork>,
}

impl<A: Applier> Reconciler<A> {
    /// A reconciler that starts from the state file.
    pub fn new(cluster: &str, hub: HubLink, applier: A, state: StateFile) -> Self {
        Self {
            cluster: cluster.to_owned(),
            hub,
            applier,
            state,
            desired: BTreeMap::new(),
        }
    }

    /// The output prefix.
    pub fn label(&self) -> &str {
        self.applier.label()
    }

    /// Applies a change of the desired Works; errors are printed and retried on the next
    /// list or recheck.
    pub async fn on_change(&mut self, change: WorkChange) {
        let result = match change {
            WorkChange::All(works) => self.replace_all(&works).await,
            WorkChange::Upsert(object) => self.upsert(&object).await,
            WorkChange::Delete(name) => {
                self.desired.remove(&name);
                self.withdraw(&name).await
            }
        };
        if let Err(error) = result {
            println!("{} error: {error}", self.label());
        }
    }

    async fn replace_all(&mut self, works: &[Value]) -> Result<(), ReconcileError> {
        let mut desired = BTreeMap::new();
        // A listed Work that cannot be read is skipped, not withdrawn: its objects stay.
        let mut listed = BTreeSet::new();
        for object in works.iter().take(WORKS_MAX) {
            if let Some(name) = object["metadata"]["name"].as_str() {
                listed.insert(name.to_owned());
            }
            match DesiredWork::from_object(object) {
                Ok(work) => {
                    desired.insert(work.target.name.clone(), work);
                }
                Err(error) => println!("{} skipping a work: {error}", self.label()),
            }
        }
        let withdrawn: Vec<String> = self
            .state
            .state
            .works
            .keys()
            .filter(|name| !listed.contains(*name))
            .cloned()
            .collect();
        self.desired = desired;
        for name in withdrawn {
            self.withdraw(&name).await?;
        }
        let names: Vec<String> = self.desired.keys().cloned().collect();
        for name in names {
            self.sync(&name).await?;
        }
        Ok(())
    }

    async fn upsert(&mut self, object: &Value) -> Result<(), ReconcileError> {
        let work = DesiredWork::from_object(object)?;
        let name = work.target.name.clone();
        if !self.desired.contains_key(&name) && self.desired.len() >= WORKS_MAX {
            println!(
                "{} refusing work {name}: more than {WORKS_MAX} works",
                self.label()
            );
            return Ok(());
        }
        self.desired.insert(name.clone(), work);
        self.sync(&name).await
    }

    /// Brings one desired Work onto the cluster (or only observes it when already applied).
    async fn sync(&mut self, name: &str) -> Result<(), ReconcileError> {
        let Some(work) = self.desired.get(name).cloned() else {
            return Ok(());
        };
        let fingerprint = work.fingerprint();
        let stored = self.state.state.works.get(name).cloned();
        if let Some(stored) = &stored
            && stored.fingerprint == fingerprint
        {
            if stored.reported.as_ref().is_some_and(WorkReport::is_settled) {
                return Ok(());
            }
            let outcomes = self.applier.observe(&work).await?;
            return self.report_if_new(&work, &outcomes).await;
        }
        println!(
            "{} applying work {name} (resource index {}, {} manifests)",
            self.label(),
            work.resource_index,
            work.manifests.len()
        );
        let outcomes = self.applier.apply(&work).await?;
        let old_placed = stored
            .as_ref()
            .map(|s| s.placed.clone())
            .unwrap_or_default();
        let wanted: BTreeSet<ManifestId> = outcomes.iter().map(|o| o.id.clone()).collect();
        let stale: Vec<ManifestId> = old_placed
            .iter()
            .filter(|id| !wanted.contains(*id))
            .cloned()
            .collect();
        let placed = placed_after(&old_placed, &outcomes);
        self.applier.remove(&work.target, &stale).await?;
        self.state.state.works.insert(
            name.to_owned(),
            AppliedWork {
                target: work.target.clone(),
                fingerprint,
                resource_index: work.resource_index,
                placed,
                reported: stored.and_then(|s| s.reported),
            },
        );
        self.state.save()?;
        self.report_if_new(&work, &outcomes).await
    }

    /// Posts the Work's report unless the hub already acknowledged the same one.
    async fn report_if_new(
        &mut self,
        work: &DesiredWork,
        outcomes: &[ManifestOutcome],
    ) -> Result<(), ReconcileError> {
        let report = WorkReport::from_outcomes(work, outcomes);
        let name = &work.target.name;
        let Some(stored) = self.state.state.works.get(name) else {
            return Ok(());
        };
        if stored.reported.as_ref() == Some(&report) {
            return Ok(());
        }
        let answers = self
            .hub
            .post_events(&[report_event(&self.cluster, work, &report)])
            .await?;
        for rejection in rejections(&answers) {
            println!(
                "{} the hub rejected a report on {name}: {rejection}",
                self.label()
            );
        }
        let summary = report.summary();
        if let Some(stored) = self.state.state.works.get_mut(name) {
            stored.reported = Some(report);
        }
        self.state.save()?;
        // Printed once saved, so a reader of this line knows a restart will not report again.
        println!("{} reported work {name}: {summary}", self.label());
        Ok(())
    }

    /// Removes what a withdrawn Work placed and forgets it.
    async fn withdraw(&mut self, name: &str) -> Result<(), ReconcileError> {
        let Some(stored) = self.state.state.works.get(name).cloned() else {
            return Ok(());
        };
        let removed = self.applier.remove(&stored.target, &stored.placed).await?;
        self.state.state.works.remove(name);
        self.state.save()?;
        println!(
            "{} work {name} withdrawn: removed {removed} objects it placed",
            self.label()
        );
        Ok(())
    }

    /// Whether some desired Work's report is not settled yet (availability pending, or a
    /// report the hub has not acknowledged).
    pub fn has_pending(&self) -> bool {
        self.desired.keys().any(|name| self.is_pending(name))
    }

    fn is_pending(&self, name: &str) -> bool {
        self.state
            .state
            .works
            .get(name)
            .is_none_or(|s| !s.reported.as_ref().is_some_and(WorkReport::is_settled))
    }

    /// Syncs every pending Work again (observing, or applying when not yet applied).
    pub async fn recheck(&mut self) {
        let pending: Vec<String> = self
            .desired
            .keys()
            .filter(|name| self.is_pending(name))
            .cloned()
            .collect();
        for name in pending {
            if let Err(error) = self.sync(&name).await {
                println!("{} error: {error}", self.label());
            }
        }
    }

    /// Removes everything this agent placed (the member is leaving); returns the count.
    ///
    /// # Errors
    /// When the cluster cannot be changed.
    pub async fn remove_everything(&mut self) -> Result<usize, ReconcileError> {
        let mut removed = 0;
        let works: Vec<AppliedWork> = self.state.state.works.values().cloned().collect();
        for work in works {
            removed += self.applier.remove(&work.target, &work.placed).await?;
            self.state.state.works.remove(&work.target.name);
            self.state.save()?;
        }
        self.desired.clear();
        Ok(removed)
    }
}

/// What a Work has placed after an apply: every manifest that applied, and those it placed
/// before and still wants (a failed re-apply leaves the earlier object in place).
fn placed_after(old: &[ManifestId], outcomes: &[ManifestOutcome]) -> Vec<ManifestId> {
    let mut placed: BTreeSet<ManifestId> = BTreeSet::new();
    for outcome in outcomes {
        if outcome.applied == Applied::Applied || old.contains(&outcome.id) {
            placed.insert(outcome.id.clone());
        }
    }
    placed.into_iter().collect()
}
