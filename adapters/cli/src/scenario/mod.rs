//! The scenario runner: folds a scenario file in-process against a real (temporary) event log
//! and prints every object in KubeFleet's shape, the number of events and the final state hash.
//!
//! Event ids are derived from the event's position and event times from the scenario's clock,
//! so the same file always produces byte-identical output.

mod agents;
mod events;
pub mod format;

use chrono::{DateTime, Duration, Utc};
use flotilla_core::{
    Decision, Envelope, Heartbeat, Input, ObjectRef, RejectCode, WorkReport, next_deadline,
};
use flotilla_eventstore::fold::{FoldError, Folder};
use flotilla_eventstore::{AppendTime, EventLog};
use serde::Serialize;
use serde_json::Value;
use uuid::Uuid;

use agents::{Agents, Fleet};
pub use events::{ADVANCE_EVENTS_MAX, RunError, SCENARIO_SOURCE};
pub use format::{AgentSettings, AgentsStep, Scenario, ScenarioError, Step, parse};

/// Most rounds of simulated agent reports and immediate ticks after one step (each round can
/// bind more clusters).
pub const AGENT_ROUNDS_MAX: usize = 1_000;
/// What a scenario run prints.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ScenarioOutput {
    /// Every object, applied and derived, in KubeFleet's shape.
    pub objects: Vec<Value>,
    /// Inputs that were rejected, with the step that sent them.
    pub rejections: Vec<Rejection>,
    /// Number of events in the log.
    pub events: u64,
    /// Hash of the final state.
    pub state_hash: String,
}

/// One rejected input.
#[derive(Debug, Clone, Serialize)]
pub struct Rejection {
    /// 1-based step number.
    pub step: usize,
    /// Stable code.
    pub code: String,
    /// Reason.
    pub message: String,
}

struct Runner<'a, L: EventLog> {
    log: &'a L,
    folder: Folder,
    now: DateTime<Utc>,
    issued: u128,
    step: usize,
    agents: Agents,
    fleet: Fleet,
    rejections: Vec<Rejection>,
}

/// Runs a scenario against an empty log.
///
/// # Errors
/// A log failure or a runaway `advance`.
pub async fn run<L: EventLog>(scenario: &Scenario, log: &L) -> Result<ScenarioOutput, RunError> {
    let mut runner = Runner {
        log,
        folder: Folder::default(),
        now: scenario.start,
        issued: 0,
        step: 0,
        agents: Agents::default(),
        fleet: Fleet::default(),
        rejections: Vec::new(),
    };
    for (index, step) in scenario.steps.iter().enumerate() {
        runner.step = index + 1;
        runner.run_step(step).await?;
    }
    let state = &runner.folder.state;
    Ok(ScenarioOutput {
        objects: flotilla_projections::render_all(state),
        rejections: runner.rejections,
        events: runner.folder.seq,
        state_hash: state.hash().map_err(FoldError::from)?.0,
    })
}

impl<L: EventLog> Runner<'_, L> {
    async fn run_step(&mut self, step: &Step) -> Result<(), RunError> {
        match step {
            Step::Apply(documents) => {
                let inputs = documents
                    .iter()
                    .map(|d| Input::Apply {
                        manifest: d.value.to_string(),
                    })
                    .collect();
                self.emit(inputs).await
            }
            Step::Delete {
                kind,
                group,
                namespace,
                name,
            } => {
                let target = ObjectRef {
                    kind: kind.clone(),
                    group: group.clone(),
                    namespace: namespace.clone(),
                    name: name.clone(),
                };
                self.emit(vec![Input::Delete { target }]).await
            }
            Step::Heartbeat {
                cluster,
                properties,
                resource_usage,
            } => {
                let beat = Heartbeat {
                    cluster: cluster.clone(),
                    properties: properties.into(),
                    resource_usage: resource_usage.clone(),
                };
                self.emit(vec![Input::Heartbeat(beat)]).await
            }
            Step::Report(report) => {
                let input = Input::WorkReport(self.work_report(report));
                self.emit(vec![input]).await
            }
            Step::Approve {
                name,
                namespace,
                reason,
                message,
            } => {
                let input = Input::Approve {
                    name: name.clone(),
                    namespace: namespace.clone(),
                    reason: reason.clone(),
                    message: message.clone(),
                };
                self.emit(vec![input]).await
            }
            Step::Analysis(result) => self.emit(vec![Input::AnalysisResult(result.clone())]).await,
            Step::Advance(duration) => self.advance(*duration).await,
            Step::Agents(mode) => {
                match mode {
                    AgentsStep::Auto => self.agents.auto_reports = true,
                    AgentsStep::Manual => self.agents.auto_reports = false,
                    AgentsStep::PerCluster(settings) => {
                        for (cluster, setting) in settings {
                            self.agents
                                .clusters
                                .insert(cluster.clone(), setting.clone());
                        }
                    }
                }
                // Agents switched to auto report at once on the work they already hold.
                self.emit(Vec::new()).await
            }
            Step::Heartbeats(auto) => {
                self.agents.auto_heartbeats = *auto;
                Ok(())
            }
            Step::ExpectRejection(code) => self.expect_rejection(*code),
        }
    }

    /// Fails the run unless the previous step was rejected with `code`.
    fn expect_rejection(&self, code: RejectCode) -> Result<(), RunError> {
        let previous = self.step.saturating_sub(1);
        let found: Vec<String> = self
            .rejections
            .iter()
            .filter(|r| r.step == previous)
            .map(|r| r.code.clone())
            .collect();
        if found.iter().any(|c| c == code.as_str()) {
            return Ok(());
        }
        Err(RunError::RejectionExpected {
            step: self.step,
            code: code.as_str(),
            found: if found.is_empty() {
                "no rejection".to_owned()
            } else {
                found.join(", ")
            },
        })
    }

    /// A report step's defaults: applied, available as applied (neither when it reports a
    /// `ReportDiff` outcome), the last reported index.
    fn work_report(&self, report: &format::ReportStep) -> WorkReport {
        let reports_diff = report.differences.diff_reported.is_some();
        let applied = report.applied.or((!reports_diff).then_some(true));
        // By default: the work the cluster was last given (its binding's resource index),
        // else the index it last reported, else 0.
        let namespace = report.namespace.clone().unwrap_or_default();
        let same_placement = |key: &flotilla_core::model::ObjectKey| {
            key.name == report.placement && key.namespace == namespace
        };
        let resource_index = report.resource_index.or_else(|| {
            let state = &self.folder.state;
            let given = state
                .placements()
                .iter()
                .find(|(key, _)| same_placement(key))
                .and_then(|(_, p)| p.bindings.get(report.cluster.as_str()))
                .and_then(|b| b.resource_index);
            given.or_else(|| {
                state
                    .placements()
                    .iter()
                    .find(|(key, _)| same_placement(key))
                    .and_then(|(_, p)| p.bindings.get(report.cluster.as_str()))
                    .and_then(|b| b.report.map(|status| status.resource_index))
            })
        });
        let resource_index = resource_index.unwrap_or(0);
        WorkReport {
            cluster: report.cluster.clone(),
            placement: report.placement.clone(),
            namespace: report.namespace.clone(),
            resource_index,
            applied,
            available: report.available.or(applied),
            trackable: report.trackable,
            message: report.message.clone(),
            failed_manifests: report.failed_manifests.clone(),
            differences: report.differences.clone(),
        }
    }

    fn next_id(&mut self) -> Uuid {
        self.issued += 1;
        Uuid::new_v8(self.issued.to_be_bytes())
    }

    /// Appends inputs at the current scenario time and folds them; then the member agents
    /// take a turn (applying the Works they were given, reporting what they owe), and a tick is
    /// delivered at once whenever the core asks for one at the current time (a partitioned
    /// pass stopped at maxNew) — in rounds, at most [`AGENT_ROUNDS_MAX`].
    async fn emit(&mut self, inputs: Vec<Input>) -> Result<(), RunError> {
        self.append_and_fold(inputs).await?;
        for _ in 0..AGENT_ROUNDS_MAX {
            let mut owed = self
                .fleet
                .turn(&self.agents, &self.folder.state, self.now)
                .await?;
            if next_deadline(&self.folder.state).is_some_and(|d| d <= self.now) {
                owed.push(Input::Tick);
            }
            if owed.is_empty() {
                break;
            }
            self.append_and_fold(owed).await?;
        }
        Ok(())
    }

    async fn append_and_fold(&mut self, inputs: Vec<Input>) -> Result<(), RunError> {
        if inputs.is_empty() {
            return Ok(());
        }
        let envelopes: Vec<Envelope> = inputs
            .into_iter()
            .map(|input| Envelope::new(self.next_id(), self.now, SCENARIO_SOURCE, input))
            .collect();
        // The scenario owns time: its events keep the times it gives them.
        let appended = self.log.append(envelopes, AppendTime::AsGiven).await?;
        let last = appended
            .iter()
            .map(|a| a.seq)
            .max()
            .unwrap_or(self.folder.seq);
        for (_, decisions) in self.folder.catch_up(self.log, last).await? {
            for decision in decisions {
                if let Decision::Rejected { code, message } = decision {
                    let code = code.as_str().to_owned();
                    self.rejections.push(Rejection {
                        step: self.step,
                        code,
                        message,
                    });
                }
            }
        }
        Ok(())
    }

    /// Clusters whose simulated agent heartbeats by itself, with when it is next due.
    fn heartbeats_due(&self) -> Vec<(DateTime<Utc>, String)> {
        if !self.agents.auto_heartbeats {
            return Vec::new();
        }
        self.folder
            .state
            .members()
            .iter()
            .filter(|(name, _)| {
                self.agents
                    .clusters
                    .get(name.as_str())
                    .and_then(|s| s.heartbeat)
                    .unwrap_or(true)
            })
            .filter_map(|(name, member)| {
                let agent = member.agent.as_ref()?;
                let period = Duration::seconds(i64::from(member.spec.heartbeat_period_seconds));
                Some((agent.last_heartbeat + period, name.to_string()))
            })
            .collect()
    }

    /// Moves event time forward, delivering ticks at every core deadline (and heartbeats of
    /// auto agents when they are due) on the way, and a final tick at the target time.
    async fn advance(&mut self, duration: Duration) -> Result<(), RunError> {
        let target = self.now + duration;
        let mut generated = 0;
        loop {
            let deadline = next_deadline(&self.folder.state);
            let beats = self.heartbeats_due();
            let next_beat = beats.iter().map(|(at, _)| *at).min();
            let next = [deadline, next_beat].into_iter().flatten().min();
            let Some(next) = next.filter(|t| *t <= target) else {
                break;
            };
            self.now = self.now.max(next);
            let mut inputs: Vec<Input> = beats
                .into_iter()
                .filter(|(at, _)| *at <= self.now)
                .map(|(_, cluster)| {
                    Input::Heartbeat(Heartbeat {
                        cluster,
                        ..Heartbeat::default()
                    })
                })
                .collect();
            if deadline.is_some_and(|d| d <= self.now) {
                inputs.push(Input::Tick);
            }
            generated += inputs.len();
            if generated > ADVANCE_EVENTS_MAX {
                return Err(RunError::RunawayAdvance { step: self.step });
            }
            self.emit(inputs).await?;
        }
        self.now = target;
        self.emit(vec![Input::Tick]).await
    }
}

/// Renders the output as YAML (the default) or JSON.
#[must_use]
pub fn render(output: &ScenarioOutput, json: bool) -> String {
    let value = serde_json::to_value(output).unwrap_or_default();
    if json {
        let mut text = serde_json::to_string_pretty(&value).unwrap_or_default();
        text.push('\n');
        text
    } else {
        serde_saphyr::to_string(&value).unwrap_or_default()
    }
}
