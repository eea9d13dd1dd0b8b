//! `flotilla agent`'s flags.

use std::path::PathBuf;

use clap::Args;

/// Options of `agent`.
#[derive(Debug, Args)]
pub struct AgentArgs {
    /// The member cluster this agent serves.
    #[arg(long)]
    pub cluster: String,
    /// The hub's API (`http://127.0.0.1:7420`).
    #[arg(long, required_unless_present = "nats", conflicts_with = "nats")]
    pub hub: Option<String>,
    /// A NATS server the hub runs on (`nats://127.0.0.1:4222`): Works are followed in its
    /// works bucket and events published on the input stream.
    #[arg(long)]
    pub nats: Option<String>,
    /// The agent's NATS credentials: an nkey seed (`flotilla agent-creds`) or a `.creds` file.
    #[arg(long, requires = "nats")]
    pub creds: Option<PathBuf>,
    /// `sim` (a simulated cluster), `dir:PATH` (YAML files for a GitOps tool) or `kube` (the
    /// cluster of `KUBECONFIG`, else the in-cluster configuration).
    #[arg(long)]
    pub applier: String,
    /// Where the agent keeps what it applied (and `sim` its simulated cluster).
    #[arg(long, default_value = "flotilla-agent")]
    pub state: PathBuf,
    /// Seed of `sim`'s delays and failures.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Stop after this many seconds (default: run until the member leaves or a signal).
    #[arg(long)]
    pub max_seconds: Option<u64>,
    /// The simulated cluster's behaviour and size.
    #[command(flatten)]
    pub sim: SimArgs,
}

/// `sim`'s flags.
#[derive(Debug, Args)]
pub struct SimArgs {
    /// Longest simulated apply delay per changed manifest, in ms.
    #[arg(long, default_value_t = 200)]
    pub sim_apply_delay_ms_max: u64,
    /// Longest delay before an applied object becomes ready, in ms.
    #[arg(long, default_value_t = 200)]
    pub sim_available_delay_ms_max: u64,
    /// Share of manifest applies that fail, in [0, 1].
    #[arg(long, default_value_t = 0.0)]
    pub sim_failure_rate: f64,
    /// A Deployment whose image contains this applies but never becomes available ("" turns
    /// the rule off).
    #[arg(long, default_value = ":bad")]
    pub sim_bad_image: String,
    /// Nodes (`kubernetes-fleet.io/node-count`).
    #[arg(long, default_value_t = 3)]
    pub sim_nodes: u32,
    /// CPU capacity.
    #[arg(long, default_value = "12")]
    pub sim_cpu_capacity: String,
    /// CPU allocatable.
    #[arg(long, default_value = "11")]
    pub sim_cpu_allocatable: String,
    /// CPU available.
    #[arg(long, default_value = "8")]
    pub sim_cpu_available: String,
    /// Memory capacity.
    #[arg(long, default_value = "48Gi")]
    pub sim_memory_capacity: String,
    /// Memory allocatable.
    #[arg(long, default_value = "44Gi")]
    pub sim_memory_allocatable: String,
    /// Memory available.
    #[arg(long, default_value = "30Gi")]
    pub sim_memory_available: String,
}
