//! A watch from a past point (`?watch=true&at=SEQ|TIME`, flotilla's time travel): the stream
//! starts with an `ADDED` for every object as it was after that point, then folds the log on
//! from there input by input and sends what each input changed, as it happened, until it has
//! caught up with the hub; then it follows the hub live like any watch. History is refolded
//! from the newest checkpoint before the point, following the log's recorded verdicts, so a
//! client sees exactly the states the hub went through.
//!
//! Each input re-renders the watched kind (as a live fold does), so replaying a long stretch
//! costs one rendering per input; the watch's timeout bounds it.

use std::collections::BTreeMap;

use axum::body::Bytes;
use flotilla_eventstore::LogReader;
use flotilla_eventstore::fold::{FoldError, Folder, first_folded};
use tokio::sync::mpsc::Sender;

use super::watch_lines::{Known, Watch, changes, send_all};

/// Inputs read from the log per page while replaying.
const PAGE: usize = 256;

/// How a replay ended.
pub(super) enum Replayed {
    /// Caught up with `until`: go on live.
    CaughtUp,
    /// The client left or the deadline passed.
    Stopped,
}

/// Folds `folder` on to `until` one input at a time, sending the changes each made to the
/// watched objects in `known`.
///
/// # Errors
/// A log that cannot be read or folded.
pub(super) async fn replay<L: LogReader>(
    log: &L,
    folder: &mut Folder,
    until: u64,
    (watch, known): (&Watch, &mut Known),
    sender: &Sender<Bytes>,
    deadline: tokio::time::Instant,
) -> Result<Replayed, FoldError> {
    while folder.seq < until {
        if tokio::time::Instant::now() >= deadline {
            return Ok(Replayed::Stopped);
        }
        let mut events = log.read(folder.seq + 1, PAGE).await?;
        events.retain(|event| event.seq <= until);
        if events.is_empty() {
            break;
        }
        // The recorded verdicts of these inputs (undecodable, duplicate) are followed.
        let recorded = log.read_decisions(folder.seq + 1, PAGE).await?;
        let first = first_folded(log, &events).await?;
        for event in &events {
            let first_of_this: BTreeMap<_, _> = event
                .record
                .event()
                .and_then(|envelope| first.get_key_value(&envelope.id))
                .map(|(id, seq)| (*id, *seq))
                .into_iter()
                .collect();
            let folded =
                folder.fold_records(std::slice::from_ref(event), first_of_this, &recorded)?;
            if let Some(stopped) = folded.stopped {
                return Err(stopped);
            }
            let lines = changes(&folder.state, watch, known);
            if !send_all(sender, lines).await {
                return Ok(Replayed::Stopped);
            }
        }
    }
    Ok(Replayed::CaughtUp)
}
