//! The `kube` applier: applies Works to a real cluster (`KUBECONFIG`, else in-cluster
//! configuration) with kube-rs, following each Work's `applyStrategy` as KubeFleet's work
//! applier does.
//!
//! Guarantees:
//! - **Idempotent.** Client-side apply sends a patch only when the three-way merge of the
//!   last-applied configuration, the manifest and the live object is not empty; server-side
//!   apply is idempotent on the server. Applying the same Work twice writes nothing new.
//! - **Only its own objects.** Every object it writes carries marks naming its member cluster,
//!   Work and placement (`marks`); it removes an object only when those marks are its own, and
//!   only if the object is still the one it read (a uid precondition).
//! - **ReportDiff writes nothing.** Not even a takeover: it only reads (and dry-runs a
//!   server-side apply for a partial comparison).
//! - **Refusals are answers.** A drifted object (`IfNotDrifted`), an object it may not take over,
//!   an apply conflict or any API error is a failed manifest with a reason and the API's message,
//!   never a crash. Transient errors (unreachable, 429, 5xx, optimistic-lock conflicts) are retried
//!   with backoff; when they persist, `apply` returns an error so the agent keeps the Work pending
//!   and tries again.
//!
//! One file per concern: `calls` (requests), `resources` (kind → URL), `marks` (ownership and
//! the last-applied configuration), `merge` (client-side apply's patch), `diff` (diffs and
//! drifts), `manifest` (one manifest through the strategy), `properties` (heartbeat properties).

pub mod calls;
pub mod diff;
pub mod discovery;
mod manifest;
pub mod marks;
pub mod merge;
pub mod properties;
pub mod resources;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_strategy;
#[cfg(test)]
mod tests_support;

use std::time::Duration;

use super::applier::{Applier, ApplierError, ManifestOutcome};
use super::report::{ClusterProperties, LiveProperties};
use super::work::{DesiredWork, ManifestId, WorkTarget};
use calls::Calls;
use discovery::Resolver;
use marks::{Owner, Ownership};

/// How hard the applier tries before giving up on a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Attempts at one manifest when its calls fail transiently.
    pub attempts_max: u32,
    /// The pause after the first failure; it doubles per failure.
    pub pause_first: Duration,
    /// The longest pause.
    pub pause_max: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            attempts_max: 4,
            pause_first: Duration::from_millis(200),
            pause_max: Duration::from_secs(30),
        }
    }
}

impl RetryPolicy {
    /// The pause after `failures` consecutive failures (1 = the first).
    #[must_use]
    pub fn pause(&self, failures: u32) -> Duration {
        let doublings = failures.saturating_sub(1).min(16);
        self.pause_first
            .saturating_mul(1_u32 << doublings)
            .min(self.pause_max)
    }
}

/// The `kube` applier.
pub struct KubeApplier {
    label: String,
    cluster: String,
    calls: Calls,
    resolver: Resolver,
    retry: RetryPolicy,
    /// Consecutive `apply` calls that ended in a transient failure (the next pause grows).
    unreachable_streak: u32,
}

impl KubeApplier {
    /// An applier for `cluster` over `client`.
    #[must_use]
    pub fn new(cluster: &str, client: ::kube::Client, retry: RetryPolicy) -> Self {
        Self {
            label: format!("[kube {cluster}]"),
            cluster: cluster.to_owned(),
            calls: Calls::new(client),
            resolver: Resolver::default(),
            retry,
            unreachable_streak: 0,
        }
    }

    /// Connects to the cluster of `KUBECONFIG` (or the in-cluster configuration).
    ///
    /// # Errors
    /// When no configuration is found or the client cannot be built.
    pub async fn connect(cluster: &str) -> Result<Self, ApplierError> {
        flotilla_adapters::tls::install_crypto_provider();
        let config = ::kube::Config::infer()
            .await
            .map_err(|e| ApplierError::Cluster(format!("no Kubernetes configuration: {e}")))?;
        let client = ::kube::Client::try_from(config)
            .map_err(|e| ApplierError::Cluster(format!("building the client: {e}")))?;
        Ok(Self::new(cluster, client, RetryPolicy::default()))
    }

    /// The heartbeat properties: measured once now (so the first beat carries them), then
    /// refreshed in the background while the runtime runs.
    pub async fn properties(&self) -> ClusterProperties {
        let live = LiveProperties::default();
        match properties::measure(&self.calls).await {
            Ok(measured) => live.set(measured),
            Err(error) => println!("{} measuring the cluster failed: {error}", self.label),
        }
        tokio::spawn(properties::refresh(
            self.calls.clone(),
            live.clone(),
            self.label.clone(),
        ));
        ClusterProperties {
            live: Some(live),
            ..ClusterProperties::default()
        }
    }

    fn owner(&self, target: &WorkTarget) -> Owner {
        Owner::new(&self.cluster, target)
    }
}

impl Applier for KubeApplier {
    fn label(&self) -> &str {
        &self.label
    }

    async fn apply(&mut self, work: &DesiredWork) -> Result<Vec<ManifestOutcome>, ApplierError> {
        if self.unreachable_streak > 0 {
            tokio::time::sleep(self.retry.pause(self.unreachable_streak)).await;
        }
        let mut outcomes = Vec::with_capacity(work.manifests.len());
        for manifest in &work.manifests {
            match self.apply_with_retries(work, manifest).await {
                Ok(outcome) => outcomes.push(outcome),
                Err(error) => {
                    self.unreachable_streak = self.unreachable_streak.saturating_add(1);
                    return Err(ApplierError::Cluster(error.message));
                }
            }
        }
        self.unreachable_streak = 0;
        Ok(outcomes)
    }

    async fn observe(&mut self, work: &DesiredWork) -> Result<Vec<ManifestOutcome>, ApplierError> {
        let mut outcomes = Vec::with_capacity(work.manifests.len());
        for manifest in &work.manifests {
            let outcome = self
                .observe_one(work, manifest)
                .await
                .map_err(|e| ApplierError::Cluster(e.message))?;
            outcomes.push(outcome);
        }
        Ok(outcomes)
    }

    async fn remove(
        &mut self,
        target: &WorkTarget,
        objects: &[ManifestId],
    ) -> Result<usize, ApplierError> {
        let owner = self.owner(target);
        let mut removed = 0;
        for id in objects {
            let resource = match self.resolver.resolve(&self.calls, id).await {
                Ok(resource) => resource,
                // The kind is no longer served (its CRD is gone): no object of it is left.
                Err(error) if error.code == Some(404) => continue,
                Err(error) => return Err(ApplierError::Cluster(error.message)),
            };
            let live = self
                .calls
                .get(&resource, &id.namespace, &id.name)
                .await
                .map_err(|e| ApplierError::Cluster(e.message))?;
            let Some(live) = live else { continue };
            if marks::ownership(&live, &owner) != Ownership::Ours {
                println!(
                    "{} leaving {}: not placed by this agent for {}",
                    self.label,
                    id.display(),
                    target.name
                );
                continue;
            }
            let uid = live["metadata"]["uid"].as_str().unwrap_or_default();
            let deleted = self
                .calls
                .delete(&resource, &id.namespace, &id.name, uid)
                .await
                .map_err(|e| ApplierError::Cluster(e.message))?;
            if deleted {
                println!("{} removed {}", self.label, id.display());
                removed += 1;
            }
        }
        Ok(removed)
    }
}
