//! The scenario runner: folds a scenario file in-process against a real (temporary) event log
//! and prints every object in KubeFleet's shape, the number of events and the final state hash.
//!
//! Event ids are derived from the event's position and event times from the scenario's clock,
//! so the same file always produces byte-identical output.

pub mod format;

use std::collections::BTreeMap;

use chrono::{DateTime, Duration, Utc};
use flotilla_core::{Decision, Envelope, Heartbeat, Input, ObjectRef, WorkReport, next_deadline};
use flotilla_eventstore::{EventLog, LogError};
use flotilla_replay::{Folder, ReplayError};
use serde::Serialize;
use serde_json::Value;
use uuid::Uuid;

pub use format::{AgentSettings, AgentsStep, Scenario, ScenarioError, Step, parse};

/// Source name of every scenario event.
pub const SCENARIO_SOURCE: &str = "scenario";
/// Most events one `advance` step may generate (a guard against a runaway loop).
pub const ADVANCE_EVENTS_MAX: usize = 1_000_000;

/// Why a scenario could not run.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The log failed.
    #[error(transparent)]
    Log(#[from] LogError),
    /// Folding failed.
    #[error(transparent)]
    Replay(#[from] ReplayError),
    /// An advance step would generate too many events.
    #[error("step {step}: advancing generates more than {ADVANCE_EVENTS_MAX} events")]
    RunawayAdvance {
        /// Step number.
        step: usize,
    },
}

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

/// How simulated agents behave.
#[derive(Debug, Clone, Default)]
struct Agents {
    auto_reports: bool,
    auto_heartbeats: bool,
    clusters: BTreeMap<String, AgentSettings>,
}

struct Runner<'a, L: EventLog> {
    log: &'a L,
    folder: Folder,
    now: DateTime<Utc>,
    issued: u128,
    step: usize,
    agents: Agents,
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
        state_hash: state.hash().map_err(ReplayError::from)?.0,
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
                    properties: properties.clone(),
                    resource_usage: resource_usage.clone(),
                };
                self.emit(vec![Input::Heartbeat(beat)]).await
            }
            Step::Report(report) => {
                let input = Input::WorkReport(self.work_report(report));
                self.emit(vec![input]).await
            }
            Step::Approve { name, namespace } => {
                let input = Input::Approve {
                    name: name.clone(),
                    namespace: namespace.clone(),
                };
                self.emit(vec![input]).await
            }
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
                Ok(())
            }
            Step::Heartbeats(auto) => {
                self.agents.auto_heartbeats = *auto;
                Ok(())
            }
        }
    }

    /// A report step's defaults: applied, available as applied, the last reported index.
    fn work_report(&self, report: &format::ReportStep) -> WorkReport {
        let applied = report.applied.unwrap_or(true);
        let resource_index = report.resource_index.unwrap_or_else(|| {
            self.folder
                .state
                .work_reports
                .iter()
                .find(|((cluster, key), _)| {
                    cluster == &report.cluster
                        && key.name == report.placement
                        && (key.namespace.is_empty() == report.namespace.is_none())
                })
                .map_or(0, |(_, status)| status.resource_index)
        });
        WorkReport {
            cluster: report.cluster.clone(),
            placement: report.placement.clone(),
            namespace: report.namespace.clone(),
            resource_index,
            applied: Some(applied),
            available: Some(report.available.unwrap_or(applied)),
            trackable: report.trackable,
            message: report.message.clone(),
        }
    }

    fn next_id(&mut self) -> Uuid {
        self.issued += 1;
        Uuid::new_v8(self.issued.to_be_bytes())
    }

    /// Appends inputs at the current scenario time and folds them.
    async fn emit(&mut self, inputs: Vec<Input>) -> Result<(), RunError> {
        if inputs.is_empty() {
            return Ok(());
        }
        let envelopes: Vec<Envelope> = inputs
            .into_iter()
            .map(|input| Envelope::new(self.next_id(), self.now, SCENARIO_SOURCE, input))
            .collect();
        let appended = self.log.append(envelopes).await?;
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
            .members
            .iter()
            .filter(|(name, _)| {
                self.agents
                    .clusters
                    .get(*name)
                    .and_then(|s| s.heartbeat)
                    .unwrap_or(true)
            })
            .filter_map(|(name, member)| {
                let agent = member.agent.as_ref()?;
                let period = Duration::seconds(i64::from(member.spec.heartbeat_period_seconds));
                Some((agent.last_heartbeat + period, name.clone()))
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
