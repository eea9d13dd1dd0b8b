//! Crash points of the redb log, in process, through a fault-injecting storage backend
//! (`redb_log::faults`): with fsyncs honoured a power cut at any write loses nothing that was
//! acknowledged; with fsyncs lost the log reopens to a consistent prefix of what was written,
//! whose newest checkpoint plus tail folds to the same state as a clean fold, and a witness of
//! what was acknowledged finds the loss; a failed write or sync refuses its whole batch and
//! leaves the file as it was before it.
//!
//! Each test runs a fixed set of seeds; `SEED=n` runs that one seed, `CRASH_POINTS=n` runs `n`
//! seeds. A failure names its seed.

use std::collections::BTreeMap;
use std::error::Error;
use std::path::Path;

use chrono::{DateTime, Utc};
use flotilla_core::wire::DECISION_VERSION;
use flotilla_core::{Decisions, Envelope, Heartbeat, Input, State, StateHash};
use flotilla_eventstore::redb_log::faults::{FaultCounts, FaultPlan, Unsynced};
use flotilla_eventstore::redb_log::{LostAcknowledged, RedbLog, RedbOptions};
use flotilla_eventstore::{AppendTime, Checkpoint, DecisionBatch, EventLog, LogError, LogReader};
use uuid::Uuid;

type TestResult = Result<(), Box<dyn Error>>;

/// Seeds each test runs when neither `SEED` nor `CRASH_POINTS` is set.
const SEEDS_DEFAULT: u64 = 12;
/// Workload steps per crash point (appends, decision batches, checkpoints).
const STEPS: usize = 40;
/// Members the events speak for.
const MEMBERS: u128 = 5;

/// The seeds to run: `SEED` alone, or `0..CRASH_POINTS` (default [`SEEDS_DEFAULT`]).
fn seeds() -> Vec<u64> {
    if let Some(seed) = std::env::var("SEED").ok().and_then(|s| s.parse().ok()) {
        return vec![seed];
    }
    let count = std::env::var("CRASH_POINTS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(SEEDS_DEFAULT);
    (0..count).collect()
}

/// splitmix64: a small seeded generator, so a seed means the same crash point everywhere.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `0..bound` (`bound` > 0).
    fn below(&mut self, bound: u64) -> u64 {
        self.next() % bound.max(1)
    }

    fn below_usize(&mut self, bound: usize) -> usize {
        usize::try_from(self.below(u64::try_from(bound).unwrap_or(u64::MAX))).unwrap_or(0)
    }
}

/// The `n`th event of a workload: members join (and relabel), then heartbeat.
fn event(seed: u64, n: u128) -> Envelope {
    let seconds = i64::try_from(n).unwrap_or(0);
    let time = DateTime::<Utc>::from_timestamp(1_741_820_400 + seconds, 0).unwrap_or_default();
    let member = n % MEMBERS;
    let payload = if n % 6 < 2 {
        Input::Apply {
            manifest: format!(
                r#"{{"apiVersion":"cluster.kubernetes-fleet.io/v1beta1","kind":"MemberCluster","metadata":{{"name":"member-{member}","labels":{{"generation":"{n}"}}}},"spec":{{}}}}"#
            ),
        }
    } else {
        Input::Heartbeat(Heartbeat {
            cluster: format!("member-{member}"),
            ..Default::default()
        })
    };
    let id = Uuid::from_u128((u128::from(seed) << 64) | n);
    Envelope::new(id, time, "crash-points", payload)
}

/// A writer-like driver of the log: appends, folds what was acknowledged, records decisions and
/// checkpoints, and remembers what the log acknowledged.
struct Workload {
    seed: u64,
    rng: Rng,
    next_event: u128,
    /// Acknowledged events by sequence.
    acked: BTreeMap<u64, Envelope>,
    /// The batch whose append failed, if any: it may be stored entirely or not at all.
    in_flight: Vec<Envelope>,
    state: State,
    folded: u64,
    decided: u64,
    /// Decisions folded since the last recorded batch.
    pending: Vec<(u64, Decisions)>,
}

impl Workload {
    fn new(seed: u64) -> Self {
        Self {
            seed,
            rng: Rng(seed),
            next_event: 1,
            acked: BTreeMap::new(),
            in_flight: Vec::new(),
            state: State::default(),
            folded: 0,
            decided: 0,
            pending: Vec::new(),
        }
    }

    /// Runs up to `steps` steps; stops at the first error, which it returns.
    async fn run(&mut self, log: &RedbLog, steps: usize) -> Result<(), LogError> {
        for _ in 0..steps {
            match self.rng.below(10) {
                0..=6 => self.append(log).await?,
                7 | 8 => self.decide(log).await?,
                _ => self.checkpoint(log).await?,
            }
        }
        Ok(())
    }

    async fn append(&mut self, log: &RedbLog) -> Result<(), LogError> {
        let count = 1 + self.rng.below(4);
        let batch: Vec<Envelope> = (0..count)
            .map(|i| event(self.seed, self.next_event + u128::from(i)))
            .collect();
        self.next_event += u128::from(count);
        self.in_flight.clone_from(&batch);
        let appended = log.append(batch.clone(), AppendTime::AsGiven).await?;
        self.in_flight.clear();
        for (envelope, outcome) in batch.into_iter().zip(appended) {
            assert!(
                !outcome.duplicate,
                "seed {}: a fresh id deduplicated",
                self.seed
            );
            self.acked.insert(outcome.seq, envelope);
        }
        Ok(())
    }

    /// Folds every acknowledged event not folded yet.
    fn fold(&mut self) {
        let from = self.folded + 1;
        for (seq, envelope) in self.acked.range(from..) {
            let decisions = flotilla_core::step(&mut self.state, envelope);
            if !decisions.is_empty() {
                self.pending.push((*seq, decisions));
            }
            self.folded = *seq;
        }
    }

    async fn decide(&mut self, log: &RedbLog) -> Result<(), LogError> {
        self.fold();
        if self.folded == self.decided {
            return Ok(());
        }
        let batch = DecisionBatch {
            version: DECISION_VERSION,
            first_input_seq: self.decided + 1,
            last_input_seq: self.folded,
            decisions: std::mem::take(&mut self.pending),
        };
        log.append_decisions(&batch).await?;
        self.decided = self.folded;
        Ok(())
    }

    async fn checkpoint(&mut self, log: &RedbLog) -> Result<(), LogError> {
        self.fold();
        let checkpoint = Checkpoint {
            seq: self.folded,
            hash: self.state.hash()?,
            state: self.state.clone(),
        };
        log.save_checkpoint(&checkpoint).await?;
        Ok(())
    }

    fn last_acked(&self) -> u64 {
        self.acked.keys().next_back().copied().unwrap_or(0)
    }
}

/// Opens a log through a faulty backend on `path` (a new file is built under a temporary name
/// on the same faulty storage and renamed into place, as `RedbLog::open` does).
fn open_faulty(plan: &FaultPlan, path: &Path) -> Result<RedbLog, Box<dyn Error>> {
    let plan = plan.clone();
    Ok(RedbLog::open_creating_with(
        path,
        move |at: &Path| plan.backend(at),
        RedbOptions::default(),
    )?)
}

/// Reads every input of the log, in order.
async fn all_events(log: &RedbLog) -> Result<Vec<(u64, Envelope)>, Box<dyn Error>> {
    let mut events = Vec::new();
    loop {
        let from = events.last().map_or(1, |(seq, _)| seq + 1);
        let page = log.read(from, 1_000).await?;
        if page.is_empty() {
            return Ok(events);
        }
        for stored in page {
            let envelope = stored.event().ok_or("an input is not an event")?.clone();
            events.push((stored.seq, envelope));
        }
    }
}

/// The hash after folding `events` from zero, and the decisions per input.
fn clean_fold(
    events: &[(u64, Envelope)],
) -> Result<(StateHash, BTreeMap<u64, Decisions>), Box<dyn Error>> {
    let mut state = State::default();
    let mut decided = BTreeMap::new();
    for (seq, envelope) in events {
        let decisions = flotilla_core::step(&mut state, envelope);
        if !decisions.is_empty() {
            decided.insert(*seq, decisions);
        }
    }
    Ok((state.hash()?, decided))
}

/// What a reopened log must satisfy whatever the fault: dense sequences of readable events that
/// agree with what was sent at each sequence (the failed batch whole or absent), a checkpoint
/// whose state and tail fold like a clean fold, and decisions that match the inputs they cover.
/// Returns the last sequence.
async fn check_consistent_prefix(log: &RedbLog, work: &Workload) -> Result<u64, Box<dyn Error>> {
    let events = all_events(log).await?;
    let last_seq = log.last_seq().await?;
    for (index, (seq, envelope)) in events.iter().enumerate() {
        assert_eq!(*seq, u64::try_from(index)? + 1, "sequences are not dense");
        let sent = work.acked.get(seq).or_else(|| {
            let offset = usize::try_from(seq - work.last_acked() - 1).ok()?;
            work.in_flight.get(offset)
        });
        assert_eq!(
            Some(envelope),
            sent,
            "input {seq} is not what was appended there"
        );
    }
    assert_eq!(events.last().map_or(0, |(seq, _)| *seq), last_seq);
    let beyond = last_seq.saturating_sub(work.last_acked());
    assert!(
        beyond == 0 || usize::try_from(beyond)? == work.in_flight.len(),
        "the failed batch is half stored: {beyond} of {}",
        work.in_flight.len()
    );

    let (clean_hash, clean_decisions) = clean_fold(&events)?;
    if let Some(checkpoint) = log.load_checkpoint().await? {
        let upto = usize::try_from(checkpoint.seq)?;
        assert!(checkpoint.seq <= last_seq, "a checkpoint beyond the log");
        let (at_checkpoint, _) = clean_fold(&events[..upto])?;
        assert_eq!(
            checkpoint.hash, at_checkpoint,
            "checkpoint hash is not the fold's"
        );
        let mut state = checkpoint.state;
        for (_, envelope) in &events[upto..] {
            flotilla_core::step(&mut state, envelope);
        }
        assert_eq!(
            state.hash()?,
            clean_hash,
            "checkpoint + tail differs from a clean fold"
        );
    }
    let decided = log.last_decided_seq().await?;
    assert!(decided <= last_seq, "decisions beyond the log");
    for batch in log.read_decisions(1, 10_000).await? {
        for (seq, decisions) in batch.decisions {
            assert_eq!(
                clean_decisions.get(&seq),
                Some(&decisions),
                "decisions of {seq}"
            );
        }
    }
    Ok(last_seq)
}

/// The log takes new appends after the reopen, at the next sequence.
async fn goes_on(log: &RedbLog, seed: u64, last_seq: u64) -> TestResult {
    let next = event(seed, 1_000_000);
    let appended = log.append(vec![next], AppendTime::AsGiven).await?;
    assert_eq!(appended.first().map(|a| a.seq), Some(last_seq + 1));
    Ok(())
}

/// Writes what survives the cut to `path` and opens it as a restarted hub would.
fn reopen_image(
    plan: &FaultPlan,
    unsynced: Unsynced,
    path: &Path,
) -> Result<RedbLog, Box<dyn Error>> {
    std::fs::write(path, plan.surviving_image(unsynced))?;
    Ok(RedbLog::open(path, RedbOptions::default())?)
}

/// Lost, or an in-order prefix of the unsynced operations with a torn last write.
fn pick_unsynced(rng: &mut Rng, plan: &FaultPlan) -> Unsynced {
    if rng.below(3) == 0 {
        return Unsynced::Lost;
    }
    let ops = rng.below_usize(plan.counts().unsynced_ops + 1);
    Unsynced::InOrder {
        ops,
        torn_bytes: rng.below_usize(8_192),
    }
}

/// How many writes one workload makes, to place cuts within it.
async fn writes_of_a_workload() -> Result<u64, Box<dyn Error>> {
    let dir = tempfile::tempdir()?;
    let plan = FaultPlan::default();
    let log = open_faulty(&plan, &dir.path().join("dry.redb"))?;
    Workload::new(0).run(&log, STEPS).await?;
    Ok(plan.counts().writes)
}

async fn power_cut_with_honoured_fsyncs(seed: u64, writes: u64) -> TestResult {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("log.redb");
    let mut rng = Rng(seed ^ 0x5eed);
    let plan = FaultPlan::default();
    plan.cut_power_at_write(1 + rng.below(writes), rng.below_usize(8_192));
    let mut work = Workload::new(seed);
    match open_faulty(&plan, &path) {
        Ok(log) => {
            if work.run(&log, STEPS).await.is_ok() {
                plan.cut_power();
            }
        }
        // The cut came while the file was being created: nothing was acknowledged.
        Err(error) => assert!(plan.counts().power_cut, "open failed: {error}"),
    }
    let unsynced = pick_unsynced(&mut rng, &plan);
    let log = reopen_image(&plan, unsynced, &dir.path().join("after.redb"))?;
    let last_seq = check_consistent_prefix(&log, &work).await?;
    assert!(
        last_seq >= work.last_acked(),
        "acknowledged inputs lost: the log ends at {last_seq}, {} was acknowledged ({unsynced:?})",
        work.last_acked()
    );
    log.confirm_acknowledged(work.last_acked())?;
    assert!(log.open_report().repaired, "a crashed file opened as clean");
    goes_on(&log, seed, last_seq).await
}

#[tokio::test]
async fn with_fsyncs_honoured_a_power_cut_at_any_write_loses_nothing_acknowledged() -> TestResult {
    let writes = writes_of_a_workload().await?;
    for seed in seeds() {
        power_cut_with_honoured_fsyncs(seed, writes)
            .await
            .map_err(|error| format!("seed {seed}: {error}"))?;
    }
    Ok(())
}

/// Returns whether acknowledged inputs were lost (and found).
/// Syncs from `opening + 1` to `syncs` may be the first lost: losses start after the file was
/// durably created. Storage that acknowledges the creation's fsyncs without keeping them leaves
/// a renamed file that is not a redb file after the cut; no order of writes can prevent that,
/// and the open then fails with redb's error rather than start an empty log.
async fn power_cut_after_lost_fsyncs(
    seed: u64,
    opening: u64,
    syncs: u64,
) -> Result<bool, Box<dyn Error>> {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("log.redb");
    let mut rng = Rng(seed ^ 0x1057);
    let plan = FaultPlan::default();
    plan.lose_syncs_from(opening + 1 + rng.below(syncs - opening));
    let mut work = Workload::new(seed);
    {
        let log = open_faulty(&plan, &path)?;
        work.run(&log, STEPS).await?;
        plan.cut_power();
    }
    let unsynced = pick_unsynced(&mut rng, &plan);
    let log = reopen_image(&plan, unsynced, &dir.path().join("after.redb"))?;
    let last_seq = check_consistent_prefix(&log, &work).await?;
    assert!(log.open_report().repaired, "a crashed file opened as clean");
    let lost = match log.confirm_acknowledged(work.last_acked()) {
        Ok(()) => {
            assert!(last_seq >= work.last_acked());
            false
        }
        Err(lost) => {
            assert_eq!(
                lost,
                LostAcknowledged {
                    acknowledged: work.last_acked(),
                    last_seq
                }
            );
            true
        }
    };
    goes_on(&log, seed, last_seq).await?;
    Ok(lost)
}

#[tokio::test]
async fn with_fsyncs_lost_the_log_reopens_to_a_consistent_prefix_and_the_loss_is_found()
-> TestResult {
    // Two syncs a commit; the dry run's count bounds where the loss starts.
    let dir = tempfile::tempdir()?;
    let plan = FaultPlan::default();
    let opening;
    {
        let log = open_faulty(&plan, &dir.path().join("dry.redb"))?;
        opening = plan.counts().syncs;
        Workload::new(0).run(&log, STEPS).await?;
    }
    let syncs = plan.counts().syncs;
    let mut losses = 0;
    for seed in seeds() {
        let lost = power_cut_after_lost_fsyncs(seed, opening, syncs)
            .await
            .map_err(|error| format!("seed {seed}: {error}"))?;
        losses += usize::from(lost);
    }
    println!(
        "lost fsyncs: {losses} of {} crash points lost acknowledged inputs",
        seeds().len()
    );
    // The default seeds are chosen to include real losses, so the check above is exercised.
    assert!(
        losses > 0 || seeds().len() < 3,
        "no crash point lost anything"
    );
    Ok(())
}

/// Faults land anywhere from the file's creation on: a failed creation leaves no file at the
/// log's path (only a `.creating` file the next open discards), so the restart starts afresh.
async fn failed_io(seed: u64, counts: FaultCounts) -> TestResult {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("log.redb");
    let mut rng = Rng(seed ^ 0xfa11);
    let plan = FaultPlan::default();
    if seed.is_multiple_of(2) {
        plan.fail_write_at(1 + rng.below(counts.writes));
    } else {
        plan.fail_sync_at(1 + rng.below(counts.syncs));
    }
    let mut work = Workload::new(seed);
    let opened = open_faulty(&plan, &path);
    if let Err(error) = &opened {
        // The fault came while the file was being created: the opener gets the typed error.
        let message = error.to_string();
        assert!(message.contains("fault injection"), "{message}");
    }
    if let Ok(log) = opened {
        match work.run(&log, STEPS).await {
            Ok(()) => {}
            Err(LogError::Storage(message)) => {
                assert!(message.contains("fault injection"), "{message}");
                // redb latches the first I/O error: the log refuses every later write rather
                // than build on a file it no longer knows.
                let refused = log
                    .append(vec![event(seed, 999_999)], AppendTime::AsGiven)
                    .await;
                assert!(matches!(refused, Err(LogError::Storage(_))), "{refused:?}");
            }
            Err(other) => return Err(format!("not a storage error: {other}").into()),
        }
    }
    // The process restarts on the file as the failure left it (no power cut).
    let log = RedbLog::open(&path, RedbOptions::default())?;
    let last_seq = check_consistent_prefix(&log, &work).await?;
    assert!(last_seq >= work.last_acked(), "acknowledged inputs lost");
    goes_on(&log, seed, last_seq).await
}

#[tokio::test]
async fn a_failed_write_or_sync_refuses_its_whole_batch_and_loses_nothing_acknowledged()
-> TestResult {
    let dir = tempfile::tempdir()?;
    let plan = FaultPlan::default();
    {
        let log = open_faulty(&plan, &dir.path().join("dry.redb"))?;
        Workload::new(0).run(&log, STEPS).await?;
    }
    let counts = plan.counts();
    for seed in seeds() {
        failed_io(seed, counts)
            .await
            .map_err(|error| format!("seed {seed}: {error}"))?;
    }
    Ok(())
}

#[tokio::test]
async fn a_clean_close_reopens_without_repair_and_nothing_is_lost() -> TestResult {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("log.redb");
    let plan = FaultPlan::default();
    let mut work = Workload::new(7);
    {
        let log = open_faulty(&plan, &path)?;
        work.run(&log, STEPS).await?;
        log.close()?;
    }
    let log = RedbLog::open(&path, RedbOptions::default())?;
    assert!(
        !log.open_report().repaired,
        "a cleanly closed file needed repair"
    );
    let last_seq = check_consistent_prefix(&log, &work).await?;
    assert_eq!(last_seq, work.last_acked());
    Ok(())
}
