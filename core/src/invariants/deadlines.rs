//! Deadline rules: the deadline sets agree with the objects they name, and the clock is not
//! behind the members' heartbeats.

use std::collections::BTreeMap;

use super::Violation;
use crate::model::ClusterName;
use crate::placement::Placement;
use crate::rollout::partitioned::is_partitioned;
use crate::state::State;

pub(super) fn check(state: &State) -> Result<(), Violation> {
    heartbeats(state)?;
    objects_exist(state)?;
    partitioned_plans(state)
}

fn heartbeat_violation(cluster: &str, detail: impl Into<String>) -> Violation {
    Violation::HeartbeatDeadline {
        cluster: cluster.to_owned(),
        detail: detail.into(),
    }
}

/// Each joined, healthy member has exactly one heartbeat deadline — its last heartbeat plus
/// its timeout, still in the future — and nothing else has one.
fn heartbeats(state: &State) -> Result<(), Violation> {
    let mut seen: BTreeMap<&str, usize> = BTreeMap::new();
    for (deadline, cluster) in &state.heartbeat_deadlines {
        *seen.entry(cluster).or_default() += 1;
        let Some(member) = state.members.get(cluster) else {
            return Err(heartbeat_violation(cluster, "not a member cluster"));
        };
        let Some(agent) = member.agent.as_ref().filter(|a| a.healthy) else {
            return Err(heartbeat_violation(cluster, "not joined and healthy"));
        };
        let expected = agent.last_heartbeat + member.heartbeat_timeout();
        if *deadline != expected {
            return Err(heartbeat_violation(
                cluster,
                format!("at {deadline}, expected {expected}"),
            ));
        }
        if state.now.is_some_and(|now| *deadline <= now) {
            return Err(heartbeat_violation(
                cluster,
                format!("{deadline} has passed"),
            ));
        }
    }
    for (name, member) in &state.members {
        let Some(agent) = &member.agent else { continue };
        if state.now.is_none_or(|now| agent.last_heartbeat > now)
            || agent.joined_at > agent.last_heartbeat
        {
            return Err(Violation::Clock {
                detail: format!(
                    "{name} joined {} and last beat {} at hub time {:?}",
                    agent.joined_at, agent.last_heartbeat, state.now
                ),
            });
        }
        let count = seen.get(name.as_str()).copied().unwrap_or(0);
        if agent.healthy && count != 1 {
            return Err(heartbeat_violation(
                name,
                format!("healthy member has {count} deadlines"),
            ));
        }
    }
    Ok(())
}

/// Run deadlines name existing runs; rollout deadlines name existing placements.
fn objects_exist(state: &State) -> Result<(), Violation> {
    if let Some((at, key)) = state
        .run_deadlines
        .iter()
        .find(|(_, key)| !state.update_runs.contains_key(key))
    {
        return Err(Violation::DeadlineWithoutObject {
            kind: "run",
            object: key.display(),
            at: at.to_rfc3339(),
        });
    }
    if let Some((at, key)) = state
        .rollout_deadlines
        .iter()
        .find(|(_, key)| !state.placements.contains_key(key))
    {
        return Err(Violation::DeadlineWithoutObject {
            kind: "rollout",
            object: key.display(),
            at: at.to_rfc3339(),
        });
    }
    Ok(())
}

/// Partitioned plans are kept only for existing, partitioned placements, and target exactly
/// their live (Scheduled or Bound) bindings.
fn partitioned_plans(state: &State) -> Result<(), Violation> {
    for (key, plan) in &state.partitioned_rollouts {
        let detail = match state.placements.get(key) {
            None => "does not exist",
            Some(placement) if !is_partitioned(placement) => "is not partitioned",
            Some(placement) if !targets_live_bindings(plan, placement) => {
                "has a plan whose targets are not its live bindings"
            }
            Some(Placement { .. }) => continue,
        };
        return Err(Violation::StrayPartitionedPlan {
            placement: key.display(),
            detail,
        });
    }
    Ok(())
}

/// Whether a plan's targets are the placement's Scheduled and Bound bindings.
fn targets_live_bindings(plan: &crate::rollout::partitioned::Plan, placement: &Placement) -> bool {
    let live = placement
        .bindings
        .states()
        .filter(|(_, state)| *state != crate::placement::BindingState::Unscheduled)
        .map(|(cluster, _)| cluster);
    let targets = plan
        .targets
        .keys()
        .map(|cluster| ClusterName::from(cluster.as_str()));
    targets.eq(live)
}
