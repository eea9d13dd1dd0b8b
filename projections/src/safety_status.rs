//! What a tripped rollout (`docs/rollout-safety.md`) shows on its placement: the `…RolloutStarted`
//! condition, status `False`, with the rule's reason (`ProgressDeadlineExceeded`,
//! `FailureThresholdExceeded`, `RolledBack`, `RollbackFailed`) and a message naming the field
//! that fired and the clusters it names. It replaces the rollout's own `…RolloutStarted` and the
//! conditions after it, which KubeFleet shows only while the ones before are `True`.

use flotilla_core::condition::ConditionStatus;
use flotilla_core::query::rollout::safety::Guard;
use serde_json::Value;

use crate::progress;

/// Replaces the rollout conditions of a placement whose guard tripped.
pub(crate) fn apply(conditions: &mut Vec<Value>, (prefix, generation): (&str, u64), guard: &Guard) {
    let (Some((reason, message)), Some(tripped)) = (guard.condition(), guard.tripped.as_ref())
    else {
        return;
    };
    let rollout_started = format!("{prefix}RolloutStarted");
    if let Some(position) = conditions
        .iter()
        .position(|c| c.get("type").and_then(Value::as_str) == Some(rollout_started.as_str()))
    {
        conditions.truncate(position);
    }
    conditions.push(progress::condition_json(
        &rollout_started,
        ConditionStatus::False,
        reason,
        &message,
        tripped.at,
        generation,
    ));
}
