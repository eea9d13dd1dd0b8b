//! Rolling and partitioned rollouts. What other crates read of `rollout`: the fold's own types and rules,
//! so an explanation never re-derives them.

pub use crate::rollout::{budgets, target};

/// `rollout::partitioned`: what other crates read of it.
pub mod partitioned {
    pub use crate::rollout::partitioned::{Outcome, Plan, fresh_plan, is_partitioned};

    /// `rollout::partitioned::status`: what other crates read of it.
    pub mod status {
        pub use crate::rollout::partitioned::status::{ClusterState, Summary, summarize};
    }
}

/// `rollout::readiness`: what other crates read of it.
pub mod readiness {
    pub use crate::rollout::readiness::{ApplyMode, Readiness, judge, of_binding};
}

/// `rollout::safety`: what other crates read of it.
pub mod safety {
    pub use crate::rollout::safety::Guard;
}
