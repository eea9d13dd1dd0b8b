//! One binding packed into a fixed-size row: no allocation of its own, times as nanoseconds,
//! the resource index as `u32`, the few distinct reasons, run names, override snapshot sets
//! and (policy index, generation) pairs as codes into the placement's tables. What a row
//! cannot hold exactly (a report's details, a PickN score, an index past `u32`, a time outside
//! `i64` nanoseconds, a code past a full table) keeps the whole binding aside
//! ([`Packed::Aside`]), so a binding always comes back equal to what went in.

use std::sync::Arc;

use chrono::{DateTime, Utc};
use compact_str::CompactString;

use crate::model::ClusterName;
use crate::placement::binding::{Binding, BindingState, ClusterScore, OverrideSnapshots, Pick};
use crate::work_status::WorkStatus;

/// The most entries each code table holds; a binding needing another is kept aside.
const TABLE_MAX: usize = 255;
/// A time the row has no value for (`rollout_started_at` of a binding never bound).
const NO_TIME: i64 = i64::MIN;
/// An index the row has no value for (`resource_index` of a binding never bound).
const NO_INDEX: u32 = u32::MAX;

/// Bits of [`Row::flags`].
mod flag {
    /// `state`: two bits.
    pub const STATE: u16 = 0;
    /// `previous_state`: two bits, 0 for none.
    pub const PREVIOUS: u16 = 2;
    /// `decision.selected`.
    pub const SELECTED: u16 = 1 << 4;
    /// `decision.score` is `Some` (and zero: another score keeps the binding aside).
    pub const SCORED: u16 = 1 << 5;
    /// `report` is `Some`.
    pub const REPORTED: u16 = 1 << 6;
    /// `report.applied`: two bits, 0 for none.
    pub const APPLIED: u16 = 7;
    /// `report.available`: two bits.
    pub const AVAILABLE: u16 = 9;
    /// `report.trackable`.
    pub const TRACKABLE: u16 = 1 << 11;
    /// `report.diff_reported`: two bits.
    pub const DIFF_REPORTED: u16 = 12;
    /// The binding is kept aside; the row only holds its place.
    pub const ASIDE: u16 = 1 << 14;
}

/// A binding in 48 bytes: times, resource index, flags and table codes, and the rollout
/// index's judgement of it. Its cluster, the row's key, is held by its chunk
/// ([`super::chunk`]).
#[derive(Debug, Clone)]
pub(super) struct Row {
    created: i64,
    rollout_started_at: i64,
    reported_at: i64,
    available_since: i64,
    resource_index: u32,
    name_suffix: [u8; 4],
    flags: u16,
    reason: u8,
    run: u8,
    overrides: u8,
    /// The code of its (policy index, generation): every binding a scheduling pass touched
    /// shares one.
    policy: u8,
    /// What the rollout's index last judged of the binding ([`crate::rollout::index`]):
    /// derived, not part of the binding; 0 when not judged. It fills the row's padding.
    pub tag: u8,
}

/// The distinct reasons, staged run names, override snapshot sets and (policy index,
/// generation) pairs of a placement's bindings, which rows refer to by code. Entries are not
/// removed one by one: when one table is full, the bindings are coded again against tables
/// holding only what they use ([`Tables::may_compact`]); a binding needing an entry past a
/// full table is kept aside.
#[derive(Debug, Clone, Default)]
pub(super) struct Tables {
    reasons: Vec<CompactString>,
    runs: Vec<Arc<str>>,
    overrides: Vec<OverrideSnapshots>,
    policies: Vec<(u64, u64)>,
    /// Entries added since the tables were last made afresh.
    pub added: usize,
}

/// How a binding was stored.
pub(super) enum Packed {
    /// Entirely in the row.
    Row(Row),
    /// In the row's place only; the binding itself is to be kept aside.
    Aside(Row),
    /// As [`Packed::Aside`], because a table it needed an entry of was full.
    Full(Row),
}

/// Why a binding does not fit a row.
enum Unfit {
    /// It holds what no row holds.
    Aside,
    /// A table it needs an entry of is full.
    Full,
}

impl Row {
    /// Whether the binding is kept aside.
    pub fn is_aside(&self) -> bool {
        self.flags & flag::ASIDE != 0
    }

    /// A row holding only a binding's place, the binding kept aside.
    fn placeholder() -> Self {
        Self {
            created: 0,
            rollout_started_at: 0,
            reported_at: 0,
            available_since: 0,
            resource_index: 0,
            name_suffix: [0; 4],
            flags: flag::ASIDE,
            reason: 0,
            run: 0,
            overrides: 0,
            policy: 0,
            tag: 0,
        }
    }

    /// Packs `binding`, stored under `cluster`, adding codes to `tables` as needed.
    pub fn pack(cluster: &str, binding: &Binding, tables: &mut Arc<Tables>) -> Packed {
        match Self::try_pack(cluster, binding, tables) {
            Ok(row) => Packed::Row(row),
            Err(Unfit::Aside) => Packed::Aside(Self::placeholder()),
            Err(Unfit::Full) => Packed::Full(Self::placeholder()),
        }
    }

    fn try_pack(cluster: &str, binding: &Binding, tables: &mut Arc<Tables>) -> Result<Self, Unfit> {
        // A binding whose overrides fail keeps a message and a work: rare, so held aside.
        if binding.cluster != cluster || binding.override_failure.is_some() {
            return Err(Unfit::Aside);
        }
        let Pick {
            selected,
            score,
            reason,
        } = &binding.decision;
        let mut flags = (state_bits(binding.state) << flag::STATE)
            | (previous_bits(binding.previous_state) << flag::PREVIOUS);
        flags |= bit(*selected, flag::SELECTED);
        match score {
            None => {}
            Some(score) if *score == ClusterScore::default() => flags |= flag::SCORED,
            Some(_) => return Err(Unfit::Aside),
        }
        // A report is on the work the binding carries (one on an earlier work is refused,
        // and a new work clears it), so the row holds no index of its own for it.
        let (reported_at, available_since) = match &binding.report {
            None => (0, 0),
            Some(report) if binding.resource_index == Some(report.resource_index) => {
                flags |= fits(report_flags(report))?;
                (
                    fits(nanos(report.reported_at))?,
                    fits(nanos(report.available_since))?,
                )
            }
            Some(_) => return Err(Unfit::Aside),
        };
        let created = fits(nanos(binding.created))?;
        let rollout_started_at = fits(binding.rollout_started_at.map_or(Some(NO_TIME), nanos))?;
        let resource_index = fits(binding.resource_index.map_or(Some(NO_INDEX), index))?;
        let codes = Tables::codes(tables, reason, binding).ok_or(Unfit::Full)?;
        Ok(Self {
            created,
            rollout_started_at,
            reported_at,
            available_since,
            resource_index,
            name_suffix: binding.name_suffix,
            flags,
            reason: codes.0,
            run: codes.1,
            overrides: codes.2,
            policy: codes.3,
            tag: 0,
        })
    }

    /// The binding this row, stored under `cluster`, holds (`None` for a row kept aside).
    pub fn unpack(&self, cluster: ClusterName, tables: &Tables) -> Option<Binding> {
        if self.is_aside() {
            return None;
        }
        let flags = self.flags;
        let (policy_index, generation) = *tables.policies.get(usize::from(self.policy))?;
        Some(Binding {
            name_suffix: self.name_suffix,
            cluster,
            state: state_of(flags >> flag::STATE)?,
            previous_state: previous_of(flags >> flag::PREVIOUS),
            policy_index,
            resource_index: (self.resource_index != NO_INDEX)
                .then_some(u64::from(self.resource_index)),
            decision: Pick {
                selected: flags & flag::SELECTED != 0,
                score: (flags & flag::SCORED != 0).then(ClusterScore::default),
                reason: tables.reasons.get(usize::from(self.reason))?.clone(),
            },
            generation,
            rollout_started_at: (self.rollout_started_at != NO_TIME)
                .then(|| DateTime::from_timestamp_nanos(self.rollout_started_at)),
            report: (flags & flag::REPORTED != 0).then(|| self.report(flags)),
            override_snapshots: match self.overrides {
                0 => OverrideSnapshots::default(),
                code => tables.overrides.get(usize::from(code) - 1)?.clone(),
            },
            created: DateTime::from_timestamp_nanos(self.created),
            update_run: match self.run {
                0 => None,
                code => Some(tables.runs.get(usize::from(code) - 1)?.clone()),
            },
            override_failure: None,
        })
    }

    /// The report the row holds (its flags say it holds one).
    fn report(&self, flags: u16) -> WorkStatus {
        let mut report = WorkStatus::new(
            u64::from(self.resource_index),
            DateTime::from_timestamp_nanos(self.reported_at),
        );
        report.applied = option_of(flags >> flag::APPLIED);
        report.available = option_of(flags >> flag::AVAILABLE);
        report.trackable = flags & flag::TRACKABLE != 0;
        report.diff_reported = option_of(flags >> flag::DIFF_REPORTED);
        report.available_since = DateTime::from_timestamp_nanos(self.available_since);
        report
    }

    /// The binding's state, read without unpacking it (`None` for a row kept aside).
    pub fn state(&self) -> Option<BindingState> {
        (!self.is_aside())
            .then(|| state_of(self.flags >> flag::STATE))
            .flatten()
    }
}

impl Tables {
    /// Whether making the tables afresh may be worth it: as many entries were added since
    /// they last were as half a table holds, so that bindings using more entries than a table
    /// holds are not coded again and again.
    pub fn may_compact(&self) -> bool {
        self.added >= TABLE_MAX / 2
    }

    /// The codes of a binding's reason, run, override snapshots and (policy index,
    /// generation), added as needed; `None` when a table is full.
    fn codes(tables: &mut Arc<Self>, reason: &str, binding: &Binding) -> Option<(u8, u8, u8, u8)> {
        let placed = (binding.policy_index, binding.generation);
        let policy = code_of(tables, Table::POLICIES, |p| *p == placed, || placed)?;
        let reason = code_of(tables, Table::REASONS, |r| r == reason, || reason.into())?;
        let run = match &binding.update_run {
            None => 0,
            Some(run) => 1 + code_of(tables, Table::RUNS, |r| **r == **run, || run.clone())?,
        };
        let wanted = &binding.override_snapshots;
        let overrides = if wanted.0.is_empty() && wanted.1.is_empty() {
            0
        } else {
            1 + code_of(tables, Table::OVERRIDES, |o| o == wanted, || wanted.clone())?
        };
        Some((reason, run, overrides, policy))
    }
}

/// One of the [`Tables`], read and written.
struct Table<T: 'static> {
    read: fn(&Tables) -> &Vec<T>,
    write: fn(&mut Tables) -> &mut Vec<T>,
}

impl Table<CompactString> {
    const REASONS: Self = Self {
        read: |t| &t.reasons,
        write: |t| &mut t.reasons,
    };
}

impl Table<Arc<str>> {
    const RUNS: Self = Self {
        read: |t| &t.runs,
        write: |t| &mut t.runs,
    };
}

impl Table<(u64, u64)> {
    const POLICIES: Self = Self {
        read: |t| &t.policies,
        write: |t| &mut t.policies,
    };
}

impl Table<OverrideSnapshots> {
    const OVERRIDES: Self = Self {
        read: |t| &t.overrides,
        write: |t| &mut t.overrides,
    };
}

/// The code of the entry `is` finds in `table`, added with `make` when there is none;
/// `None` when the table is full. Found entries are read through the shared tables, so a
/// snapshot sharing them is copied only when an entry is added.
fn code_of<T>(
    tables: &mut Arc<Tables>,
    table: Table<T>,
    is: impl Fn(&T) -> bool,
    make: impl FnOnce() -> T,
) -> Option<u8> {
    if let Some(code) = (table.read)(tables).iter().position(is) {
        return u8::try_from(code).ok();
    }
    let tables = Arc::make_mut(tables);
    let entries = (table.write)(tables);
    if entries.len() >= TABLE_MAX {
        return None;
    }
    entries.push(make());
    let code = u8::try_from(entries.len() - 1).ok();
    tables.added += 1;
    code
}

/// What a row holds of a field, or that it holds none ([`Unfit::Aside`]).
fn fits<T>(held: Option<T>) -> Result<T, Unfit> {
    held.ok_or(Unfit::Aside)
}

/// `mask` when `on`.
fn bit(on: bool, mask: u16) -> u16 {
    if on { mask } else { 0 }
}

/// Two bits for a state.
fn state_bits(state: BindingState) -> u16 {
    match state {
        BindingState::Scheduled => 0,
        BindingState::Bound => 1,
        BindingState::Unscheduled => 2,
    }
}

/// The state of two bits (the low two of `bits`).
fn state_of(bits: u16) -> Option<BindingState> {
    match bits & 3 {
        0 => Some(BindingState::Scheduled),
        1 => Some(BindingState::Bound),
        2 => Some(BindingState::Unscheduled),
        _ => None,
    }
}

/// Two bits for an optional state, 0 for none.
fn previous_bits(state: Option<BindingState>) -> u16 {
    state.map_or(0, |s| state_bits(s) + 1)
}

/// The optional state of two bits.
fn previous_of(bits: u16) -> Option<BindingState> {
    match bits & 3 {
        0 => None,
        n => state_of(n - 1),
    }
}

/// Two bits for an optional flag, 0 for none.
fn option_bits(value: Option<bool>) -> u16 {
    match value {
        None => 0,
        Some(false) => 1,
        Some(true) => 2,
    }
}

/// The optional flag of two bits.
fn option_of(bits: u16) -> Option<bool> {
    match bits & 3 {
        1 => Some(false),
        2 => Some(true),
        _ => None,
    }
}

/// A report's flags; `None` when it has details, which a row does not hold.
fn report_flags(report: &WorkStatus) -> Option<u16> {
    if report.has_details() {
        return None;
    }
    Some(
        flag::REPORTED
            | (option_bits(report.applied) << flag::APPLIED)
            | (option_bits(report.available) << flag::AVAILABLE)
            | bit(report.trackable, flag::TRACKABLE)
            | (option_bits(report.diff_reported) << flag::DIFF_REPORTED),
    )
}

/// An index as a row holds it; `None` past what it holds.
fn index(value: u64) -> Option<u32> {
    u32::try_from(value).ok().filter(|v| *v != NO_INDEX)
}

/// A time as nanoseconds since the epoch; `None` when that would not give it back exactly.
fn nanos(time: DateTime<Utc>) -> Option<i64> {
    let nanos = time.timestamp_nanos_opt()?;
    (nanos != NO_TIME && DateTime::from_timestamp_nanos(nanos) == time).then_some(nanos)
}
