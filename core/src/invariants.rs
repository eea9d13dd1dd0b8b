//! Invariants as code: what must hold of the hub's [`State`] after every step, checked by the
//! tests, the scenario runner and the property tests in debug builds.
//!
//! [`check`] looks at one state. [`check_step`] also looks at the state before the step, for
//! the one rule a single state cannot prove: that the RollingUpdate rollout never started
//! updating an available binding while the unavailability it caused itself already filled its
//! `maxUnavailable` budget (see [`rolling`] for why a state alone cannot tell). Each rule is a
//! function returning the first [`Violation`] it finds; each has a test that breaks it.

mod bindings;
mod deadlines;
mod reports;
pub mod rolling;
mod staged;
#[cfg(test)]
mod tests;

use crate::event::Envelope;
use crate::state::State;

/// One broken invariant: what is wrong, and where.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Violation {
    /// A placement's binding map holds a binding for another cluster than its key, so two
    /// bindings could target one cluster.
    #[error("{placement}: the binding keyed {key} targets cluster {cluster}")]
    BindingKeyMismatch {
        /// Placement display name.
        placement: String,
        /// The map key.
        key: String,
        /// The binding's cluster.
        cluster: String,
    },
    /// Two bindings of one placement share an object name.
    #[error("{placement}: bindings of {first} and {second} share the name {name}")]
    DuplicateBindingName {
        /// Placement display name.
        placement: String,
        /// The shared name.
        name: String,
        /// One cluster.
        first: String,
        /// The other cluster.
        second: String,
    },
    /// A live (Scheduled or Bound) binding targets a cluster that is not a member.
    #[error("{placement}: live {state} binding to {cluster}, which is not a member cluster")]
    LiveBindingWithoutMember {
        /// Placement display name.
        placement: String,
        /// Cluster.
        cluster: String,
        /// Binding state.
        state: String,
    },
    /// A binding carries a resource snapshot index the placement no longer (or never) had.
    #[error(
        "{placement}: binding of {cluster} carries resource snapshot {index}, which does not exist"
    )]
    MissingResourceSnapshot {
        /// Placement display name.
        placement: String,
        /// Cluster.
        cluster: String,
        /// The missing index.
        index: u64,
    },
    /// A binding was scheduled under a policy snapshot the placement no longer has.
    #[error(
        "{placement}: binding of {cluster} refers to policy snapshot {index}, which does not exist"
    )]
    MissingPolicySnapshot {
        /// Placement display name.
        placement: String,
        /// Cluster.
        cluster: String,
        /// The missing index.
        index: u64,
    },
    /// Snapshot indexes of a placement do not strictly increase, oldest first.
    #[error("{placement}: {kind} snapshot indexes are not strictly increasing: {indexes:?}")]
    SnapshotOrder {
        /// Placement display name.
        placement: String,
        /// `resource` or `policy`.
        kind: &'static str,
        /// The indexes as stored.
        indexes: Vec<u64>,
    },
    /// A PickFixed placement has a live binding to a cluster its latest policy does not name.
    #[error("{placement}: live binding to {cluster}, which the PickFixed policy does not name")]
    UnnamedFixedCluster {
        /// Placement display name.
        placement: String,
        /// Cluster.
        cluster: String,
    },
    /// The rolling rollout updated an available binding in this step although, after the step,
    /// fewer clusters are ready than `target - maxUnavailable`.
    #[error(
        "{placement}: updated available binding(s) {updated:?} leaving {ready} ready, below \
         target {target} - maxUnavailable {max_unavailable}"
    )]
    RolloutOverBudget {
        /// Placement display name.
        placement: String,
        /// Clusters whose available binding was updated in the step.
        updated: Vec<String>,
        /// Ready bindings after the step.
        ready: i64,
        /// The rollout target.
        target: i64,
        /// `maxUnavailable` as a count.
        max_unavailable: i64,
    },
    /// A stage of an update run started before it was allowed to.
    #[error("{run}: stage {stage} started although {reason}")]
    StageStartedEarly {
        /// Run display name.
        run: String,
        /// Stage name.
        stage: String,
        /// Which precondition did not hold.
        reason: String,
    },
    /// A stage's bookkeeping disagrees with its clusters.
    #[error("{run}: stage {stage}: {detail}")]
    StageBookkeeping {
        /// Run display name.
        run: String,
        /// Stage name.
        stage: String,
        /// What disagrees.
        detail: String,
    },
    /// A heartbeat deadline disagrees with the member it names.
    #[error("heartbeat deadline of {cluster}: {detail}")]
    HeartbeatDeadline {
        /// Cluster.
        cluster: String,
        /// What disagrees.
        detail: String,
    },
    /// A deadline names an object that does not exist.
    #[error("{kind} deadline at {at} names {object}, which does not exist")]
    DeadlineWithoutObject {
        /// `run` or `rollout`.
        kind: &'static str,
        /// The object's display name.
        object: String,
        /// The deadline.
        at: String,
    },
    /// A partitioned rollout plan is kept for a placement that is missing or not partitioned,
    /// or its targets are not the placement's live bindings.
    #[error("a partitioned plan is kept for {placement}, which {detail}")]
    StrayPartitionedPlan {
        /// Placement display name.
        placement: String,
        /// `does not exist` / `is not partitioned` / what else is wrong.
        detail: &'static str,
    },
    /// What the hub keeps of a member's work report is over a limit or out of time order.
    #[error("{placement}: report of {cluster}: {detail}")]
    WorkReport {
        /// Placement display name.
        placement: String,
        /// Cluster.
        cluster: String,
        /// What is wrong.
        detail: String,
    },
    /// A binding (of any state) targets a member that is leaving the fleet.
    #[error("{placement}: binding to {cluster}, which is leaving the fleet")]
    BindingToLeavingMember {
        /// Placement display name.
        placement: String,
        /// Cluster.
        cluster: String,
    },
    /// The fold's clock is missing although objects carry times, or runs behind one of them.
    #[error("clock: {detail}")]
    Clock {
        /// What disagrees.
        detail: String,
    },
}

/// Checks every single-state invariant.
///
/// # Errors
/// The first [`Violation`] found.
pub fn check(state: &State) -> Result<(), Violation> {
    bindings::check(state)?;
    deadlines::check(state)?;
    reports::check(state)?;
    staged::check(state)?;
    Ok(())
}

/// Checks `after` (every [`check`] rule) and the rules about what `event`'s step did to
/// `before`.
///
/// # Errors
/// The first [`Violation`] found.
pub fn check_step(before: &State, event: &Envelope, after: &State) -> Result<(), Violation> {
    check(after)?;
    rolling::check_step(before, event, after)
}
