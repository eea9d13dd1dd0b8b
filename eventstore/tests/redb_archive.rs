//! The archive (`RedbOptions::archive`): what a short retention window removes from a redb log
//! is in the archive's segments first, which cover exactly the removed inputs; the archive and
//! the log read as one log fold from zero to the state of a log that kept everything; an
//! archive begun on a log that already had a base holds that base's checkpoint and folds from
//! it; a segment of a cut that did not commit is ignored, then replaced; an archive that cannot
//! be written removes nothing; and a flipped byte in a segment is found.

use std::error::Error;
use std::path::{Path, PathBuf};

use chrono::{DateTime, Duration, Utc};
use flotilla_core::{Envelope, Heartbeat, Input, StateHash};
use flotilla_eventstore::fold::Folder;
use flotilla_eventstore::redb_log::archive::{ArchiveInfo, ArchivedLog};
use flotilla_eventstore::redb_log::reader::RedbReader;
use flotilla_eventstore::redb_log::{RedbLog, RedbOptions};
use flotilla_eventstore::{AppendTime, DecisionBatch, EventLog, LogReader};
use redb::{ReadableDatabase, ReadableTable, TableDefinition};
use uuid::Uuid;

type TestResult<T = ()> = Result<T, Box<dyn Error>>;

/// Input `n`, `n` seconds into the log: one of seven namespaces applied every tenth (the
/// state, and so its checkpoints, stay small), else a heartbeat of
/// one of five clusters (no cluster is a member: each is rejected, a decision to record).
fn input(n: u64) -> Envelope {
    let time = DateTime::<Utc>::from_timestamp(1_741_820_400 + i64::try_from(n).unwrap_or(0), 0)
        .unwrap_or_default();
    let payload = if n.is_multiple_of(10) {
        let manifest = format!(
            r#"{{"apiVersion":"v1","kind":"Namespace","metadata":{{"name":"ns-{}","labels":{{"n":"{n}"}}}}}}"#,
            n % 7
        );
        Input::Apply { manifest }
    } else {
        Input::Heartbeat(Heartbeat {
            cluster: format!("member-{}", n % 5),
            ..Default::default()
        })
    };
    Envelope::new(Uuid::from_u128(u128::from(n)), time, "test", payload)
}

/// A hub's writer, by hand: inputs appended `chunk` at a time (one input group each), folded
/// and their decisions recorded `every` inputs, with a checkpoint at the end of each batch.
/// Appends and batches do not line up, so groups straddle the bases a window picks.
struct Writer {
    folder: Folder,
    appended: u64,
    chunk: u64,
    every: u64,
}

impl Writer {
    fn new(chunk: u64, every: u64) -> Self {
        Self {
            folder: Folder::default(),
            appended: 0,
            chunk,
            every,
        }
    }

    async fn feed(&mut self, log: &RedbLog, to: u64) -> TestResult {
        while self.appended < to {
            let end = (self.appended + self.chunk).min(to);
            let inputs = (self.appended + 1..=end).map(input).collect();
            log.append(inputs, AppendTime::AsGiven).await?;
            self.appended = end;
            while self.folder.seq + self.every <= self.appended {
                self.decide(log, self.folder.seq + self.every).await?;
            }
        }
        Ok(())
    }

    async fn decide(&mut self, log: &RedbLog, to: u64) -> TestResult {
        let first = self.folder.seq + 1;
        let count = usize::try_from(to + 1 - first)?;
        let events = log.read(first, count).await?;
        let folded = self.folder.fold_page(log, &events, &[]).await?;
        assert_eq!(self.folder.seq, to, "folded the batch");
        let batch = DecisionBatch {
            version: flotilla_core::wire::DECISION_VERSION,
            first_input_seq: first,
            last_input_seq: to,
            decisions: folded
                .decisions
                .into_iter()
                .filter(|(_, decisions)| !decisions.is_empty())
                .collect(),
        };
        log.append_decisions(&batch).await?;
        log.save_checkpoint(&self.folder.checkpoint()?).await?;
        Ok(())
    }

    fn hash(&self) -> TestResult<StateHash> {
        Ok(self.folder.state.hash()?)
    }
}

fn options(archive: Option<PathBuf>) -> RedbOptions {
    RedbOptions {
        checkpoints_kept: 2,
        seek_spacing: 100,
        retain: Some(Duration::seconds(250)),
        archive,
        ..RedbOptions::default()
    }
}

/// The first input the log file still holds in its groups (at or before its base, when a
/// group straddles it): the archive must hold every input before it.
fn first_grouped(path: &Path) -> TestResult<u64> {
    const GROUPS: TableDefinition<u64, &[u8]> = TableDefinition::new("input_groups");
    let db = redb::Database::open(path)?;
    let txn = db.begin_read()?;
    let table = txn.open_table(GROUPS)?;
    let (_, record) = table.first()?.ok_or("no group left")?;
    let header: [u8; 8] = record.value()[1..9].try_into()?;
    Ok(u64::from_le_bytes(header))
}

/// Folds `log` from where it starts (empty, or its base checkpoint) to its end.
async fn fold_all<L: LogReader>(log: &L) -> TestResult<Folder> {
    let base = log.base_seq().await?;
    let mut folder = match log.load_checkpoint_before(base).await? {
        Some(checkpoint) if base > 0 => {
            assert_eq!(checkpoint.seq, base, "starts at its base checkpoint");
            Folder::from_checkpoint(checkpoint)
        }
        _ => Folder::default(),
    };
    folder.catch_up(log, log.last_seq().await?).await?;
    Ok(folder)
}

/// Every decision batch from input `from` on.
async fn batches_from<L: LogReader>(log: &L, from: u64) -> TestResult<Vec<DecisionBatch>> {
    let mut all: Vec<DecisionBatch> = Vec::new();
    loop {
        let next = all.last().map_or(from, |batch| batch.last_input_seq + 1);
        let page = log.read_decisions(next, 37).await?;
        if page.is_empty() {
            return Ok(all);
        }
        all.extend(page);
    }
}

#[tokio::test]
async fn the_archive_holds_what_the_window_removed_and_folds_from_zero_with_the_log() -> TestResult
{
    let dir = tempfile::tempdir()?;
    let (path, archive) = (dir.path().join("cut.redb"), dir.path().join("archive"));
    let kept_log = RedbLog::open(&dir.path().join("kept.redb"), RedbOptions::default())?;
    let log = RedbLog::open(&path, options(Some(archive.clone())))?;
    let (mut kept, mut cut) = (Writer::new(35, 50), Writer::new(35, 50));
    kept.feed(&kept_log, 2_000).await?;
    cut.feed(&log, 2_000).await?;
    let base = log.base_seq().await?;
    assert!((1_700..2_000).contains(&base), "base {base}");
    drop(log);

    // The segments follow each other from input 1 to just before the first input the log
    // still holds; their batches, from the first to the base.
    let info = ArchiveInfo::read(&archive)?;
    assert!(info.segments.len() > 5, "{info:#?}");
    assert!(info.unreadable.is_empty(), "{info:#?}");
    assert_eq!(info.first, Some(1));
    let mut next = (1, 0);
    for segment in &info.segments {
        assert_eq!((segment.first, segment.from_base), next, "{info:#?}");
        next = (segment.last + 1, segment.to_base);
    }
    let held = first_grouped(&path)?;
    assert_eq!(info.last.map(|last| last + 1), Some(held), "{info:#?}");
    assert!(held <= base + 1, "held from {held}, base {base}");
    assert!(
        info.segments.iter().any(|s| s.first <= s.from_base),
        "a group that straddled a base went with the next cut: {info:#?}"
    );
    assert_eq!(info.decided_to, base);
    assert!(
        info.checkpoints.is_empty(),
        "an archive from zero needs none"
    );

    // The archive and the log are one log from input 1, with every batch recorded.
    let reader = ArchivedLog::open(&archive, RedbReader::open(&path)?).await?;
    assert_eq!(reader.base_seq().await?, 0);
    assert_eq!(reader.live().base_seq().await?, base);
    let first = reader.read(1, 3).await?;
    assert_eq!(first.iter().map(|i| i.seq).collect::<Vec<_>>(), [1, 2, 3]);
    let folded = fold_all(&reader).await?;
    assert_eq!(folded.seq, 2_000);
    assert_eq!(folded.state.hash()?, kept.hash()?);
    assert_eq!(cut.hash()?, kept.hash()?);
    assert_eq!(
        batches_from(&reader, 1).await?,
        batches_from(&kept_log, 1).await?
    );
    // A point before the log's base starts from zero (the archive holds no checkpoint).
    assert_eq!(reader.load_checkpoint_before(base - 1).await?, None);
    drop(reader);

    // A flipped byte in a segment's contents is found when it is read.
    let damaged = &info.segments[info.segments.len() / 2];
    let file = archive.join(format!(
        "{:020}-{:020}.segment",
        damaged.first, damaged.last
    ));
    let mut bytes = std::fs::read(&file)?;
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0x40;
    std::fs::write(&file, bytes)?;
    let reader = ArchivedLog::open(&archive, RedbReader::open(&path)?).await?;
    let error = fold_all(&reader).await.err().map(|e| e.to_string());
    let error = error.unwrap_or_default();
    assert!(
        error.contains("SHA-256") && error.contains(&file.display().to_string()),
        "{error}"
    );
    Ok(())
}

#[tokio::test]
async fn an_archive_begun_on_a_cut_log_starts_at_its_base_checkpoint() -> TestResult {
    let dir = tempfile::tempdir()?;
    let (path, archive) = (dir.path().join("cut.redb"), dir.path().join("archive"));
    let kept_log = RedbLog::open(&dir.path().join("kept.redb"), RedbOptions::default())?;
    let (mut kept, mut cut) = (Writer::new(40, 50), Writer::new(40, 50));
    kept.feed(&kept_log, 1_600).await?;
    let log = RedbLog::open(&path, options(None))?;
    cut.feed(&log, 800).await?;
    let before = log.base_seq().await?;
    assert!(before > 0, "the window cut the log without an archive");
    drop(log);

    let log = RedbLog::open(&path, options(Some(archive.clone())))?;
    cut.feed(&log, 1_600).await?;
    let base = log.base_seq().await?;
    drop(log);
    let info = ArchiveInfo::read(&archive)?;
    let starts: Vec<u64> = info.checkpoints.iter().map(|c| c.seq).collect();
    assert_eq!(starts, [before], "{info:#?}");
    assert_eq!(info.segments.first().map(|s| s.from_base), Some(before));
    assert!(info.first.is_some_and(|first| first <= before + 1));

    let reader = ArchivedLog::open(&archive, RedbReader::open(&path)?).await?;
    assert_eq!(reader.base_seq().await?, before);
    let folded = fold_all(&reader).await?;
    assert_eq!(folded.state.hash()?, kept.hash()?);
    assert_eq!(
        batches_from(&reader, 1).await?,
        batches_from(&kept_log, before + 1).await?
    );
    assert!(base > before);
    Ok(())
}

#[tokio::test]
async fn a_segment_of_a_cut_that_did_not_commit_is_ignored_then_replaced() -> TestResult {
    let dir = tempfile::tempdir()?;
    let (path, archive) = (dir.path().join("cut.redb"), dir.path().join("archive"));
    let mut kept = Writer::new(30, 50);
    let kept_log = RedbLog::open(&dir.path().join("kept.redb"), RedbOptions::default())?;
    kept.feed(&kept_log, 1_500).await?;
    let mut cut = Writer::new(30, 50);
    let log = RedbLog::open(&path, options(Some(archive.clone())))?;
    cut.feed(&log, 1_000).await?;
    drop(log);

    // A copy goes one cut further: its newest segment is one the original's log never
    // committed, as if the hub had crashed between writing it and committing the cut.
    let (copy, copy_archive) = (
        dir.path().join("copy.redb"),
        dir.path().join("copy-archive"),
    );
    copy_dir(&archive, &copy_archive)?;
    std::fs::copy(&path, &copy)?;
    copy_dir(
        &dir.path().join("cut.redb.checkpoints"),
        &dir.path().join("copy.redb.checkpoints"),
    )?;
    let ahead = RedbLog::open(&copy, options(Some(copy_archive.clone())))?;
    let mut ahead_writer = Writer {
        folder: cut.folder.clone(),
        appended: cut.appended,
        chunk: 30,
        every: 50,
    };
    ahead_writer.feed(&ahead, 1_100).await?;
    drop(ahead);
    let segments = ArchiveInfo::read(&archive)?.segments;
    let uncommitted = ArchiveInfo::read(&copy_archive)?
        .segments
        .into_iter()
        .find(|s| !segments.contains(s))
        .ok_or("the copy cut again")?;
    let name = format!("{:020}-{:020}.segment", uncommitted.first, uncommitted.last);
    assert_eq!(
        uncommitted.first,
        first_grouped(&path)?,
        "the log holds its inputs"
    );
    std::fs::copy(copy_archive.join(&name), archive.join(&name))?;

    let reader = ArchivedLog::open(&archive, RedbReader::open(&path)?).await?;
    assert_eq!(
        fold_all(&reader).await?.seq,
        1_000,
        "read past the leftover"
    );
    drop(reader);

    // Longer batches this time: the next cut goes further than the leftover's did, and its
    // segment takes the leftover's place.
    let log = RedbLog::open(&path, options(Some(archive.clone())))?;
    cut.every = 300;
    cut.feed(&log, 1_500).await?;
    drop(log);
    let info = ArchiveInfo::read(&archive)?;
    assert!(
        !info.segments.contains(&uncommitted),
        "the leftover is gone: {info:#?}"
    );
    let mut next = 1;
    for segment in &info.segments {
        assert_eq!(segment.first, next, "{info:#?}");
        next = segment.last + 1;
    }
    let reader = ArchivedLog::open(&archive, RedbReader::open(&path)?).await?;
    let folded = fold_all(&reader).await?;
    assert_eq!(folded.seq, 1_500);
    assert_eq!(folded.state.hash()?, kept.hash()?);
    Ok(())
}

#[tokio::test]
async fn an_archive_that_cannot_be_written_removes_nothing_until_it_can() -> TestResult {
    let dir = tempfile::tempdir()?;
    let (path, archive) = (dir.path().join("cut.redb"), dir.path().join("archive"));
    // A file where the archive's directory should be: nothing can be written there.
    std::fs::write(&archive, b"in the way")?;
    let log = RedbLog::open(&path, options(Some(archive.clone())))?;
    let mut cut = Writer::new(35, 50);
    cut.feed(&log, 1_000).await?;
    assert_eq!(log.base_seq().await?, 0, "nothing removed");
    assert_eq!(log.read(1, 1).await?.first().map(|i| i.seq), Some(1));

    std::fs::remove_file(&archive)?;
    cut.feed(&log, 1_100).await?;
    let base = log.base_seq().await?;
    assert!(base > 0, "the next checkpoint cuts");
    drop(log);
    let info = ArchiveInfo::read(&archive)?;
    assert_eq!(info.first, Some(1), "{info:#?}");
    assert_eq!(info.decided_to, base);
    let reader = ArchivedLog::open(&archive, RedbReader::open(&path)?).await?;
    assert_eq!(fold_all(&reader).await?.state.hash()?, cut.hash()?);
    Ok(())
}

fn copy_dir(from: &Path, to: &Path) -> TestResult {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        std::fs::copy(entry.path(), to.join(entry.file_name()))?;
    }
    Ok(())
}
