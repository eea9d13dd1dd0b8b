//! Finding the first input after which something holds: [`bisect()`] in O(log n) partial folds
//! for a predicate that stays true once true, and [`scan`] in one linear fold for any set of
//! predicates. Built-in predicates and their text forms are in [`predicate`].
//!
//! Guarantees:
//! - Both fold as [`crate::fold_to`] does, following the log's record-level verdicts, so the
//!   state a predicate sees after input `s` is the state the hub had after `s`.
//! - [`scan`] answers the first input in the range after which any predicate holds, whatever
//!   the predicates. [`bisect()`] answers the same for a predicate that, once true in the range,
//!   stays true to its end. A predicate false at every probe may have turned false again (a
//!   cluster unhealthy for a while): the bisection then scans every input and answers the
//!   first after which it held, with each run of inputs after which it held ([`Search::held`]),
//!   never a wrong "never". One true at the range's end but also earlier, in a run that ended,
//!   is answered *an* input after which it holds and before which it did not, as `git bisect`
//!   does.
//! - A hit names what else its input set off when that made the predicate hold
//!   ([`Hit::cause`]): the fold expires a silent cluster's heartbeat deadline at the first
//!   input after it, which may be anyone's heartbeat.
//! - A bisection that finds the predicate evaluates it at most `⌈log₂(n + 1)⌉ + 1` times for a
//!   range of `n` inputs ([`Search::probes`]). Each probe folds from the nearest known state: the newest
//!   checkpoint at or before it ([`flotilla_eventstore::LogReader::load_checkpoint_before`]) or
//!   the state at the low end of the search, cloned — whichever is later ([`Probe`]). With
//!   only the low end, the folds add up to at most about n inputs; with a checkpoint every K
//!   inputs, each probe folds at most K.
//! - Deterministic: the same log and predicate give the same answer and the same counts.

mod object;
pub mod predicate;
pub(crate) mod walk;

use std::fmt;
use std::ops::RangeInclusive;

use chrono::{DateTime, SecondsFormat, Utc};
use flotilla_core::Decision;
use flotilla_core::query::member::REASON_HEARTBEAT_TIMEOUT;
use flotilla_eventstore::{LogReader, LogRecord};
use serde::Serialize;

use crate::{Folder, ReplayError, fold_on};
pub use predicate::{
    FieldTest, NamedObject, Predicate, PredicateError, StatePredicate, Unavailable,
    unavailable_clusters,
};
use walk::Walk;

/// Most predicates one scan evaluates after every input.
pub const SCAN_PREDICATES_MAX: usize = 64;
/// Most probes of one bisection: enough for any range of `u64` sequences.
pub const PROBES_MAX: u32 = 66;

/// Where each probe of a bisection starts folding.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Probe {
    /// The later of the newest checkpoint at or before the probe and the low end's state.
    #[default]
    Nearest,
    /// Always the newest checkpoint at or before the probe ([`crate::fold_to`]).
    Checkpoint,
    /// Always the low end's state, cloned; checkpoints are never read.
    LowEnd,
}

/// What a search found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "answer", rename_all = "camelCase")]
pub enum Answer {
    /// The predicate first holds after this input.
    First(Hit),
    /// It already held before the range's first input (after input `seq`, 0 for the empty
    /// state).
    AlreadyHeld {
        /// The input before the range.
        seq: u64,
        /// Why it held (the predicate's sentence).
        why: String,
        /// Which predicate (its position in the list given to [`scan`]; 0 for [`bisect()`]).
        predicate: usize,
    },
    /// It does not hold after the range's last input.
    Never,
}

/// The input after which a predicate first holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Hit {
    /// Its sequence.
    pub seq: u64,
    /// Its time (`None` for a record that is not an event).
    pub time: Option<DateTime<Utc>>,
    /// The input as `flotilla events` prints it.
    pub event: String,
    /// Why the predicate holds after it.
    pub why: String,
    /// Which predicate (its position in the list given to [`scan`]; 0 for [`bisect()`]).
    pub predicate: usize,
    /// What the input set off besides its own change, when that is what made the predicate
    /// hold: a silent cluster's heartbeat deadline that passed before the input's time.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cause: Option<String>,
}

/// Inputs `from..=to` after each of which a predicate held.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Held {
    /// The first input after which it held.
    pub from: u64,
    /// The last.
    pub to: u64,
}

/// A search's answer and what it cost (JSON: the answer's fields flattened beside the costs).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Search {
    /// The answer.
    #[serde(flatten)]
    pub answer: Answer,
    /// Folded states the predicates were evaluated on (a scan: one per input, plus the start).
    pub probes: u32,
    /// Inputs folded, over all probes.
    pub inputs_folded: u64,
    /// Checkpoints a probe started from.
    pub checkpoints_used: u32,
    /// Every run of inputs after which the predicate held, when a bisection found it false at
    /// the range's end and scanned the range instead (a predicate that turned false again).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub held: Vec<Held>,
}

impl fmt::Display for Search {
    /// `first after #SEQ: WHY` and the event line, or `already held after #SEQ: WHY`, or
    /// `never holds`; then the cost.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.answer {
            Answer::First(hit) => {
                writeln!(f, "first after #{}: {}", hit.seq, hit.why)?;
                writeln!(f, "{}", hit.event)?;
                if let Some(cause) = &hit.cause {
                    writeln!(f, "cause: {cause}")?;
                }
            }
            Answer::AlreadyHeld { seq, why, .. } => {
                writeln!(f, "already held after #{seq}, before the range: {why}")?;
            }
            Answer::Never => writeln!(f, "never holds in the range")?,
        }
        if !self.held.is_empty() {
            let runs: Vec<String> = self
                .held
                .iter()
                .map(|h| format!("#{}..=#{}", h.from, h.to))
                .collect();
            writeln!(
                f,
                "held after {}; not at the range's end, so every input was scanned",
                runs.join(", ")
            )?;
        }
        writeln!(
            f,
            "{} probes, {} inputs folded, {} checkpoints used",
            self.probes, self.inputs_folded, self.checkpoints_used
        )
    }
}

/// Why a search could not run.
#[derive(Debug, thiserror::Error)]
pub enum SearchError {
    /// The log could not be folded.
    #[error(transparent)]
    Replay(#[from] ReplayError),
    /// The range is empty or starts at 0.
    #[error("the range {first}..={last} names no input (inputs are numbered from 1)")]
    EmptyRange {
        /// Its first input.
        first: u64,
        /// Its last input.
        last: u64,
    },
    /// A scan was given no predicate, or more than [`SCAN_PREDICATES_MAX`].
    #[error("a scan takes 1 to {SCAN_PREDICATES_MAX} predicates, not {0}")]
    PredicateCount(usize),
}

/// The range clamped to the log's end, checked.
async fn clamp<L: LogReader>(
    log: &L,
    range: &RangeInclusive<u64>,
) -> Result<(u64, u64), SearchError> {
    let last = log.last_seq().await.map_err(ReplayError::from)?;
    let (first, until) = (*range.start(), (*range.end()).min(last));
    if first == 0 || first > until {
        return Err(SearchError::EmptyRange { first, last: until });
    }
    Ok((first, until))
}

/// The first input in `range` after which `predicate` holds, by bisection, probes folding
/// from the nearest known state ([`Probe::Nearest`]). See the module docs for the contract.
///
/// # Errors
/// An empty range, or a log that cannot be folded up to the range's end.
pub async fn bisect<L: LogReader, P: StatePredicate + ?Sized>(
    log: &L,
    predicate: &P,
    range: RangeInclusive<u64>,
) -> Result<Search, SearchError> {
    bisect_with(log, predicate, range, Probe::Nearest).await
}

/// [`bisect()`] with the probe strategy chosen.
///
/// # Errors
/// As [`bisect()`].
pub async fn bisect_with<L: LogReader, P: StatePredicate + ?Sized>(
    log: &L,
    predicate: &P,
    range: RangeInclusive<u64>,
    probe: Probe,
) -> Result<Search, SearchError> {
    let (first, until) = clamp(log, &range).await?;
    let mut prober = Prober::new(log, probe);
    // `low`: a state where the predicate does not hold; `high`: the lowest input known to
    // hold it (`until + 1`: none yet).
    let mut low = prober.state_after(None, first - 1).await?;
    if let Some(why) = predicate.holds(&low.state) {
        prober.search.answer = Answer::AlreadyHeld {
            seq: low.seq,
            why,
            predicate: 0,
        };
        return Ok(prober.search);
    }
    let mut high = until + 1;
    let mut high_why = None;
    while high - low.seq > 1 {
        assert!(
            prober.search.probes < PROBES_MAX,
            "a bisection probes at most {PROBES_MAX} times"
        );
        let middle = low.seq + (high - low.seq) / 2;
        let folder = prober.state_after(Some(&low), middle).await?;
        match predicate.holds(&folder.state) {
            Some(why) => {
                high = middle;
                high_why = Some(why);
            }
            None => low = folder,
        }
    }
    match high_why.filter(|_| high <= until) {
        Some(why) => {
            let hit = hit_after(log, &low, high, why).await?;
            prober.search.answer = Answer::First(hit);
        }
        // Not holding at any probe proves nothing of a predicate that turns false again:
        // only a scan of every input can say it never held.
        None => scan_runs(&mut prober, predicate, first, until).await?,
    }
    Ok(prober.search)
}

/// Folds every input of `first..=until` once, recording each run of inputs after which
/// `predicate` held; the first run's start is the answer.
async fn scan_runs<L: LogReader, P: StatePredicate + ?Sized>(
    prober: &mut Prober<'_, L>,
    predicate: &P,
    first: u64,
    until: u64,
) -> Result<(), SearchError> {
    let mut folder = prober.state_after(None, first - 1).await?;
    let mut walk = Walk::new(prober.log, until);
    while let Some(stepped) = walk.step(&mut folder).await? {
        prober.search.inputs_folded += 1;
        prober.search.probes = prober.search.probes.saturating_add(1);
        let Some(why) = predicate.holds(&folder.state) else {
            continue;
        };
        match prober.search.held.last_mut() {
            Some(run) if run.to + 1 == stepped.seq => run.to = stepped.seq,
            _ => prober.search.held.push(Held {
                from: stepped.seq,
                to: stepped.seq,
            }),
        }
        if matches!(prober.search.answer, Answer::Never) {
            let mut hit = hit_of(&stepped.record, why, 0);
            hit.cause = cause_of(&stepped, &folder);
            prober.search.answer = Answer::First(hit);
        }
    }
    if folder.seq < until {
        return Err(ReplayError::Incomplete {
            seq: folder.seq + 1,
        }
        .into());
    }
    Ok(())
}

/// Folds probe states and counts what they cost.
struct Prober<'a, L: LogReader> {
    log: &'a L,
    probe: Probe,
    /// `(c, m)`: the newest checkpoint at or before input `m` is at `c` (`None`: there is
    /// none) — so it is for every probe in `c..=m` too, and need not be loaded to know it.
    known: Option<(Option<u64>, u64)>,
    search: Search,
}

impl<'a, L: LogReader> Prober<'a, L> {
    fn new(log: &'a L, probe: Probe) -> Self {
        Self {
            log,
            probe,
            known: None,
            search: Search {
                answer: Answer::Never,
                probes: 0,
                inputs_folded: 0,
                checkpoints_used: 0,
                held: Vec::new(),
            },
        }
    }

    /// The state after `seq`, folded from the start the strategy allows: a checkpoint, or
    /// `low` (the state at the search's low end, before `seq`), or nothing.
    async fn state_after(&mut self, low: Option<&Folder>, seq: u64) -> Result<Folder, ReplayError> {
        let low_seq = low.map_or(0, |f| f.seq);
        let checkpoint = match self.probe {
            Probe::LowEnd => None,
            Probe::Checkpoint => self.log.load_checkpoint_before(seq).await?,
            Probe::Nearest if self.known_no_later_than(seq, low_seq) => None,
            Probe::Nearest => {
                let checkpoint = self.log.load_checkpoint_before(seq).await?;
                self.known = Some((checkpoint.as_ref().map(|c| c.seq), seq));
                checkpoint.filter(|c| c.seq > low_seq)
            }
        };
        let mut folder = match (checkpoint, low) {
            (Some(checkpoint), _) => {
                self.search.checkpoints_used += 1;
                Folder::from_checkpoint(checkpoint)
            }
            (None, Some(low)) if self.probe != Probe::Checkpoint => low.clone(),
            (None, _) => Folder::default(),
        };
        let from = folder.seq;
        fold_on(self.log, &mut folder, seq).await?;
        self.search.inputs_folded += folder.seq - from;
        self.search.probes += 1;
        if folder.seq != seq {
            return Err(ReplayError::Incomplete {
                seq: folder.seq + 1,
            });
        }
        Ok(folder)
    }

    /// Whether the newest checkpoint at or before `seq` is known without loading it, and is
    /// none or no later than `low_seq` (so the low end is the nearer start).
    fn known_no_later_than(&self, seq: u64, low_seq: u64) -> bool {
        self.known.is_some_and(|(checkpoint, until)| {
            seq <= until && checkpoint.is_none_or(|c| c <= seq && c <= low_seq)
        })
    }
}

/// The first input in `range` after which any of `predicates` holds, folding once, linearly;
/// a predicate may flip back and forth. [`Hit::predicate`] says which held (the first in the
/// list when several start holding at the same input).
///
/// # Errors
/// An empty range, no predicate or too many, or a log that cannot be folded.
pub async fn scan<L: LogReader, P: StatePredicate>(
    log: &L,
    predicates: &[P],
    range: RangeInclusive<u64>,
) -> Result<Search, SearchError> {
    if predicates.is_empty() || predicates.len() > SCAN_PREDICATES_MAX {
        return Err(SearchError::PredicateCount(predicates.len()));
    }
    let (first, until) = clamp(log, &range).await?;
    let mut prober = Prober::new(log, Probe::Nearest);
    let mut folder = prober.state_after(None, first - 1).await?;
    let mut search = prober.search;
    if let Some((predicate, why)) = first_holding(predicates, &folder) {
        search.answer = Answer::AlreadyHeld {
            seq: folder.seq,
            why,
            predicate,
        };
        return Ok(search);
    }
    let mut walk = Walk::new(log, until);
    while let Some(stepped) = walk.step(&mut folder).await? {
        search.inputs_folded += 1;
        search.probes = search.probes.saturating_add(1);
        if let Some((predicate, why)) = first_holding(predicates, &folder) {
            let mut hit = hit_of(&stepped.record, why, predicate);
            hit.cause = cause_of(&stepped, &folder);
            search.answer = Answer::First(hit);
            return Ok(search);
        }
    }
    if folder.seq < until {
        return Err(ReplayError::Incomplete {
            seq: folder.seq + 1,
        }
        .into());
    }
    Ok(search)
}

fn first_holding<P: StatePredicate>(predicates: &[P], folder: &Folder) -> Option<(usize, String)> {
    predicates
        .iter()
        .enumerate()
        .find_map(|(index, p)| p.holds(&folder.state).map(|why| (index, why)))
}

/// The hit at `seq`, the input right after `before`'s state: folded once more from it to
/// tell what else the input set off (not counted as a probe: it only explains the answer).
async fn hit_after<L: LogReader>(
    log: &L,
    before: &Folder,
    seq: u64,
    why: String,
) -> Result<Hit, ReplayError> {
    let mut folder = before.clone();
    let mut walk = Walk::new(log, seq);
    match walk.step(&mut folder).await? {
        Some(stepped) if stepped.seq == seq => {
            let mut hit = hit_of(&stepped.record, why, 0);
            hit.cause = cause_of(&stepped, &folder);
            Ok(hit)
        }
        _ => Err(ReplayError::Incomplete { seq }),
    }
}

/// A cluster the input's fold marked unhealthy because its heartbeat deadline had passed — not
/// the input's own doing: the fold expires every deadline before the first input after it.
fn cause_of(stepped: &walk::Stepped, after: &Folder) -> Option<String> {
    let expired: Vec<String> = stepped
        .decisions
        .iter()
        .filter_map(|decision| match decision {
            Decision::ClusterHealthChanged {
                cluster,
                healthy: false,
                reason,
            } if reason == REASON_HEARTBEAT_TIMEOUT => {
                let deadline = after
                    .state
                    .members()
                    .get(cluster.as_str())
                    .and_then(|m| m.agent.as_ref())
                    .map(|agent| {
                        agent
                            .health_changed_at
                            .to_rfc3339_opts(SecondsFormat::AutoSi, true)
                    });
                Some(match deadline {
                    Some(at) => format!("{cluster}'s heartbeat deadline passed at {at}"),
                    None => format!("{cluster}'s heartbeat deadline passed"),
                })
            }
            _ => None,
        })
        .collect();
    (!expired.is_empty()).then(|| {
        format!(
            "{}; the fold marks a silent cluster unhealthy at the first input after its \
             deadline, whichever input that is",
            expired.join(", ")
        )
    })
}

fn hit_of(record: &flotilla_eventstore::StoredEvent, why: String, predicate: usize) -> Hit {
    Hit {
        seq: record.seq,
        time: record.event().map(|e| e.time),
        event: record_line(record),
        why,
        predicate,
        cause: None,
    }
}

/// One line for any stored record: an event as `flotilla events` prints it; otherwise what
/// the record is.
pub(crate) fn record_line(record: &flotilla_eventstore::StoredEvent) -> String {
    match &record.record {
        LogRecord::Event(envelope) => flotilla_projections::event_line(record.seq, envelope),
        LogRecord::Rejected {
            subject, reason, ..
        } => format!("#{} rejected record on {subject}: {reason}", record.seq),
        LogRecord::Newer { kind, version, .. } => {
            format!(
                "#{} {kind} of version {version}, newer than this build",
                record.seq
            )
        }
    }
}
