//! The member agents of a scenario: one per member cluster, running the reconcile code of
//! `flotilla agent --applier sim` inside the runner's process. Each agent's simulated cluster
//! lives in memory on the scenario's clock, with neither apply nor readiness delays, so the same
//! file always gives the same output. The agent decides, as it does against a hub, when a Work
//! is applied and when a report is owed: once per Work content (resource index, manifests,
//! override snapshots), and again while its availability is pending.
//!
//! An `agents` map entry becomes the simulated cluster's behaviour from then on (see
//! `docs/scenarios.md`): `applied: false` fails every apply, `available: false` keeps every
//! applied object unavailable, `trackable: false` makes every object's availability unknowable.
//! Work applied before the change keeps the report it had, except that a Work whose
//! availability is still pending is observed under the new behaviour.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

use chrono::{DateTime, Utc};
use flotilla_core::wire::json::{JsonDefaults, parse_event};
use flotilla_core::{Input, State};
use serde_json::Value;
use uuid::Uuid;

use super::events::{RunError, SCENARIO_SOURCE};
use super::format::AgentSettings;
use flotilla_agent::link::HubLink;
use flotilla_agent::local_link::LocalHub;
use flotilla_agent::reconcile::Reconciler;
use flotilla_agent::sim::{SimApplier, SimClock, SimConfig};
use flotilla_agent::state::StateFile;
use flotilla_agent::watch::WorkChange;

/// Which members run an agent, and how their simulated clusters behave.
#[derive(Debug, Clone, Default)]
pub(super) struct Agents {
    /// Every member runs an agent (`agents: auto`).
    pub auto_reports: bool,
    /// Members heartbeat by themselves while time advances (`heartbeats: auto`).
    pub auto_heartbeats: bool,
    /// Members named in an `agents` map: each runs an agent as configured, even in manual mode.
    pub clusters: BTreeMap<String, AgentSettings>,
}

impl Agents {
    /// The settings of the cluster's agent, when it runs one.
    fn settings(&self, cluster: &str) -> Option<AgentSettings> {
        self.clusters
            .get(cluster)
            .cloned()
            .or_else(|| self.auto_reports.then(AgentSettings::default))
    }
}

/// The simulated cluster an `agents` setting describes: `flotilla agent --applier sim`'s
/// defaults (its bad-image marker and node count), without delays.
fn sim_config(settings: &AgentSettings) -> SimConfig {
    SimConfig {
        seed: 0,
        apply_delay_ms_max: 0,
        available_delay_ms_max: 0,
        failure_rate: if settings.applied == Some(false) {
            1.0
        } else {
            0.0
        },
        bad_image_marker: ":bad".to_owned(),
        nodes: 3,
        never_available: settings.available == Some(false),
        untrackable: settings.trackable == Some(false),
    }
}

/// One member's agent, and the Works it was last given.
struct Agent {
    reconciler: Reconciler<SimApplier>,
    config: SimConfig,
    works: Vec<Value>,
}

/// Every agent of the run, the scenario clock they share, and the queue they publish to.
#[derive(Default)]
pub(super) struct Fleet {
    clock: Arc<AtomicI64>,
    hub: LocalHub,
    agents: BTreeMap<String, Agent>,
}

impl Fleet {
    /// One turn of every running agent at `now`: each is given its Works when they changed
    /// (applying new content and reporting) or else rechecks what is pending (observing and
    /// reporting availability); returns what they published, oldest first.
    ///
    /// # Errors
    /// When an agent published something that is not an event.
    pub async fn turn(
        &mut self,
        agents: &Agents,
        state: &State,
        now: DateTime<Utc>,
    ) -> Result<Vec<Input>, RunError> {
        self.clock.store(now.timestamp_millis(), Ordering::SeqCst);
        let mut works: BTreeMap<String, Vec<Value>> = BTreeMap::new();
        for (cluster, work) in flotilla_projections::all_works(state) {
            works.entry(cluster).or_default().push(work);
        }
        // Agents whose cluster has no Work any more are given none: they withdraw theirs.
        let clusters: Vec<String> = self.agents.keys().cloned().collect();
        for cluster in clusters {
            works.entry(cluster).or_default();
        }
        for (cluster, list) in works {
            let Some(settings) = agents.settings(&cluster) else {
                continue;
            };
            self.agent(&cluster, &settings).give(list).await;
        }
        self.published(now)
    }

    /// The cluster's agent (started when new), behaving as `settings` say.
    fn agent(&mut self, cluster: &str, settings: &AgentSettings) -> &mut Agent {
        let config = sim_config(settings);
        let clock = SimClock::Shared(Arc::clone(&self.clock));
        let hub = self.hub.clone();
        let agent = self.agents.entry(cluster.to_owned()).or_insert_with(|| {
            let applier = SimApplier::in_memory(cluster, config.clone(), clock);
            let state = StateFile::in_memory(cluster);
            let reconciler = Reconciler::new(cluster, HubLink::Local(hub), applier, state).silent();
            Agent {
                reconciler,
                config: config.clone(),
                works: Vec::new(),
            }
        });
        if agent.config != config {
            agent.reconciler.applier_mut().set_config(config.clone());
            agent.config = config;
        }
        agent
    }

    /// The events the agents queued, as inputs (the runner stamps them with its ids and time).
    fn published(&self, now: DateTime<Utc>) -> Result<Vec<Input>, RunError> {
        let defaults = JsonDefaults {
            id: Uuid::nil(),
            time: now,
            source: SCENARIO_SOURCE,
        };
        let events = self
            .hub
            .take()
            .map_err(|e| RunError::Agent(e.to_string()))?;
        events
            .iter()
            .map(|event| {
                parse_event(event.to_string().as_bytes(), &defaults)
                    .map(|envelope| envelope.payload)
                    .map_err(RunError::Agent)
            })
            .collect()
    }
}

impl Agent {
    /// Hands the agent its Works: all of them when they changed, else a recheck of what is
    /// pending.
    async fn give(&mut self, works: Vec<Value>) {
        if works == self.works {
            self.reconciler.recheck().await;
            return;
        }
        self.works = works.clone();
        self.reconciler.on_change(WorkChange::All(works)).await;
    }
}
