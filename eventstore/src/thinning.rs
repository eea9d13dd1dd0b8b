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
/// checkpoint file is about 3.5–4.4 MB, so one is kept per 200,000 inputs rather than per
/// `seek_spacing`, and they add 16–32 bytes to each input's share of the disk (of a budget of
/// 64 in all); a replay folds about 500,000 heartbeats a second, so a point is then at most
/// about 0.4 s of fold past a checkpoint.
pub(crate) const SEEK_BYTES_PER_INPUT: u64 = 32;

/// The span of the dense part: `seek_spacing` doubled as often as needed for a checkpoint of
/// `bytes` to cost at most [`SEEK_BYTES_PER_INPUT`] per input of it. Only doublings: as a
/// fleet's checkpoints grow, the spans of the wider spacing are unions of the narrower ones,
/// so the checkpoint that starts a wide span was kept as the start of a narrow one. (A spacing
/// in proportion to the bytes moved the spans' edges as the fleet grew, and pruned checkpoints
/// that then left gaps of two spans.)
pub(crate) fn spacing(seek_spacing: u64, bytes: u64) -> u64 {
    let wanted = bytes / SEEK_BYTES_PER_INPUT;
    let mut spacing = seek_spacing.max(1);
    while spacing < wanted {
        spacing = spacing.saturating_mul(2);
    }
    spacing
}

/// The checkpoints of `all` (sequence → the checkpoint's bytes, 0 when unknown) to prune:
/// beyond the `newest_kept` newest, every checkpoint whose span already holds an older kept
/// one. Each checkpoint's span is reckoned from its own size ([`spacing`] of `seek_spacing`
/// and its bytes), so the small checkpoints of a fleet still joining or rolling out stand in
/// narrower spans than the fleet's later ones, at the same cost per input: a point inside such
/// a burst, whose inputs fold slower than heartbeats, folds a shorter way. Every width is
/// `seek_spacing` doubled, aligned to itself, so the spans of different widths nest.
pub(crate) fn pruned(
    all: &std::collections::BTreeMap<u64, u64>,
    newest_kept: usize,
    seek_spacing: u64,
) -> Vec<u64> {
    let Some((&newest, _)) = all.last_key_value() else {
        return Vec::new();
    };
    let older = all.len().saturating_sub(newest_kept);
    let mut last_kept: Option<u64> = None;
    let mut pruned = Vec::new();
    for (&seq, &bytes) in all.iter().take(older) {
        let width = span(newest - seq, spacing(seek_spacing, bytes));
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
    use std::collections::{BTreeMap, BTreeSet};

    use super::*;

    /// Checkpoints of `bytes(seq)` every `every` inputs up to `end`, pruned after each as the
    /// writer does.
    fn written(
        end: u64,
        every: u64,
        seek_spacing: u64,
        bytes: impl Fn(u64) -> u64,
    ) -> BTreeMap<u64, u64> {
        let mut all = BTreeMap::new();
        for seq in (every..=end).step_by(usize::try_from(every).unwrap_or(1)) {
            all.insert(seq, bytes(seq));
            for gone in pruned(&all, 3, seek_spacing) {
                all.remove(&gone);
            }
        }
        all
    }

    /// Small checkpoints every `every` inputs up to `end` (each spaced `spacing` apart).
    fn kept(end: u64, every: u64, newest_kept: usize, spacing: u64) -> BTreeSet<u64> {
        assert_eq!(newest_kept, 3, "as `written`");
        written(end, every, spacing, |_| 0).into_keys().collect()
    }

    #[test]
    fn a_large_checkpoint_spaces_the_kept_ones_further_apart() {
        assert_eq!(spacing(50_000, 100_000), 50_000);
        assert_eq!(spacing(50_000, 2_000_000), 100_000);
        assert_eq!(spacing(50_000, 4_400_000), 200_000);
        assert_eq!(spacing(50_000, 41 << 20), 1_600_000);
    }

    #[test]
    fn a_growing_checkpoint_leaves_no_gap_wider_than_a_span() {
        // A fleet joining: each checkpoint larger than the last, every 10,000 inputs.
        let (every, seek_spacing) = (10_000_u64, 50_000);
        let bytes = |seq: u64| 100_000 + 2 * seq;
        let all = written(2_000_000, every, seek_spacing, bytes);
        let last = spacing(seek_spacing, bytes(2_000_000));
        assert_eq!(last, 200_000, "the spacing doubled twice as the fleet grew");
        let kept: Vec<u64> = all.into_keys().collect();
        let newest = kept.last().copied().unwrap_or_default();
        for pair in kept.windows(2) {
            // What was pruned between them stood in a span holding the older one.
            let allowed = span(newest - pair[0], last) + every;
            assert!(pair[1] - pair[0] <= allowed, "{} then {}", pair[0], pair[1]);
        }
    }

    #[test]
    fn a_short_log_keeps_the_first_of_each_span() {
        let all: BTreeMap<u64, u64> = [3, 8, 12, 25, 27].map(|seq| (seq, 0)).into();
        assert_eq!(pruned(&all, 2, 10), [8]);
    }

    #[test]
    fn the_small_checkpoints_of_a_burst_stay_closer_together_than_the_fleets_later_ones() {
        // A fleet rolling out with 2 MB checkpoints up to input 400,000, then 4.4 MB ones.
        let (every, seek_spacing) = (10_000_u64, 50_000);
        let bytes = |seq: u64| if seq < 400_000 { 2_000_000 } else { 4_400_000 };
        let all = written(1_200_000, every, seek_spacing, bytes);
        let early: Vec<u64> = all.range(..400_000).map(|(seq, _)| *seq).collect();
        assert_eq!(
            early,
            [10_000, 100_000, 200_000, 300_000],
            "one per 100,000"
        );
        let late: Vec<u64> = all.range(400_000..1_000_000).map(|(seq, _)| *seq).collect();
        assert_eq!(late, [400_000, 600_000, 800_000], "one per 200,000");
        let cost = |range: std::ops::Range<u64>| {
            let kept: u64 = all.range(range.clone()).map(|(_, bytes)| bytes).sum();
            kept / (range.end - range.start)
        };
        assert!(
            cost(0..400_000) <= SEEK_BYTES_PER_INPUT,
            "{}",
            cost(0..400_000)
        );
        assert!(cost(400_000..1_000_000) <= SEEK_BYTES_PER_INPUT);
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
