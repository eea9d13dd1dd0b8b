//! A placement's clusters as the rollout and the eviction controller judge them.

use chrono::{DateTime, Utc};

pub use crate::rollout::readiness::Readiness;
use crate::rollout::readiness::of_binding;

/// The clusters whose bindings hold work (placed, at a resource index), with the readiness the
/// rollout judges for each at `now`, in cluster order.
pub fn working_bindings(
    placement: &Placement,
    now: DateTime<Utc>,
) -> impl Iterator<Item = (Binding, Readiness)> + '_ {
    placement
        .bindings
        .values()
        .filter(Binding::carries_work)
        .map(move |binding| {
            let readiness = of_binding(placement, &binding, now);
            (binding, readiness)
        })
}

// What other crates read of the aggregate, beside the questions above.
pub use crate::placement::{
    Binding, BindingState, ClusterDecision, ClusterScore, OverrideSnapshots, Placement,
    PolicySnapshot, ResourceSnapshot, SelectedResource, Work,
};

/// `placement::binding`: what other crates read of it.
pub mod binding {
    pub use crate::placement::binding::Binding;
}

/// `placement::envelope`: what other crates read of it.
pub mod envelope {
    pub use crate::placement::envelope::unwrap;
}
