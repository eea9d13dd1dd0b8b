//! Caches derived from state and kept beside it: never encoded (so outside the state hash and
//! checkpoints), rebuilt or re-derived when unknown, and checked against what they cache by the
//! invariants or a debug oracle.

/// Makes every value of each named cache compare equal to any other, so comparisons of states
/// (a fold against its restore from a checkpoint, say) see only real state.
macro_rules! derived_cache {
    ($($cache:ty),+ $(,)?) => {
        $(
            impl PartialEq for $cache {
                fn eq(&self, _other: &Self) -> bool {
                    true
                }
            }

            impl Eq for $cache {}
        )+
    };
}

pub(crate) use derived_cache;
