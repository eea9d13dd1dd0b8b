//! A placement's clusters as the rollout and the eviction controller judge them.

use chrono::{DateTime, Utc};

use crate::placement::{Binding, Placement};
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
