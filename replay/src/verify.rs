//! Checking that this build decides what the log recorded, input by input and both ways: every
//! recorded decision must have its recomputed partner and every recomputed one its recorded
//! partner, and a recompute that stops short of a recorded batch is a failure, never a pass.
//!
//! Decisions recorded under this build's decision version must match exactly; a difference is
//! a determinism failure. Decisions recorded under an older version were upcast when read and
//! are compared in a form both versions share (keys as display strings); a difference there is
//! a warning: an intended change of behaviour moves the decision version,
//! and must not leave existing logs unverifiable or hubs unable to restart.

use std::collections::{BTreeMap, VecDeque};

use flotilla_core::Decisions;
use flotilla_core::StateHash;
use flotilla_eventstore::{DecisionBatch, LogReader};

use crate::{FoldError, Folder, READ_BATCH_MAX, ReplayError};

/// Most older-version differences a verification keeps in full (the rest are only counted).
pub const WARNINGS_KEPT_MAX: usize = 100;

/// One input whose recomputed decisions differ from the recorded ones.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Divergence {
    /// The input's sequence.
    pub seq: u64,
    /// The decision version the recorded side was written under.
    pub recorded_version: u16,
    /// What the log holds (upcast to today's types when older).
    pub recorded: Decisions,
    /// What this build decides.
    pub recomputed: Decisions,
}

impl Divergence {
    /// Whether the recorded side was written under this build's decision version, so the
    /// difference is a determinism failure rather than an intended change of behaviour.
    #[must_use]
    pub fn is_strict(&self) -> bool {
        self.recorded_version == flotilla_core::wire::DECISION_VERSION
    }
}

impl std::fmt::Display for Divergence {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "input {}: recorded (decision version {}) {:?}, this build decides {:?}",
            self.seq, self.recorded_version, self.recorded, self.recomputed
        )
    }
}

/// Compares one recorded batch with the recomputed decisions of its inputs, both ways, and
/// returns every input that differs.
///
/// # Errors
/// [`ReplayError::Incomplete`] when `recomputed` does not cover every input of the batch, and
/// [`ReplayError::MalformedBatch`] when the batch lists an input outside its range.
pub fn compare_batch(
    recorded: &DecisionBatch,
    recomputed: &[(u64, Decisions)],
) -> Result<Vec<Divergence>, ReplayError> {
    let range = recorded.first_input_seq..=recorded.last_input_seq;
    let mut listed: BTreeMap<u64, &Decisions> = BTreeMap::new();
    for (seq, decisions) in &recorded.decisions {
        if !range.contains(seq) || listed.insert(*seq, decisions).is_some() {
            return Err(ReplayError::MalformedBatch {
                first: recorded.first_input_seq,
                last: recorded.last_input_seq,
                seq: *seq,
            });
        }
    }
    let computed: BTreeMap<u64, &Decisions> = recomputed
        .iter()
        .filter(|(seq, _)| range.contains(seq))
        .map(|(seq, decisions)| (*seq, decisions))
        .collect();
    let none = Decisions::new();
    let mut differences = Vec::new();
    for seq in range.clone() {
        let Some(ours) = computed.get(&seq) else {
            return Err(ReplayError::Incomplete { seq });
        };
        let theirs = listed.get(&seq).copied().unwrap_or(&none);
        let differs = if recorded.version == flotilla_core::wire::DECISION_VERSION {
            theirs != *ours
        } else {
            stable_form(theirs) != stable_form(ours)
        };
        if differs {
            differences.push(Divergence {
                seq,
                recorded_version: recorded.version,
                recorded: theirs.clone(),
                recomputed: (*ours).clone(),
            });
        }
    }
    Ok(differences)
}

/// Decisions in a form that every decision version shares, for comparing an older version's
/// (upcast) record with today's: their JSON with every object key written as its display
/// string (`kind/name`, `kind/namespace/name`) — what version 1 recorded, which had no API
/// group for other kinds than the fleet's.
fn stable_form(decisions: &Decisions) -> serde_json::Value {
    let mut value = serde_json::to_value(decisions).unwrap_or(serde_json::Value::Null);
    keys_as_display(&mut value);
    value
}

fn keys_as_display(value: &mut serde_json::Value) {
    use serde_json::Value;
    match value {
        Value::Object(map) => {
            if let Some(display) = key_display(map) {
                *value = Value::String(display);
                return;
            }
            map.values_mut().for_each(keys_as_display);
        }
        Value::Array(items) => items.iter_mut().for_each(keys_as_display),
        _ => {}
    }
}

/// The display form of a JSON object that is an `ObjectKey` (exactly its four fields).
fn key_display(map: &serde_json::Map<String, serde_json::Value>) -> Option<String> {
    let field = |name: &str| map.get(name).and_then(serde_json::Value::as_str);
    if map.len() != 4 || field("group").is_none() {
        return None;
    }
    let (kind, namespace, name) = (field("kind")?, field("namespace")?, field("name")?);
    Some(if namespace.is_empty() {
        format!("{kind}/{name}")
    } else {
        format!("{kind}/{namespace}/{name}")
    })
}

/// What a verification found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Verification {
    /// The last input sequence checked (every input from 1 up to it was).
    pub checked: u64,
    /// Differences in decisions recorded under an older decision version (at most
    /// [`WARNINGS_KEPT_MAX`]).
    pub warnings: Vec<Divergence>,
    /// How many such differences there were in all.
    pub warnings_total: u64,
    /// The checkpoints whose recorded state hash the fold matched: how many, and the newest.
    pub checkpoints: (u64, Option<u64>),
}

impl Verification {
    /// Notes the differences of one batch: a strict one is an error, older ones are warnings.
    ///
    /// # Errors
    /// [`ReplayError::Diverged`] at the first difference under this build's decision version.
    pub fn note(&mut self, differences: Vec<Divergence>) -> Result<(), ReplayError> {
        for difference in differences {
            if difference.is_strict() {
                return Err(ReplayError::Diverged(Box::new(difference)));
            }
            self.warnings_total += 1;
            if self.warnings.len() < WARNINGS_KEPT_MAX {
                self.warnings.push(difference);
            }
        }
        Ok(())
    }
}

/// Folds the whole log from zero and checks every recorded decision batch, and the hash of
/// every readable checkpoint, against what this build decides and folds, batch by batch.
///
/// # Errors
/// The first difference under this build's decision version (or a checkpoint whose state this
/// build folds differently), a recorded range that is not contiguous, a recompute that stops
/// short, or a log failure.
pub async fn verify<L: LogReader>(log: &L) -> Result<Verification, ReplayError> {
    let last = log.last_decided_seq().await?;
    let mut checkpoints = recorded_hashes(log, last).await?;
    let mut folder = crate::start(log).await?;
    let mut verification = Verification::default();
    let mut matched = (0, None);
    while folder.seq < last {
        let batches = log.read_decisions(folder.seq + 1, READ_BATCH_MAX).await?;
        if batches.is_empty() {
            return Err(ReplayError::Incomplete {
                seq: folder.seq + 1,
            });
        }
        for batch in &batches {
            if batch.first_input_seq != folder.seq + 1 {
                return Err(FoldError::Gap {
                    folded: folder.seq,
                    found: batch.first_input_seq,
                }
                .into());
            }
            let (recomputed, hash_divergence) =
                fold_batch(log, &mut folder, batch, &mut checkpoints, &mut matched).await?;
            let differences = compare_batch(batch, &recomputed)?;
            // Whichever comes first in the log is the divergence to report.
            let first_strict = differences.iter().find(|d| d.is_strict()).map(|d| d.seq);
            if let Some(hash) = hash_divergence
                && first_strict.is_none_or(|seq| hash.seq < seq)
            {
                return Err(ReplayError::HashDiverged(Box::new(hash)));
            }
            verification.note(differences)?;
            verification.checked = folder.seq;
            verification.checkpoints = matched;
        }
    }
    Ok(verification)
}

/// A checkpoint whose recorded state hash differs from the state this build folds there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HashDivergence {
    /// The checkpoint's input sequence.
    pub seq: u64,
    /// The hash the checkpoint recorded.
    pub recorded: StateHash,
    /// The hash of the state this build folds to at `seq`.
    pub recomputed: StateHash,
}

impl std::fmt::Display for HashDivergence {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the state after input {} (a checkpoint): recorded hash {}, this build folds to {}",
            self.seq, self.recorded, self.recomputed
        )
    }
}

/// Folds one batch's inputs, stopping at every checkpoint inside it to compare state hashes;
/// returns the recomputed decisions and the first checkpoint that differs.
async fn fold_batch<L: LogReader>(
    log: &L,
    folder: &mut Folder,
    batch: &DecisionBatch,
    checkpoints: &mut VecDeque<(u64, StateHash)>,
    matched: &mut (u64, Option<u64>),
) -> Result<(Vec<(u64, Decisions)>, Option<HashDivergence>), ReplayError> {
    let recorded = std::slice::from_ref(batch);
    let mut recomputed = Vec::new();
    let mut divergence = None;
    while let Some((seq, hash)) = checkpoints.front().cloned()
        && seq <= batch.last_input_seq
    {
        checkpoints.pop_front();
        recomputed.extend(folder.catch_up_following(log, seq, recorded).await?);
        let ours = folder.state.hash()?;
        if folder.seq != seq || divergence.is_some() {
            continue;
        }
        if ours == hash {
            matched.0 += 1;
            matched.1 = Some(seq);
        } else {
            divergence = Some(HashDivergence {
                seq,
                recorded: hash,
                recomputed: ours,
            });
        }
    }
    recomputed.extend(
        folder
            .catch_up_following(log, batch.last_input_seq, recorded)
            .await?,
    );
    Ok((recomputed, divergence))
}

/// `(sequence, recorded hash)` of every readable checkpoint up to `last`, ascending. Older
/// checkpoint versions are never read (the stores skip them), so every hash listed was taken
/// under this build's state layout.
async fn recorded_hashes<L: LogReader>(
    log: &L,
    last: u64,
) -> Result<VecDeque<(u64, StateHash)>, ReplayError> {
    let mut hashes = VecDeque::new();
    let mut bound = last;
    // Each checkpoint found lowers the bound, so this ends after at most one load per
    // checkpoint kept.
    while let Some(checkpoint) = log.load_checkpoint_before(bound).await? {
        if checkpoint.seq == 0 || checkpoint.seq > bound {
            break;
        }
        hashes.push_front((checkpoint.seq, checkpoint.hash));
        bound = checkpoint.seq - 1;
    }
    Ok(hashes)
}
