//! Which checkpoints a log keeps (redb and NATS alike): the newest few, and of the older ones a number that
//! grows with the logarithm of the log's length, thinned with age. A replay to a point starts
//! from the newest kept checkpoint at or before it; the nearer a point is to the end of the log,
//! the shorter the fold from there.
//!
//! Age is counted in inputs before the newest checkpoint, not in time, so the rule is a pure
//! function of the sequences (the same log always keeps the same checkpoints). A checkpoint
//! `distance` inputs older than the newest stands in a span of `spacing × 2^k` inputs, where
//! `k` counts how many times the distance doubled past [`DENSE_SPANS`] spans; the first
//! checkpoint of each span is kept. Spans are aligned to their width, so the spans of a level
//! nest inside the next: a checkpoint a coarser span keeps was already kept by the finer one.
//! The newest `16 × spacing` inputs keep one checkpoint per `spacing`, each doubling of age
//! beyond keeps about eight more, and no point folds more than about a span of its age.

/// Checkpoints a retention window keeps across itself, evenly in the log's time, besides what
/// thinning keeps: the log's base then trails the window by at most about this fraction of it
/// (`docs/storage.md`). A hub under a window writes checkpoints at least this often.
pub const CHECKPOINTS_PER_WINDOW: i32 = 8;

/// Spans of `spacing` inputs before the thinning starts (and spans kept per doubling of age).
pub(crate) const DENSE_SPANS: u64 = 8;

/// The checkpoint bytes the kept older checkpoints may cost per input of the log they span:
/// a fleet whose checkpoint is large spaces them further apart. At 100,000 clusters a
/// checkpoint file is about 7 MB, so one is kept per about 440,000 inputs rather than per
/// `seek_spacing`, and they add about this much to each input's share of the disk.
pub(crate) const SEEK_BYTES_PER_INPUT: u64 = 16;

/// The span of the dense part: `seek_spacing`, or wider when a checkpoint of `bytes` would
/// cost more than [`SEEK_BYTES_PER_INPUT`] per input of it.
pub(crate) fn spacing(seek_spacing: u64, bytes: u64) -> u64 {
    seek_spacing.max(bytes / SEEK_BYTES_PER_INPUT)
}

/// The checkpoints of `all` to prune: beyond the `newest_kept` newest, every checkpoint whose
/// span already holds an older kept one.
pub(crate) fn pruned(
    all: &std::collections::BTreeSet<u64>,
    newest_kept: usize,
    spacing: u64,
) -> Vec<u64> {
    let Some(&newest) = all.last() else {
        return Vec::new();
    };
    let older = all.len().saturating_sub(newest_kept);
    let mut last_kept: Option<u64> = None;
    let mut pruned = Vec::new();
    for &seq in all.iter().take(older) {
        let width = span(newest - seq, spacing);
        if last_kept.is_some_and(|kept| kept / width == seq / width) {
            pruned.push(seq);
        } else {
            last_kept = Some(seq);
        }
    }
    pruned
}

/// The span a checkpoint `distance` inputs before the newest stands in.
pub(crate) fn span(distance: u64, spacing: u64) -> u64 {
    let spacing = spacing.max(1);
    let dense = spacing.saturating_mul(DENSE_SPANS);
    let doublings = (distance / dense).checked_ilog2().unwrap_or(0).min(40);
    spacing.saturating_mul(1 << doublings)
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;

    /// Checkpoints every `every` inputs up to `end`, pruned after each as the writer does.
    fn kept(end: u64, every: u64, newest_kept: usize, spacing: u64) -> BTreeSet<u64> {
        let mut all = BTreeSet::new();
        for seq in (every..=end).step_by(usize::try_from(every).unwrap_or(1)) {
            all.insert(seq);
            for gone in pruned(&all, newest_kept, spacing) {
                all.remove(&gone);
            }
        }
        all
    }

    #[test]
    fn a_large_checkpoint_spaces_the_kept_ones_further_apart() {
        assert_eq!(spacing(50_000, 100_000), 50_000);
        assert_eq!(spacing(50_000, 7_000_000), 437_500);
    }

    #[test]
    fn a_short_log_keeps_the_first_of_each_span() {
        let all: BTreeSet<u64> = [3, 8, 12, 25, 27].into_iter().collect();
        assert_eq!(pruned(&all, 2, 10), [8]);
    }

    #[test]
    fn the_count_grows_with_the_logarithm_of_the_length() {
        let spacing = 50_000;
        for (end, at_most) in [(1_000_000, 30), (10_000_000, 50), (100_000_000, 80)] {
            let kept = kept(end, 10_000, 3, spacing);
            let doublings = u64::from((end / (2 * DENSE_SPANS * spacing)).max(1).ilog2()) + 1;
            let bound = 3 + 2 * DENSE_SPANS + DENSE_SPANS * doublings;
            assert!(
                kept.len() as u64 <= bound,
                "{end}: {} > {bound}",
                kept.len()
            );
            assert!(kept.len() <= at_most, "{end}: {}", kept.len());
        }
    }

    #[test]
    fn no_point_folds_more_than_two_spans_of_its_age() {
        let (end, every, spacing) = (5_000_000, 10_000, 50_000);
        let kept = kept(end, every, 3, spacing);
        let newest = *kept.last().unwrap_or(&0);
        for point in (every..=end).step_by(7_919) {
            let from = kept.range(..=point).next_back().copied().unwrap_or(0);
            let allowed = 2 * span(newest.saturating_sub(point), spacing) + every;
            assert!(point - from <= allowed, "{point} folds from {from}");
        }
    }
}
