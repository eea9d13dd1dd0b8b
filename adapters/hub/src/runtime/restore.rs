//! A restart as a determinism check: the already-decided tail is folded again and what this
//! build decides is compared with what was recorded (module docs of [`super`]). The follower
//! checks what it folds the same way.

use flotilla_core::Decisions;
use flotilla_eventstore::LogReader;
use flotilla_eventstore::fold::{Folder, READ_BATCH_MAX};
use flotilla_replay::{ReplayError, Verification, compare_batch};

use super::hub::{HubConfig, HubError};
use super::view::RECENT_DECISIONS_MAX;

/// Folds the already-decided inputs after `folder`'s sequence, batch by batch, and compares
/// what this build decides with what was recorded.
pub(super) async fn restore_checked<L: LogReader>(
    log: &L,
    folder: &mut Folder,
    decided: u64,
    config: &HubConfig,
) -> Result<(Vec<(u64, Decisions)>, Verification), HubError> {
    let mut recomputed_all = Vec::new();
    let mut verification = Verification::default();
    while folder.seq < decided {
        let batches = log.read_decisions(folder.seq + 1, READ_BATCH_MAX).await?;
        if batches.is_empty() {
            break;
        }
        let until = batches.last().map_or(decided, |b| b.last_input_seq);
        let from = folder.seq + 1;
        let recomputed = folder.catch_up_following(log, until, &batches).await?;
        for batch in &batches {
            // A checkpoint can fall inside a batch: compare only what was folded again.
            let mut partial = batch.clone();
            partial.first_input_seq = partial.first_input_seq.max(from);
            partial.decisions.retain(|(seq, _)| *seq >= from);
            if partial.first_input_seq > partial.last_input_seq {
                continue;
            }
            check_differences(
                &mut verification,
                compare_batch(&partial, &recomputed)?,
                config,
            )?;
        }
        verification.checked = folder.seq;
        recomputed_all.extend(recomputed.into_iter().filter(|(_, d)| !d.is_empty()));
        let excess = recomputed_all.len().saturating_sub(RECENT_DECISIONS_MAX);
        recomputed_all.drain(..excess);
    }
    Ok((recomputed_all, verification))
}

/// A difference under this build's decision version stops the hub unless allowed; older ones
/// are counted as warnings.
pub(super) fn check_differences(
    verification: &mut Verification,
    differences: Vec<flotilla_replay::Divergence>,
    config: &HubConfig,
) -> Result<(), HubError> {
    match verification.note(differences) {
        Ok(()) => Ok(()),
        Err(ReplayError::Diverged(divergence)) if config.allow_divergence => {
            tracing::error!(%divergence, "recorded decisions differ from this build's (allowed)");
            Ok(())
        }
        Err(error) => Err(error.into()),
    }
}

/// Logs the differences under older decision versions a check counted.
pub(super) fn report_warnings(verification: &Verification) {
    if verification.warnings_total == 0 {
        return;
    }
    for warning in &verification.warnings {
        tracing::warn!(%warning, "decisions recorded by an older flotilla differ from this build's");
    }
    tracing::warn!(
        differences = verification.warnings_total,
        "inputs decided by an older flotilla decide differently now (an intended change of \
         behaviour moves the decision version); `flotilla events` shows what was recorded"
    );
}
