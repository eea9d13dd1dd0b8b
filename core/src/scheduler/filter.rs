//! Filter plugins that depend only on the cluster and the policy: cluster eligibility, taints
//! and tolerations, and required cluster affinity. (Same-placement anti-affinity and topology
//! spread depend on the bindings and live in the cycle.)

use chrono::{DateTime, Utc};

use crate::member::Member;
use crate::model::member_cluster::Taint;
use crate::model::placement::{
    ClusterSelectorTerm, PlacementPolicy, PropertyOperator, Toleration, TolerationOperator,
};

use super::property::property;
use super::quantity::Quantity;

/// KubeFleet's eligibility checker's reason for a cluster being deleted (leaving or gone).
pub const REASON_LEFT: &str = "cluster has left the fleet";

/// Why a cluster failed a cluster-only filter. It borrows from the member and is turned into
/// text only when it is recorded: a pass over a large fleet rejects many clusters and records
/// at most [`super::NOT_SELECTED_DECISIONS_MAX`] of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rejection<'a> {
    /// None of the required affinity terms matched; there are this many.
    Affinity(usize),
    /// The cluster is leaving or gone.
    Left,
    /// Its agent has not sent a heartbeat yet.
    NotConnected,
    /// Its heartbeats stopped this many hundredths of a minute ago.
    Unhealthy(i64),
    /// This taint is not tolerated.
    Taint(&'a Taint),
}

impl Rejection<'_> {
    /// The plugin's reason, as KubeFleet words it (without [`UNSCHEDULABLE`]).
    #[must_use]
    pub fn reason(&self) -> String {
        match self {
            Self::Affinity(terms) => format!(
                "none of the nonempty required cluster affinity term (total number: {terms}) is \
                 matched"
            ),
            Self::Left => REASON_LEFT.into(),
            Self::NotConnected => {
                "cluster is not connected to the fleet: member agent not online yet".into()
            }
            Self::Unhealthy(hundredths) => format!(
                "cluster is not connected to the fleet: no recent heartbeat signals \
                 (last received {}.{:02} minutes ago)",
                hundredths / 100,
                hundredths % 100
            ),
            Self::Taint(taint) => format!(
                "taint &{{Key:{} Value:{} Effect:NoSchedule}} cannot be tolerated",
                taint.key,
                taint.value.as_deref().unwrap_or_default()
            ),
        }
    }
}

/// Why a cluster is not eligible at all, or `None` when it is (KubeFleet's eligibility
/// checker's texts; minutes are printed with two decimals, computed in integers).
#[must_use]
pub fn ineligible(member: &Member, now: DateTime<Utc>) -> Option<String> {
    eligibility(member, now).map(|rejection| rejection.reason())
}

/// [`ineligible`], unformatted.
#[must_use]
pub fn eligibility(member: &Member, now: DateTime<Utc>) -> Option<Rejection<'static>> {
    if member.is_leaving() {
        return Some(Rejection::Left);
    }
    match &member.agent {
        None => Some(Rejection::NotConnected),
        Some(agent) if !agent.healthy => {
            // Go's %.2f rounds; so do we, in integers.
            let hundredths = ((now - agent.last_heartbeat).num_seconds().max(0) * 100 + 30) / 60;
            Some(Rejection::Unhealthy(hundredths))
        }
        Some(_) => None,
    }
}

/// Whether one toleration tolerates one taint (Kubernetes' rules, NoSchedule only).
fn tolerates(toleration: &Toleration, taint: &Taint) -> bool {
    let effect_ok = toleration
        .effect
        .as_deref()
        .is_none_or(|e| e.is_empty() || e == "NoSchedule");
    match toleration.operator {
        TolerationOperator::Exists => {
            (toleration.key.is_empty() || toleration.key == taint.key) && effect_ok
        }
        TolerationOperator::Equal => {
            toleration.key == taint.key
                && toleration.value == taint.value.as_deref().unwrap_or_default()
                && effect_ok
        }
    }
}

/// The first taint no toleration tolerates.
fn first_untolerated<'a>(member: &'a Member, tolerations: &[Toleration]) -> Option<Rejection<'a>> {
    member
        .spec
        .taints
        .iter()
        .find(|t| !tolerations.iter().any(|tol| tolerates(tol, t)))
        .map(Rejection::Taint)
}

/// Whether a term's label selector and property selector both match.
#[must_use]
pub fn term_matches(member: &Member, term: &ClusterSelectorTerm) -> bool {
    let labels_ok = term
        .label_selector
        .as_ref()
        .is_none_or(|s| s.matches(&member.meta.labels));
    let properties_ok = term.property_selector.as_ref().is_none_or(|selector| {
        selector.match_expressions.iter().all(|expr| {
            let Some(actual) = property(member, &expr.name) else {
                return false;
            };
            let Some(Ok(wanted)) = expr.values.first().map(|v| Quantity::parse(v)) else {
                return false;
            };
            match expr.operator {
                PropertyOperator::Eq => actual == wanted,
                PropertyOperator::Ne => actual != wanted,
                PropertyOperator::Gt => actual > wanted,
                PropertyOperator::Ge => actual >= wanted,
                PropertyOperator::Lt => actual < wanted,
                PropertyOperator::Le => actual <= wanted,
            }
        })
    });
    labels_ok && properties_ok
}

/// Why the required affinity terms (OR'd) refuse the cluster, if they do; no terms accept
/// everything.
fn affinity(member: &Member, policy: &PlacementPolicy) -> Option<Rejection<'static>> {
    let terms = required_terms(policy);
    if terms.is_empty() || terms.iter().any(|term| term_matches(member, term)) {
        None
    } else {
        Some(Rejection::Affinity(terms.len()))
    }
}

/// The required cluster affinity terms of a policy.
#[must_use]
pub fn required_terms(policy: &PlacementPolicy) -> &[ClusterSelectorTerm] {
    policy
        .affinity
        .as_ref()
        .and_then(|a| a.cluster_affinity.as_ref())
        .and_then(|c| {
            c.required_during_scheduling_ignored_during_execution
                .as_ref()
        })
        .map(|r| r.cluster_selector_terms.as_slice())
        .unwrap_or_default()
}

/// Prefix KubeFleet's framework puts before a filter plugin's reason.
pub const UNSCHEDULABLE: &str = "ClusterUnschedulable, ";

/// Every cluster-only filter for PickAll and PickN, in KubeFleet's plugin order (cluster
/// affinity, cluster eligibility, taints and tolerations), as a decision reason.
#[must_use]
pub fn filter(member: &Member, policy: &PlacementPolicy, now: DateTime<Utc>) -> Option<String> {
    check(member, policy, now).map(|rejection| format!("{UNSCHEDULABLE}{}", rejection.reason()))
}

/// [`filter`], unformatted.
#[must_use]
pub fn check<'a>(
    member: &'a Member,
    policy: &PlacementPolicy,
    now: DateTime<Utc>,
) -> Option<Rejection<'a>> {
    affinity(member, policy)
        .or_else(|| eligibility(member, now))
        .or_else(|| first_untolerated(member, &policy.tolerations))
}
