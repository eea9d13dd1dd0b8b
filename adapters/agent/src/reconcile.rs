//! Keeping the cluster as the hub's Works say, idempotently, and telling the hub what came of it.
//!
//! - **Content is applied once.** A Work's content is its fingerprint: the resource index, the
//!   manifests, and the apply strategy and override snapshots they were rendered with. Content
//!   already applied is not applied again — across restarts, since the state file remembers it —
//!   only observed while its report is owed or its availability pending.
//! - **A report belongs to content, and is owed until the hub acknowledged it for that
//!   content.** The hub drops a binding's report whenever it binds the cluster to new content (a
//!   new resource index, or other override snapshots at the same index), so a report on earlier
//!   content never stands for the new one, even when it says the same. The hub acknowledges a
//!   report by answering its publish: over HTTP the answer to the post (the event is in the
//!   log), over NATS the input stream's acknowledgement. A publish that failed leaves the report
//!   owed — the state file says so too, so a restarted agent still owes it — and it is sent again
//!   at a recheck, each Work no sooner than a backoff after its last failure. A rejection is an
//!   answer: the hub has the report and said why it does not count, and sending it again could
//!   not change that. Once acknowledged, a report on the same content is sent again only when
//!   what it says changes (availability arriving).
//! - **Only what it placed is removed.** A withdrawn Work's objects, and a changed Work's
//!   dropped manifests, are removed — only those this agent placed for it.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use serde_json::Value;
use tokio::time::Instant;

use super::applier::{Applied, Applier, ApplierError, ManifestOutcome};
use super::hub::{HubError, rejections};
use super::link::HubLink;
use super::report::{WorkReport, report_event};
use super::state::{AppliedWork, StateFile};
use super::voice::Voice;
use super::watch::WorkChange;
use super::work::{DesiredWork, ManifestId, WorkError, hub_holds_report};

/// Works per cluster the agent follows; more are refused (and said so).
pub const WORKS_MAX: usize = 10_000;
/// The pause before a Work's owed report is sent again after its publish failed; doubled per
/// further failure up to [`REPORT_RETRY_MAX`].
pub const REPORT_RETRY_MIN: Duration = Duration::from_millis(250);
/// The longest pause before an owed report is sent again.
pub const REPORT_RETRY_MAX: Duration = Duration::from_secs(10);

/// Why one step of reconciling failed; the agent reports it and tries again later.
#[derive(Debug, thiserror::Error)]
pub enum ReconcileError {
    /// The cluster could not be changed or observed.
    #[error(transparent)]
    Applier(#[from] ApplierError),
    /// A Work could not be read.
    #[error(transparent)]
    Work(#[from] WorkError),
    /// A report could not be published; it stays owed.
    #[error("reporting work {work}: {source}; the report stays owed and is sent again")]
    Report {
        /// The Work reported on.
        work: String,
        /// Why the publish failed.
        source: HubError,
    },
}

/// One desired Work and its fingerprint, computed once: whether a Work is pending is asked at
/// every turn of the agent's loop.
#[derive(Debug, Clone)]
struct Desired {
    work: DesiredWork,
    fingerprint: String,
}

impl Desired {
    fn new(work: DesiredWork) -> Self {
        let fingerprint = work.fingerprint();
        Self { work, fingerprint }
    }
}

/// When a Work's owed report may be sent again after failed publishes.
#[derive(Debug, Clone, Copy)]
struct Retry {
    not_before: Instant,
    pause: Duration,
}

/// The agent's reconciler: desired Works, the applier, and the state file.
pub struct Reconciler<A> {
    cluster: String,
    hub: HubLink,
    applier: A,
    state: StateFile,
    desired: BTreeMap<String, Desired>,
    /// Works whose report's last publish failed (at most one entry per desired Work).
    retries: BTreeMap<String, Retry>,
    voice: Voice,
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
            retries: BTreeMap::new(),
            voice: Voice::Stdout,
        }
    }

    /// The same reconciler, printing nothing (an agent run inside a scenario).
    #[must_use]
    pub fn silent(mut self) -> Self {
        self.voice = Voice::Silent;
        self
    }

    /// The applier, to change how a simulated cluster behaves from now on.
    pub fn applier_mut(&mut self) -> &mut A {
        &mut self.applier
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
                self.retries.remove(&name);
                self.withdraw(&name).await
            }
        };
        if let Err(error) = result {
            self.voice
                .say(format_args!("{} error: {error}", self.label()));
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
                    if !hub_holds_report(object) {
                        self.forget_acknowledgement(&work.target.name)?;
                    }
                    desired.insert(work.target.name.clone(), Desired::new(work));
                }
                Err(error) => self
                    .voice
                    .say(format_args!("{} skipping a work: {error}", self.label())),
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
        let desired = &self.desired;
        self.retries.retain(|name, _| desired.contains_key(name));
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
            self.voice.say(format_args!(
                "{} refusing work {name}: more than {WORKS_MAX} works",
                self.label()
            ));
            return Ok(());
        }
        if !hub_holds_report(object) {
            self.forget_acknowledgement(&name)?;
        }
        self.desired.insert(name.clone(), Desired::new(work));
        self.sync(&name).await
    }

    /// The hub serves the Work without a report while this agent holds one acknowledged on the
    /// same content: the hub bound the cluster afresh to content the agent applied already (an
    /// evicted cluster picked again in the same fold). The report is owed again.
    fn forget_acknowledgement(&mut self, name: &str) -> Result<(), ReconcileError> {
        let Some(stored) = self.state.state.works.get_mut(name) else {
            return Ok(());
        };
        if stored.acknowledged().is_none() {
            return Ok(());
        }
        stored.reported_fingerprint = None;
        self.state.save()?;
        Ok(())
    }

    /// Brings one desired Work onto the cluster, or — when its content is applied already —
    /// observes it while its report is owed or not settled.
    async fn sync(&mut self, name: &str) -> Result<(), ReconcileError> {
        let Some(desired) = self.desired.get(name).cloned() else {
            return Ok(());
        };
        let stored = self.state.state.works.get(name).cloned();
        if stored
            .as_ref()
            .is_some_and(|s| s.fingerprint == desired.fingerprint)
        {
            if self.is_pending(name) && !self.waiting_to_retry(name) {
                let outcomes = self.applier.observe(&desired.work).await?;
                return self.report_if_new(&desired.work, &outcomes).await;
            }
            return Ok(());
        }
        self.apply_new(desired, stored).await
    }

    /// Applies content not applied yet, removes the manifests the Work no longer lists, records
    /// the content as applied (its report owed), and reports.
    async fn apply_new(
        &mut self,
        desired: Desired,
        stored: Option<AppliedWork>,
    ) -> Result<(), ReconcileError> {
        let Desired { work, fingerprint } = desired;
        let name = work.target.name.clone();
        // New content owes a report of its own: nothing waits on the old one's failures.
        self.retries.remove(&name);
        self.voice.say(format_args!(
            "{} applying work {name} (resource index {}, {} manifests)",
            self.label(),
            work.resource_index,
            work.manifests.len()
        ));
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
        // The earlier content's report is kept with the fingerprint it is about, so it counts
        // for nothing now: the new content's report is owed, in the file too, until the hub
        // acknowledges it.
        let (reported, reported_fingerprint) =
            stored.map_or((None, None), |s| (s.reported, s.reported_fingerprint));
        self.state.state.works.insert(
            name,
            AppliedWork {
                target: work.target.clone(),
                fingerprint,
                resource_index: work.resource_index,
                placed,
                reported,
                reported_fingerprint,
            },
        );
        self.state.save()?;
        self.report_if_new(&work, &outcomes).await
    }

    /// Posts the Work's report unless the hub acknowledged the same one on this content. A
    /// failed post leaves it owed, to be sent again once the Work's backoff has passed.
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
        if stored.acknowledged() == Some(&report) {
            return Ok(());
        }
        let event = report_event(&self.cluster, work, &report);
        let answers = match self.hub.post_events(&[event]).await {
            Ok(answers) => answers,
            Err(source) => {
                self.retry_later(name);
                return Err(ReconcileError::Report {
                    work: name.clone(),
                    source,
                });
            }
        };
        self.retries.remove(name);
        for rejection in rejections(&answers) {
            self.voice.say(format_args!(
                "{} the hub rejected a report on {name}: {rejection}",
                self.label()
            ));
        }
        let summary = report.summary();
        if let Some(stored) = self.state.state.works.get_mut(name) {
            stored.reported = Some(report);
            stored.reported_fingerprint = Some(stored.fingerprint.clone());
        }
        self.state.save()?;
        // Printed once saved, so a reader of this line knows a restart will not report again.
        self.voice.say(format_args!(
            "{} reported work {name}: {summary}",
            self.label()
        ));
        Ok(())
    }

    /// Whether the Work's report failed to publish and its backoff has not passed yet.
    fn waiting_to_retry(&self, name: &str) -> bool {
        self.retries
            .get(name)
            .is_some_and(|retry| Instant::now() < retry.not_before)
    }

    /// Puts the Work's next report off after a failed publish: the pause doubles per failure.
    fn retry_later(&mut self, name: &str) {
        let pause = self.retries.get(name).map_or(REPORT_RETRY_MIN, |retry| {
            (retry.pause * 2).min(REPORT_RETRY_MAX)
        });
        let retry = Retry {
            not_before: Instant::now() + pause,
            pause,
        };
        self.retries.insert(name.to_owned(), retry);
    }

    /// Removes what a withdrawn Work placed and forgets it.
    async fn withdraw(&mut self, name: &str) -> Result<(), ReconcileError> {
        let Some(stored) = self.state.state.works.get(name).cloned() else {
            return Ok(());
        };
        let removed = self.applier.remove(&stored.target, &stored.placed).await?;
        self.state.state.works.remove(name);
        self.state.save()?;
        self.voice.say(format_args!(
            "{} work {name} withdrawn: removed {removed} objects it placed",
            self.label()
        ));
        Ok(())
    }

    /// Whether some desired Work is not settled yet: its content not applied (an apply that
    /// failed as a whole), its report owed, or its availability pending.
    pub fn has_pending(&self) -> bool {
        self.desired.keys().any(|name| self.is_pending(name))
    }

    fn is_pending(&self, name: &str) -> bool {
        let Some(desired) = self.desired.get(name) else {
            return false;
        };
        self.state
            .state
            .works
            .get(name)
            .is_none_or(|s| s.fingerprint != desired.fingerprint || !s.is_settled())
    }

    /// Syncs every pending Work again (observing and reporting, or applying when its content is
    /// not applied yet).
    pub async fn recheck(&mut self) {
        let pending: Vec<String> = self
            .desired
            .keys()
            .filter(|name| self.is_pending(name))
            .cloned()
            .collect();
        for name in pending {
            if let Err(error) = self.sync(&name).await {
                self.voice
                    .say(format_args!("{} error: {error}", self.label()));
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
        self.retries.clear();
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
