//! One run: the loop over simulated time, its three phases, and the fault schedule.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use chrono::{DateTime, Duration, Utc};
use flotilla_core::StateHash;
use flotilla_eventstore::LogReader;
use uuid::Uuid;

use super::SimError;
use super::checks;
use super::faulty_log::{Faults, Op, SharedFaults, When, corrupt_newest_checkpoint};
use super::members::{Member, StepInput};
use super::network::{Fate, LinkFaults, Message, Network, Publisher};
use super::operator::Operator;
use super::outcome::{Failure, Outcome};
use super::plan::{self, Plan};
use super::rng::Rng;
use super::trace::Trace;
use super::writer::{Round, Writer, is_injected};

/// Sends of one message at most; a publisher gives up after that.
const ATTEMPTS_MAX: u32 = 50;
/// The link once the faults stop: prompt and lossless.
const CALM_LINK: LinkFaults = LinkFaults {
    drop_per_mille: 0,
    duplicate_per_mille: 0,
    late_duplicate_per_mille: 0,
    late_after_ms: 0,
    delay_ms_max: 300,
};

/// Runs seed `seed`; `print_trace` echoes every trace line to stderr.
///
/// # Errors
/// The first broken promise, with the end of the trace.
pub fn run_seed(seed: u64, print_trace: bool) -> Result<Outcome, Box<Failure>> {
    let fail = |error: SimError| {
        Box::new(Failure {
            error,
            tail: String::new(),
            digest: String::new(),
        })
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| fail(e.into()))?;
    let dir = temp_dir().map_err(|e| fail(e.into()))?;
    let mut sim = Sim::new(seed, dir.path().join("log.redb"), print_trace);
    // A panic inside a real part (the folder asserts invariants in debug builds) is a failure of
    // this seed like any other, reported with its trace.
    let ran =
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| runtime.block_on(sim.run())));
    let ran = ran.unwrap_or_else(|panic| Err(SimError::Panicked(panic_text(panic.as_ref()))));
    match ran {
        Ok(()) => Ok(sim.outcome),
        Err(error) => Err(Box::new(Failure {
            error,
            tail: sim.trace.tail(),
            digest: sim.trace.digest(),
        })),
    }
}

fn panic_text(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| panic.downcast_ref::<&str>().map(|s| (*s).to_owned()))
        .unwrap_or_else(|| "a panic without a message".to_owned())
}

/// A temporary directory, in memory when `/dev/shm` exists (redb fsyncs every commit).
fn temp_dir() -> std::io::Result<tempfile::TempDir> {
    let builder = tempfile::Builder::new().prefix("flotilla-sim-").clone();
    let shm = std::path::Path::new("/dev/shm");
    if shm.is_dir() {
        builder.tempdir_in(shm)
    } else {
        builder.tempdir()
    }
}

/// The simulated clock's origin.
fn origin() -> DateTime<Utc> {
    DateTime::from_timestamp(1_893_456_000, 0).unwrap_or(DateTime::UNIX_EPOCH)
}

struct Sim {
    plan: Plan,
    /// Draws of the fault schedule.
    chaos: Rng,
    /// Draws of the members and the engineer.
    world: Rng,
    /// Draws of the link.
    link: Rng,
    now_ms: u64,
    members: Vec<Member>,
    operator: Operator,
    network: Network,
    writer: Option<Writer>,
    writer_back_ms: u64,
    faults: SharedFaults,
    path: PathBuf,
    hashes: BTreeMap<u64, StateHash>,
    acknowledged: BTreeMap<Uuid, BTreeSet<u64>>,
    faulty: bool,
    trace: Trace,
    outcome: Outcome,
}

impl Sim {
    fn new(seed: u64, path: PathBuf, print_trace: bool) -> Self {
        let mut root = Rng::new(seed);
        let mut chaos = root.fork(1);
        let mut world = root.fork(2);
        let link = root.fork(3);
        let plan = Plan::draw(&mut chaos);
        let operator = Operator::draw(&mut world);
        let members = (0..plan.members)
            .map(|index| {
                let skew = if world.chance(plan.skewed_per_mille) {
                    i64::try_from(world.below(2 * 86_400)).unwrap_or(0) - 86_400
                } else {
                    0
                };
                let canary = index == 0 || world.chance(250);
                let name = format!("member-{index:02}");
                Member::new(name, canary, skew, plan.heartbeat_secs * 1_000, 0)
            })
            .collect();
        let faults = Faults::new(Duration::seconds(plan::DEDUPE_WINDOW_SECS));
        let outcome = Outcome {
            seed,
            members: plan.members,
            placements: operator.placements.len() as u64,
            ..Outcome::default()
        };
        Self {
            plan,
            chaos,
            world,
            link,
            now_ms: 0,
            members,
            operator,
            network: Network::default(),
            writer: None,
            writer_back_ms: 0,
            faults: Arc::new(Mutex::new(faults)),
            path,
            hashes: BTreeMap::new(),
            acknowledged: BTreeMap::new(),
            faulty: true,
            trace: Trace::new(print_trace),
            outcome,
        }
    }

    fn now(&self) -> DateTime<Utc> {
        origin() + Duration::milliseconds(i64::try_from(self.now_ms).unwrap_or(i64::MAX))
    }

    async fn run(&mut self) -> Result<(), SimError> {
        self.trace.line(0, format!("plan {:?}", self.plan));
        self.trace
            .line(0, format!("placements {:?}", self.operator.placements));
        self.writer = Some(Writer::open(&self.path, Arc::clone(&self.faults)).await?);
        let members: Vec<(String, bool, u64)> = self
            .members
            .iter()
            .map(|m| (m.name.clone(), m.canary, self.plan.heartbeat_secs))
            .collect();
        for envelope in self.operator.setup(&members, &mut self.world) {
            let message = Message {
                envelope,
                from: Publisher::Operator,
                attempts: 1,
            };
            self.network.send(message, 0, &CALM_LINK, &mut self.link);
        }
        while self.now_ms < self.plan.fault_phase_ms && self.outcome.steps < plan::STEPS_MAX {
            self.step().await?;
        }
        self.heal().await?;
        let healed_ms = self.now_ms;
        let liveness_end = self.now_ms + plan::LIVENESS_MS_MAX;
        while self.now_ms < liveness_end && self.outcome.steps < plan::STEPS_MAX {
            self.step().await?;
            if self
                .writer
                .as_ref()
                .is_some_and(|w| checks::settled(w.state()))
            {
                break;
            }
        }
        self.outcome.settle_ms = self.now_ms - healed_ms;
        self.finish().await
    }

    async fn step(&mut self) -> Result<(), SimError> {
        self.now_ms += self.chaos.between(plan::STEP_MS.0, plan::STEP_MS.1);
        self.outcome.steps += 1;
        if self.faulty {
            self.strike();
        }
        self.restart_writer_if_due().await?;
        self.publish();
        self.deliver().await?;
        self.fold().await?;
        self.check_clock()
    }

    /// The fault schedule's draws for one step.
    fn strike(&mut self) {
        let now = self.now_ms;
        if self.writer.is_some() && self.chaos.chance(self.plan.writer_crash_per_mille) {
            let (low, high) = self.plan.writer_down_ms;
            let back = now + self.chaos.between(low, high);
            self.crash_writer(back, "killed");
        }
        for index in 0..self.members.len() {
            if self.members[index].agent.is_some()
                && self.chaos.chance(self.plan.agent_crash_per_mille)
            {
                let back = now + self.chaos.between(1_000, 60_000);
                self.members[index].crash(back);
                self.outcome.agent_crashes += 1;
                let name = &self.members[index].name;
                self.trace
                    .line(now, format!("agent {name} crashed, back at {back}"));
            }
            if self.members[index].reachable(now) && self.chaos.chance(self.plan.silence_per_mille)
            {
                let until = now + self.plan.silence_ms(&mut self.chaos);
                self.members[index].silent_until_ms = until;
                self.outcome.silences += 1;
                let name = &self.members[index].name;
                self.trace.line(now, format!("{name} silent until {until}"));
            }
        }
        if self.chaos.chance(self.plan.change_per_mille)
            && let Some(envelope) = self.operator.change_resources(&mut self.world)
        {
            self.trace
                .line(now, format!("resources change: {}", envelope.id));
            self.send(
                Message {
                    envelope,
                    from: Publisher::Operator,
                    attempts: 1,
                },
                true,
            );
        }
    }

    fn crash_writer(&mut self, back_ms: u64, why: &str) {
        if let Some(writer) = self.writer.take() {
            let seq = writer.seq();
            writer.crash();
            self.writer_back_ms = back_ms;
            self.outcome.writer_crashes += 1;
            self.trace.line(
                self.now_ms,
                format!("writer {why} at input {seq}, back at {back_ms}"),
            );
        }
    }

    async fn restart_writer_if_due(&mut self) -> Result<(), SimError> {
        if self.writer.is_some() || self.now_ms < self.writer_back_ms {
            return Ok(());
        }
        if self.faulty
            && self.chaos.chance(self.plan.corrupt_checkpoint_per_mille)
            && let Some((seq, offset)) = corrupt_newest_checkpoint(&self.path, &mut self.chaos)?
        {
            self.outcome.corrupt_checkpoints += 1;
            self.trace.line(
                self.now_ms,
                format!("checkpoint {seq} damaged at byte {offset}"),
            );
        }
        let writer = Writer::open(&self.path, Arc::clone(&self.faults)).await?;
        let (seq, hash) = (writer.seq(), writer.state().hash()?);
        if let Some(before) = self.hashes.get(&seq).filter(|before| **before != hash) {
            return Err(SimError::Broken(format!(
                "the restarted writer's state at input {seq} is {hash}; it was {before}"
            )));
        }
        self.trace.line(
            self.now_ms,
            format!("writer restarted at input {seq} ({hash})"),
        );
        self.writer = Some(writer);
        Ok(())
    }

    /// Members and the engineer act on what they see and send.
    fn publish(&mut self) {
        let now = self.now();
        let hub = self.writer.as_ref().map(Writer::state);
        let mut sent = Vec::new();
        for (index, member) in self.members.iter_mut().enumerate() {
            let input = StepInput {
                now_ms: self.now_ms,
                now,
                hub,
                apply_fail_per_mille: if self.faulty {
                    self.plan.apply_fail_per_mille
                } else {
                    0
                },
            };
            let reachable = member.reachable(self.now_ms);
            for envelope in member.step(&input, &mut self.world) {
                sent.push((
                    Message {
                        envelope,
                        from: Publisher::Member(index),
                        attempts: 1,
                    },
                    reachable,
                ));
            }
        }
        if let Some(state) = hub {
            for envelope in self.operator.step(state, self.now_ms, &mut self.world) {
                sent.push((
                    Message {
                        envelope,
                        from: Publisher::Operator,
                        attempts: 1,
                    },
                    true,
                ));
            }
        }
        for (message, reachable) in sent {
            self.send(message, reachable);
        }
    }

    fn send(&mut self, message: Message, reachable: bool) {
        let link = if self.faulty {
            self.plan.link
        } else {
            CALM_LINK
        };
        let id = message.envelope.id;
        let fate = if reachable {
            self.network
                .send(message, self.now_ms, &link, &mut self.link)
        } else {
            Fate::Dropped
        };
        match fate {
            Fate::Sent => return,
            Fate::Dropped => self.outcome.dropped += 1,
            Fate::Duplicated => self.outcome.duplicated += 1,
            Fate::LateDuplicated => self.outcome.late_duplicated += 1,
        }
        self.trace.line(self.now_ms, format!("{id} {fate:?}"));
    }

    /// Messages due reach the hub: one append, or a retry each when it fails or is down.
    async fn deliver(&mut self) -> Result<(), SimError> {
        let due = self.network.due(self.now_ms);
        if due.is_empty() {
            return Ok(());
        }
        self.arm(&[Op::Append]);
        let now = self.now();
        let result = match &self.writer {
            Some(writer) => {
                let events = due.iter().map(|m| m.envelope.clone()).collect();
                Some(writer.submit(events, now).await)
            }
            None => None,
        };
        self.disarm()?;
        match result {
            Some(Ok(appended)) => {
                for (message, outcome) in due.iter().zip(&appended) {
                    let seqs = self.acknowledged.entry(message.envelope.id).or_default();
                    seqs.insert(outcome.seq);
                }
                let seqs: Vec<u64> = appended.iter().map(|a| a.seq).collect();
                self.trace.line(self.now_ms, format!("appended {seqs:?}"));
                Ok(())
            }
            Some(Err(error)) if !is_injected(&error) => Err(error.into()),
            failed => {
                if let Some(Err(error)) = failed {
                    self.outcome.log_faults += 1;
                    self.trace.line(
                        self.now_ms,
                        format!("append of {} failed: {error}", due.len()),
                    );
                }
                self.retry(due);
                Ok(())
            }
        }
    }

    fn retry(&mut self, messages: Vec<Message>) {
        for message in messages {
            let alive = match message.from {
                Publisher::Member(index) => self.members[index].agent.is_some(),
                Publisher::Operator => true,
            };
            if alive && message.attempts < ATTEMPTS_MAX {
                let at = self.now_ms + self.chaos.between(plan::RETRY_MS.0, plan::RETRY_MS.1);
                self.network.retry(message, at, &mut self.link);
            }
        }
    }

    /// Writer rounds until the log is folded, then the clock's tick.
    async fn fold(&mut self) -> Result<(), SimError> {
        let every = self.plan.checkpoint_every;
        for _ in 0..plan::ROUNDS_PER_STEP_MAX {
            self.arm(&[Op::RecordFolded, Op::AppendDecisions, Op::SaveCheckpoint]);
            let Some(writer) = self.writer.as_mut() else {
                break;
            };
            let round = writer.round(every, &mut self.hashes).await?;
            let seq = writer.seq();
            match round {
                Round::Idle => break,
                Round::Folded {
                    count,
                    decisions,
                    checkpoint,
                } => {
                    let decided = decisions.iter().filter(|(_, d)| !d.is_empty()).count();
                    self.trace.line(
                        self.now_ms,
                        format!(
                            "folded {count} to {seq}, {decided} decided, checkpoint {checkpoint:?}"
                        ),
                    );
                }
                Round::Stopped(error) => {
                    self.outcome.log_faults += 1;
                    self.trace
                        .line(self.now_ms, format!("writer stopped: {error}"));
                    let back = self.now_ms + self.chaos.between(200, 3_000);
                    self.crash_writer(back, "stopped by the log");
                }
            }
        }
        self.disarm()?;
        self.tick().await
    }

    async fn tick(&mut self) -> Result<(), SimError> {
        self.arm(&[Op::Append]);
        let now = self.now();
        let id = self.world.id();
        let ticked = match self.writer.as_mut() {
            Some(writer) => writer.tick_if_due(now, id).await,
            None => Ok(None),
        };
        self.disarm()?;
        match ticked {
            Ok(Some(seq)) => self.trace.line(self.now_ms, format!("tick at {seq}")),
            Ok(None) => {}
            Err(error) if is_injected(&error) => {
                // The clock task fails and takes the hub down with it.
                self.outcome.log_faults += 1;
                let back = self.now_ms + self.chaos.between(200, 3_000);
                self.crash_writer(back, "stopped by a failed tick");
            }
            Err(error) => return Err(error.into()),
        }
        Ok(())
    }

    /// Maybe arms one fault on one of `ops` for the next call.
    fn arm(&mut self, ops: &[Op]) {
        if !self.faulty || !self.chaos.chance(self.plan.log_fault_per_mille) {
            return;
        }
        let op = ops[self.chaos.index(ops.len())];
        let when = if self.chaos.chance(500) {
            When::BeforeCommit
        } else {
            When::AfterCommit
        };
        if let Ok(mut faults) = self.faults.lock() {
            faults.arm(op, when);
        }
        self.trace
            .line(self.now_ms, format!("armed {op:?} {when:?}"));
    }

    fn disarm(&mut self) -> Result<(), SimError> {
        self.faults
            .lock()
            .map(|mut faults| faults.clear())
            .map_err(|_| SimError::Broken("the faults' lock is poisoned".into()))
    }

    /// The fold's clock is the log's: never past the simulated now, whatever agents claim.
    fn check_clock(&self) -> Result<(), SimError> {
        let folded = self.writer.as_ref().and_then(|w| w.state().now());
        match folded {
            Some(time) if time > self.now() => Err(SimError::Broken(format!(
                "the fold's clock {time} is past the log's {}",
                self.now()
            ))),
            _ => Ok(()),
        }
    }

    /// The faults stop: the writer and every agent come back, silences end.
    async fn heal(&mut self) -> Result<(), SimError> {
        self.faulty = false;
        self.disarm()?;
        self.trace.line(self.now_ms, "faults stop");
        self.writer_back_ms = self.now_ms;
        self.restart_writer_if_due().await?;
        for member in &mut self.members {
            member.silent_until_ms = member.silent_until_ms.min(self.now_ms);
            if member.agent.is_none() {
                member.restart_ms = self.now_ms;
            }
        }
        Ok(())
    }

    /// Folds what is left, checkpoints, runs the end checks, and restarts once more.
    async fn finish(&mut self) -> Result<(), SimError> {
        self.fold().await?;
        let Some(mut writer) = self.writer.take() else {
            return Err(SimError::Broken("the writer is down at the end".into()));
        };
        writer.checkpoint().await?;
        let (seq, state) = (writer.seq(), writer.state().clone());
        self.outcome.inputs = writer.log().last_seq().await?;
        if self.outcome.inputs != seq {
            return Err(SimError::Broken(format!(
                "the writer folded {seq} of {} inputs",
                self.outcome.inputs
            )));
        }
        checks::acknowledged_kept(writer.log(), &self.acknowledged).await?;
        self.outcome.stored_copies = checks::exactly_once(writer.log()).await?;
        checks::clean_fold_matches(writer.log(), &state, seq).await?;
        checks::explained(writer.log(), &state).await?;
        writer.crash();
        let restarted = Writer::open(&self.path, Arc::clone(&self.faults)).await?;
        if restarted.seq() != seq || restarted.state().hash()? != state.hash()? {
            return Err(SimError::Broken(format!(
                "a restart at the end restored input {} with a different state",
                restarted.seq()
            )));
        }
        restarted.crash();
        self.outcome.simulated_ms = self.now_ms;
        self.trace.line(
            self.now_ms,
            format!("done: {seq} inputs, state {}", state.hash()?),
        );
        self.outcome.trace_digest = self.trace.digest();
        self.outcome.trace_lines = self.trace.len();
        Ok(())
    }
}
