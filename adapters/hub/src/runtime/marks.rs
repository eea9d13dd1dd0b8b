//! The marks on the web page's time slider: runs started, succeeded or failed, approvals
//! requested and given, newest first, with their inputs' times. They come from decisions, the
//! log's own record, so a run deleted since keeps its marks. The view notes those of every
//! input this process folds; the older ones — through the sequence the hub restored its state
//! at — are read from the log's decisions once, when first asked for. Each input's time is
//! read once and kept while its mark is answered.

use std::collections::BTreeMap;
use std::sync::Mutex;

use chrono::{DateTime, Utc};
use flotilla_eventstore::{EventLog, LogError};
use flotilla_projections::{MARKS_MAX, Mark, Marks};
use tokio::sync::OnceCell;

use super::hub::{Hub, HubError};

/// Decision batches read at a time while reading older marks.
const BATCHES_PER_READ: usize = 64;

/// The marks of the inputs folded before this process began, and the times of marked inputs.
#[derive(Debug)]
pub(crate) struct Before {
    /// The last input the restored state had folded.
    through: u64,
    /// Their newest marks, newest first, once read.
    marks: OnceCell<Vec<Mark>>,
    /// Input times already read, by sequence.
    times: Mutex<BTreeMap<u64, DateTime<Utc>>>,
}

impl Before {
    /// Marks of the inputs through `through`, not read yet.
    pub(crate) fn through(through: u64) -> Self {
        Self {
            through,
            marks: OnceCell::new(),
            times: Mutex::new(BTreeMap::new()),
        }
    }
}

/// A mark with the time of the input that made it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TimedMark {
    /// The mark.
    pub mark: Mark,
    /// Its input's time.
    pub time: DateTime<Utc>,
}

impl<L: EventLog> Hub<L> {
    /// The newest [`MARKS_MAX`] marks, newest first; a mark whose input a retention window
    /// removed is left out.
    ///
    /// # Errors
    /// When the log cannot be read.
    pub async fn marks(&self) -> Result<Vec<TimedMark>, HubError> {
        let live: Vec<Mark> = {
            let view = self.view()?;
            view.marks.newest_first().cloned().collect()
        };
        let before = &self.marks_before;
        let older = (before.marks)
            .get_or_try_init(|| older_marks(self.log.as_ref(), before.through))
            .await?;
        let chosen: Vec<Mark> = live
            .into_iter()
            .chain(older.iter().cloned())
            .take(MARKS_MAX)
            .collect();
        let known = before
            .times
            .lock()
            .map(|times| times.clone())
            .unwrap_or_default();
        let mut timed = Vec::with_capacity(chosen.len());
        let mut times = BTreeMap::new();
        for mark in chosen {
            let time = match known.get(&mark.seq) {
                Some(time) => Some(*time),
                None => input_time(self.log.as_ref(), mark.seq).await?,
            };
            if let Some(time) = time {
                times.insert(mark.seq, time);
                timed.push(TimedMark { mark, time });
            }
        }
        if let Ok(mut kept) = before.times.lock() {
            *kept = times;
        }
        Ok(timed)
    }
}

/// The newest marks of the inputs through `through`, newest first.
async fn older_marks<L: EventLog>(log: &L, through: u64) -> Result<Vec<Mark>, LogError> {
    let mut marks = Marks::default();
    let mut from = 1;
    while from <= through {
        let batches = log.read_decisions(from, BATCHES_PER_READ).await?;
        let Some(last) = batches.last().map(|batch| batch.last_input_seq) else {
            break;
        };
        for (seq, decisions) in batches.iter().flat_map(|batch| &batch.decisions) {
            if *seq <= through {
                marks.note(*seq, decisions);
            }
        }
        from = last + 1;
    }
    Ok(marks.newest_first().cloned().collect())
}

/// The time of input `seq`; `None` when the log no longer holds it.
async fn input_time<L: EventLog>(log: &L, seq: u64) -> Result<Option<DateTime<Utc>>, LogError> {
    let records = log.read(seq, 1).await?;
    Ok(records
        .first()
        .filter(|record| record.seq == seq)
        .and_then(|record| record.event().map(|event| event.time)))
}
