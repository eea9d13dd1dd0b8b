//! The `flotilla` command line: kubectl-like verbs over the hub's HTTP API, plus `serve`,
//! `scenario run`, `schema` and `demo`, which run in-process.

use std::net::SocketAddr;
use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

use flotilla_adapters::output::{Output, RecordOutput};
use flotilla_hub::serve::{DEFAULT_DATA_DIR, DEFAULT_LISTEN};

/// flotilla: multi-cluster placement and rollout, as an event-sourced state machine.
#[derive(Debug, Parser)]
#[command(name = "flotilla", version, about)]
pub struct Cli {
    /// Address of the hub's API (default `http://127.0.0.1:7420`). For `replay`, naming a
    /// server (here or in `FLOTILLA_SERVER`) reads that hub's log through its API when no
    /// `--data`, `--nats` or `--file` says where else.
    #[arg(long, global = true, env = "FLOTILLA_SERVER")]
    pub server: Option<String>,
    /// File holding the bearer token to send to the hub (see docs/security.md).
    #[arg(long = "token", global = true, env = "FLOTILLA_TOKEN_FILE")]
    pub token_file: Option<PathBuf>,
    /// CA certificate (PEM) to trust for an `https://` server.
    #[arg(long = "ca", global = true, env = "FLOTILLA_CA_FILE")]
    pub ca_file: Option<PathBuf>,
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// kubectl's spellings of `--validate`.
fn parse_validate(text: &str) -> Result<flotilla_adapters::schema::FieldValidation, String> {
    use flotilla_adapters::schema::FieldValidation;
    match text {
        "strict" | "true" => Ok(FieldValidation::Strict),
        "warn" => Ok(FieldValidation::Warn),
        "ignore" | "false" => Ok(FieldValidation::Ignore),
        other => Err(format!(
            "invalid --validate {other:?}: must be one of strict (or true), warn, ignore (or false)"
        )),
    }
}

/// The verbs.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the hub: event log, single writer, clock and HTTP API.
    Serve(ServeArgs),
    /// Apply manifests from a file (multi-document YAML or JSON), or `-` for stdin.
    Apply {
        /// File to read.
        #[arg(short = 'f', long = "filename")]
        file: String,
        /// How fields KubeFleet's schema does not declare are treated, as kubectl's
        /// `--validate`: `strict` (or `true`) refuses them, `warn` drops them with a warning,
        /// `ignore` (or `false`) drops them. Schema violations are refused under every mode.
        #[arg(long, default_value = "strict", value_parser = parse_validate)]
        validate: flotilla_adapters::schema::FieldValidation,
    },
    /// Delete an object by kind and name, or every object in a file.
    Delete {
        /// Kind (e.g. `crp`, `membercluster`, `configmap`).
        kind: Option<String>,
        /// Name.
        name: Option<String>,
        /// Namespace.
        #[arg(short = 'n', long)]
        namespace: Option<String>,
        /// Delete the objects a file describes.
        #[arg(short = 'f', long = "filename")]
        file: Option<String>,
    },
    /// Patch an object as `kubectl patch` does (merge, JSON or strategic merge patch).
    Patch {
        /// Kind (e.g. `csur`, `crp`, `deployment`).
        kind: String,
        /// Name.
        name: String,
        /// Namespace.
        #[arg(short = 'n', long)]
        namespace: Option<String>,
        /// Patch type: `merge`, `json` or `strategic`.
        #[arg(long = "type", default_value = "strategic")]
        patch_type: String,
        /// The patch, as JSON.
        #[arg(short = 'p', long = "patch")]
        patch: String,
        /// Patch a subresource (`status`) instead of the object.
        #[arg(long)]
        subresource: Option<String>,
    },
    /// List objects of a kind, or show one.
    Get {
        /// Kind (e.g. `memberclusters`, `crp`).
        kind: String,
        /// Name.
        name: Option<String>,
        /// Namespace.
        #[arg(short = 'n', long)]
        namespace: Option<String>,
        /// Output format (default: a table).
        #[arg(short = 'o', long)]
        output: Option<Output>,
        /// The member cluster whose objects to show (`get work --cluster C`): its reserved
        /// namespace `fleet-member-C` on the hub.
        #[arg(long, conflicts_with = "namespace")]
        cluster: Option<String>,
        /// Follow one staged update run (or placement) live until its rollout completes, fails
        /// or waits (exit 0, 1 or 3; see docs/progress.md).
        #[arg(short = 'w', long, requires = "name", conflicts_with_all = ["output", "cluster"])]
        watch: bool,
    },
    /// Rollouts: follow one live.
    Rollout {
        /// What to do.
        #[command(subcommand)]
        command: RolloutCommand,
    },
    /// Show one object in detail.
    Describe {
        /// Kind.
        kind: String,
        /// Name.
        name: String,
        /// Namespace.
        #[arg(short = 'n', long)]
        namespace: Option<String>,
    },
    /// Approve an approval request.
    Approve {
        /// Request name, e.g. `example-run-after-canary`.
        name: String,
        /// Namespace of an `ApprovalRequest`.
        #[arg(short = 'n', long)]
        namespace: Option<String>,
        /// The `Approved` condition's reason (default `approved`), e.g. `ChangeReviewed`.
        #[arg(long)]
        reason: Option<String>,
        /// The condition's message (default `approved`), e.g. `lgtm, canary soaked 1h`.
        #[arg(short = 'm', long)]
        message: Option<String>,
    },
    /// Cordon a member cluster and evict every ClusterResourcePlacement from it.
    ///
    /// As `kubectl fleet draincluster`: adds the cordon taint
    /// (`cordon-key=cordon-value:NoSchedule`), then creates an eviction for every
    /// ClusterResourcePlacement bound to the cluster and prints each outcome. Exits 1 if some
    /// eviction was not executed (e.g. a disruption budget blocked it); the taint stays either
    /// way (see docs/eviction.md).
    Drain {
        /// The member cluster.
        cluster: String,
        /// Give up after this many seconds.
        #[arg(long = "timeout", default_value_t = 300)]
        timeout_secs: u64,
    },
    /// Remove the cordon taint `drain` added, so placements may pick the cluster again.
    ///
    /// As `kubectl fleet uncordoncluster`: removes that one taint and keeps every other.
    Uncordon {
        /// The member cluster.
        cluster: String,
        /// Give up after this many seconds.
        #[arg(long = "timeout", default_value_t = 300)]
        timeout_secs: u64,
    },
    /// Start (or resume) and stop staged update runs.
    Run {
        /// What to do.
        #[command(subcommand)]
        command: RunCommand,
    },
    /// Print the log: input events and what was decided.
    Events {
        /// First sequence to print.
        #[arg(long, default_value_t = 1)]
        from: u64,
        /// Keep following the log.
        #[arg(short = 'f', long)]
        follow: bool,
        /// `text` (default) or `json` (one JSON object per line).
        #[arg(short = 'o', long, default_value = "text")]
        output: RecordOutput,
        /// Which events to print.
        #[command(flatten)]
        filter: crate::commands::EventFilter,
    },
    /// Ask a log what happened: state at a point, verify, export and import.
    Replay(crate::replay_cmd::ReplayArgs),
    /// Print the JSON Schema of input events for external publishers.
    Schema,
    /// Scenario files.
    Scenario {
        /// What to do with the scenario.
        #[command(subcommand)]
        command: ScenarioCommand,
    },
    /// Run a hub with a small simulated example fleet (the README's first command).
    Demo(DemoArgs),
    /// Drive a real hub with a seeded fleet of simulated members, for scale runs.
    Simulate(crate::loadgen::SimulateArgs),
    /// Make NATS credentials for an agent (or, with `--hub`, for a hub): writes an nkey seed
    /// and prints the `nats-server` authorization entry with the agent's permissions.
    AgentCreds {
        /// The member cluster (omit with `--hub`).
        #[arg(required_unless_present = "hub")]
        cluster: Option<String>,
        /// Credentials for a hub, which may use every subject.
        #[arg(long, conflicts_with = "cluster")]
        hub: bool,
        /// Where to write the seed (readable by its owner only).
        #[arg(long)]
        out: PathBuf,
    },
    /// Run a member agent: heartbeat, follow this cluster's Works, apply them (`sim`, `dir:PATH`).
    Agent(flotilla_agent::AgentArgs),
}

/// `flotilla scenario …`.
#[derive(Debug, Subcommand)]
pub enum ScenarioCommand {
    /// Fold a scenario against a temporary store and print every object, the event count and
    /// the final state hash.
    Run {
        /// Scenario file.
        file: PathBuf,
        /// `yaml` (default) or `json`.
        #[arg(short = 'o', long, default_value = "yaml")]
        output: RecordOutput,
    },
}

/// A retention window: a duration, or `forever`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Retain(pub Option<std::time::Duration>);

fn parse_retain(text: &str) -> Result<Retain, String> {
    if text == "forever" {
        return Ok(Retain(None));
    }
    crate::loadgen::parse_duration(text).map(|window| Retain(Some(window)))
}

/// Options of `serve`.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Data directory of the embedded log.
    #[arg(long, env = "FLOTILLA_DATA", default_value = DEFAULT_DATA_DIR)]
    pub data: PathBuf,
    /// Use a NATS JetStream server instead of the embedded log; the URLs of a cluster's nodes
    /// separated by commas, so the hub fails over between them.
    #[arg(long, env = "FLOTILLA_NATS")]
    pub nats: Option<String>,
    /// On NATS: replicas of the streams and buckets the hub creates (1 on a single server, 3
    /// in a three-node cluster); existing ones keep theirs.
    #[arg(long, default_value_t = 1, requires = "nats")]
    pub nats_replicas: usize,
    /// The NATS server's HTTP monitoring URL (`http://127.0.0.1:8222`), used to check that it
    /// fsyncs before acknowledging (`jetstream { sync_interval: always }`).
    #[arg(long, env = "FLOTILLA_NATS_MONITORING", requires = "nats")]
    pub nats_monitoring: Option<String>,
    /// The hub's NATS credentials: an nkey seed (`flotilla agent-creds --hub`) or a `.creds`
    /// file.
    #[arg(long, requires = "nats")]
    pub nats_creds: Option<PathBuf>,
    /// On NATS: never take the writer role; serve the API from the stream as the writer
    /// decides it (a read follower). Without it, every hub contends for the writer lease and
    /// the others wait as standbys.
    #[arg(long, requires = "nats")]
    pub read_only: bool,
    /// On NATS: the writer lease's time to live in seconds (used when the lease bucket is
    /// created) — how long a dead writer holds up its standby.
    #[arg(long, default_value_t = 5, requires = "nats")]
    pub lease_seconds: u64,
    /// API address; beyond loopback it requires `--tokens`.
    #[arg(long, default_value = DEFAULT_LISTEN)]
    pub listen: SocketAddr,
    /// Tokens file: bearer tokens and their roles (YAML or JSON; see docs/security.md).
    #[arg(long, env = "FLOTILLA_TOKENS")]
    pub tokens: Option<PathBuf>,
    /// Certificate chain (PEM) to serve HTTPS with; needs `--tls-key`.
    #[arg(long, requires = "tls_key")]
    pub tls_cert: Option<PathBuf>,
    /// Private key (PEM) of `--tls-cert`.
    #[arg(long, requires = "tls_cert")]
    pub tls_key: Option<PathBuf>,
    /// Most API connections in all (lowered to what the open-files limit allows).
    #[arg(long, default_value_t = flotilla_adapters::connections::MAX_CONNECTIONS_DEFAULT)]
    pub max_connections: usize,
    /// Most API connections from one address; beyond it the oldest connection that has not
    /// sent a request yet is closed, or the newcomer refused with a 503.
    #[arg(long, default_value_t = flotilla_adapters::connections::MAX_CONNECTIONS_PER_IP_DEFAULT)]
    pub max_connections_per_ip: usize,
    /// Seconds a client may take to send a request head (TLS handshake included); also how
    /// long an idle keep-alive connection stays open.
    #[arg(long, default_value_t = 10)]
    pub header_timeout_secs: u64,
    /// Seconds a client may take to send a request body.
    #[arg(long, default_value_t = 60)]
    pub body_timeout_secs: u64,
    /// Most concurrent watches from one address.
    #[arg(long, default_value_t = flotilla_adapters::connections::MAX_WATCHES_PER_IP_DEFAULT)]
    pub max_watches_per_ip: usize,
    /// Checkpoint after this many events.
    #[arg(long, default_value_t = 10_000)]
    pub checkpoint_every: u64,
    /// How much of the log to keep (`120s`, `12h`, `7d`, or `forever`): older inputs leave it,
    /// and the oldest kept checkpoint becomes its base; on NATS the input stream's max_age is
    /// twice the window (docs/storage.md).
    #[arg(long, default_value = "7d", value_parser = parse_retain)]
    pub retain: Retain,
    /// Write what `--retain` removes from the embedded log to this directory first, as
    /// verifiable segment files, so `flotilla replay --archive DIR` can still read it
    /// (docs/storage.md, "Archive").
    #[arg(long, value_name = "DIR", conflicts_with = "nats")]
    pub archive: Option<PathBuf>,
    /// Start even when this build decides an already-decided input differently than was
    /// recorded under its own decision version (a determinism failure; logged as an error).
    #[arg(long)]
    pub allow_divergence: bool,
    /// Test only: run on a clock that starts at this time (RFC 3339) and moves only by
    /// `POST /v1/test/clock`. On NATS it creates the input stream marked to keep given times
    /// (a test stream: never for a real fleet).
    #[arg(long, hide = true)]
    pub test_clock: Option<chrono::DateTime<chrono::Utc>>,
}

/// Options of `demo`.
#[derive(Debug, Args)]
pub struct DemoArgs {
    /// Data directory of the embedded log.
    #[arg(long, default_value = DEFAULT_DATA_DIR)]
    pub data: PathBuf,
    /// API address (loopback), so `flotilla get …` works while the demo runs.
    #[arg(long, default_value = DEFAULT_LISTEN)]
    pub listen: SocketAddr,
    /// Give up after this many seconds (the demo stops by itself once both runs succeeded).
    #[arg(long, default_value_t = 120)]
    pub seconds: u64,
    /// Leave the approvals to you (`flotilla approve NAME` from another terminal) instead of
    /// having the demo give them.
    #[arg(long)]
    pub manual_approvals: bool,
}

/// `flotilla rollout …`.
#[derive(Debug, Subcommand)]
pub enum RolloutCommand {
    /// Show a placement's rollout live (per stage, partition or cluster) until it completes
    /// (exit 0), fails (exit 1) or waits (exit 3), then why.
    Status {
        /// Placement name.
        placement: String,
        /// Namespace of a `ResourcePlacement` (without it: a `ClusterResourcePlacement`).
        #[arg(short = 'n', long)]
        namespace: Option<String>,
        /// Give up after this many seconds (0: never).
        #[arg(long, default_value_t = 0)]
        timeout: u64,
    },
}

/// `flotilla run start|stop NAME`: sets a staged update run's `spec.state`.
#[derive(Debug, Subcommand)]
pub enum RunCommand {
    /// `state: Run` — start an initialized run, or resume a stopped one.
    Start {
        /// Run name.
        name: String,
        /// Namespace of a `StagedUpdateRun`.
        #[arg(short = 'n', long)]
        namespace: Option<String>,
    },
    /// `state: Stop` — pause at the current cluster and stage.
    Stop {
        /// Run name.
        name: String,
        /// Namespace of a `StagedUpdateRun`.
        #[arg(short = 'n', long)]
        namespace: Option<String>,
    },
}
