//! Work report and leaving rules: what the hub keeps of a report stays inside its named limits
//! and its first-seen times are no later than the report holding them; a leaving member holds
//! no binding (its bindings are released and removed the moment it starts leaving, and no
//! placement picks it again).

use super::Violation;
use crate::placement::Placement;
use crate::state::State;
use crate::work_status::{
    DIFFERENCES_MAX, FAILED_MANIFESTS_MAX, ObservedDifference, PATCH_DETAILS_MAX, WorkStatus,
};

pub(super) fn check(state: &State) -> Result<(), Violation> {
    for (key, placement) in &state.placements {
        no_binding_to_a_leaving_member(state, &key.display(), placement)?;
        for binding in placement.bindings.values() {
            if let Some(report) = &binding.report
                && let Some(detail) = report_fault(report)
            {
                return Err(Violation::WorkReport {
                    placement: key.display(),
                    cluster: binding.cluster.to_string(),
                    detail,
                });
            }
        }
    }
    Ok(())
}

fn no_binding_to_a_leaving_member(
    state: &State,
    placement_name: &str,
    placement: &Placement,
) -> Result<(), Violation> {
    let stray = placement.bindings.values().find(|binding| {
        state
            .members
            .get(binding.cluster.as_str())
            .is_some_and(|member| member.is_leaving())
    });
    match stray {
        Some(binding) => Err(Violation::BindingToLeavingMember {
            placement: placement_name.to_owned(),
            cluster: binding.cluster.to_string(),
        }),
        None => Ok(()),
    }
}

/// What is wrong with a kept report, if anything.
fn report_fault(report: &WorkStatus) -> Option<String> {
    if report.failed_manifests().len() > FAILED_MANIFESTS_MAX {
        return Some(format!(
            "{} failed manifests, over the limit of {FAILED_MANIFESTS_MAX}",
            report.failed_manifests().len()
        ));
    }
    for (what, kept) in [("diffed", report.diffed()), ("drifted", report.drifted())] {
        if let Some(fault) = differences_fault(what, kept, report) {
            return Some(fault);
        }
    }
    None
}

fn differences_fault(
    what: &str,
    kept: &[ObservedDifference],
    report: &WorkStatus,
) -> Option<String> {
    if kept.len() > DIFFERENCES_MAX {
        return Some(format!(
            "{} {what} manifests, over the limit of {DIFFERENCES_MAX}",
            kept.len()
        ));
    }
    kept.iter().find_map(|observed| {
        let name = &observed.manifest.name;
        if observed.manifest.details.len() > PATCH_DETAILS_MAX {
            Some(format!(
                "{what} manifest {name} keeps {} details, over the limit of {PATCH_DETAILS_MAX}",
                observed.manifest.details.len()
            ))
        } else if observed.first_observed > report.reported_at {
            Some(format!(
                "{what} manifest {name} was first seen at {}, after the report holding it ({})",
                observed.first_observed, report.reported_at
            ))
        } else {
            None
        }
    })
}
