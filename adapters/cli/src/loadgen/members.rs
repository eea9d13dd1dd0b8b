//! The simulated members, in process: one heartbeat per cluster per period at a seeded offset
//! (a ring walked as time passes, so a million clusters cost a sorted array, not a million
//! timers), and the `sim` applier's answer to new work — a report, applied and available, after
//! a seeded delay — plus the approvals a staged run asks for.

use std::collections::BTreeMap;

use chrono::Utc;
use flotilla_core::query::placement::BindingState;
use flotilla_core::{Decision, Decisions, Envelope, Heartbeat, Input, State, WorkReport};
use uuid::Uuid;

use super::fleet::cluster_name;
use super::seeded::Seeded;

/// Source of the simulated members' events.
pub const SOURCE: &str = "simulate";
/// Shortest and longest delay between new work and its report, in milliseconds.
const REPORT_DELAY_MS: (u64, u64) = (500, 5_000);
/// Delay before a requested approval is given, in milliseconds.
const APPROVAL_DELAY_MS: u64 = 2_000;

/// Something a member (or the operator) will send later.
#[derive(Debug, Clone)]
enum Pending {
    /// The `sim` applier's report on new work: applied and available.
    Report {
        cluster: String,
        placement: String,
        resource_index: u64,
    },
    /// An approval a staged run asked for.
    Approve(String),
}

/// The fleet's members and what they will send.
#[derive(Debug)]
pub struct Members {
    /// `(offset within the period in ms, cluster index)`, by offset.
    ring: Vec<(u64, u32)>,
    /// The next ring position to beat.
    cursor: usize,
    /// Start of the current period, in ms since the simulation started.
    period_start_ms: u64,
    period_ms: u64,
    pending: BTreeMap<u64, Vec<Pending>>,
    seeded: Seeded,
}

impl Members {
    /// `clusters` members beating every `period_ms`, from `now_ms` on, offsets fixed by
    /// `seeded`.
    #[must_use]
    pub fn new(clusters: u32, period_ms: u64, now_ms: u64, mut seeded: Seeded) -> Self {
        let mut ring: Vec<(u64, u32)> = (0..clusters)
            .map(|index| (seeded.below(period_ms), index))
            .collect();
        ring.sort_unstable();
        Self {
            ring,
            cursor: 0,
            period_start_ms: now_ms,
            period_ms: period_ms.max(1),
            pending: BTreeMap::new(),
            seeded,
        }
    }

    /// Bytes the load generator's own tables take (the ring and what is pending), roughly.
    #[must_use]
    pub fn table_bytes(&self) -> usize {
        self.ring.capacity() * std::mem::size_of::<(u64, u32)>()
            + self.pending.values().map(Vec::len).sum::<usize>() * 64
    }

    /// The heartbeats due by `now_ms` (at most one period's worth: a driver that fell behind
    /// by more sends each cluster's beat once).
    pub fn due_heartbeats(&mut self, now_ms: u64) -> Vec<Envelope> {
        let mut beats = Vec::new();
        while beats.len() < self.ring.len() {
            if self.cursor == self.ring.len() {
                self.cursor = 0;
                self.period_start_ms += self.period_ms;
            }
            let (offset, index) = self.ring[self.cursor];
            if self.period_start_ms + offset > now_ms {
                break;
            }
            beats.push(envelope(Input::Heartbeat(Heartbeat {
                cluster: cluster_name(u64::from(index)),
                ..Heartbeat::default()
            })));
            self.cursor += 1;
        }
        beats
    }

    /// Schedules what the members answer to the hub's decisions: a report for every cluster
    /// a rollout bound to new work, an approval for every request.
    pub fn on_decisions<'a>(
        &mut self,
        decided: impl IntoIterator<Item = &'a (u64, Decisions)>,
        now_ms: u64,
    ) {
        for decision in decided.into_iter().flat_map(|(_, decisions)| decisions) {
            let (delay, pending) = match decision {
                Decision::RolloutStarted {
                    placement,
                    cluster,
                    resource_index,
                } => {
                    let (low, high) = REPORT_DELAY_MS;
                    let delay = low + self.seeded.below(high - low);
                    let report = Pending::Report {
                        cluster: cluster.clone(),
                        placement: placement.name.to_string(),
                        resource_index: *resource_index,
                    };
                    (delay, report)
                }
                Decision::ApprovalRequested { request, .. } => (
                    APPROVAL_DELAY_MS,
                    Pending::Approve(request.name.to_string()),
                ),
                _ => continue,
            };
            self.pending
                .entry(now_ms + delay)
                .or_default()
                .push(pending);
        }
    }

    /// Schedules a report for every binding the state has bound to work its cluster has not
    /// reported on yet: how the members catch up after the join, or when the hub's memory of
    /// recent decisions dropped some.
    pub fn reconcile(&mut self, state: &State, now_ms: u64) {
        for (key, placement) in state.placements() {
            for binding in placement.bindings.values() {
                let Some(resource_index) = binding.resource_index else {
                    continue;
                };
                let reported = binding.report.as_ref().map(|r| r.resource_index);
                if binding.state != BindingState::Bound || reported == Some(resource_index) {
                    continue;
                }
                let (low, high) = REPORT_DELAY_MS;
                let due = now_ms + low + self.seeded.below(high - low);
                self.pending.entry(due).or_default().push(Pending::Report {
                    cluster: binding.cluster.to_string(),
                    placement: key.name.to_string(),
                    resource_index,
                });
            }
        }
    }

    /// Reports and approvals due by `now_ms`.
    pub fn due_answers(&mut self, now_ms: u64) -> Vec<Envelope> {
        let later = self.pending.split_off(&(now_ms + 1));
        let due = std::mem::replace(&mut self.pending, later);
        due.into_values().flatten().map(answer).collect()
    }

    /// How many answers wait to be sent.
    #[must_use]
    pub fn pending(&self) -> usize {
        self.pending.values().map(Vec::len).sum()
    }
}

fn answer(pending: Pending) -> Envelope {
    match pending {
        Pending::Report {
            cluster,
            placement,
            resource_index,
        } => envelope(Input::WorkReport(WorkReport::available(
            cluster,
            placement,
            resource_index,
        ))),
        Pending::Approve(name) => envelope(Input::Approve {
            name,
            namespace: None,
            reason: None,
            message: None,
        }),
    }
}

/// An event from the load generator; its time is the log's (assigned on append).
fn envelope(input: Input) -> Envelope {
    Envelope::new(Uuid::now_v7(), Utc::now(), SOURCE, input)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_cluster_beats_once_per_period() {
        let mut members = Members::new(100, 1_000, 0, Seeded::new(3));
        let first = members.due_heartbeats(999);
        assert_eq!(first.len(), 100);
        assert!(members.due_heartbeats(999).is_empty());
        let second = members.due_heartbeats(1_999);
        assert_eq!(second.len(), 100);
        // Far behind: each cluster still beats only once per call.
        assert_eq!(members.due_heartbeats(60_000).len(), 100);
    }

    #[test]
    fn new_work_is_reported_after_a_seeded_delay() {
        let mut members = Members::new(1, 1_000, 0, Seeded::new(3));
        let started = Decision::RolloutStarted {
            placement: flotilla_core::model::ObjectKey::cluster_scoped(
                "placement.kubernetes-fleet.io",
                "ClusterResourcePlacement",
                "sim-0",
            ),
            cluster: cluster_name(0),
            resource_index: 1,
        };
        members.on_decisions(&[(7, vec![started])], 0);
        assert!(members.due_answers(REPORT_DELAY_MS.0 - 1).is_empty());
        let reports = members.due_answers(REPORT_DELAY_MS.1);
        assert_eq!(reports.len(), 1);
        assert!(matches!(&reports[0].payload, Input::WorkReport(r) if r.resource_index == 1));
        assert_eq!(members.pending(), 0);
    }
}
