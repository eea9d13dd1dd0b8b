//! Staged update runs at a point: the gates (approvals, timed waits, analyses) between a cluster and its
//! stage's start, and what an unfinished run waits for now — read from the run's status and
//! its approval requests, whose conditions carry the event times they changed at.

use chrono::{DateTime, Utc};
use flotilla_core::State;
use flotilla_core::condition::ConditionStatus;
use flotilla_core::model::ObjectKey;
use flotilla_core::query::staged::Scope;
use flotilla_core::query::staged::approval::APPROVED;
use flotilla_core::query::staged::gates::seconds;
use flotilla_core::query::staged::model::{RunState, TaskType, WaitTime};
use flotilla_core::query::staged::run::UpdateRun;
use flotilla_core::query::staged::{TaskGate, gates_before_stage, open_gates};
use serde::Serialize;

use super::budget::names;
use super::{Wait, WaitReason, clock};

/// A before- or after-stage task of a run: what gated the stages after it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Gate {
    /// The run (`Kind/name`).
    pub run: String,
    /// The stage the task belongs to.
    pub stage: String,
    /// `before` or `after` the stage.
    pub position: String,
    /// `Approval` or `TimedWait`.
    pub task: String,
    /// The approval request's name (Approval).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub request: Option<String>,
    /// When the run created the request.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub requested_at: Option<DateTime<Utc>>,
    /// When someone approved it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub approved_at: Option<DateTime<Utc>>,
    /// What the approver wrote (the `Approved` condition's message), when not the default
    /// `approved`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub approval_message: Option<String>,
    /// Who approved it: the approving input's sender, as the hub authenticated it
    /// (`token/NAME`), when that input is in the explanation's history.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub approved_by: Option<String>,
    /// The soak the approval fell short of, in seconds: it came sooner than that after its
    /// request ([`DEFAULT_MIN_SOAK_SECONDS`] unless the caller asks for another).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub short_of_soak: Option<u64>,
    /// How long a TimedWait waits (Go's duration text, `1m0s`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wait: Option<String>,
    /// When a started TimedWait elapses.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wait_until: Option<DateTime<Utc>>,
    /// When the run saw the task pass (approval accepted, wait elapsed); `None`: not yet.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub passed_at: Option<DateTime<Utc>>,
    /// An Analysis task's query, condition and measurements so far.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub analysis: Option<String>,
    /// When an Analysis task failed its gate, and why.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failed: Option<String>,
    /// A TimedWait's length in seconds.
    #[serde(skip)]
    wait_secs: u64,
}

/// The soak an approval is expected to leave after its request before it is flagged (one
/// minute: the `waitTime` KubeFleet's example strategies put before an approval).
pub const DEFAULT_MIN_SOAK_SECONDS: u64 = 60;

impl Gate {
    /// Milliseconds from the approval request to its approval, once approved.
    #[must_use]
    pub fn approval_delay_ms(&self) -> Option<u64> {
        let delay = self.approved_at? - self.requested_at?;
        u64::try_from(delay.num_milliseconds()).ok()
    }

    /// Flags the approval when it came sooner than `min_soak` seconds after its request.
    pub fn flag_soak(&mut self, min_soak: u64) {
        self.short_of_soak = self
            .approval_delay_ms()
            .filter(|delay| *delay < min_soak.saturating_mul(1_000))
            .map(|_| min_soak);
    }

    /// `approval example-run-after-staging (after stage staging): requested 23:21:54,
    /// approved 23:22:55`.
    pub(crate) fn text(&self, now: Option<DateTime<Utc>>) -> String {
        let at = |time: Option<DateTime<Utc>>| time.map(|t| clock(t, now));
        let whose = format!("({} stage {})", self.position, self.stage);
        if let Some(analysis) = &self.analysis {
            let mut text = format!("analysis {analysis} {whose}");
            match (at(self.passed_at), &self.failed) {
                (Some(passed), _) => text.push_str(&format!(": passed {passed}")),
                (None, Some(why)) => text.push_str(&format!(": failed — {why}")),
                (None, None) => text.push_str(": measuring"),
            }
            return text;
        }
        match (&self.request, &self.wait) {
            (Some(request), _) => {
                let mut text = format!("approval {request} {whose}");
                match at(self.requested_at) {
                    Some(requested) => text.push_str(&format!(": requested {requested}")),
                    None => text.push_str(": not requested yet"),
                }
                match at(self.approved_at) {
                    Some(approved) => text.push_str(&format!(", approved {approved}")),
                    None if self.requested_at.is_some() => text.push_str(", not approved"),
                    None => {}
                }
                if let Some(by) = &self.approved_by {
                    text.push_str(&format!(" by {by}"));
                }
                if let Some(message) = &self.approval_message {
                    text.push_str(&format!(": {message:?}"));
                }
                if let (Some(soak), Some(ms)) = (self.short_of_soak, self.approval_delay_ms()) {
                    text.push_str(&format!(
                        " — {} after its request, under the {soak} s soak",
                        seconds_text(ms)
                    ));
                }
                text
            }
            (None, wait) => {
                let wait = wait.as_deref().unwrap_or("0s");
                let mut text = format!("wait {wait} {whose}");
                match (at(self.passed_at), at(self.wait_until)) {
                    (Some(passed), _) => text.push_str(&format!(": elapsed {passed}")),
                    (None, Some(until)) => text.push_str(&format!(": until {until}")),
                    (None, None) => text.push_str(": not started"),
                }
                text
            }
        }
    }
}

/// One cluster's place in a run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RunCluster {
    /// The run (`Kind/name`).
    pub run: String,
    /// The cluster's stage.
    pub stage: String,
    /// When the run started updating the cluster.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub started_at: Option<DateTime<Utc>>,
    /// When it finished.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub finished_at: Option<DateTime<Utc>>,
    /// Whether it succeeded, once finished.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub succeeded: Option<bool>,
    /// The gates before the cluster's stage could start, in order.
    pub gates: Vec<Gate>,
}

impl RunCluster {
    /// `run ClusterStagedUpdateRun/example-run, stage canary: started 23:23:10, succeeded
    /// 23:23:10`.
    pub(crate) fn text(&self, now: Option<DateTime<Utc>>) -> String {
        let mut text = format!("run {}, stage {}", self.run, self.stage);
        match self.started_at {
            Some(started) => text.push_str(&format!(": started {}", clock(started, now))),
            None => text.push_str(": not started"),
        }
        if let (Some(finished), Some(succeeded)) = (self.finished_at, self.succeeded) {
            let verdict = if succeeded { "succeeded" } else { "failed" };
            text.push_str(&format!(", {verdict} {}", clock(finished, now)));
        }
        text
    }
}

/// The runs that roll out this placement, in key order.
pub(crate) fn runs_of<'a>(
    state: &'a State,
    placement: &ObjectKey,
) -> Vec<(&'a ObjectKey, &'a UpdateRun)> {
    state
        .update_runs()
        .iter()
        .filter(|(key, run)| Scope::of(key).placement_key(&run.spec.placement_name) == *placement)
        .collect()
}

/// Where `cluster` is in `run`, with the gates before its stage: the after-stage tasks of the
/// stages before it and its stage's before-stage tasks.
pub(crate) fn cluster_in_run(
    state: &State,
    key: &ObjectKey,
    run: &UpdateRun,
    cluster: &str,
) -> Option<RunCluster> {
    let (index, position) = *run.status.positions.get(cluster)?;
    let stage = run.status.stages.get(index)?;
    let status = stage.clusters.get(position)?;
    let gates = gates_before_stage(state, key, run, index)
        .iter()
        .map(|gate| Gate::of(key, gate))
        .collect();
    Some(RunCluster {
        run: key.to_string(),
        stage: stage.name.clone(),
        started_at: status.started.as_ref().map(|c| c.last_transition_time),
        finished_at: status.succeeded.as_ref().map(|c| c.last_transition_time),
        succeeded: status
            .succeeded
            .as_ref()
            .map(|c| c.status == ConditionStatus::True),
        gates,
    })
}

impl Gate {
    /// The explanation's form of a task gate the fold reads.
    fn of(key: &ObjectKey, gate: &TaskGate<'_>) -> Self {
        let timed = gate.task_type == TaskType::TimedWait;
        Gate {
            run: key.to_string(),
            stage: gate.stage.to_owned(),
            position: gate.at.position.as_str().to_owned(),
            task: gate.task_type.as_str().to_owned(),
            request: gate.request.map(str::to_owned),
            requested_at: gate.requested_at,
            approved_at: gate.approved_at,
            approval_message: (gate.approval_message.as_deref())
                .filter(|message| *message != APPROVED)
                .map(str::to_owned),
            approved_by: None,
            short_of_soak: None,
            wait: timed.then(|| WaitTime(gate.wait_seconds).to_string()),
            wait_until: gate.wait_until,
            passed_at: gate.passed_at,
            analysis: (gate.task_type == TaskType::Analysis).then(|| analysis_text(gate)),
            failed: gate.failed.map(str::to_owned),
            wait_secs: if timed { gate.wait_seconds } else { 0 },
        }
    }
}

/// An Analysis gate's query and condition, and what the measurements came to.
fn analysis_text(gate: &TaskGate<'_>) -> String {
    let spec = gate.spec;
    let query = spec
        .and_then(|t| t.prometheus.as_ref())
        .map_or_else(String::new, |p| {
            format!("`{}` with `{}`", p.query, p.success_condition)
        });
    let counts = gate.measurements.cloned().unwrap_or_default();
    let count = spec.and_then(|t| t.count).unwrap_or(1);
    let limit = spec.and_then(|t| t.failure_limit).unwrap_or(0);
    format!(
        "{} [{}]: {} of {count} successful, {} failed (failureLimit {limit}), {} errors",
        gate.at.path(),
        query,
        counts.successful,
        counts.failed,
        counts.errors
    )
}

/// What an unfinished run waits for now (nothing for a finished one).
pub(crate) fn run_waits(
    state: &State,
    key: &ObjectKey,
    run: &UpdateRun,
    now: Option<DateTime<Utc>>,
) -> Vec<Wait> {
    if run.is_finished() {
        return Vec::new();
    }
    let not_running = |why: String| vec![Wait::new(WaitReason::RunNotRunning, why)];
    if run.status.initialized.is_none() {
        return not_running(format!("run {key} is not initialized yet"));
    }
    if run.spec.state == RunState::Initialize {
        return not_running(format!(
            "run {key} is initialized but not started (state Initialize)"
        ));
    }
    let mut waits = Vec::new();
    if let Some(stuck) = run
        .status
        .progressing
        .as_ref()
        .filter(|c| c.reason == "UpdateRunStuck")
    {
        let text = format!("run {key} is stuck: {}", stuck.message);
        let since = Some(stuck.last_transition_time);
        waits.push(Wait::new(WaitReason::RunStuck, text).since(since));
    }
    if run.spec.state == RunState::Stop {
        waits.push(Wait::new(
            WaitReason::RunNotRunning,
            format!("run {key} is stopped (state Stop)"),
        ));
    }
    let current = run.status.stages.iter().position(|s| s.succeeded.is_none());
    match current {
        Some(index) => waits.extend(stage_waits(state, key, run, index, now)),
        None => waits.push(Wait::new(
            WaitReason::RunClusters,
            format!("run {key} is removing the work of unscheduled clusters (delete stage)"),
        )),
    }
    waits
}

fn stage_waits(
    state: &State,
    key: &ObjectKey,
    run: &UpdateRun,
    index: usize,
    now: Option<DateTime<Utc>>,
) -> Vec<Wait> {
    let stage = &run.status.stages[index];
    let mut waits = Vec::new();
    let updating: Vec<&flotilla_core::query::staged::run::ClusterStatus> = stage
        .clusters
        .iter()
        .map(std::sync::Arc::as_ref)
        .filter(|c| c.is_updating())
        .collect();
    if !updating.is_empty() {
        let names_updating: Vec<String> = updating.iter().map(|c| c.cluster.to_string()).collect();
        let since = updating
            .iter()
            .filter_map(|c| c.started.as_ref().map(|s| s.last_transition_time))
            .min();
        let text = format!(
            "run {key} stage {}: waiting for {} to finish updating",
            stage.name,
            names(&names_updating)
        );
        let wait = Wait::new(WaitReason::RunClusters, text).with_clusters(names_updating);
        waits.push(wait.since(since));
    }
    for gate in open_gates(state, key, run, index) {
        waits.push(gate_wait(&Gate::of(key, &gate), now));
    }
    waits
}

/// `waiting for approval example-run-after-canary since 23:23:10`, or `waiting 1m0s after
/// stage staging, until 23:22:54`.
fn gate_wait(gate: &Gate, now: Option<DateTime<Utc>>) -> Wait {
    if let Some(analysis) = &gate.analysis {
        let text = format!(
            "waiting for analysis {analysis} {} stage {}",
            gate.position, gate.stage
        );
        return Wait::new(WaitReason::Analysis, text);
    }
    match (&gate.request, &gate.wait) {
        (Some(request), _) => {
            let mut text = format!("waiting for approval {request}");
            if let Some(requested) = gate.requested_at {
                text.push_str(&format!(" since {}", clock(requested, now)));
            }
            if let Some(approved) = gate.approved_at {
                text.push_str(&format!(
                    " (approved {}, not yet seen)",
                    clock(approved, now)
                ));
            }
            Wait::new(WaitReason::Approval, text).since(gate.requested_at)
        }
        (None, wait) => {
            let wait = wait.as_deref().unwrap_or("0s");
            let mut text = format!("waiting {wait} {} stage {}", gate.position, gate.stage);
            if let Some(until) = gate.wait_until {
                text.push_str(&format!(", until {}", clock(until, now)));
            }
            let since = gate.wait_until.map(|until| until - seconds(gate.wait_secs));
            Wait::new(WaitReason::TimedWait, text).since(since)
        }
    }
}

/// `2 s`, `0.13 s`: milliseconds as seconds, without trailing zeros.
fn seconds_text(ms: u64) -> String {
    let (whole, part) = (ms / 1_000, ms % 1_000);
    if part == 0 {
        format!("{whole} s")
    } else {
        let fraction = format!("{part:03}");
        format!("{whole}.{} s", fraction.trim_end_matches('0'))
    }
}
