//! `flotilla demo`: the README's first command. A real hub on the embedded store with a small
//! example fleet whose member agents are **simulated** (they run in this process, heartbeat,
//! and report the work they are given as applied and available — they apply nothing); one of
//! them goes silent partway so its heartbeat timeout shows.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use chrono::Utc;
use flotilla_core::{Envelope, Heartbeat, Input, ResourceUsage, WorkReport};
use tokio::time::Instant;
use uuid::Uuid;

use crate::cli::DemoArgs;
use crate::manifests;
use crate::runtime::{Hub, HubConfig};
use crate::store::AnyLog;

/// The example fleet, shipped with the binary.
pub const EXAMPLE_FLEET: &str = include_str!("../../examples/fleet.yaml");
/// The member whose simulated agent stops part of the way through.
const SILENT_MEMBER: &str = "member-4";
/// Simulated agents beat at the example's `heartbeatPeriodSeconds`.
const BEAT_EVERY: Duration = Duration::from_secs(2);
/// The table is printed this often.
const PRINT_EVERY: Duration = Duration::from_secs(4);

/// Runs the demo for `args.seconds`, then stops cleanly (checkpointing).
///
/// # Errors
/// When the store cannot be opened or the hub fails.
pub async fn run(args: DemoArgs) -> anyhow::Result<()> {
    let log = AnyLog::open_embedded(&args.data)
        .with_context(|| format!("opening the embedded log in {}", args.data.display()))?;
    let hub = Hub::open(Arc::new(log), HubConfig::default()).await?;
    let listener = crate::serve::bind(args.listen).await?;
    let duration = Duration::from_secs(args.seconds);
    let server = tokio::spawn(crate::serve::run(
        hub.clone(),
        listener,
        tokio::time::sleep(duration + Duration::from_millis(500)),
    ));
    println!(
        "data directory: {} (embedded redb log)",
        args.data.display()
    );
    let documents = manifests::parse_file("examples/fleet.yaml", EXAMPLE_FLEET)?;
    let applies = documents
        .into_iter()
        .map(|d| {
            event(
                "demo",
                Input::Apply {
                    manifest: d.value.to_string(),
                },
            )
        })
        .collect();
    let appended = hub.submit(applies).await?;
    println!(
        "applied {} objects from examples/fleet.yaml",
        appended.len()
    );
    simulate_agents(&hub, duration).await?;
    server.await.context("hub task")??;
    let view = hub.view()?;
    println!(
        "stopped after {} events; state hash {}",
        view.folder.seq,
        view.folder.state.hash().context("hashing state")?
    );
    Ok(())
}

fn event(source: &str, input: Input) -> Envelope {
    Envelope::new(Uuid::now_v7(), Utc::now(), source, input)
}

/// Simulated member agents: heartbeat with properties; one stops at a third of the run.
async fn simulate_agents<L: flotilla_eventstore::EventLog>(
    hub: &Hub<L>,
    duration: Duration,
) -> anyhow::Result<()> {
    let started = Instant::now();
    let mut last_print = started;
    let members: Vec<String> = (1..=4).map(|i| format!("member-{i}")).collect();
    while started.elapsed() < duration {
        let silent = started.elapsed() > duration / 3;
        let beats = members
            .iter()
            .enumerate()
            .filter(|(_, name)| !(silent && name.as_str() == SILENT_MEMBER))
            .map(|(i, name)| {
                event(
                    &format!("simulated-agent/{name}"),
                    Input::Heartbeat(beat(name, i)),
                )
            })
            .collect::<Vec<_>>();
        let mut events = beats;
        events.extend(work_reports(hub, silent)?);
        hub.submit(events).await?;
        if last_print.elapsed() >= PRINT_EVERY {
            last_print = Instant::now();
            print_members(hub, started.elapsed(), silent)?;
        }
        tokio::time::sleep(BEAT_EVERY).await;
    }
    print_members(hub, started.elapsed(), true)
}

/// The simulated members apply whatever work they were given and report it applied and
/// available, once per work (the silent one reports nothing once it has gone quiet).
fn work_reports<L: flotilla_eventstore::EventLog>(
    hub: &Hub<L>,
    silent: bool,
) -> anyhow::Result<Vec<Envelope>> {
    let view = hub.view()?;
    let mut reports = Vec::new();
    for (key, placement) in &view.folder.state.placements {
        for binding in placement.bindings.values() {
            let Some(resource_index) = binding.resource_index else {
                continue;
            };
            let reported = binding
                .report
                .as_ref()
                .is_some_and(|r| r.resource_index == resource_index);
            if reported || (silent && binding.cluster == SILENT_MEMBER) {
                continue;
            }
            let report = WorkReport {
                cluster: binding.cluster.clone(),
                placement: key.name.clone(),
                namespace: (!key.namespace.is_empty()).then(|| key.namespace.clone()),
                resource_index,
                applied: Some(true),
                available: Some(true),
                trackable: true,
                message: String::new(),
            };
            let source = format!("simulated-agent/{}", binding.cluster);
            reports.push(event(&source, Input::WorkReport(report)));
        }
    }
    Ok(reports)
}

fn beat(name: &str, index: usize) -> Heartbeat {
    let nodes = 3 + index;
    let quantity = |value: usize| {
        BTreeMap::from([
            ("cpu".to_owned(), value.to_string()),
            ("memory".to_owned(), format!("{}Gi", value * 4)),
        ])
    };
    Heartbeat {
        cluster: name.to_owned(),
        properties: BTreeMap::from([(
            "kubernetes-fleet.io/node-count".to_owned(),
            nodes.to_string(),
        )]),
        resource_usage: Some(ResourceUsage {
            capacity: quantity(nodes * 8),
            allocatable: quantity(nodes * 7),
            available: quantity(nodes * 3),
        }),
    }
}

fn print_members<L: flotilla_eventstore::EventLog>(
    hub: &Hub<L>,
    elapsed: Duration,
    silent: bool,
) -> anyhow::Result<()> {
    let view = hub.view()?;
    let state = &view.folder.state;
    let note = if silent {
        format!(" ({SILENT_MEMBER}'s simulated agent has gone silent)")
    } else {
        String::new()
    };
    println!(
        "\n[{:>2}s] {} events folded{note}",
        elapsed.as_secs(),
        view.folder.seq
    );
    for kind in [
        "memberclusters",
        "clusterresourceplacements",
        "clusterresourcebindings",
    ] {
        if let Some(kind) = flotilla_projections::resolve_kind(state, kind) {
            print!(
                "{}",
                flotilla_projections::table(state, &kind, None, kind.kind == "MemberCluster")
            );
        }
    }
    Ok(())
}
