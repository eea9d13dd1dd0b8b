//! Points in a log and the state at them: `--at SEQ` is the state after input SEQ is folded;
//! `--at TIME` (RFC 3339) the state after the last input whose time is at or before TIME. A
//! replay to a point starts from the newest checkpoint at or before it and folds on, following
//! the recorded record-level verdicts, so it gives the state the hub had there.

use std::str::FromStr;

use chrono::{DateTime, Utc};
use flotilla_eventstore::LogReader;

use crate::{Folder, READ_BATCH_MAX, ReplayError};

/// Records looked at past a rejected record (which has no time) when resolving a time.
const TIMELESS_SCAN_MAX: u64 = 64;

/// A point in the log.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Point {
    /// After this input sequence.
    Seq(u64),
    /// After the last input whose time is at or before this.
    Time(DateTime<Utc>),
}

/// Why a point could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0:?} is neither a sequence number nor an RFC 3339 time (e.g. 2025-03-12T23:21:00Z)")]
pub struct PointError(pub String);

impl FromStr for Point {
    type Err = PointError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        if let Ok(seq) = text.parse::<u64>() {
            return Ok(Point::Seq(seq));
        }
        DateTime::parse_from_rfc3339(text)
            .map(|time| Point::Time(time.with_timezone(&Utc)))
            .map_err(|_| PointError(text.to_owned()))
    }
}

impl std::fmt::Display for Point {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Point::Seq(seq) => write!(f, "{seq}"),
            Point::Time(time) => write!(f, "{}", time.to_rfc3339()),
        }
    }
}

/// The input sequence a point names, clamped to the log's end (0: before the first input).
///
/// # Errors
/// When the log cannot be read.
pub async fn resolve<L: LogReader>(log: &L, point: Point) -> Result<u64, ReplayError> {
    let last = log.last_seq().await?;
    match point {
        Point::Seq(seq) => Ok(seq.min(last)),
        Point::Time(time) => last_at_or_before(log, time, last).await,
    }
}

/// Binary search over input times (the log's times never go backwards): the last sequence
/// whose time is at or before `time`.
async fn last_at_or_before<L: LogReader>(
    log: &L,
    time: DateTime<Utc>,
    last: u64,
) -> Result<u64, ReplayError> {
    let (mut low, mut high) = (0_u64, last);
    while low < high {
        let middle = low + (high - low).div_ceil(2);
        match time_at_or_after(log, middle, high).await? {
            Some((_, found)) if found <= time => low = middle,
            _ => high = middle - 1,
        }
    }
    Ok(low)
}

/// The time of the first input at or after `seq` (and not after `until`) that has one.
async fn time_at_or_after<L: LogReader>(
    log: &L,
    seq: u64,
    until: u64,
) -> Result<Option<(u64, DateTime<Utc>)>, ReplayError> {
    let count = (until - seq + 1).min(TIMELESS_SCAN_MAX);
    let records = log.read(seq, usize::try_from(count).unwrap_or(1)).await?;
    Ok(records
        .iter()
        .find_map(|record| record.event().map(|event| (record.seq, event.time))))
}

/// The state after input `seq`: from the newest checkpoint at or before it, folded on.
///
/// # Errors
/// When the log cannot be read, has a gap, or holds a newer build's record before `seq`.
pub async fn fold_to<L: LogReader>(log: &L, seq: u64) -> Result<Folder, ReplayError> {
    let base = log.base_seq().await?;
    if seq < base {
        return Err(ReplayError::BeforeBase { seq, base });
    }
    let mut folder = log
        .load_checkpoint_before(seq)
        .await?
        .map(Folder::from_checkpoint)
        .unwrap_or_default();
    fold_on(log, &mut folder, seq).await?;
    Ok(folder)
}

/// Decision batches read first when folding on: a batch holds a whole commit, which during a
/// fleet's join is thousands of inputs, and a seek needs only those up to its point.
const FIRST_DECISION_BATCHES: usize = 4;

/// Folds `folder` on to `seq`, following recorded verdicts where inputs were decided. The next
/// decision batches are read and decoded while the inputs of these fold, twice as many each
/// time up to a thousand, so a short fold decodes few decisions past its point.
///
/// # Errors
/// As [`fold_to`].
pub async fn fold_on<L: LogReader>(
    log: &L,
    folder: &mut Folder,
    seq: u64,
) -> Result<(), ReplayError> {
    let mut count = FIRST_DECISION_BATCHES;
    let mut batches = log.read_decisions(folder.seq + 1, count).await?;
    while folder.seq < seq {
        let until = batches
            .last()
            .map_or(seq, |batch| batch.last_input_seq.min(seq));
        let before = folder.seq;
        count = (count * 2).min(READ_BATCH_MAX);
        let next = async {
            if until >= seq || batches.is_empty() {
                return Ok(Vec::new());
            }
            log.read_decisions(until + 1, count).await
        };
        let (next, caught_up) = tokio::join!(next, folder.catch_up_following(log, until, &batches));
        caught_up?;
        if folder.seq == before {
            break;
        }
        // The log ended before `until` (a log being written): read on from where the fold is.
        batches = if folder.seq == until {
            next?
        } else {
            log.read_decisions(folder.seq + 1, count).await?
        };
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn points_are_sequences_or_times() {
        assert_eq!("42".parse(), Ok(Point::Seq(42)));
        let time = "2025-03-12T23:21:00Z".parse::<Point>();
        assert!(matches!(time, Ok(Point::Time(_))));
        assert!("yesterday".parse::<Point>().is_err());
    }
}
