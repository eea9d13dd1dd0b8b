//! How one side of a what-if went: after every input, each placement's bindings are looked at
//! (resource index and readiness), and every change is a step of that cluster's course. From
//! the courses come the outcomes: when a rollout finished, or where it stalled.

use std::collections::{BTreeMap, BTreeSet};

use chrono::{DateTime, Utc};
use flotilla_core::State;
use flotilla_core::model::ObjectKey;
use flotilla_core::query::placement::{Binding, BindingState, Placement};
use flotilla_core::query::rollout::readiness::{ApplyMode, Readiness, judge};
use serde::Serialize;

/// Most steps kept per cluster and side; later ones are counted in [`Course::steps_dropped`].
pub const COURSE_STEPS_MAX: usize = 1_000;

/// A point of a side's history: the recorded input it followed, and its time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Moment {
    /// The recorded input (the what-if's own applies count as the fork point's).
    pub seq: u64,
    /// Event time.
    pub time: DateTime<Utc>,
}

/// What a cluster had of a placement.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Status {
    /// No binding.
    None,
    /// Scheduled, no work yet.
    Scheduled,
    /// Work given, no report on it yet.
    Pending,
    /// Applied and available (the rollout counts it ready).
    Ready,
    /// The apply failed.
    Failed,
    /// Reported not available (or on another index).
    Unavailable,
    /// Released; its work is being removed.
    Unscheduled,
}

impl Status {
    /// The word the text output uses.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Status::None => "none",
            Status::Scheduled => "scheduled",
            Status::Pending => "pending",
            Status::Ready => "ready",
            Status::Failed => "failed",
            Status::Unavailable => "unavailable",
            Status::Unscheduled => "unscheduled",
        }
    }
}

/// A cluster's look at one moment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Look {
    /// The resource index its binding carries.
    pub resource_index: Option<u64>,
    /// Its status.
    pub status: Status,
}

/// One change of a cluster's look.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Step {
    /// When.
    #[serde(flatten)]
    pub at: Moment,
    /// The look from then on.
    #[serde(flatten)]
    pub look: Look,
}

/// One cluster's course on one side: its look at the fork point, then every change.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Course {
    /// The steps, the first at the fork point (at most [`COURSE_STEPS_MAX`]).
    pub steps: Vec<Step>,
    /// Steps past the limit, not kept.
    pub steps_dropped: u64,
    /// When it first carried the side's final resource index (its new version).
    pub new_version: Option<Moment>,
    /// When it was first ready on that index.
    pub ready: Option<Moment>,
}

/// How a side's rollout of one placement ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "state", rename_all = "camelCase")]
pub enum Outcome {
    /// Every scheduled cluster carries the latest resource index and is ready, since then.
    #[serde(rename_all = "camelCase")]
    Finished {
        /// Since when.
        at: Moment,
        /// The latest resource index.
        resource_index: u64,
    },
    /// Not finished at the end: the last change, and the clusters behind.
    #[serde(rename_all = "camelCase")]
    Stalled {
        /// The placement's last change on this side.
        since: Moment,
        /// The latest resource index.
        resource_index: Option<u64>,
        /// `cluster (index status)` of each cluster not ready on the latest index.
        behind: Vec<String>,
    },
    /// The placement is gone at the end.
    Deleted,
}

/// Watches one side.
#[derive(Debug, Default)]
pub(crate) struct Observer {
    looks: BTreeMap<ObjectKey, BTreeMap<String, Look>>,
    pub(crate) courses: BTreeMap<ObjectKey, BTreeMap<String, Course>>,
    complete_since: BTreeMap<ObjectKey, Moment>,
    last_change: BTreeMap<ObjectKey, Moment>,
}

impl Observer {
    /// Looks at every placement after an input; a changed look is a step.
    pub(crate) fn observe(&mut self, state: &State, at: Moment) {
        let mut keys: Vec<ObjectKey> = state.placements().keys().cloned().collect();
        keys.extend(self.looks.keys().cloned());
        keys.sort();
        keys.dedup();
        for key in keys {
            let placement = state.placements().get(&key);
            let now = look_all(state, placement);
            let before = self.looks.remove(&key).unwrap_or_default();
            let courses = self.courses.entry(key.clone()).or_default();
            let mut changed = false;
            let gone = Look {
                resource_index: None,
                status: Status::None,
            };
            let clusters: BTreeSet<String> = now.keys().chain(before.keys()).cloned().collect();
            for cluster in clusters {
                let look = now.get(&cluster).copied().unwrap_or(gone);
                let course = courses.entry(cluster.clone()).or_default();
                let previous = before.get(&cluster).copied().or_else(|| {
                    (!course.steps.is_empty() || course.steps_dropped > 0).then_some(gone)
                });
                if previous != Some(look) {
                    course.record(Step { at, look });
                    changed = true;
                }
            }
            if changed {
                self.last_change.insert(key.clone(), at);
            }
            match placement.filter(|p| is_complete(p, &now)) {
                Some(_) => {
                    self.complete_since.entry(key.clone()).or_insert(at);
                }
                None => {
                    self.complete_since.remove(&key);
                }
            }
            if placement.is_some() {
                self.looks.insert(key, now);
            }
        }
    }

    /// The outcome of each placement at the end, and each course with its milestones.
    pub(crate) fn outcome(&self, state: &State, key: &ObjectKey, from: Moment) -> Outcome {
        let Some(placement) = state.placements().get(key) else {
            return Outcome::Deleted;
        };
        let latest = placement.latest_resources().map(|s| s.index);
        match (self.complete_since.get(key), latest) {
            (Some(at), Some(resource_index)) => Outcome::Finished {
                at: *at,
                resource_index,
            },
            _ => {
                let looks = self.looks.get(key).cloned().unwrap_or_default();
                let behind = looks
                    .iter()
                    .filter(|(_, look)| {
                        look.status != Status::Unscheduled
                            && (look.resource_index != latest || look.status != Status::Ready)
                    })
                    .map(|(cluster, look)| format!("{cluster} ({})", look_text(*look)))
                    .collect();
                Outcome::Stalled {
                    since: self.last_change.get(key).copied().unwrap_or(from),
                    resource_index: latest,
                    behind,
                }
            }
        }
    }

    /// Sets each course's milestones against the side's final resource index.
    pub(crate) fn settle(&mut self, state: &State) {
        for (key, courses) in &mut self.courses {
            let latest = state
                .placements()
                .get(key)
                .and_then(|p| p.latest_resources())
                .map(|s| s.index);
            for course in courses.values_mut() {
                let on_latest = |s: &&Step| latest.is_some() && s.look.resource_index == latest;
                course.new_version = course.steps.iter().find(on_latest).map(|s| s.at);
                course.ready = course
                    .steps
                    .iter()
                    .filter(on_latest)
                    .find(|s| s.look.status == Status::Ready)
                    .map(|s| s.at);
            }
        }
    }
}

impl Course {
    /// Keeps the step, or past the limit counts it.
    fn record(&mut self, step: Step) {
        if self.steps.len() < COURSE_STEPS_MAX {
            self.steps.push(step);
        } else {
            self.steps_dropped += 1;
        }
    }
}

/// `1 ready`, `- scheduled`.
#[must_use]
pub fn look_text(look: Look) -> String {
    let index = look
        .resource_index
        .map_or_else(|| "-".to_owned(), |i| i.to_string());
    format!("{index} {}", look.status.as_str())
}

fn look_all(state: &State, placement: Option<&Placement>) -> BTreeMap<String, Look> {
    let (Some(placement), Some(now)) = (placement, state.now()) else {
        return BTreeMap::new();
    };
    placement
        .bindings
        .values()
        .map(|binding| (binding.cluster.to_string(), look(placement, &binding, now)))
        .collect()
}

fn look(placement: &Placement, binding: &Binding, now: DateTime<Utc>) -> Look {
    let period = chrono::Duration::seconds(
        placement
            .spec
            .strategy
            .rolling_update
            .unavailable_period_seconds,
    );
    let status = match (binding.state, binding.resource_index) {
        (BindingState::Unscheduled, _) => Status::Unscheduled,
        (_, None) => Status::Scheduled,
        (_, Some(_)) => match judge(
            binding,
            binding.report.as_ref(),
            ApplyMode::of(placement),
            period,
            now,
        ) {
            Readiness::Ready => Status::Ready,
            Readiness::Failed => Status::Failed,
            Readiness::NotReady | Readiness::ReadyAt(_) if binding.report.is_none() => {
                Status::Pending
            }
            Readiness::NotReady | Readiness::ReadyAt(_) => Status::Unavailable,
        },
    };
    Look {
        resource_index: binding.resource_index,
        status,
    }
}

/// Every scheduled cluster carries the latest index and is ready (and there is one).
fn is_complete(placement: &Placement, looks: &BTreeMap<String, Look>) -> bool {
    let Some(latest) = placement.latest_resources().map(|s| s.index) else {
        return false;
    };
    let mut live = looks
        .values()
        .filter(|l| l.status != Status::Unscheduled)
        .peekable();
    live.peek().is_some()
        && live.all(|l| l.resource_index == Some(latest) && l.status == Status::Ready)
}
