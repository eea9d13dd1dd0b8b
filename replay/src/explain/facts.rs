//! What the state says about one cluster of a placement at a point: its binding, its last
//! report, its member's health — as fields and as the phrases both explanations use.

use chrono::{DateTime, Utc};
use flotilla_core::State;
use flotilla_core::event::ManifestFailure;
use flotilla_core::query::member::Member;
use flotilla_core::query::placement::{Binding, BindingState, Placement};
use flotilla_core::query::rollout::readiness::Readiness;
use flotilla_core::state::WorkStatus;
use serde::Serialize;

use super::clock;
use flotilla_core::query::rollout::readiness::of_binding as readiness;

/// A cluster's binding at the point.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BindingNow {
    /// The binding's name.
    pub name: String,
    /// `Scheduled`, `Bound` or `Unscheduled`.
    pub state: String,
    /// The resource snapshot index it carries, once bound.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resource_index: Option<u64>,
    /// The placement's latest resource snapshot index.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub latest_resource_index: Option<u64>,
    /// When the rollout last bound it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bound_at: Option<DateTime<Utc>>,
    /// The staged update run that bound it, if one did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub update_run: Option<String>,
    /// How the rollout judges it: `Ready`, `NotReady`, `Failed`, or `ReadyAt` (not trackable).
    pub readiness: String,
}

impl BindingNow {
    pub(crate) fn of(
        (name, placement): (&str, &Placement),
        binding: &Binding,
        now: DateTime<Utc>,
    ) -> Self {
        let readiness = match readiness(placement, binding, now) {
            Readiness::Ready => "Ready",
            Readiness::ReadyAt(_) => "ReadyAt",
            Readiness::Failed => "Failed",
            Readiness::NotReady => "NotReady",
        };
        Self {
            name: binding.name(name),
            state: binding.state.as_str().to_owned(),
            resource_index: binding.resource_index,
            latest_resource_index: placement.latest_resources().map(|r| r.index),
            bound_at: binding.rollout_started_at,
            update_run: binding.update_run.as_ref().map(ToString::to_string),
            readiness: readiness.to_owned(),
        }
    }

    /// Bound to the latest resource index and ready: nothing left to do.
    pub(crate) fn is_done(&self) -> bool {
        self.state == BindingState::Bound.as_str()
            && self.resource_index.is_some()
            && self.resource_index == self.latest_resource_index
            && self.readiness == "Ready"
    }
}

/// What the cluster last reported about the placement's work.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ReportNow {
    /// The resource index reported on.
    pub resource_index: u64,
    /// Applied, failed, or not yet.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub applied: Option<bool>,
    /// Available, not, or unknown.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub available: Option<bool>,
    /// Whether availability can be tracked.
    pub trackable: bool,
    /// The member's message.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub message: String,
    /// The manifests it reported failed: `Deployment shop/web (Available): MESSAGE`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub failed_manifests: Vec<String>,
    /// When it reported.
    pub reported_at: DateTime<Utc>,
    /// Since when it has been reported as available as it is.
    pub available_since: DateTime<Utc>,
}

impl ReportNow {
    pub(crate) fn of(report: &WorkStatus) -> Self {
        Self {
            resource_index: report.resource_index,
            applied: report.applied,
            available: report.available,
            trackable: report.trackable,
            message: report.message().to_owned(),
            failed_manifests: report
                .failed_manifests()
                .iter()
                .map(failed_manifest)
                .collect(),
            reported_at: report.reported_at,
            available_since: report.available_since,
        }
    }

    /// `applied, not available on resource index 1 at 23:00:06 (image pull failed)`.
    pub(crate) fn text(&self, now: Option<DateTime<Utc>>) -> String {
        let applied = match self.applied {
            Some(true) => "applied",
            Some(false) => "apply failed",
            None => "not applied yet",
        };
        let available = match (self.trackable, self.available) {
            (false, _) => "not trackable",
            (true, Some(true)) => "available",
            (true, Some(false)) => "not available",
            (true, None) => "availability unknown",
        };
        let mut text = format!(
            "{applied}, {available} on resource index {} at {}",
            self.resource_index,
            clock(self.reported_at, now)
        );
        if !self.message.is_empty() {
            text.push_str(&format!(" ({})", self.message));
        }
        for manifest in &self.failed_manifests {
            // The report's own message is usually its one failed manifest's: say it once.
            let short = manifest
                .strip_suffix(&self.message)
                .and_then(|m| m.strip_suffix(": "))
                .filter(|_| !self.message.is_empty());
            text.push_str(&format!("; failed {}", short.unwrap_or(manifest)));
        }
        text
    }
}

/// `Deployment shop/web (Available): MESSAGE`: a manifest the member reported failed, with the
/// condition it failed and its message.
pub(crate) fn failed_manifest(failure: &ManifestFailure) -> String {
    let name = if failure.namespace.is_empty() {
        failure.name.clone()
    } else {
        format!("{}/{}", failure.namespace, failure.name)
    };
    format!(
        "{} {name} ({}): {}",
        failure.kind,
        failure.condition.as_str(),
        failure.message
    )
}

/// The member cluster's liveness at the point.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MemberNow {
    /// Whether its agent has joined.
    pub joined: bool,
    /// Whether heartbeats are fresh (`false` also before joining).
    pub healthy: bool,
    /// Its latest heartbeat.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_heartbeat: Option<DateTime<Utc>>,
    /// When its health last changed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub health_changed_at: Option<DateTime<Utc>>,
    /// When it started leaving the fleet.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub leaving_since: Option<DateTime<Utc>>,
}

impl MemberNow {
    pub(crate) fn of(member: &Member) -> Self {
        let agent = member.agent.as_ref();
        Self {
            joined: agent.is_some(),
            healthy: agent.is_some_and(|a| a.healthy),
            last_heartbeat: agent.map(|a| a.last_heartbeat),
            health_changed_at: agent.map(|a| a.health_changed_at),
            leaving_since: member.leaving_since,
        }
    }

    /// `healthy since 23:00:00, last heartbeat 23:04:00` / `unhealthy since 23:10:00, last
    /// heartbeat 23:05:00`.
    pub(crate) fn text(&self, now: Option<DateTime<Utc>>) -> String {
        let at = |time: Option<DateTime<Utc>>| time.map_or_else(String::new, |t| clock(t, now));
        if !self.joined {
            return "its agent has not joined yet".to_owned();
        }
        let health = if self.healthy { "healthy" } else { "unhealthy" };
        let mut text = format!(
            "{health} since {}, last heartbeat {}",
            at(self.health_changed_at),
            at(self.last_heartbeat)
        );
        if let Some(leaving) = self.leaving_since {
            text.push_str(&format!(", leaving since {}", clock(leaving, now)));
        }
        text
    }

    /// Healthy, joined and not leaving.
    pub(crate) fn is_well(&self) -> bool {
        self.joined && self.healthy && self.leaving_since.is_none()
    }
}

/// The member of this name, as [`MemberNow`].
pub(crate) fn member_now(state: &State, cluster: &str) -> Option<MemberNow> {
    state
        .members()
        .get(cluster)
        .map(|member| MemberNow::of(member))
}

/// `Bound at resource index 1 since 23:00:05; reported applied, not available on resource
/// index 1 at 23:00:06; member unhealthy since …`.
pub(crate) fn binding_text(state: &State, binding: &Binding, now: Option<DateTime<Utc>>) -> String {
    let mut text = match (binding.state, binding.resource_index) {
        (BindingState::Scheduled, _) => "Scheduled, not bound yet".to_owned(),
        (state, None) => format!("{}, carrying nothing", state.as_str()),
        (BindingState::Bound, Some(index)) => {
            let mut text = format!("Bound at resource index {index}");
            if let Some(bound) = binding.rollout_started_at {
                text.push_str(&format!(" since {}", clock(bound, now)));
            }
            text
        }
        (BindingState::Unscheduled, Some(index)) => {
            format!("Unscheduled, its work at resource index {index} being removed")
        }
    };
    if binding.resource_index.is_some() {
        match &binding.report {
            Some(report) => {
                let report = ReportNow::of(report).text(now);
                text.push_str(&format!("; reported {report}"));
            }
            None => text.push_str("; no report on it yet"),
        }
    }
    match member_now(state, &binding.cluster) {
        Some(member) if !member.is_well() => {
            text.push_str(&format!("; member {}", member.text(now)));
        }
        Some(_) => {}
        None => text.push_str("; not a member cluster any more"),
    }
    text
}
