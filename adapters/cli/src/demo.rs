//! `flotilla demo`: the README's first command — flotilla's main job end to end on the embedded
//! store. A real hub takes a small example fleet, whose member agents are real `flotilla agent`
//! processes on **simulated** clusters (`--applier sim`: they heartbeat, apply their Works to a
//! simulated cluster kept under `DATA/agents/`, and report them), through two staged update runs: the first places the example namespace
//! stage by stage, the second takes a change of its ConfigMap through the same stages — a timed
//! wait after staging, an approval after canary, an approval before production, then production
//! one cluster at a time. Approvals are given by the demo (as `flotilla approve NAME` would) unless
//! `--manual-approvals` asks for them from a second terminal. A lab cluster's agent is stopped
//! partway, so its heartbeat timeout shows too.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use chrono::Utc;
use flotilla_core::{Envelope, Input};
use tokio::time::Instant;
use uuid::Uuid;

use crate::cli::DemoArgs;
use crate::demo_agents::DemoAgents;
use crate::progress::Lines;
use flotilla_adapters::manifests;
use flotilla_adapters::store::AnyLog;
use flotilla_hub::runtime::{Hub, HubConfig};

/// The example fleet, shipped with the binary.
pub const EXAMPLE_FLEET: &str = include_str!("../../../examples/fleet.yaml");
/// The member whose agent is stopped part of the way through (outside the placement).
const SILENT_MEMBER: &str = "member-5";
/// The members whose agents the demo starts.
const MEMBERS: [&str; 5] = ["member-1", "member-2", "member-3", "member-4", "member-5"];
/// The demo gives an approval this long after its request appeared.
const APPROVE_AFTER: chrono::TimeDelta = chrono::TimeDelta::seconds(2);
/// How often the demo looks at the runs.
const LOOK_EVERY: Duration = Duration::from_secs(1);
/// The member table is printed this often.
const PRINT_EVERY: Duration = Duration::from_secs(10);

/// Runs the demo until the second run succeeded (at most `args.seconds`), then stops cleanly
/// (checkpointing).
///
/// # Errors
/// When the store cannot be opened or the hub fails.
pub async fn run(args: DemoArgs) -> anyhow::Result<()> {
    let log = AnyLog::open_embedded(&args.data)
        .with_context(|| format!("opening the embedded log in {}", args.data.display()))?;
    let hub = Hub::open(Arc::new(log), HubConfig::default()).await?;
    let listener = flotilla_hub::serve::bind(args.listen, false).await?;
    let hub_url = format!("http://{}", listener.local_addr()?);
    let (stop, server) = flotilla_hub::serve::spawn_open(hub.clone(), listener);
    println!(
        "data directory: {} (embedded redb log); API on http://{}",
        args.data.display(),
        args.listen
    );
    println!(
        "member agents are `flotilla agent --applier sim` processes on SIMULATED clusters (lines marked [sim …])"
    );
    submit_manifests(&hub, "examples/fleet.yaml", EXAMPLE_FLEET).await?;
    let mut agents =
        DemoAgents::start(&hub_url, &args.data.join("agents"), &MEMBERS, args.seconds)?;
    if args.manual_approvals {
        println!(
            "approvals are yours: run `flotilla approve NAME` from another terminal when asked"
        );
    }
    let outcome = drive(&hub, &args, &mut agents).await;
    drop(agents);
    let _ = stop.send(());
    server.await.context("hub task")??;
    outcome?;
    let view = hub.view()?;
    println!(
        "stopped after {} events; state hash {}",
        view.folder.seq,
        view.folder.state.hash().context("hashing state")?
    );
    Ok(())
}

/// Applies every document of a YAML text.
async fn submit_manifests<L: flotilla_eventstore::EventLog>(
    hub: &Hub<L>,
    file: &str,
    text: &str,
) -> anyhow::Result<()> {
    let documents = manifests::parse_file(file, text)?;
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
    println!("applied {} objects from {file}", appended.len());
    Ok(())
}

/// The first run places the namespace; the second takes a ConfigMap change through the stages.
const FIRST_RUN: &str = "apiVersion: placement.kubernetes-fleet.io/v1beta1
kind: ClusterStagedUpdateRun
metadata: {name: demo-run-1}
spec: {placementName: crp-1, stagedRolloutStrategyName: demo-strategy, state: Run}
";
/// The change, and the run that rolls it out (resource snapshot 1).
const CHANGE_AND_SECOND_RUN: &str = "apiVersion: v1
kind: ConfigMap
metadata: {name: test-1, namespace: test-deployment}
data: {key1: value2}
---
apiVersion: placement.kubernetes-fleet.io/v1beta1
kind: ClusterStagedUpdateRun
metadata: {name: demo-run-2}
spec: {placementName: crp-1, resourceSnapshotIndex: \"1\", stagedRolloutStrategyName: demo-strategy, state: Run}
";

/// Where the demo is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Waiting for the placement to be scheduled.
    Scheduling,
    /// The first run is rolling the namespace out.
    FirstRun,
    /// The second run is rolling the change out.
    SecondRun,
    /// Both runs succeeded.
    Done,
}

/// The agents beat and report; the demo starts the runs, approves (unless manual), stops the
/// lab cluster's agent after a while, and prints the runs' progress whenever it changes (as
/// `get csur NAME --watch` prints it when piped).
async fn drive<L: flotilla_eventstore::EventLog>(
    hub: &Hub<L>,
    args: &DemoArgs,
    agents: &mut DemoAgents,
) -> anyhow::Result<()> {
    let duration = Duration::from_secs(args.seconds);
    let started = Instant::now();
    let mut last_print = started;
    let mut phase = Phase::Scheduling;
    let mut progress: BTreeMap<String, Lines> = BTreeMap::new();
    while started.elapsed() < duration && phase != Phase::Done {
        let silent = started.elapsed() > Duration::from_secs(6);
        if silent {
            agents.silence(SILENT_MEMBER);
        }
        phase = next_phase(hub, phase).await?;
        for (run, view) in run_views(hub)? {
            progress.entry(run).or_default().show(&view);
        }
        if !args.manual_approvals {
            hub.submit(approvals(hub)?).await?;
        }
        if last_print.elapsed() >= PRINT_EVERY {
            last_print = Instant::now();
            print_members(hub, started.elapsed(), silent)?;
        }
        tokio::time::sleep(LOOK_EVERY).await;
    }
    print_members(hub, started.elapsed(), true)?;
    if phase == Phase::Done {
        println!(
            "\nboth staged update runs succeeded; try `flotilla describe csur demo-run-2` or `flotilla rollout status crp-1` while a hub serves this data (`flotilla serve`)"
        );
    } else {
        println!(
            "\nstopped after {}s before the runs finished (see --seconds)",
            args.seconds
        );
    }
    Ok(())
}

/// Starts the next run once the previous step is done.
async fn next_phase<L: flotilla_eventstore::EventLog>(
    hub: &Hub<L>,
    phase: Phase,
) -> anyhow::Result<Phase> {
    let (scheduled, first_done, second_done) = {
        let view = hub.view()?;
        let state = &view.folder.state;
        let scheduled = state
            .placements()
            .values()
            .any(|p| p.bindings.len() >= 4 && p.is_fully_scheduled());
        let succeeded = |name: &str| {
            state.update_runs().iter().any(|(k, r)| {
                k.name == name
                    && r.status
                        .succeeded
                        .as_ref()
                        .is_some_and(|c| c.reason == "UpdateRunSucceeded")
            })
        };
        (scheduled, succeeded("demo-run-1"), succeeded("demo-run-2"))
    };
    Ok(match phase {
        Phase::Scheduling if scheduled => {
            println!(
                "\ncrp-1 is scheduled on member-1..4; starting demo-run-1 (the first rollout)"
            );
            submit_manifests(hub, "demo-run-1", FIRST_RUN).await?;
            Phase::FirstRun
        }
        Phase::FirstRun if first_done => {
            println!(
                "\nchanging ConfigMap test-1 (resource snapshot 1) and starting demo-run-2 to roll it out"
            );
            submit_manifests(hub, "demo-run-2", CHANGE_AND_SECOND_RUN).await?;
            Phase::SecondRun
        }
        Phase::SecondRun if second_done => Phase::Done,
        other => other,
    })
}

/// Approves every request that has waited [`APPROVE_AFTER`] — what `flotilla approve NAME`
/// does from another terminal.
fn approvals<L: flotilla_eventstore::EventLog>(hub: &Hub<L>) -> anyhow::Result<Vec<Envelope>> {
    let view = hub.view()?;
    let now = Utc::now();
    let mut events = Vec::new();
    for (key, request) in view.folder.state.approvals() {
        if request.approved.is_none() && request.meta.creation_timestamp + APPROVE_AFTER <= now {
            println!(
                "  approving {} (what `flotilla approve {}` does)",
                key.display(),
                key.name
            );
            events.push(event(
                "demo/approver",
                Input::Approve {
                    name: key.name.to_string(),
                    namespace: None,
                    reason: None,
                    message: None,
                },
            ));
        }
    }
    Ok(events)
}

/// Each run's progress view, as `flotilla get csur NAME --watch` shows it piped.
fn run_views<L: flotilla_eventstore::EventLog>(
    hub: &Hub<L>,
) -> anyhow::Result<Vec<(String, crate::progress::model::View)>> {
    let view = hub.view()?;
    let state = &view.folder.state;
    Ok(state
        .update_runs()
        .keys()
        .filter_map(|key| {
            let object = flotilla_projections::render_object(state, key)?;
            Some((
                key.name.to_string(),
                crate::progress::model::run_view(&object),
            ))
        })
        .collect())
}

fn event(source: &str, input: Input) -> Envelope {
    Envelope::new(Uuid::now_v7(), Utc::now(), source, input)
}

fn print_members<L: flotilla_eventstore::EventLog>(
    hub: &Hub<L>,
    elapsed: Duration,
    silent: bool,
) -> anyhow::Result<()> {
    let view = hub.view()?;
    let state = &view.folder.state;
    let note = if silent {
        format!(" ({SILENT_MEMBER}'s agent has been stopped)")
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
        "clusterstagedupdateruns",
        "clusterapprovalrequests",
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
