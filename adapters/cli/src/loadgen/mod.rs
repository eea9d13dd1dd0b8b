//! The load generator behind `flotilla simulate`: a seeded fleet of simulated members driving a
//! real hub in this process — the real log (redb, or NATS), the real writer, clock and API — for
//! scale runs. (Apart from the seeded fault simulation of the tests crate, `tests/src/simulation/`,
//! which draws from this module's [`seeded`] numbers.)
//!
//! It applies the fleet (member clusters, then per placement a namespace, a ConfigMap and a
//! PickAll placement with the chosen strategy), sends every member's first heartbeat and waits
//! until the hub has folded them all: the fleet has joined. Then, for `--duration` of wall-clock
//! time, every member beats once per period at a seeded offset, each placement's ConfigMap
//! changes once (a staged placement gets a `ClusterStagedUpdateRun` for it), members report new
//! work applied and available after a seeded delay (the `sim` applier's model), and requested
//! approvals are given. A line a second shows throughput, fold lag, decision latency, memory and
//! the last checkpoint's size; the end prints the summary. The log stays in `--data` (or on the
//! NATS server) for `flotilla replay`.

pub mod fleet;
mod members;
pub mod seeded;
pub mod stats;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context;
use chrono::Utc;
use flotilla_core::{Envelope, Input};
use flotilla_eventstore::EventLog;
use flotilla_eventstore::nats_log::{NatsLog, NatsOptions};
use flotilla_eventstore::nats_test_server::NatsTestServer;
use flotilla_eventstore::redb_log::RedbOptions;
use uuid::Uuid;

use fleet::Strategy;
use flotilla_adapters::store::AnyLog;
use flotilla_hub::runtime::{Hub, HubConfig, RECENT_DECISIONS_MAX};
use members::Members;
use seeded::Seeded;
use stats::{FoldClock, Stats};

/// Where the log lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Backend {
    /// The embedded redb file in `--data`.
    Redb,
    /// A NATS JetStream stream (`--nats URL`, or a server started for the run).
    Nats,
}

/// Options of `simulate`.
#[derive(Debug, clap::Args)]
pub struct SimulateArgs {
    /// Member clusters in the fleet.
    #[arg(long)]
    pub clusters: u32,
    /// Placements, each PickAll over the whole fleet.
    #[arg(long, default_value_t = 1)]
    pub placements: u32,
    /// Every member's heartbeat period (`60s`, `1m`).
    #[arg(long, default_value = "60s", value_parser = parse_duration)]
    pub heartbeat: Duration,
    /// How long to run once the fleet has joined, in wall-clock time (`10m`, `90s`).
    #[arg(long, value_parser = parse_duration)]
    pub duration: Duration,
    /// How the placements roll out.
    #[arg(long, value_enum, default_value_t = Strategy::Rolling)]
    pub strategy: Strategy,
    /// Where the log lives.
    #[arg(long, value_enum, default_value_t = Backend::Redb)]
    pub backend: Backend,
    /// The NATS server of `--backend nats`; without it a `nats-server` (from PATH) is started
    /// on a free loopback port with a temporary store and `sync_interval: always`.
    #[arg(long)]
    pub nats: Option<String>,
    /// Data directory of the embedded log.
    #[arg(long, default_value = flotilla_hub::serve::DEFAULT_DATA_DIR)]
    pub data: PathBuf,
    /// The embedded log's page cache in MiB (the log's default when absent), to measure what
    /// the cache adds to the hub's RSS.
    #[arg(long)]
    pub redb_cache_mib: Option<usize>,
    /// Keep only this much of the log (`120s`, `7d`): older inputs leave it, and the oldest
    /// kept checkpoint becomes its base (docs/storage.md). Kept whole when absent.
    #[arg(long, value_parser = parse_duration)]
    pub retain: Option<Duration>,
    /// Write what `--retain` removes to this directory first (docs/storage.md, "Archive").
    #[arg(long, value_name = "DIR")]
    pub archive: Option<PathBuf>,
    /// Fixes the fleet's labels, heartbeat offsets and report delays.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// The hub's API address (loopback), so `flotilla get …` works while it runs.
    #[arg(long, default_value = "127.0.0.1:0")]
    pub listen: SocketAddr,
}

/// Inputs per append while joining (one durable commit each).
const JOIN_CHUNK: usize = 10_000;
/// How often the simulated members look at the time.
const TICK: Duration = Duration::from_millis(50);
/// How often a progress line is printed.
const LINE_EVERY: Duration = Duration::from_secs(1);
/// Longest wait for the hub to fold what was sent, at the join and at the end.
const CATCH_UP_MAX: Duration = Duration::from_secs(1_800);

/// Parses `90s`, `10m`, `1h`, `7d` or a number of seconds.
///
/// # Errors
/// Anything else.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let (number, unit) = text.split_at(
        text.find(|c: char| !c.is_ascii_digit())
            .unwrap_or(text.len()),
    );
    let value: u64 = number.parse().map_err(|_| {
        format!("{text:?}: a duration is a number with s, m, h or d (90s, 10m, 1h)")
    })?;
    let seconds = match unit {
        "" | "s" => value,
        "m" => value.saturating_mul(60),
        "h" => value.saturating_mul(3_600),
        "d" => value.saturating_mul(86_400),
        _ => return Err(format!("{text:?}: the unit is s, m, h or d")),
    };
    Ok(Duration::from_secs(seconds))
}

/// Runs the simulation (module docs).
///
/// # Errors
/// When the log cannot be opened, the hub fails, or an append is refused.
pub async fn run(args: SimulateArgs) -> anyhow::Result<()> {
    let baseline_rss = stats::rss_bytes();
    let (log, _nats_server) = open_log(&args).await?;
    let config = HubConfig {
        checkpoint_every_log_time: args
            .retain
            .and_then(flotilla_hub::runtime::checkpoint_spacing_for),
        ..HubConfig::default()
    };
    let hub = Hub::open(Arc::new(log), config).await?;
    let listener = flotilla_hub::serve::bind(args.listen, false).await?;
    println!(
        "simulating {} clusters, {} placement(s), {:?} strategy, heartbeat {} s, seed {}; API on http://{}",
        args.clusters,
        args.placements,
        args.strategy,
        args.heartbeat.as_secs(),
        args.seed,
        listener.local_addr()?
    );
    let (stop, server) = flotilla_hub::serve::spawn_open(hub.clone(), listener);
    let outcome = simulate(&hub, &args, baseline_rss).await;
    let _ = stop.send(());
    server.await.context("hub task")??;
    outcome?;
    if let Some(line) = state_heap(&hub).await? {
        println!("{line}");
    }
    Ok(())
}

/// In a build that counts the heap (`--features heap-count`), once the hub has stopped: the
/// heap its folded state held (freed when taken out and dropped), and the heap the same state
/// holds decoded from the log's newest checkpoint. Neither counts the log's cache, the
/// recent decisions or the load generator's tables.
async fn state_heap<L: EventLog>(hub: &Hub<L>) -> anyhow::Result<Option<String>> {
    let Some(before) = stats::heap_bytes() else {
        return Ok(None);
    };
    drop(hub.take_state()?);
    let folded = before.saturating_sub(stats::heap_bytes().unwrap_or(before));
    let before = stats::heap_bytes().unwrap_or(0);
    let Some(checkpoint) = hub.log().load_checkpoint().await? else {
        return Ok(Some(format!("state: {} of heap", stats::mib(Some(folded)))));
    };
    let restored = stats::heap_bytes().map_or(0, |after| after.saturating_sub(before));
    Ok(Some(format!(
        "state: {} of heap as folded; {} as restored from the last checkpoint (input #{})",
        stats::mib(Some(folded)),
        stats::mib(Some(restored)),
        checkpoint.seq
    )))
}

/// Opens the log of `--backend`; a NATS server started for the run lives as long as the guard.
async fn open_log(args: &SimulateArgs) -> anyhow::Result<(AnyLog, Option<NatsTestServer>)> {
    match args.backend {
        Backend::Redb => {
            let mut options = RedbOptions::default();
            if let Some(mib) = args.redb_cache_mib {
                options.cache_size_bytes = mib.saturating_mul(1024 * 1024);
            }
            options.retain = args.retain.and_then(|d| chrono::Duration::from_std(d).ok());
            options.archive.clone_from(&args.archive);
            let cache_mib = options.cache_size_bytes / (1024 * 1024);
            let log = AnyLog::open_embedded_with(&args.data, options)
                .with_context(|| format!("opening the embedded log in {}", args.data.display()))?;
            println!(
                "log: embedded redb in {} ({cache_mib} MiB of page cache), {}",
                args.data.display(),
                flotilla_adapters::store::retention_text(args.retain, args.archive.as_deref())
            );
            Ok((log, None))
        }
        Backend::Nats => {
            // What a NATS log's window removes is not archived: refused rather than lost.
            if args.archive.is_some() {
                anyhow::bail!("--archive applies to the embedded log (--backend redb)");
            }
            let (url, server) = match &args.nats {
                Some(url) => (url.clone(), None),
                None => {
                    let server = NatsTestServer::start().context("starting nats-server")?;
                    (server.url(), Some(server))
                }
            };
            let options = NatsOptions {
                retain: args.retain,
                ..NatsOptions::default()
            };
            let log = NatsLog::connect(&url, options)
                .await
                .with_context(|| format!("opening the log on NATS at {url}"))?;
            let log = AnyLog::Nats(Box::new(log));
            println!(
                "log: NATS JetStream at {url}, {}",
                flotilla_adapters::store::retention_text(args.retain, None)
            );
            Ok((log, server))
        }
    }
}

async fn simulate<L: EventLog>(
    hub: &Hub<L>,
    args: &SimulateArgs,
    baseline_rss: Option<u64>,
) -> anyhow::Result<()> {
    let mut seeded = Seeded::new(args.seed);
    let joined = join(hub, args, &mut seeded).await?;
    let started = Instant::now();
    let mut members = Members::new(
        args.clusters,
        u64::try_from(args.heartbeat.as_millis()).unwrap_or(u64::MAX),
        0,
        seeded,
    );
    // Decisions after this point are answered from the hub's recent decisions; the cursor is
    // taken before the change is sent, so the writer folding it first cannot hide its
    // decisions (a canary cluster bound before `drive` began was never answered).
    let cursor = {
        let view = hub.view()?;
        members.reconcile(&view.folder.state, 0);
        view.folder.seq
    };
    let change = change_everything(args);
    let mut clock = FoldClock::start(hub.folded_updates());
    let mut stats = Stats::new(joined);
    let last = hub.submit(change).await?;
    stats.appended(last.len(), last.last().map_or(joined, |a| a.seq));
    drive(
        hub,
        args,
        (&mut members, cursor),
        (&mut stats, &mut clock),
        started,
    )
    .await?;
    // Let the hub fold what was sent, then report.
    let appended = hub.log().last_seq().await?;
    hub.wait_folded(appended, CATCH_UP_MAX).await;
    stats.read_clock(&mut clock);
    stats.folded(hub.view()?.folder.seq);
    for line in stats.summary() {
        println!("{line}");
    }
    println!(
        "memory: rss {} (before the hub {}; simulator tables {} MiB); last checkpoint {}",
        stats::memory(),
        stats::mib(baseline_rss),
        members.table_bytes() / 1_048_576,
        stats::mib(checkpoint_bytes())
    );
    println!(
        "the log stays for `flotilla replay` (e.g. `flotilla replay --data {} verify`)",
        args.data.display()
    );
    Ok(())
}

/// Applies the fleet and the placements and sends every member's first heartbeat; returns the
/// sequence at which all of it was folded.
async fn join<L: EventLog>(
    hub: &Hub<L>,
    args: &SimulateArgs,
    seeded: &mut Seeded,
) -> anyhow::Result<u64> {
    let began = Instant::now();
    let heartbeat = args.heartbeat.as_secs().max(1);
    let clusters = u64::from(args.clusters);
    let mut last = 0;
    for first in (0..clusters).step_by(JOIN_CHUNK) {
        let chunk = (first..(first + JOIN_CHUNK as u64).min(clusters))
            .map(|i| apply(&fleet::member(i, heartbeat, seeded)))
            .collect();
        last = submit_all(hub, chunk).await?.max(last);
    }
    let placements = (0..u64::from(args.placements))
        .flat_map(|p| fleet::placement_objects(p, args.strategy))
        .map(|object| apply(&object))
        .collect();
    last = submit_all(hub, placements).await?.max(last);
    for first in (0..clusters).step_by(JOIN_CHUNK) {
        let chunk = (first..(first + JOIN_CHUNK as u64).min(clusters))
            .map(|i| beat(&fleet::cluster_name(i)))
            .collect();
        last = submit_all(hub, chunk).await?.max(last);
    }
    if !hub.wait_folded(last, CATCH_UP_MAX).await {
        anyhow::bail!("the hub did not fold the fleet's join (#{last}) within {CATCH_UP_MAX:?}");
    }
    let seconds = began.elapsed().as_secs_f64();
    println!(
        "fleet joined: {clusters} clusters, {last} events in {seconds:.1} s ({:.0} events/s); rss {}",
        last as f64 / seconds.max(1e-3),
        stats::memory()
    );
    Ok(last)
}

/// Each placement's ConfigMap at version 2 (a new resource snapshot), and for a staged
/// placement the run that rolls it out.
fn change_everything(args: &SimulateArgs) -> Vec<Envelope> {
    (0..u64::from(args.placements))
        .flat_map(|p| {
            let mut objects = vec![fleet::config_map(p, 2)];
            if args.strategy == Strategy::Staged {
                objects.push(fleet::update_run(p, 1));
            }
            objects
        })
        .map(|object| apply(&object))
        .collect()
}

/// The members beat and answer, from the decisions after `cursor` on, until `--duration` has
/// passed since `started`.
async fn drive<L: EventLog>(
    hub: &Hub<L>,
    args: &SimulateArgs,
    (members, mut cursor): (&mut Members, u64),
    (stats, clock): (&mut Stats, &mut FoldClock),
    started: Instant,
) -> anyhow::Result<()> {
    let mut next_line = Instant::now() + LINE_EVERY;
    let progress = indicatif::ProgressBar::new_spinner();
    while started.elapsed() < args.duration {
        let now_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
        let mut events = members.due_heartbeats(now_ms);
        events.extend(members.due_answers(now_ms));
        if !events.is_empty() {
            let count = events.len();
            let appended = hub.submit(events).await?;
            stats.appended(count, appended.iter().map(|a| a.seq).max().unwrap_or(0));
        }
        cursor = answer_decisions(hub, members, cursor, now_ms)?;
        stats.read_clock(clock);
        if Instant::now() >= next_line {
            let line = stats.line(members.pending(), checkpoint_bytes());
            if progress.is_hidden() {
                println!("{line}");
            } else {
                progress.set_message(line);
                progress.tick();
            }
            next_line += LINE_EVERY;
        }
        tokio::time::sleep(TICK).await;
    }
    progress.finish_and_clear();
    Ok(())
}

/// Hands the members the decisions remembered since `cursor`; the new cursor. When the hub's memory of recent decisions may have dropped some, the
/// members look at the state instead.
fn answer_decisions<L: EventLog>(
    hub: &Hub<L>,
    members: &mut Members,
    cursor: u64,
    now_ms: u64,
) -> anyhow::Result<u64> {
    let view = hub.view()?;
    let recent = &view.recent;
    let start = recent.partition_point(|(seq, _)| *seq <= cursor);
    let dropped = recent.len() >= RECENT_DECISIONS_MAX
        && recent.front().is_some_and(|(seq, _)| *seq > cursor + 1);
    if dropped {
        members.reconcile(&view.folder.state, now_ms);
    } else {
        // Read in place: a copy, made under the view's lock, held the writer back.
        members.on_decisions(recent.range(start..), now_ms);
    }
    Ok(view.remembered)
}

/// Appends `events` in one call; the last sequence.
async fn submit_all<L: EventLog>(hub: &Hub<L>, events: Vec<Envelope>) -> anyhow::Result<u64> {
    let appended = hub.submit(events).await?;
    Ok(appended.iter().map(|a| a.seq).max().unwrap_or(0))
}

fn apply(object: &serde_json::Value) -> Envelope {
    let input = Input::Apply {
        manifest: object.to_string(),
    };
    Envelope::new(Uuid::now_v7(), Utc::now(), members::SOURCE, input)
}

fn beat(cluster: &str) -> Envelope {
    let input = Input::Heartbeat(flotilla_core::Heartbeat {
        cluster: cluster.to_owned(),
        ..flotilla_core::Heartbeat::default()
    });
    Envelope::new(Uuid::now_v7(), Utc::now(), members::SOURCE, input)
}

/// The size of the last checkpoint the hub wrote, from its metrics.
fn checkpoint_bytes() -> Option<u64> {
    let text = flotilla_hub::hub_metrics::handle().render();
    let line = text
        .lines()
        .find(|line| line.starts_with(flotilla_hub::hub_metrics::CHECKPOINT_BYTES))?;
    line.split_whitespace()
        .last()?
        .parse::<f64>()
        .ok()
        .map(|b| b as u64)
}
