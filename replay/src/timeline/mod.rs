//! The timeline of one placement, member cluster or staged update run: every input that touched
//! it, in log order, with its event time, source and the decisions it caused.
//!
//! Contract:
//! - A timeline covers the inputs **after** point `after` up to and including point `until`
//!   (both default to the log's ends), the same span a [`crate::diff()`] between the two points
//!   summarizes.
//! - An input touches a subject when its payload names it (a heartbeat or report of the
//!   cluster, an apply or delete of the object, an approval of one of the run's requests) or
//!   one of its decisions does (a binding of the placement to the cluster, a stage of the run
//!   starting). A run's decisions also touch the placement it rolls out. With several subjects
//!   given, an input must touch every one of them.
//! - The decisions shown are the recorded ones; inputs the log has no decisions for yet (the
//!   writer has not decided them) are folded again and marked `recorded: false`. An input whose
//!   payload names every subject shows all its decisions; one that only touched the subjects
//!   through some decisions shows those that name a subject and no other object of a sort
//!   asked for (with `--placement P --cluster C`, not another cluster's binding), and counts
//!   the others.
//! - Text: one line per input as `flotilla events` prints it (`#seq time source kind subject`),
//!   its decisions indented beneath. Deterministic: the order is the log's, times are the log's.

mod inputs;
pub(crate) mod names;

use chrono::{DateTime, Utc};
use flotilla_core::model::ObjectKey;
use flotilla_core::query::staged::Scope;
use flotilla_core::{Decision, Envelope};
use flotilla_eventstore::LogReader;
use flotilla_projections::{actor, decision_line, event_line};
use serde::Serialize;

pub(crate) use inputs::{Inputs, LoggedInput};
pub(crate) use names::{About, Relations};

use crate::ReplayError;
use crate::seek::{Point, fold_to, resolve};

/// A `ClusterResourcePlacement` (no namespace) or a `ResourcePlacement` in a namespace.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PlacementRef {
    /// The `ResourcePlacement`'s namespace; `None` for a `ClusterResourcePlacement`.
    pub namespace: Option<String>,
    /// Its name.
    pub name: String,
}

impl PlacementRef {
    /// The placement's object key.
    #[must_use]
    pub fn key(&self) -> ObjectKey {
        Scope {
            namespace: self.namespace.as_deref().unwrap_or_default().into(),
            run_name: "".into(),
        }
        .placement_key(&self.name)
    }
}

/// A `ClusterStagedUpdateRun` (no namespace) or a `StagedUpdateRun` in a namespace.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RunRef {
    /// The `StagedUpdateRun`'s namespace; `None` for a `ClusterStagedUpdateRun`.
    pub namespace: Option<String>,
    /// Its name.
    pub name: String,
}

impl RunRef {
    /// The run's object key.
    #[must_use]
    pub fn key(&self) -> ObjectKey {
        Scope {
            namespace: self.namespace.as_deref().unwrap_or_default().into(),
            run_name: self.name.as_str().into(),
        }
        .run_key()
    }
}

/// What a timeline follows; every subject given must be touched.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct TimelineFilter {
    /// A placement.
    pub placement: Option<PlacementRef>,
    /// A member cluster.
    pub cluster: Option<String>,
    /// A staged update run.
    pub run: Option<RunRef>,
}

/// Which of a timeline's inputs to keep, beyond the subjects they touch: the sifts
/// `flotilla events` has, for a timeline read back from the log.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct InputSift {
    /// Input kinds (`apply`, `heartbeat`, `report`, `approve`, …); any when empty.
    pub kinds: Vec<String>,
    /// Who sent it: `token/NAME`, `agent/CLUSTER`, a bare token or cluster name, or a source
    /// as written.
    pub actor: Option<String>,
    /// Only inputs that decided something.
    pub decided: bool,
    /// Only inputs the fold rejected.
    pub rejected: bool,
}

impl InputSift {
    /// Whether `entry` passes.
    #[must_use]
    pub fn keeps(&self, entry: &TimelineEntry) -> bool {
        let kind = self.kinds.is_empty() || self.kinds.contains(&entry.input);
        let decided = !self.decided || !entry.decisions.is_empty() || entry.decisions_omitted > 0;
        let rejected = !self.rejected
            || entry
                .decisions
                .iter()
                .any(|line| matches!(line.decision, Decision::Rejected { .. }));
        let sent = self
            .actor
            .as_deref()
            .is_none_or(|actor| sent_by(entry, actor));
        kind && decided && rejected && sent
    }
}

/// Whether `actor` names who sent the entry's input: the authenticated sender (with or
/// without its `token/` or `agent/` prefix) or the source as written.
fn sent_by(entry: &TimelineEntry, actor: &str) -> bool {
    let authenticated = entry.actor.split('[').next().unwrap_or_default();
    let bare = authenticated
        .strip_prefix("token/")
        .or_else(|| authenticated.strip_prefix("agent/"));
    authenticated == actor || bare == Some(actor) || entry.source == actor
}

impl Timeline {
    /// The timeline with only the entries `sift` keeps.
    #[must_use]
    pub fn sifted(mut self, sift: &InputSift) -> Self {
        self.entries.retain(|entry| sift.keeps(entry));
        self
    }
}

/// The inputs that touched the filter's subjects.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Timeline {
    /// The span starts after this input.
    pub after: u64,
    /// And ends with this one: the point asked for, or where the entries reached their limit.
    pub until: u64,
    /// Whether the entries reached their limit before the point asked for: ask again after
    /// `until` for the rest.
    pub truncated: bool,
    /// The inputs, in log order.
    pub entries: Vec<TimelineEntry>,
}

/// One input that touched the subjects.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TimelineEntry {
    /// Its sequence.
    pub seq: u64,
    /// Its event time (the log's).
    pub time: DateTime<Utc>,
    /// Who published it, as the poster wrote it.
    pub source: String,
    /// Who sent it, as the hub authenticated it (`token/NAME`, `agent/CLUSTER`, with the
    /// written source in brackets when it says something else), or the source where the hub
    /// authenticated no one.
    pub actor: String,
    /// Its kind (`apply`, `heartbeat`, `report`, …).
    pub input: String,
    /// Its line, as `flotilla events` prints it.
    pub line: String,
    /// Whether its decisions are the recorded ones (`false`: folded again).
    pub recorded: bool,
    /// The decisions shown.
    pub decisions: Vec<DecisionLine>,
    /// How many of its decisions touched none of the subjects and are not shown.
    pub decisions_omitted: usize,
}

/// One decision with its line.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DecisionLine {
    /// Its line, as `flotilla events` prints it.
    pub line: String,
    /// The decision.
    pub decision: Decision,
}

impl Timeline {
    /// One line per input, its decisions indented beneath.
    #[must_use]
    pub fn text(&self) -> String {
        let mut text = String::new();
        for entry in &self.entries {
            entry.write(&mut text);
        }
        if self.entries.is_empty() {
            text.push_str(&format!(
                "no input after #{} up to #{} touched it\n",
                self.after, self.until
            ));
        }
        if self.truncated {
            text.push_str(&format!(
                "(stopped at #{} after {} inputs: ask again after #{} for more)\n",
                self.until,
                self.entries.len(),
                self.until
            ));
        }
        text
    }
}

impl TimelineEntry {
    /// Its line, then its decisions indented (and how many are not shown).
    pub(crate) fn write(&self, text: &mut String) {
        text.push_str(&self.line);
        if !self.recorded {
            text.push_str(" (not decided yet: folded again)");
        }
        text.push('\n');
        for decision in &self.decisions {
            text.push_str(&format!("    {}\n", decision.line));
        }
        match self.decisions_omitted {
            0 => {}
            1 => text.push_str("    (1 other decision)\n"),
            count => text.push_str(&format!("    ({count} other decisions)\n")),
        }
    }
}

/// Most entries one timeline lists; past it the timeline stops early ([`Timeline::truncated`]).
pub const TIMELINE_ENTRIES_MAX: usize = 100_000;

/// The timeline of the filter's subjects over the inputs after `after` up to `until` (`None`:
/// the log's start and end), at most [`TIMELINE_ENTRIES_MAX`] entries.
///
/// # Errors
/// A log read failure, or a fold failure where inputs have no recorded decisions.
pub async fn timeline<L: LogReader>(
    log: &L,
    filter: &TimelineFilter,
    after: Option<Point>,
    until: Option<Point>,
) -> Result<Timeline, ReplayError> {
    timeline_at_most(log, filter, (after, until), TIMELINE_ENTRIES_MAX).await
}

/// As [`timeline`], listing at most `entries_max` entries.
///
/// # Errors
/// As [`timeline`].
pub async fn timeline_at_most<L: LogReader>(
    log: &L,
    filter: &TimelineFilter,
    (after, until): (Option<Point>, Option<Point>),
    entries_max: usize,
) -> Result<Timeline, ReplayError> {
    let after = match after {
        Some(point) => resolve(log, point).await?,
        None => 0,
    };
    let until = resolve(log, until.unwrap_or(Point::Seq(u64::MAX))).await?;
    let subjects = Subjects::of(filter);
    let mut known = if subjects.needs_relations() && after > 0 {
        Relations::of(&fold_to(log, after).await?.state)
    } else {
        Relations::default()
    };
    let mut inputs = Inputs::new(log, after, until).await?;
    let mut entries = Vec::new();
    let mut stopped = None;
    'pages: loop {
        let page = inputs.next_page().await?;
        if page.is_empty() {
            break;
        }
        for input in page {
            known.learn(&input);
            if let Some(entry) = subjects.entry(&input, &known) {
                entries.push(entry);
                if entries.len() >= entries_max {
                    stopped = Some(input.seq);
                    break 'pages;
                }
            }
        }
    }
    Ok(Timeline {
        after,
        until: stopped.unwrap_or(until),
        truncated: stopped.is_some_and(|seq| seq < until),
        entries,
    })
}

/// The subjects as object keys.
#[derive(Debug, Clone, Default)]
struct Subjects {
    placement: Option<ObjectKey>,
    cluster: Option<String>,
    run: Option<ObjectKey>,
}

impl Subjects {
    fn of(filter: &TimelineFilter) -> Self {
        Self {
            placement: filter.placement.as_ref().map(PlacementRef::key),
            cluster: filter.cluster.clone(),
            run: filter.run.as_ref().map(RunRef::key),
        }
    }

    /// Whether matching needs to know which run belongs to which placement and request.
    fn needs_relations(&self) -> bool {
        self.placement.is_some() || self.run.is_some()
    }

    /// Which subjects `about` names, as `(placement, cluster, run)`, and whether it names
    /// another object of a sort that is wanted (another cluster, placement or run).
    fn named(&self, about: &About, known: &Relations) -> ([bool; 3], bool) {
        let run = about.run.clone().or_else(|| {
            about
                .request
                .as_ref()
                .and_then(|request| known.run_of_request(request))
        });
        let placement_of_run = run.as_ref().and_then(|run| known.placement_of_run(run));
        let placement = about.placement.as_ref().or(placement_of_run);
        let hits = [
            self.placement.is_some() && placement == self.placement.as_ref(),
            self.cluster.is_some() && about.cluster == self.cluster,
            self.run.is_some() && run == self.run,
        ];
        let other = |wanted: Option<&ObjectKey>, found: Option<&ObjectKey>| {
            wanted.is_some() && found.is_some() && wanted != found
        };
        let conflict = other(self.placement.as_ref(), placement)
            || other(self.run.as_ref(), run.as_ref())
            || (self.cluster.is_some() && about.cluster.is_some() && about.cluster != self.cluster);
        (hits, conflict)
    }

    fn wanted(&self) -> [bool; 3] {
        [
            self.placement.is_some(),
            self.cluster.is_some(),
            self.run.is_some(),
        ]
    }

    /// The entry of an input that touches every subject: all its decisions when its payload
    /// names every subject, else those that name a subject and no other object of a wanted
    /// sort.
    fn entry(&self, input: &LoggedInput, known: &Relations) -> Option<TimelineEntry> {
        let envelope = input.envelope.as_ref()?;
        let wanted = self.wanted();
        let (payload, _) = self.named(&About::of_input(&envelope.payload), known);
        let decisions: Vec<([bool; 3], bool)> = input
            .decisions
            .iter()
            .map(|decision| self.named(&About::of_decision(decision), known))
            .collect();
        let touched =
            (0..3).all(|i| !wanted[i] || payload[i] || decisions.iter().any(|(d, _)| d[i]));
        if !touched {
            return None;
        }
        let whole = (0..3).all(|i| !wanted[i] || payload[i]);
        Some(entry_of(input, envelope, |index| {
            let (hits, conflict) = decisions[index];
            whole || (hits.iter().any(|hit| *hit) && !conflict)
        }))
    }
}

/// The entry of one input, showing the decisions `shown` keeps (by position).
pub(crate) fn entry_of(
    input: &LoggedInput,
    envelope: &Envelope,
    shown: impl Fn(usize) -> bool,
) -> TimelineEntry {
    let decisions: Vec<DecisionLine> = input
        .decisions
        .iter()
        .enumerate()
        .filter(|(index, _)| shown(*index))
        .map(|(_, decision)| DecisionLine {
            line: decision_line(input.seq, decision),
            decision: decision.clone(),
        })
        .collect();
    TimelineEntry {
        seq: input.seq,
        time: envelope.time,
        source: envelope.source.clone(),
        actor: actor(envelope),
        input: envelope.payload.kind_name().to_owned(),
        line: event_line(input.seq, envelope),
        recorded: input.recorded,
        decisions_omitted: input.decisions.len() - decisions.len(),
        decisions,
    }
}
