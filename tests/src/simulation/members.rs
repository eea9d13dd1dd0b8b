//! Simulated member clusters, the `sim` applier's model (`adapters/agent/src/sim.rs`,
//! `adapters/cli/src/loadgen/members.rs`): each agent beats every heartbeat period; follows its
//! cluster's Works as the hub serves them (`flotilla_projections::works_for_cluster`, what the
//! agent's watch reads); applies a new Work after a drawn delay (sometimes failing, and then
//! trying again); reports it applied, then available once its objects are ready; and, like the
//! real agent, posts a report only when the hub's Work status differs from what it would say.
//!
//! The cluster (what is applied there) survives an agent crash; the agent's memory (applies
//! under way, what it last sent) does not, and a restarted agent reads its Works from the hub
//! again. Each agent's clock may be wrong: it claims times that are off by its skew.

use std::collections::BTreeMap;

use chrono::{DateTime, Duration, Utc};
use flotilla_core::{Differences, Envelope, Heartbeat, Input, SCHEMA_VERSION, State, WorkReport};
use serde_json::Value;

use super::rng::Rng;

/// How often an agent compares its Works with the cluster.
pub const RESYNC_MS: u64 = 3_000;
/// Apply delay, shortest and longest.
const APPLY_DELAY_MS: (u64, u64) = (200, 4_000);
/// Time until applied objects are ready, shortest and longest.
const READY_DELAY_MS: (u64, u64) = (0, 6_000);
/// A failed apply is tried again after this long.
const APPLY_RETRY_MS: u64 = 10_000;
/// The same report is not posted again sooner than this.
const REPORT_RESEND_MS: u64 = 10_000;

/// What is applied on a cluster for one placement.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Placed {
    /// The Work's resource index.
    pub index: u64,
    /// Whether the apply succeeded.
    pub ok: bool,
    /// When it was applied.
    pub applied_ms: u64,
    /// When its objects are ready.
    pub ready_ms: u64,
}

/// The agent's memory: lost when it crashes.
#[derive(Debug, Clone, Default)]
pub struct Agent {
    next_beat_ms: u64,
    next_resync_ms: u64,
    /// Applies under way: placement → (index, done at).
    applying: BTreeMap<String, (u64, u64)>,
    /// Last report posted per placement: what it said, and when.
    sent: BTreeMap<String, ((u64, bool, bool), u64)>,
}

/// One member cluster and its agent.
#[derive(Debug, Clone)]
pub struct Member {
    /// The cluster's name.
    pub name: String,
    /// Labelled `environment: canary`.
    pub canary: bool,
    /// How wrong the agent's clock is, in seconds.
    pub skew_secs: i64,
    /// Heartbeat period.
    pub period_ms: u64,
    /// What is applied on the cluster, by placement name.
    pub cluster: BTreeMap<String, Placed>,
    /// The agent, `None` while it is down.
    pub agent: Option<Agent>,
    /// When a down agent comes back.
    pub restart_ms: u64,
    /// Until when the cluster cannot reach the hub (its messages are lost, it reads nothing).
    pub silent_until_ms: u64,
}

/// What a member's agent needs from the simulation for one step.
pub struct StepInput<'a> {
    /// Simulated now, in ms since the start.
    pub now_ms: u64,
    /// The same instant as a time.
    pub now: DateTime<Utc>,
    /// The hub's state, when the agent can read it.
    pub hub: Option<&'a State>,
    /// Share of applies that fail, per mille.
    pub apply_fail_per_mille: u64,
}

impl Member {
    /// A member named `name`, its agent starting at `now_ms`.
    #[must_use]
    pub fn new(name: String, canary: bool, skew_secs: i64, period_ms: u64, now_ms: u64) -> Self {
        Self {
            name,
            canary,
            skew_secs,
            period_ms,
            cluster: BTreeMap::new(),
            agent: Some(Agent::started(now_ms)),
            restart_ms: 0,
            silent_until_ms: 0,
        }
    }

    /// Whether the member reaches the hub at `now_ms`.
    #[must_use]
    pub fn reachable(&self, now_ms: u64) -> bool {
        now_ms >= self.silent_until_ms
    }

    /// The agent process dies; it comes back at `restart_ms`.
    pub fn crash(&mut self, restart_ms: u64) {
        self.agent = None;
        self.restart_ms = restart_ms;
    }

    /// What the agent sends in this step (nothing while it is down).
    pub fn step(&mut self, input: &StepInput<'_>, rng: &mut Rng) -> Vec<Envelope> {
        if self.agent.is_none() && input.now_ms >= self.restart_ms {
            self.agent = Some(Agent::started(input.now_ms));
        }
        let Some(mut agent) = self.agent.take() else {
            return Vec::new();
        };
        let mut out = Vec::new();
        if input.now_ms >= agent.next_beat_ms {
            out.push(self.envelope(rng, input.now, Input::Heartbeat(self.beat())));
            agent.next_beat_ms = input.now_ms + self.period_ms;
        }
        self.finish_applies(&mut agent, input, rng, &mut out);
        let hub = input.hub.filter(|_| self.reachable(input.now_ms));
        if let Some(state) = hub.filter(|_| input.now_ms >= agent.next_resync_ms) {
            self.resync(&mut agent, state, input, rng, &mut out);
            agent.next_resync_ms = input.now_ms + RESYNC_MS;
        }
        self.agent = Some(agent);
        out
    }

    fn beat(&self) -> Heartbeat {
        Heartbeat {
            cluster: self.name.clone(),
            ..Heartbeat::default()
        }
    }

    /// Applies whose delay has passed land on the cluster and are reported at once.
    fn finish_applies(
        &mut self,
        agent: &mut Agent,
        input: &StepInput<'_>,
        rng: &mut Rng,
        out: &mut Vec<Envelope>,
    ) {
        let done: Vec<(String, u64)> = agent
            .applying
            .iter()
            .filter(|(_, (_, at))| *at <= input.now_ms)
            .map(|(placement, (index, _))| (placement.clone(), *index))
            .collect();
        for (placement, index) in done {
            agent.applying.remove(&placement);
            let (low, high) = READY_DELAY_MS;
            let placed = Placed {
                index,
                ok: !rng.chance(input.apply_fail_per_mille),
                applied_ms: input.now_ms,
                ready_ms: input.now_ms + rng.between(low, high),
            };
            self.cluster.insert(placement.clone(), placed);
            let said = said(&placed, input.now_ms);
            agent.sent.insert(placement.clone(), (said, input.now_ms));
            out.push(self.report(rng, input.now, &placement, said));
        }
    }

    /// Compares the hub's Works with the cluster: starts applies, re-posts reports the hub
    /// does not show, and removes what no Work asks for any more.
    fn resync(
        &mut self,
        agent: &mut Agent,
        state: &State,
        input: &StepInput<'_>,
        rng: &mut Rng,
        out: &mut Vec<Envelope>,
    ) {
        let works: Vec<WorkView> = flotilla_projections::works_for_cluster(state, &self.name)
            .iter()
            .filter_map(WorkView::of)
            .collect();
        self.cluster
            .retain(|placement, _| works.iter().any(|w| &w.placement == placement));
        for work in works {
            let placed = self.cluster.get(&work.placement).copied();
            let stale = placed.is_none_or(|p| p.index != work.index);
            let retry =
                placed.is_some_and(|p| !p.ok && p.applied_ms + APPLY_RETRY_MS <= input.now_ms);
            if stale || retry {
                let applying = agent.applying.get(&work.placement).map(|(i, _)| *i);
                if applying != Some(work.index) {
                    let (low, high) = APPLY_DELAY_MS;
                    let at = input.now_ms + rng.between(low, high);
                    agent
                        .applying
                        .insert(work.placement.clone(), (work.index, at));
                }
                continue;
            }
            let Some(placed) = placed else { continue };
            let said = said(&placed, input.now_ms);
            let hub_says = (work.index, work.applied, work.available);
            let recent = agent
                .sent
                .get(&work.placement)
                .is_some_and(|(last, at)| *last == said && at + REPORT_RESEND_MS > input.now_ms);
            if hub_says != said && !recent {
                agent
                    .sent
                    .insert(work.placement.clone(), (said, input.now_ms));
                out.push(self.report(rng, input.now, &work.placement, said));
            }
        }
    }

    fn report(
        &self,
        rng: &mut Rng,
        now: DateTime<Utc>,
        placement: &str,
        (index, applied, available): (u64, bool, bool),
    ) -> Envelope {
        let report = WorkReport {
            cluster: self.name.clone(),
            placement: placement.to_owned(),
            namespace: None,
            resource_index: index,
            applied: Some(applied),
            available: applied.then_some(available),
            trackable: true,
            message: if applied {
                String::new()
            } else {
                "simulated apply failure".to_owned()
            },
            failed_manifests: Vec::new(),
            differences: Differences::default(),
        };
        self.envelope(rng, now, Input::WorkReport(report))
    }

    fn envelope(&self, rng: &mut Rng, now: DateTime<Utc>, payload: Input) -> Envelope {
        Envelope {
            id: rng.id(),
            // The log's time replaces it on append.
            time: now,
            claimed_time: Some(now + Duration::seconds(self.skew_secs)),
            source: format!("agent/{}", self.name),
            schema_version: SCHEMA_VERSION,
            payload,
            principal: flotilla_core::Principal::Agent {
                cluster: self.name.clone(),
            },
        }
    }
}

impl Agent {
    fn started(now_ms: u64) -> Self {
        Self {
            next_beat_ms: now_ms,
            next_resync_ms: now_ms,
            ..Self::default()
        }
    }
}

/// What a report on `placed` says at `now_ms`: index, applied, available.
fn said(placed: &Placed, now_ms: u64) -> (u64, bool, bool) {
    (
        placed.index,
        placed.ok,
        placed.ok && now_ms >= placed.ready_ms,
    )
}

/// What an agent reads from one Work object.
#[derive(Debug, Clone, PartialEq, Eq)]
struct WorkView {
    placement: String,
    index: u64,
    applied: bool,
    available: bool,
}

impl WorkView {
    fn of(work: &Value) -> Option<Self> {
        let labels = work.pointer("/metadata/labels")?;
        let placement = labels.get("kubernetes-fleet.io/parent-CRP")?.as_str()?;
        let index = labels
            .get("kubernetes-fleet.io/parent-resource-snapshot-index")?
            .as_str()?
            .parse()
            .ok()?;
        let condition = |kind: &str| {
            work.pointer("/status/conditions")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .any(|c| c["type"] == kind && c["status"] == "True")
        };
        Some(Self {
            placement: placement.to_owned(),
            index,
            applied: condition("Applied"),
            available: condition("Available"),
        })
    }
}
