//! A checkpoint's state in sections that decode side by side.
//!
//! The state's encoding is one bincode struct, its fields one after another with nothing
//! between them, so the same bytes can be written field by field: the bytes (and so the
//! state hash) are exactly [`State`]'s encoding. A checkpoint also stores where three of those
//! fields begin, which cuts the bytes into four sections — the members, their heartbeat
//! deadlines, the placements (with their bindings) and the rest — each decoded on its own
//! thread while another hashes the whole. At fleet scale decoding is most of what reading a
//! checkpoint costs, so a seek waits for the largest section instead of all four.

use std::collections::{BTreeMap, BTreeSet};

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::codec::{CodecError, checkpoint_within, decode_checkpoint, encode_checkpoint_into};
use crate::model::ObjectKey;
use crate::state::{ClusterName, Members, Placement, Resource, State, StateHash};

/// Bytes of the section table after a sectioned state: where the heartbeat deadlines, the
/// placements and the rest begin, as `u64` little-endian offsets into the state's bytes.
pub(crate) const TABLE_BYTES: usize = 3 * 8;

/// Below this many bytes a state decodes on the calling thread: threads cost more than they
/// save on a small fleet.
const PARALLEL_FROM: usize = 1 << 20;

/// Where the sections after the first begin.
pub(crate) type Sections = [u64; 3];

/// The fields before the heartbeat deadlines.
#[derive(Serialize)]
struct FrontRef<'a> {
    now: &'a Option<DateTime<Utc>>,
    resource_version: u64,
    members: &'a Members,
}

#[derive(Deserialize)]
struct Front {
    now: Option<DateTime<Utc>>,
    resource_version: u64,
    #[serde(deserialize_with = "crate::model::bulk::map")]
    members: Members,
}

#[derive(Deserialize)]
struct Deadlines(#[serde(deserialize_with = "deadlines")] BTreeSet<(DateTime<Utc>, ClusterName)>);

/// A heartbeat deadline as the state encodes it, a `(time, cluster)` tuple, with the time's
/// text read through `time_text`'s fast path: the same bytes as chrono's own, whose general
/// parser was about a twentieth of reading a million-cluster checkpoint (one per member).
#[derive(Deserialize)]
struct Deadline(
    #[serde(with = "crate::time_text")] DateTime<Utc>,
    ClusterName,
);

/// The deadlines, collected at once rather than inserted one by one (`model::bulk::set`).
fn deadlines<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> Result<BTreeSet<(DateTime<Utc>, ClusterName)>, D::Error> {
    let items: Vec<Deadline> = Vec::deserialize(deserializer)?;
    Ok(items
        .into_iter()
        .map(|Deadline(at, cluster)| (at, cluster))
        .collect())
}

/// The fields after the placements, in [`State`]'s order.
#[derive(Serialize)]
struct RestRef<'a> {
    resources: &'a BTreeMap<ObjectKey, Resource>,
    overrides: &'a BTreeMap<ObjectKey, crate::overrides::Override>,
    retired_overrides: &'a BTreeMap<ObjectKey, Vec<crate::overrides::OverrideSnapshot>>,
    rollout_deadlines: &'a BTreeSet<(DateTime<Utc>, ObjectKey)>,
    strategies: &'a BTreeMap<ObjectKey, crate::staged::Strategy>,
    update_runs: &'a BTreeMap<ObjectKey, crate::staged::run::UpdateRun>,
    approvals: &'a BTreeMap<ObjectKey, crate::staged::run::ApprovalRequest>,
    run_deadlines: &'a BTreeSet<(DateTime<Utc>, ObjectKey)>,
    disruptions: &'a crate::eviction::Disruptions,
    partitioned_rollouts: &'a BTreeMap<ObjectKey, crate::rollout::partitioned::Plan>,
}

#[derive(Deserialize)]
struct Rest {
    resources: BTreeMap<ObjectKey, Resource>,
    overrides: BTreeMap<ObjectKey, crate::overrides::Override>,
    retired_overrides: BTreeMap<ObjectKey, Vec<crate::overrides::OverrideSnapshot>>,
    rollout_deadlines: BTreeSet<(DateTime<Utc>, ObjectKey)>,
    strategies: BTreeMap<ObjectKey, crate::staged::Strategy>,
    update_runs: BTreeMap<ObjectKey, crate::staged::run::UpdateRun>,
    approvals: BTreeMap<ObjectKey, crate::staged::run::ApprovalRequest>,
    run_deadlines: BTreeSet<(DateTime<Utc>, ObjectKey)>,
    disruptions: crate::eviction::Disruptions,
    partitioned_rollouts: BTreeMap<ObjectKey, crate::rollout::partitioned::Plan>,
}

/// Writes `state`'s encoding to `out` section by section; returns the bytes written and where
/// the sections after the first begin.
///
/// # Errors
/// When the state exceeds [`crate::codec::CHECKPOINT_BYTES_MAX`], or `out` fails.
pub(crate) fn encode<W: std::io::Write>(
    state: &State,
    out: &mut W,
) -> Result<(usize, Sections), CodecError> {
    let mut written = encode_checkpoint_into(
        &FrontRef {
            now: &state.now,
            resource_version: state.resource_version,
            members: &state.members,
        },
        out,
    )?;
    let deadlines = written;
    written += encode_checkpoint_into(&state.heartbeat_deadlines, out)?;
    let placements = written;
    written += encode_checkpoint_into(&state.placements, out)?;
    let rest = written;
    written += encode_checkpoint_into(
        &RestRef {
            resources: &state.resources,
            overrides: &state.overrides,
            retired_overrides: &state.retired_overrides,
            rollout_deadlines: &state.rollout_deadlines,
            strategies: &state.strategies,
            update_runs: &state.update_runs,
            approvals: &state.approvals,
            run_deadlines: &state.run_deadlines,
            disruptions: &state.disruptions,
            partitioned_rollouts: &state.partitioned_rollouts,
        },
        out,
    )?;
    checkpoint_within(written)?;
    Ok((written, [deadlines, placements, rest].map(|at| at as u64)))
}

/// The section table's bytes.
pub(crate) fn table(sections: Sections) -> [u8; TABLE_BYTES] {
    let mut bytes = [0; TABLE_BYTES];
    for (chunk, at) in bytes.chunks_exact_mut(8).zip(sections) {
        chunk.copy_from_slice(&at.to_le_bytes());
    }
    bytes
}

/// Splits a sectioned state's bytes from the table after them.
///
/// # Errors
/// When the table is missing or its offsets do not cut the bytes in order.
pub(crate) fn split(bytes: &[u8]) -> Result<(&[u8], [usize; 3]), CodecError> {
    let at = bytes
        .len()
        .checked_sub(TABLE_BYTES)
        .ok_or(CodecError::Truncated(bytes.len()))?;
    let (state, table) = bytes.split_at(at);
    let mut offsets = [0_usize; 3];
    for (offset, chunk) in offsets.iter_mut().zip(table.chunks_exact(8)) {
        let mut word = [0; 8];
        word.copy_from_slice(chunk);
        *offset = usize::try_from(u64::from_le_bytes(word)).unwrap_or(usize::MAX);
    }
    let [a, b, c] = offsets;
    if !(a <= b && b <= c && c <= state.len()) {
        return Err(CodecError::Truncated(bytes.len()));
    }
    Ok((state, offsets))
}

/// Decodes a sectioned state whose encoding must hash to `expected`: the sections and the
/// hash side by side when the state is large, one after another when it is small.
///
/// # Errors
/// [`CodecError::CheckpointHash`] when the bytes are not the state hashed; otherwise when a
/// section does not decode.
pub(crate) fn decode(
    bytes: &[u8],
    [a, b, c]: [usize; 3],
    expected: &StateHash,
) -> Result<State, CodecError> {
    let parts = (&bytes[..a], &bytes[a..b], &bytes[b..c], &bytes[c..]);
    if bytes.len() < PARALLEL_FROM {
        check_hash(&StateHash::of_encoding(bytes), expected)?;
        let decoded = (
            decode_checkpoint(parts.0),
            decode_checkpoint(parts.1),
            decode_checkpoint(parts.2),
            decode_checkpoint(parts.3),
        );
        return assemble(decoded);
    }
    let (hash, decoded) = std::thread::scope(|scope| {
        let hash = scope.spawn(|| StateHash::of_encoding(bytes));
        let deadlines = scope.spawn(|| decode_checkpoint(parts.1));
        let placements = scope.spawn(|| decode_checkpoint(parts.2));
        let rest = scope.spawn(|| decode_checkpoint(parts.3));
        let front = decode_checkpoint(parts.0);
        (
            joined(hash),
            (front, joined(deadlines), joined(placements), joined(rest)),
        )
    });
    check_hash(&hash, expected)?;
    assemble(decoded)
}

/// A section thread's result; a panic in one is re-raised here, as if decoded in line.
fn joined<T>(handle: std::thread::ScopedJoinHandle<'_, T>) -> T {
    handle
        .join()
        .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
}

fn check_hash(computed: &StateHash, expected: &StateHash) -> Result<(), CodecError> {
    if computed == expected {
        return Ok(());
    }
    Err(CodecError::CheckpointHash {
        stored: expected.0.clone(),
        computed: computed.0.clone(),
    })
}

type Decoded = (
    Result<Front, CodecError>,
    Result<Deadlines, CodecError>,
    Result<BTreeMap<ObjectKey, Placement>, CodecError>,
    Result<Rest, CodecError>,
);

/// The state from its decoded sections; the caches it never encodes start empty, as when it
/// is decoded whole.
fn assemble((front, deadlines, placements, rest): Decoded) -> Result<State, CodecError> {
    let (front, Deadlines(heartbeat_deadlines), placements, rest) =
        (front?, deadlines?, placements?, rest?);
    Ok(State {
        now: front.now,
        resource_version: front.resource_version,
        members: front.members,
        heartbeat_deadlines,
        placements,
        resources: rest.resources,
        overrides: rest.overrides,
        retired_overrides: rest.retired_overrides,
        rollout_deadlines: rest.rollout_deadlines,
        strategies: rest.strategies,
        update_runs: rest.update_runs,
        approvals: rest.approvals,
        run_deadlines: rest.run_deadlines,
        disruptions: rest.disruptions,
        partitioned_rollouts: rest.partitioned_rollouts,
        ..State::default()
    })
}
