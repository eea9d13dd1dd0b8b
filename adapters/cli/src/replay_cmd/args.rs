//! `flotilla replay`'s flags: where the log is, and what to ask it.

use std::path::PathBuf;

use clap::{Args, Subcommand};

use flotilla_adapters::output::{Output, RecordOutput};

/// Options of `replay`.
#[derive(Debug, Args)]
pub struct ReplayArgs {
    /// The log: where it is.
    #[command(flatten)]
    pub source: SourceArgs,
    /// What to ask it.
    #[command(subcommand)]
    pub command: ReplayCommand,
}

/// Where the log is: a redb data directory (default `./flotilla-data`), with the archive of
/// what its window removed, a NATS stream, or an exported file.
#[derive(Debug, Args, Clone)]
pub struct SourceArgs {
    /// A redb data directory, opened read-only (also while a hub runs on it).
    #[arg(long, global = true, conflicts_with_all = ["nats", "file"])]
    pub data: Option<PathBuf>,
    /// A NATS server whose JetStream holds the log.
    #[arg(long, global = true, conflicts_with = "file")]
    pub nats: Option<String>,
    /// NATS credentials (an nkey seed or a `.creds` file).
    #[arg(long, global = true, requires = "nats")]
    pub nats_creds: Option<PathBuf>,
    /// An exported log (`replay export --to FILE`).
    #[arg(long, global = true)]
    pub file: Option<PathBuf>,
    /// The archive a hub wrote what its retention window removed to (`serve --archive DIR`):
    /// read with the data directory as one log, from where the archive starts.
    #[arg(long, value_name = "DIR", global = true, conflicts_with_all = ["nats", "file"])]
    pub archive: Option<PathBuf>,
}

/// What to ask the log.
#[derive(Debug, Subcommand)]
pub enum ReplayCommand {
    /// Objects as `get` showed them at a point.
    State {
        /// The point: a sequence (the state after that input) or an RFC 3339 time.
        #[arg(long)]
        at: String,
        /// Kind (as `get` takes it); all objects when absent.
        kind: Option<String>,
        /// Object name.
        name: Option<String>,
        /// Namespace.
        #[arg(short = 'n', long)]
        namespace: Option<String>,
        /// `yaml`, `json` or `wide`; a table when absent (with a kind).
        #[arg(short = 'o', long)]
        output: Option<Output>,
    },
    /// What the log holds: its first and last input (sequence and time), the bytes of each
    /// kind of record, and its checkpoints.
    Info {
        /// `text`, `json` or `yaml`.
        #[arg(short = 'o', long, default_value = "text")]
        output: RecordOutput,
    },
    /// Re-fold the inputs with this build and compare with the recorded decisions and
    /// checkpoint hashes; the first divergence, with both sides.
    Verify {
        /// Exit non-zero also for differences in decisions recorded by another version.
        #[arg(long)]
        strict: bool,
    },
    /// Write the log and its decisions as JSON lines.
    Export {
        /// The file to write.
        #[arg(long)]
        to: PathBuf,
    },
    /// Rebuild an exported log into a fresh redb data directory (`--data DIR`).
    Import {
        /// The exported file.
        #[arg(value_name = "FILE")]
        export: PathBuf,
    },
    /// What changed from point A to point B: objects added and removed, fields changed,
    /// bindings moved, conditions flipped.
    Diff {
        /// The first point.
        a: String,
        /// The second point.
        b: String,
        /// Only objects of these kinds (`ConfigMap`, `Deployment`; comma-separated or
        /// repeated): a resource change without the status churn around it.
        #[arg(long = "kind", value_delimiter = ',')]
        kinds: Vec<String>,
        /// `text` or `json`.
        #[arg(short = 'o', long, default_value = "text")]
        output: RecordOutput,
    },
    /// The events and decisions that touched a placement, a cluster or a run, in order.
    Timeline {
        /// A placement (a `ResourcePlacement` with `-n`).
        #[arg(long)]
        placement: Option<String>,
        /// A member cluster.
        #[arg(long)]
        cluster: Option<String>,
        /// A staged update run (a `StagedUpdateRun` with `-n`).
        #[arg(long)]
        run: Option<String>,
        /// Namespace of the placement or run.
        #[arg(short = 'n', long)]
        namespace: Option<String>,
        /// Only inputs after this point.
        #[arg(long)]
        after: Option<String>,
        /// Only inputs up to this point.
        #[arg(long)]
        until: Option<String>,
        /// Which inputs to keep, as `flotilla events` sifts them.
        #[command(flatten)]
        sift: TimelineSift,
        /// `text` or `json`.
        #[arg(short = 'o', long, default_value = "text")]
        output: RecordOutput,
    },
    /// Why a cluster has the version it has (`--cluster C --placement P`), or why a rollout
    /// waits (`--placement P`).
    Explain {
        /// The placement (a `ResourcePlacement` with `-n`).
        #[arg(long)]
        placement: String,
        /// The member cluster.
        #[arg(long)]
        cluster: Option<String>,
        /// Namespace of the placement.
        #[arg(short = 'n', long)]
        namespace: Option<String>,
        /// The point (default: the end of the log).
        #[arg(long)]
        at: Option<String>,
        /// Flag an approval that came sooner than this many seconds after its request.
        #[arg(long, value_name = "SECONDS", default_value_t = flotilla_replay::DEFAULT_MIN_SOAK_SECONDS)]
        min_soak: u64,
        /// `text` or `json`.
        #[arg(short = 'o', long, default_value = "text")]
        output: RecordOutput,
    },
    /// The first input after which a predicate holds (`--until`, in O(log n) partial folds;
    /// one that held at no probe may have turned false again, so every input is scanned), or
    /// with `--scan` the first occurrence of any of them, folding once:
    /// `unavailable-exceeds-budget:[NS/]P`, `cluster-at-index:C:[NS/]P:N`,
    /// `stage-before-approval:[NS/]RUN`, `object:KIND/[NS/]NAME:/pointer==VALUE` (or
    /// `!=VALUE`, or `/pointer exists`), `condition:KIND/[NS/]NAME:TYPE=STATUS`.
    Bisect {
        /// The predicate (repeat with `--scan`).
        #[arg(long, required = true)]
        until: Vec<String>,
        /// Fold once from the start and report the first input where any predicate holds.
        #[arg(long)]
        scan: bool,
        /// `text` or `json`.
        #[arg(short = 'o', long, default_value = "text")]
        output: RecordOutput,
    },
    /// Fork at an input, apply changed objects, re-feed the recorded facts that still apply,
    /// and show how the rollout would have gone beside how it went.
    WhatIf {
        /// The input to fork after.
        #[arg(long)]
        from: u64,
        /// The changed objects (YAML or JSON, several documents allowed).
        #[arg(long)]
        apply: PathBuf,
        /// `text` or `json`.
        #[arg(short = 'o', long, default_value = "text")]
        output: RecordOutput,
    },
    /// The input sequence a point names.
    Seek {
        /// The point.
        #[arg(long)]
        at: String,
        /// `text` or `json`.
        #[arg(short = 'o', long, default_value = "text")]
        output: RecordOutput,
    },
}

/// `replay timeline`'s sifts: `flotilla events`' flags, over a log read back.
#[derive(Debug, Clone, Args)]
pub struct TimelineSift {
    /// Only inputs of these types (`heartbeat`, `apply`, `report`, `approve`, …;
    /// comma-separated or repeated).
    #[arg(long = "type", value_delimiter = ',')]
    pub types: Vec<String>,
    /// Only inputs sent by this caller: `token/NAME`, `agent/CLUSTER`, the bare name, or a
    /// source as written.
    #[arg(long)]
    pub actor: Option<String>,
    /// Only inputs that decided something: hides the heartbeats that changed nothing.
    #[arg(long)]
    pub decided: bool,
    /// Only inputs the fold rejected.
    #[arg(long)]
    pub rejected: bool,
}

impl From<TimelineSift> for flotilla_replay::InputSift {
    fn from(sift: TimelineSift) -> Self {
        Self {
            kinds: sift.types,
            actor: sift.actor,
            decided: sift.decided,
            rejected: sift.rejected,
        }
    }
}
