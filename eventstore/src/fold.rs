//! [`Folder`]: the one place where stored records meet [`flotilla_core::step`]. The runtime's
//! writer, the scenario runner and every replay fold through it, so they cannot drift apart.
//! It lives with the log because the verdicts it applies besides `step` are the log's: the
//! hub's writer goes from the log to the core's step through it, and replay uses the same one.
//!
//! Beyond `step`, a folder applies the log's own verdicts, which live outside the state:
//! - a record that is not an input this build accepts is answered `Undecodable` and changes
//!   nothing;
//! - an event whose id the log already folded at an earlier sequence (a retry, however late) is
//!   answered `DuplicateEvent` and changes nothing;
//! - an input that was decided before keeps its recorded record-level verdict: a record once
//!   rejected as undecodable or as a duplicate stays rejected, even for a build that could now
//!   decode it, so every build folds the same inputs.

use std::collections::BTreeMap;
use std::collections::btree_map::Entry;

use flotilla_core::codec::CodecError;
use flotilla_core::decision::rejected;
use flotilla_core::wire::{LogRecord, RecordKind};
use flotilla_core::{Decision, Decisions, RejectCode, State};
use uuid::Uuid;

use crate::{Checkpoint, DecisionBatch, EncodedCheckpoint, LogError, LogReader, StoredEvent};

pub mod about;

use about::About;

/// The target of the fold's trace spans and events: the one they had when the fold was
/// replay's, which log filters name (`flotilla_replay=trace`, `docs/observability.md`).
const TRACE_TARGET: &str = "flotilla_replay::folder";

/// Events read per round trip when folding a log.
pub const READ_BATCH_MAX: usize = 1_000;

/// Why folding stopped. Replay's `ReplayError` has the same variants and converts from it.
#[derive(Debug, thiserror::Error)]
pub enum FoldError {
    /// The log could not be read.
    #[error(transparent)]
    Log(#[from] LogError),
    /// The state could not be hashed or encoded.
    #[error(transparent)]
    Codec(#[from] CodecError),
    /// The log skipped a sequence number.
    #[error("the log jumps from sequence {folded} to {found}")]
    Gap {
        /// Last folded sequence.
        folded: u64,
        /// Sequence found next.
        found: u64,
    },
    /// The log holds a record written by a newer flotilla: this build must not decide it.
    #[error("input {seq} is a {kind} of version {version}, newer than this build reads")]
    Newer {
        /// Its sequence.
        seq: u64,
        /// Its record kind.
        kind: RecordKind,
        /// Its version.
        version: u16,
    },
}

/// State plus the sequence it has folded up to. Every input is folded by the core's
/// [`flotilla_core::step`] itself: there is no other step to fold with, so what replay and
/// `verify` recompute is what the hub's writer decides.
#[derive(Debug, Clone, Default)]
pub struct Folder {
    /// The folded state.
    pub state: State,
    /// The last folded input sequence (0 = nothing).
    pub seq: u64,
    /// Records of a newer build at or before this sequence are rejected as undecodable
    /// instead of stopping the fold: the writer found that no hub of a newer build announced
    /// itself, so such a record is a publisher's, not a rolling upgrade's.
    reject_newer_through: u64,
}

/// What the log knows about one input besides its record.
#[derive(Debug, Clone, Copy, Default)]
pub struct Known<'a> {
    /// The sequence at which its event id was first folded, when that is earlier than its own.
    pub first_seq: Option<u64>,
    /// The decisions recorded for it, when it was decided before.
    pub recorded: Option<&'a Decisions>,
}

/// What folding a page of records did.
#[derive(Debug, Default)]
pub struct Folded {
    /// Every folded input's decisions, ascending (inputs that decided nothing included).
    pub decisions: Vec<(u64, Decisions)>,
    /// `(event id, sequence)` of every event folded for the first time: what the log's id index
    /// must remember before these decisions are recorded.
    pub first_seen: Vec<(Uuid, u64)>,
    /// The fold stopped before a record of a newer build ([`FoldError::Newer`]).
    pub stopped: Option<FoldError>,
}

impl Folder {
    /// Starts from a checkpoint.
    #[must_use]
    pub fn from_checkpoint(checkpoint: Checkpoint) -> Self {
        Self {
            state: checkpoint.state,
            seq: checkpoint.seq,
            ..Self::default()
        }
    }

    /// Rejects the records of a newer build through `seq` instead of stopping before them (see
    /// [`LogReader::newer_build`]).
    pub fn reject_newer_through(&mut self, seq: u64) {
        self.reject_newer_through = self.reject_newer_through.max(seq);
    }

    /// Folds one stored record with nothing known about it beyond the record.
    ///
    /// # Errors
    /// As [`Folder::fold_known`].
    pub fn fold(&mut self, event: &StoredEvent) -> Result<Decisions, FoldError> {
        self.fold_known(event, Known::default())
    }

    /// Folds one stored record, which must be the next in sequence, applying the log's verdicts
    /// (module docs).
    ///
    /// # Errors
    /// [`FoldError::Gap`] when the record is not `seq + 1`; [`FoldError::Newer`] for a
    /// record of a newer build (nothing is folded).
    pub fn fold_known(
        &mut self,
        event: &StoredEvent,
        known: Known<'_>,
    ) -> Result<Decisions, FoldError> {
        if event.seq != self.seq + 1 {
            return Err(FoldError::Gap {
                folded: self.seq,
                found: event.seq,
            });
        }
        let decisions = match (
            &event.record,
            known.recorded.filter(|d| is_record_verdict(d)),
        ) {
            // A verdict recorded for the record is followed first: a newer record that a
            // writer rejected stays rejected for every build.
            (_, Some(verdict)) => verdict.clone(),
            (LogRecord::Newer { kind, version, .. }, None)
                if event.seq <= self.reject_newer_through =>
            {
                vec![rejected(
                    RejectCode::Undecodable,
                    format!(
                        "record {}: a {kind} of version {version}, newer than this build \
                         reads, and no hub of a newer build announced itself; a frame on the \
                         input stream never hands over the writer role",
                        event.seq
                    ),
                )]
            }
            (LogRecord::Newer { kind, version, .. }, None) => {
                return Err(FoldError::Newer {
                    seq: event.seq,
                    kind: *kind,
                    version: *version,
                });
            }
            (
                LogRecord::Rejected {
                    subject, reason, ..
                },
                None,
            ) => vec![rejected(
                RejectCode::Undecodable,
                format!("record {} on {subject}: {reason}", event.seq),
            )],
            (LogRecord::Event(envelope), None) => match known.first_seq {
                Some(first) if first < event.seq => vec![rejected(
                    RejectCode::DuplicateEvent,
                    format!(
                        "event {} was already folded at sequence {first}; this copy changes nothing",
                        envelope.id
                    ),
                )],
                _ => {
                    let _span = fold_span(event.seq, envelope).entered();
                    let decisions = flotilla_core::step(&mut self.state, envelope);
                    check_invariants(&self.state, event.seq);
                    trace_decisions(&decisions);
                    decisions
                }
            },
        };
        self.seq = event.seq;
        Ok(decisions)
    }

    /// Folds a page of consecutive records: asks the log which event ids it folded before
    /// ([`first_folded`]), then [`Folder::fold_records`].
    ///
    /// # Errors
    /// A log failure or a gap.
    pub async fn fold_page<L: LogReader>(
        &mut self,
        log: &L,
        events: &[StoredEvent],
        recorded: &[DecisionBatch],
    ) -> Result<Folded, FoldError> {
        let first = first_folded(log, events).await?;
        self.fold_records(events, first, recorded)
    }

    /// Folds consecutive records given the sequences at which the log first folded their event
    /// ids (`first`), catching duplicates within the page too, and following `recorded`
    /// verdicts for inputs decided before. Stops before a newer build's record
    /// ([`Folded::stopped`]).
    ///
    /// # Errors
    /// A gap.
    pub fn fold_records(
        &mut self,
        events: &[StoredEvent],
        mut first: BTreeMap<Uuid, u64>,
        recorded: &[DecisionBatch],
    ) -> Result<Folded, FoldError> {
        self.fold_records_with(events, &mut first, recorded)
    }

    /// As [`Folder::fold_records`], adding the ids folded for the first time to `first`: a
    /// page folded in parts passes the same map to each part.
    ///
    /// # Errors
    /// A gap.
    pub fn fold_records_with(
        &mut self,
        events: &[StoredEvent],
        first: &mut BTreeMap<Uuid, u64>,
        recorded: &[DecisionBatch],
    ) -> Result<Folded, FoldError> {
        let page = match (events.first(), events.last()) {
            (Some(first), Some(last)) => first.seq..=last.seq,
            _ => return Ok(Folded::default()),
        };
        let recorded = Recorded::of(recorded, page);
        let mut folded = Folded::default();
        for event in events {
            // One search of `first` per event: the entry tells whether the id was seen, and a
            // vacant one takes this sequence once the event has folded.
            let entry = event
                .record
                .event()
                .map(|envelope| first.entry(envelope.id));
            let first_seq = match &entry {
                Some(Entry::Occupied(seen)) => Some(*seen.get()),
                Some(Entry::Vacant(_)) | None => None,
            };
            let known = Known {
                first_seq,
                recorded: recorded.get(event.seq),
            };
            match self.fold_known(event, known) {
                Ok(decisions) => folded.decisions.push((event.seq, decisions)),
                Err(newer @ FoldError::Newer { .. }) => {
                    folded.stopped = Some(newer);
                    break;
                }
                Err(error) => return Err(error),
            }
            if let Some(Entry::Vacant(unseen)) = entry {
                folded.first_seen.push((*unseen.key(), event.seq));
                unseen.insert(event.seq);
            }
        }
        Ok(folded)
    }

    /// A checkpoint of the current state.
    ///
    /// # Errors
    /// When the state cannot be encoded for hashing.
    pub fn checkpoint(&self) -> Result<Checkpoint, FoldError> {
        Ok(Checkpoint {
            seq: self.seq,
            hash: self.state.hash()?,
            state: self.state.clone(),
        })
    }

    /// The checkpoint of the folded state, encoded once for storing
    /// ([`crate::EventLog::save_encoded_checkpoint`]).
    ///
    /// # Errors
    /// When the state cannot be encoded.
    pub fn encoded_checkpoint(&self) -> Result<EncodedCheckpoint, FoldError> {
        Ok(flotilla_core::wire::checkpoint::encode_once(
            self.seq,
            &self.state,
        )?)
    }

    /// The folded sequence and a snapshot of the state ([`State::snapshot`]), to encode a
    /// checkpoint from elsewhere while this folder folds on.
    #[must_use]
    pub fn checkpoint_snapshot(&self) -> (u64, State) {
        (self.seq, self.state.snapshot())
    }

    /// Folds the log forward up to `until` (inclusive), returning every input's decisions.
    ///
    /// # Errors
    /// A log read failure, a gap, or a newer build's record before `until`.
    pub async fn catch_up<L: LogReader>(
        &mut self,
        log: &L,
        until: u64,
    ) -> Result<Vec<(u64, Decisions)>, FoldError> {
        self.catch_up_following(log, until, &[]).await
    }

    /// As [`Folder::catch_up`], following the record-level verdicts of `recorded` batches.
    ///
    /// # Errors
    /// As [`Folder::catch_up`].
    pub async fn catch_up_following<L: LogReader>(
        &mut self,
        log: &L,
        until: u64,
        recorded: &[DecisionBatch],
    ) -> Result<Vec<(u64, Decisions)>, FoldError> {
        let mut out = Vec::new();
        let mut prefetched: Option<(u64, Vec<StoredEvent>)> = None;
        while self.seq < until {
            let from = self.seq + 1;
            let mut events = match prefetched.take() {
                Some((at, events)) if at == from => events,
                _ => log.read(from, page_up_to(self.seq, until)).await?,
            };
            if events.is_empty() {
                break;
            }
            events.retain(|e| e.seq <= until);
            let last = events.last().map_or(self.seq, |e| e.seq);
            // The next page is read while this one folds: a store that reads on its own
            // thread (redb, NATS) then overlaps its reading with the fold.
            let next = async {
                if last >= until {
                    return Ok(None);
                }
                log.read(last + 1, page_up_to(last, until))
                    .await
                    .map(|events| Some((last + 1, events)))
            };
            let (next, folded) = tokio::join!(next, self.fold_page(log, &events, recorded));
            let folded = folded?;
            out.extend(folded.decisions);
            if let Some(newer) = folded.stopped {
                return Err(newer);
            }
            prefetched = next?;
        }
        Ok(out)
    }
}

/// How many inputs to read after `seq`: a page, but never past `until` — a caller going batch
/// by batch (verify, a follower) would otherwise read a whole page per batch and keep a few
/// records of it.
fn page_up_to(seq: u64, until: u64) -> usize {
    usize::try_from(until.saturating_sub(seq))
        .map_or(READ_BATCH_MAX, |left| left.min(READ_BATCH_MAX))
}

/// Debug builds (every test, scenario run and replay in tests) check the state's invariants
/// after every step; a broken one is a bug in the fold, named with the input that broke it.
#[cfg(debug_assertions)]
fn check_invariants(state: &State, seq: u64) {
    if let Err(violation) = flotilla_core::invariants::check(state) {
        panic!("input {seq}: invariant broken: {violation}");
    }
}

#[cfg(not(debug_assertions))]
fn check_invariants(_state: &State, _seq: u64) {}

/// The sequences at which the log first folded the event ids of `events` (those it knows);
/// none to ask for on a log whose appends already refused every repeat.
///
/// # Errors
/// When the log cannot answer.
pub async fn first_folded<L: LogReader>(
    log: &L,
    events: &[StoredEvent],
) -> Result<BTreeMap<Uuid, u64>, FoldError> {
    if log.deduplicates_every_append() {
        return Ok(BTreeMap::new());
    }
    let ids: Vec<Uuid> = events
        .iter()
        .filter_map(|e| e.record.event().map(|envelope| envelope.id))
        .collect();
    if ids.is_empty() {
        return Ok(BTreeMap::new());
    }
    Ok(log.first_seq_of(&ids).await?)
}

/// A decision list that is a verdict on the record itself, not on what it asks: later builds
/// follow it rather than folding the record again.
fn is_record_verdict(decisions: &Decisions) -> bool {
    matches!(
        decisions.as_slice(),
        [Decision::Rejected {
            code: RejectCode::Undecodable | RejectCode::DuplicateEvent,
            ..
        }]
    )
}

/// The recorded decisions of a page's inputs, looked up by sequence. Batches come from the
/// log in order and without overlap, so a lookup is a binary search over them: a page is
/// folded many times per read of batches (a replay reads a thousand batches, then folds their
/// inputs page by page), so only the batches that overlap the page are checked, and copying
/// every decided input into a map for each page made a long replay's cost grow with the
/// square of its length. Batches out of order (a caller's own list) are put in a map.
enum Recorded<'a> {
    Ordered(&'a [DecisionBatch]),
    Mapped(BTreeMap<u64, &'a Decisions>),
}

impl<'a> Recorded<'a> {
    fn of(batches: &'a [DecisionBatch], page: std::ops::RangeInclusive<u64>) -> Self {
        let in_order = batches
            .windows(2)
            .all(|pair| pair[0].last_input_seq < pair[1].first_input_seq);
        if in_order {
            let from = batches.partition_point(|batch| batch.last_input_seq < *page.start());
            let to = batches.partition_point(|batch| batch.first_input_seq <= *page.end());
            let overlapping = batches.get(from..to).unwrap_or_default();
            let sorted_within = overlapping.iter().all(|batch| {
                batch.decisions.windows(2).all(|pair| pair[0].0 < pair[1].0)
                    && batch.decisions.iter().all(|(seq, _)| {
                        (batch.first_input_seq..=batch.last_input_seq).contains(seq)
                    })
            });
            if sorted_within {
                return Recorded::Ordered(overlapping);
            }
        }
        Recorded::Mapped(
            batches
                .iter()
                .flat_map(|batch| batch.decisions.iter())
                .filter(|(seq, _)| page.contains(seq))
                .map(|(seq, decisions)| (*seq, decisions))
                .collect(),
        )
    }

    fn get(&self, seq: u64) -> Option<&'a Decisions> {
        match self {
            Recorded::Mapped(map) => map.get(&seq).copied(),
            Recorded::Ordered(batches) => {
                let at = batches.partition_point(|batch| batch.last_input_seq < seq);
                let batch = batches.get(at)?;
                let found = batch.decisions.binary_search_by_key(&seq, |(seq, _)| *seq);
                found.ok().map(|index| &batch.decisions[index].1)
            }
        }
    }
}

/// The `trace`-level span of one input's fold: its sequence and kind, and the placement and
/// cluster it names. Naming them costs a lookup, so it is done only when the span is enabled.
fn fold_span(seq: u64, envelope: &flotilla_core::Envelope) -> tracing::Span {
    use tracing::field::Empty;
    let span = tracing::trace_span!(
        target: TRACE_TARGET,
        "fold",
        seq,
        kind = envelope.payload.kind_name(),
        placement = Empty,
        cluster = Empty
    );
    if !span.is_disabled() {
        let about = About::of_input(&envelope.payload);
        if let Some(placement) = &about.placement {
            span.record("placement", tracing::field::display(placement));
        }
        if let Some(cluster) = &about.cluster {
            span.record("cluster", cluster.as_str());
        }
    }
    span
}

/// One `trace` event per decision, inside the input's span, naming its kind and what it names.
fn trace_decisions(decisions: &[Decision]) {
    if !tracing::enabled!(target: TRACE_TARGET, tracing::Level::TRACE) {
        return;
    }
    for decision in decisions {
        let about = About::of_decision(decision);
        tracing::trace!(
            target: TRACE_TARGET,
            kind = decision.kind_name(),
            placement = about.placement.as_ref().map(tracing::field::display),
            cluster = about.cluster.as_deref(),
            "decided"
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn batch(first: u64, last: u64, decided: &[u64]) -> DecisionBatch {
        DecisionBatch {
            version: flotilla_core::wire::DECISION_VERSION,
            first_input_seq: first,
            last_input_seq: last,
            decisions: decided
                .iter()
                .map(|seq| (*seq, vec![verdict(*seq)]))
                .collect(),
        }
    }

    fn verdict(seq: u64) -> Decision {
        rejected(RejectCode::DuplicateEvent, format!("#{seq}"))
    }

    fn found(recorded: &Recorded<'_>, seq: u64) -> Option<String> {
        recorded.get(seq).map(|decisions| format!("{decisions:?}"))
    }

    #[test]
    fn recorded_verdicts_are_found_in_ordered_and_unordered_batches() {
        let ordered = [batch(1, 3, &[2]), batch(4, 9, &[4, 7, 9])];
        let unordered = [batch(4, 9, &[4, 7, 9]), batch(1, 3, &[2])];
        let lookups = [
            Recorded::of(&ordered, 0..=10),
            Recorded::of(&unordered, 0..=10),
        ];
        assert!(matches!(lookups[0], Recorded::Ordered(_)));
        assert!(matches!(lookups[1], Recorded::Mapped(_)));
        for recorded in &lookups {
            for seq in [2, 4, 7, 9] {
                let expected = format!("{:?}", vec![verdict(seq)]);
                assert_eq!(found(recorded, seq), Some(expected), "#{seq}");
            }
            for seq in [0, 1, 3, 5, 6, 8, 10] {
                assert_eq!(found(recorded, seq), None, "#{seq}");
            }
        }
    }

    #[test]
    fn a_page_looks_only_at_the_batches_it_overlaps() {
        let batches = [
            batch(1, 3, &[2]),
            batch(4, 9, &[4, 7, 9]),
            batch(10, 12, &[11]),
        ];
        let recorded = Recorded::of(&batches, 5..=8);
        assert!(matches!(recorded, Recorded::Ordered(found) if found.len() == 1));
        assert!(found(&recorded, 7).is_some());
        let unordered = [batch(4, 9, &[4, 7, 9]), batch(1, 3, &[2])];
        let recorded = Recorded::of(&unordered, 2..=4);
        assert!(found(&recorded, 2).is_some() && found(&recorded, 4).is_some());
        assert_eq!(found(&recorded, 7), None, "outside the page");
    }
}
