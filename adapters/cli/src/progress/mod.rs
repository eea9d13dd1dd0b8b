//! Live rollout progress in the terminal: `flotilla rollout status PLACEMENT` and
//! `flotilla get csur NAME --watch`.
//!
//! Contract:
//! - One bar per stage (a staged update run), per partition (a `Partitioned` placement) or per
//!   cluster (any other placement), drawn with indicatif while stdout is a terminal; otherwise
//!   one plain line per change.
//! - Following stops when the rollout completes, fails or waits (an approval, a timed wait, a
//!   run not started or stopped, or — once the view stops moving — a reason the hub's explain
//!   gives that does not pass by itself), then prints the outcome and, unless it completed, the
//!   hub's explain text.
//! - Exit codes, like `kubectl rollout status`: [`EXIT_COMPLETED`] (0) when the rollout
//!   completed, [`EXIT_FAILED`] (1) when it failed (or on any error), [`EXIT_WAITING`] (3) when
//!   it waits for something outside it.

mod follow;
pub mod model;
mod render;

use std::time::Duration;

use anyhow::bail;

use flotilla_adapters::client::Client;
pub use follow::{Ending, POLL_EVERY, QUIET_FOR, REQUEST_TIMEOUT, Target, follow};
use model::Outcome;
pub use render::{Lines, Renderer};

/// Exit code of a completed rollout.
pub const EXIT_COMPLETED: u8 = 0;
/// Exit code of a failed rollout (and of any error).
pub const EXIT_FAILED: u8 = 1;
/// Exit code of a rollout that waits: for an approval, a timed wait, a run to be started or
/// resumed, or clusters that block it. 2 is left to usage errors.
pub const EXIT_WAITING: u8 = 3;

/// A rollout that did not complete: the exit code the command ends with. Its outcome and why
/// were printed already.
#[derive(Debug, thiserror::Error)]
#[error("the rollout did not complete (exit code {exit_code})")]
pub struct Unfinished {
    /// [`EXIT_FAILED`] or [`EXIT_WAITING`].
    pub exit_code: u8,
}

/// `flotilla rollout status PLACEMENT [-n NAMESPACE] [--timeout SECONDS]` (0: no limit).
///
/// # Errors
/// [`Unfinished`] when the rollout failed or waits; an unreachable hub, a missing placement or
/// the timeout otherwise.
pub async fn rollout_status(
    client: &Client,
    name: String,
    namespace: Option<String>,
    timeout_secs: u64,
) -> anyhow::Result<()> {
    let limit = (timeout_secs > 0).then(|| Duration::from_secs(timeout_secs));
    run(client, &Target::Placement { name, namespace }, limit).await
}

/// `flotilla get KIND NAME --watch`: follows a staged update run or a placement.
///
/// # Errors
/// As [`rollout_status`]; also a kind that is neither.
pub async fn watch(
    client: &Client,
    kind: &str,
    name: String,
    namespace: Option<String>,
) -> anyhow::Result<()> {
    let mut query = vec![("name", name.clone())];
    if let Some(namespace) = &namespace {
        query.push(("namespace", namespace.clone()));
    }
    // The hub resolves the kind's short names; its answer says which kind it is.
    let object = client
        .get_json(&format!("/v1/objects/{kind}"), &query)
        .await?;
    let target = match model::text(&object, "/kind") {
        run @ ("ClusterStagedUpdateRun" | "StagedUpdateRun") => Target::Run {
            kind: run.to_owned(),
            name,
            namespace,
        },
        "ClusterResourcePlacement" | "ResourcePlacement" => Target::Placement { name, namespace },
        other => bail!(
            "--watch follows staged update runs and placements; {kind} is {other}, which is \
             neither (use `flotilla events --follow` for anything else)"
        ),
    };
    run(client, &target, None).await
}

async fn run(client: &Client, target: &Target, limit: Option<Duration>) -> anyhow::Result<()> {
    let mut renderer = Renderer::for_stdout();
    let ending = follow(client, target, &mut renderer, limit).await;
    renderer.finish();
    let ending = ending?;
    print_ending(&ending);
    match ending.outcome {
        Outcome::Completed(_) | Outcome::Progressing => Ok(()),
        Outcome::Failed(_) => Err(Unfinished {
            exit_code: EXIT_FAILED,
        }
        .into()),
        Outcome::Waiting(_) => Err(Unfinished {
            exit_code: EXIT_WAITING,
        }
        .into()),
    }
}

fn print_ending(ending: &Ending) {
    match &ending.outcome {
        Outcome::Completed(text) => println!("rollout complete: {text}"),
        Outcome::Failed(text) => println!("rollout failed: {text}"),
        Outcome::Waiting(text) => println!("rollout waits: {text}"),
        Outcome::Progressing => {}
    }
    if let Some(why) = &ending.why {
        print!("{why}");
    }
}
