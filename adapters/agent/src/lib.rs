//! `flotilla agent`: a member agent over the hub's HTTP API. It joins with its first heartbeat
//! and beats at its MemberCluster's `heartbeatPeriodSeconds`; follows its Works (list, then
//! watch, through the hub's Kubernetes API); applies each through an [`applier::Applier`]
//! (`sim`, `dir:PATH` or `kube`) and reports per Work in the JSON event form; is idempotent across
//! restarts (`--state DIR`); and, when its MemberCluster is leaving or gone, removes what it
//! placed and stops. See `docs/agents.md`.

pub mod applier;
pub mod args;
pub mod dir;
pub mod hub;
pub mod kube;
pub mod link;
pub mod local_link;
pub mod nats_link;
pub mod reconcile;
#[cfg(test)]
mod reconcile_tests;
pub mod report;
pub mod run;
pub mod sim;
pub mod sim_status;
pub mod state;
mod voice;
pub mod watch;
pub mod work;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

pub use args::AgentArgs;
pub use voice::Voice;

use applier::{Applier, ApplierError};
use hub::{HubClient, HubError};
use link::HubLink;
use nats_link::NatsLink;
use reconcile::{ReconcileError, Reconciler};
use report::ClusterProperties;
use run::{Ending, Loop};
use sim::{SimApplier, SimConfig};
use state::StateFile;

/// Why the agent could not run.
#[derive(Debug, thiserror::Error)]
pub enum AgentError {
    /// `--applier` names no applier.
    #[error("--applier {0}: expected `sim`, `dir:PATH` or `kube`")]
    UnknownApplier(String),
    /// A flag is out of range.
    #[error("{0}")]
    Flag(String),
    /// The state directory or the applier's files failed.
    #[error(transparent)]
    Applier(#[from] ApplierError),
    /// The hub client could not be built.
    #[error(transparent)]
    Hub(#[from] HubError),
    /// Leaving failed.
    #[error(transparent)]
    Reconcile(#[from] ReconcileError),
}

/// Which applier `--applier` names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ApplierKind {
    /// `sim`.
    Sim,
    /// `dir:PATH`.
    Dir(PathBuf),
    /// `kube`: the cluster of `KUBECONFIG` (or the in-cluster configuration).
    Kube,
}

impl ApplierKind {
    /// Parses `sim`, `dir:PATH` or `kube`.
    ///
    /// # Errors
    /// For anything else.
    pub fn parse(text: &str) -> Result<Self, AgentError> {
        match text.split_once(':') {
            None if text == "sim" => Ok(Self::Sim),
            None if text == "kube" => Ok(Self::Kube),
            Some(("dir", path)) if !path.is_empty() => Ok(Self::Dir(PathBuf::from(path))),
            _ => Err(AgentError::UnknownApplier(text.to_owned())),
        }
    }
}

fn sim_properties(sim: &args::SimArgs) -> ClusterProperties {
    let pair = |cpu: &str, memory: &str| {
        BTreeMap::from([
            ("cpu".to_owned(), cpu.to_owned()),
            ("memory".to_owned(), memory.to_owned()),
        ])
    };
    ClusterProperties {
        properties: BTreeMap::from([(
            "kubernetes-fleet.io/node-count".to_owned(),
            sim.sim_nodes.to_string(),
        )]),
        usage: BTreeMap::from([
            (
                "capacity".to_owned(),
                pair(&sim.sim_cpu_capacity, &sim.sim_memory_capacity),
            ),
            (
                "allocatable".to_owned(),
                pair(&sim.sim_cpu_allocatable, &sim.sim_memory_allocatable),
            ),
            (
                "available".to_owned(),
                pair(&sim.sim_cpu_available, &sim.sim_memory_available),
            ),
        ]),
        live: None,
    }
}

/// Runs the agent (with `token` as its bearer token, if given) until it leaves (`Ok(Ending::Left)`), a signal, or `--max-seconds`.
///
/// # Errors
/// For a bad flag, an unreadable state directory, or a failure while leaving.
pub async fn run(
    args: AgentArgs,
    token: Option<String>,
    ca: Option<PathBuf>,
) -> Result<Ending, AgentError> {
    let kind = ApplierKind::parse(&args.applier)?;
    if !(0.0..=1.0).contains(&args.sim.sim_failure_rate) {
        return Err(AgentError::Flag(
            "--sim-failure-rate must be in [0, 1]".into(),
        ));
    }
    std::fs::create_dir_all(&args.state).map_err(|e| ApplierError::io(&args.state, e))?;
    let hub = connect(&args, token, ca).await?;
    let state = StateFile::open(&args.state, &args.cluster)?;
    let ending = match kind {
        ApplierKind::Sim => {
            let config = SimConfig {
                seed: args.seed,
                apply_delay_ms_max: args.sim.sim_apply_delay_ms_max,
                available_delay_ms_max: args.sim.sim_available_delay_ms_max,
                failure_rate: args.sim.sim_failure_rate,
                bad_image_marker: args.sim.sim_bad_image.clone(),
                nodes: args.sim.sim_nodes,
                ..SimConfig::default()
            };
            let applier = SimApplier::open(&args.cluster, &args.state, config)?;
            drive(&args, hub, applier, state, sim_properties(&args.sim)).await?
        }
        ApplierKind::Dir(path) => {
            let applier = dir::DirApplier::new(&args.cluster, &path);
            drive(&args, hub, applier, state, ClusterProperties::default()).await?
        }
        ApplierKind::Kube => {
            let applier = kube::KubeApplier::connect(&args.cluster).await?;
            let properties = applier.properties().await;
            drive(&args, hub, applier, state, properties).await?
        }
    };
    Ok(ending)
}

/// Announces the agent and runs its loop with one applier.
async fn drive<A: Applier>(
    args: &AgentArgs,
    hub: HubLink,
    applier: A,
    state: StateFile,
    properties: ClusterProperties,
) -> Result<Ending, ReconcileError> {
    println!(
        "{} agent for {} against {} (state in {})",
        applier.label(),
        args.cluster,
        where_hub(args),
        args.state.display()
    );
    let reconciler = Reconciler::new(&args.cluster, hub.clone(), applier, state);
    let config = Loop {
        cluster: args.cluster.clone(),
        hub,
        properties,
        max_duration: args.max_seconds.map(Duration::from_secs),
    };
    run::run(config, reconciler, shutdown_signal()).await
}

/// The hub the flags name: `--hub URL` (with the bearer token) or `--nats URL` (with the
/// credentials).
async fn connect(
    args: &AgentArgs,
    token: Option<String>,
    ca: Option<PathBuf>,
) -> Result<HubLink, AgentError> {
    if let Some(url) = &args.nats {
        let connection = flotilla_adapters::nats_auth::NatsConnection {
            creds: args.creds.clone(),
            ca,
            inbox_prefix: Some(flotilla_adapters::nats_auth::agent_inbox_prefix(
                &args.cluster,
            )),
        };
        let client = connection
            .connect(url, &format!("flotilla-agent-{}", args.cluster))
            .await
            .map_err(|e| AgentError::Flag(e.to_string()))?;
        return Ok(HubLink::Nats(Box::new(NatsLink::new(
            client,
            &args.cluster,
        ))));
    }
    let url = args.hub.as_deref().unwrap_or_default();
    let mut client = HubClient::new(url, &args.cluster)?.with_token(token);
    if let Some(ca) = &ca {
        client = client.with_ca(ca)?;
    }
    client.check_trust().await?;
    Ok(HubLink::Http(client))
}

fn where_hub(args: &AgentArgs) -> &str {
    args.nats
        .as_deref()
        .or(args.hub.as_deref())
        .unwrap_or_default()
}

/// Resolves on SIGINT or SIGTERM.
async fn shutdown_signal() {
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        () = terminate => {}
    }
}
