//! `replay export` and `replay import`: a log and its decisions as JSON lines, and back; the
//! hub serves the same lines at `GET /v1/log/export` (what `replay --server` reads).
//!
//! The file's first line is `{"flotillaExport": 1, "lastSeq": N, "decidedSeq": D}`; then one
//! line per input record in sequence order — `{"seq", "event"}` with the event in its listed
//! JSON form (`flotilla events -o json`: `time` is the log's, `claimedTime` the claim), or
//! `{"seq", "rejected": {"subject", "reason", "bytes"}}` with the stored bytes in base64 for a
//! record that has no JSON form — and then one line per decision batch,
//! `{"batch": {"version", "firstInputSeq", "lastInputSeq", "decisions": [{"seq",
//! "decisions"}]}}`. Import appends the records with their ids and times as given (a rejected
//! record's bytes as they were) and the batches in order, so the rebuilt log folds to the same
//! states; a batch is stored under this build's decision version.

use std::io::{BufRead, BufWriter, Write};
use std::path::Path;

use anyhow::{Context, bail};
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use flotilla_core::Decisions;
use flotilla_core::wire::LogRecord;
use flotilla_core::wire::json::{JsonDefaults, JsonEnvelope, stream_record_id};
use flotilla_eventstore::redb_log::{RedbLog, RedbOptions};
use flotilla_eventstore::{AppendTime, DecisionBatch, EventLog, LogReader, StoredEvent};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// The export format's version (the first line's `flotillaExport`).
pub const EXPORT_VERSION: u64 = 1;
/// Records read per page while exporting.
const PAGE: usize = 1_000;

/// One decision batch as exported.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct ExportedBatch {
    version: u16,
    first_input_seq: u64,
    last_input_seq: u64,
    decisions: Vec<ExportedDecisions>,
}

/// The decisions of one input.
#[derive(Debug, Serialize, Deserialize)]
struct ExportedDecisions {
    seq: u64,
    decisions: Decisions,
}

/// Writes `log` to `to`; returns how many records and batches it wrote.
///
/// # Errors
/// When the log cannot be read, holds a record of a newer build, or the file cannot be
/// written.
pub async fn export<L: LogReader>(log: &L, to: &Path) -> anyhow::Result<(u64, u64)> {
    let file = std::fs::File::create(to).with_context(|| format!("creating {}", to.display()))?;
    let mut out = BufWriter::new(file);
    let mut pages = ExportPages::open(log).await?;
    while let Some(page) = pages.next_page().await? {
        out.write_all(page.as_bytes())?;
    }
    out.flush()?;
    Ok((pages.records, pages.batches))
}

/// A log's export, a page of lines at a time: the header, then its input records, then its
/// decision batches. `R` is what reaches the log (`&L` for a command, an `Arc<L>` for the
/// hub's `GET /v1/log/export`, which streams it).
pub struct ExportPages<R> {
    log: R,
    last: u64,
    decided: u64,
    header: Option<String>,
    next_record: u64,
    next_batch: u64,
    /// Input records written so far.
    pub records: u64,
    /// Decision batches written so far.
    pub batches: u64,
}

impl<R, L> ExportPages<R>
where
    R: std::ops::Deref<Target = L>,
    L: LogReader + ?Sized,
{
    /// Starts the export of the log as it is now: what is appended later is not in it.
    ///
    /// # Errors
    /// When the log cannot be read.
    pub async fn open(log: R) -> anyhow::Result<Self> {
        let last = log.last_seq().await?;
        let decided = log.last_decided_seq().await?;
        let header =
            json!({"flotillaExport": EXPORT_VERSION, "lastSeq": last, "decidedSeq": decided});
        Ok(Self {
            log,
            last,
            decided,
            header: Some(format!("{header}\n")),
            next_record: 1,
            next_batch: 1,
            records: 0,
            batches: 0,
        })
    }

    /// The next page of lines, each ending in a newline; `None` at the end.
    ///
    /// # Errors
    /// When the log cannot be read or holds a record of a newer build.
    pub async fn next_page(&mut self) -> anyhow::Result<Option<String>> {
        if let Some(header) = self.header.take() {
            return Ok(Some(header));
        }
        let mut text = String::new();
        if self.next_record <= self.last {
            let page = self.log.read(self.next_record, PAGE).await?;
            if let Some(end) = page.last().map(|record| record.seq) {
                for record in &page {
                    text.push_str(&format!("{}\n", exported_record(record)?));
                }
                self.records += page.len() as u64;
                self.next_record = end + 1;
                return Ok(Some(text));
            }
            self.next_record = self.last + 1;
        }
        if self.next_batch <= self.decided {
            let page = self.log.read_decisions(self.next_batch, PAGE).await?;
            if let Some(end) = page.last().map(|batch| batch.last_input_seq) {
                for batch in page {
                    text.push_str(&format!("{}\n", json!({"batch": exported_batch(batch)})));
                    self.batches += 1;
                }
                self.next_batch = end + 1;
                return Ok(Some(text));
            }
        }
        Ok(None)
    }
}

fn exported_record(record: &StoredEvent) -> anyhow::Result<Value> {
    Ok(match &record.record {
        LogRecord::Event(envelope) => {
            json!({"seq": record.seq, "event": JsonEnvelope::from_envelope(envelope)})
        }
        LogRecord::Rejected {
            subject,
            reason,
            bytes,
        } => json!({"seq": record.seq, "rejected": {
            "subject": subject, "reason": reason, "bytes": STANDARD.encode(bytes)}}),
        // Exported as stored, so an import stores the same bytes; whether it is decided or
        // rejected is what the exported decisions say.
        LogRecord::Newer {
            kind,
            version,
            subject,
            bytes,
        } => json!({"seq": record.seq, "rejected": {
            "subject": subject,
            "reason": format!("a {} of version {version}, newer than this build reads", kind.name()),
            "bytes": STANDARD.encode(bytes)}}),
    })
}

fn exported_batch(batch: DecisionBatch) -> ExportedBatch {
    ExportedBatch {
        version: batch.version,
        first_input_seq: batch.first_input_seq,
        last_input_seq: batch.last_input_seq,
        decisions: batch
            .decisions
            .into_iter()
            .map(|(seq, decisions)| ExportedDecisions { seq, decisions })
            .collect(),
    }
}

/// Rebuilds the exported log in `file` into a fresh redb data directory `data`; returns how
/// many records and batches it wrote.
///
/// # Errors
/// When the file is malformed (naming its line), the directory already holds a log, or
/// storage fails.
pub async fn import(file: &Path, data: &Path) -> anyhow::Result<(u64, u64)> {
    std::fs::create_dir_all(data).with_context(|| format!("creating {}", data.display()))?;
    let path = data.join(crate::store::LOG_FILE);
    let log = RedbLog::open(&path, RedbOptions::default())?;
    if log.last_seq().await? > 0 {
        bail!(
            "{} already holds a log; import into a fresh directory",
            path.display()
        );
    }
    let reader = std::io::BufReader::new(
        std::fs::File::open(file).with_context(|| format!("opening {}", file.display()))?,
    );
    let mut importer = Importer::new(&log);
    for (index, line) in reader.lines().enumerate() {
        let line =
            line.with_context(|| format!("{}: reading line {}", file.display(), index + 1))?;
        importer
            .line(index + 1, &line)
            .await
            .with_context(|| format!("{}: line {}", file.display(), index + 1))?;
    }
    importer.finish().await?;
    let counts = (importer.records, importer.batches);
    log.close()?;
    Ok(counts)
}

/// Import state: events are appended in pages, each page checked to land at its sequences.
struct Importer<'a> {
    log: &'a RedbLog,
    pending: Vec<(u64, flotilla_core::Envelope)>,
    records: u64,
    batches: u64,
}

impl<'a> Importer<'a> {
    fn new(log: &'a RedbLog) -> Self {
        Self {
            log,
            pending: Vec::new(),
            records: 0,
            batches: 0,
        }
    }

    async fn line(&mut self, number: usize, line: &str) -> anyhow::Result<()> {
        let value: Value = serde_json::from_str(line).context("not JSON")?;
        if number == 1 {
            return check_header(&value);
        }
        if let Some(batch) = value.get("batch") {
            self.flush().await?;
            return self.batch(batch.clone()).await;
        }
        let seq = value["seq"].as_u64().context("no `seq`")?;
        if seq != self.records + self.pending.len() as u64 + 1 {
            bail!("record {seq} is out of order");
        }
        if let Some(event) = value.get("event") {
            let listed: JsonEnvelope =
                serde_json::from_value(event.clone()).context("`event` is not an event")?;
            // A listed event carries its id, time and source; these only fill a gap.
            let defaults = JsonDefaults {
                id: stream_record_id(seq),
                time: chrono::DateTime::<chrono::Utc>::UNIX_EPOCH,
                source: "",
            };
            self.pending
                .push((seq, listed.into_logged_envelope(&defaults)));
            if self.pending.len() >= PAGE {
                self.flush().await?;
            }
            return Ok(());
        }
        let rejected = value
            .get("rejected")
            .context("neither `event` nor `rejected`")?;
        let bytes = STANDARD
            .decode(rejected["bytes"].as_str().unwrap_or_default())
            .context("`rejected.bytes` is not base64")?;
        self.flush().await?;
        let stored = self.log.append_as_is(vec![bytes]).await?;
        expect_at(&stored, &[seq])?;
        self.records += 1;
        Ok(())
    }

    async fn flush(&mut self) -> anyhow::Result<()> {
        if self.pending.is_empty() {
            return Ok(());
        }
        let (seqs, events): (Vec<u64>, Vec<_>) =
            std::mem::take(&mut self.pending).into_iter().unzip();
        let stored = self.log.append(events, AppendTime::AsGiven).await?;
        expect_at(&stored, &seqs)?;
        self.records += seqs.len() as u64;
        Ok(())
    }

    async fn batch(&mut self, batch: Value) -> anyhow::Result<()> {
        let batch: ExportedBatch = serde_json::from_value(batch).context("malformed `batch`")?;
        self.log
            .append_decisions(&DecisionBatch {
                version: batch.version,
                first_input_seq: batch.first_input_seq,
                last_input_seq: batch.last_input_seq,
                decisions: batch
                    .decisions
                    .into_iter()
                    .map(|d| (d.seq, d.decisions))
                    .collect(),
            })
            .await?;
        self.batches += 1;
        Ok(())
    }

    async fn finish(&mut self) -> anyhow::Result<()> {
        self.flush().await
    }
}

fn check_header(value: &Value) -> anyhow::Result<()> {
    match value.get("flotillaExport").and_then(Value::as_u64) {
        Some(EXPORT_VERSION) => Ok(()),
        Some(other) => bail!("export format {other}; this build reads {EXPORT_VERSION}"),
        None => bail!("not a flotilla export (no `flotillaExport` header)"),
    }
}

/// Checks that records landed at the sequences they had (a duplicate id would not).
fn expect_at(stored: &[flotilla_eventstore::Appended], seqs: &[u64]) -> anyhow::Result<()> {
    for (appended, seq) in stored.iter().zip(seqs) {
        if appended.duplicate || appended.seq != *seq {
            bail!(
                "record {seq} landed at {} (a repeated event id?)",
                appended.seq
            );
        }
    }
    Ok(())
}
