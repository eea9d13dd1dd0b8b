//! The checks KubeFleet's webhook makes on placements, on create and on update.

use super::FieldError;
use super::int_or_percent::IntOrPercent;
use super::placement::{
    CLUSTER_NAMES_MAX, PlacementPolicy, PlacementSpec, PlacementType, RESOURCE_SELECTORS_MAX,
    REVISION_HISTORY_LIMIT_MAX, RolloutStrategy, StrategyType, TolerationOperator,
};

const APPLY_TYPES: [&str; 3] = ["ClientSideApply", "ServerSideApply", "ReportDiff"];
const COMPARISON_OPTIONS: [&str; 2] = ["PartialComparison", "FullComparison"];
const WHEN_TO_APPLY: [&str; 2] = ["Always", "IfNotDrifted"];
const WHEN_TO_TAKE_OVER: [&str; 3] = ["Always", "IfNoDiff", "Never"];
const STATUS_SCOPES: [&str; 2] = ["ClusterScopeOnly", "NamespaceAccessible"];
const SELECTION_SCOPES: [&str; 2] = ["NamespaceWithResources", "NamespaceOnly"];

fn fail<T>(field: impl Into<String>, message: impl Into<String>) -> Result<T, FieldError> {
    Err(FieldError {
        field: field.into(),
        message: message.into(),
    })
}

fn one_of(field: &str, value: &str, allowed: &[&str]) -> Result<(), FieldError> {
    if allowed.contains(&value) {
        Ok(())
    } else {
        fail(
            field,
            format!("{value:?} is not one of {}", allowed.join(", ")),
        )
    }
}

/// Validates a placement spec on its own. `namespace` is `Some` for a `ResourcePlacement`.
///
/// # Errors
/// The first problem, with its field path.
pub fn validate(spec: &PlacementSpec, namespace: Option<&str>) -> Result<(), FieldError> {
    validate_selectors(spec, namespace)?;
    if let Some(policy) = &spec.policy {
        validate_policy(policy)?;
    }
    let rolling = &spec.strategy.rolling_update;
    non_negative(
        "spec.strategy.rollingUpdate.maxUnavailable",
        rolling.max_unavailable,
    )?;
    non_negative("spec.strategy.rollingUpdate.maxSurge", rolling.max_surge)?;
    if rolling.unavailable_period_seconds < 0 {
        return fail(
            "spec.strategy.rollingUpdate.unavailablePeriodSeconds",
            "must not be negative",
        );
    }
    rolling.safety().validate("spec.strategy.rollingUpdate")?;
    validate_rollout_strategy(&spec.strategy)?;
    let apply = &spec.strategy.apply_strategy;
    one_of(
        "spec.strategy.applyStrategy.type",
        &apply.apply_type,
        &APPLY_TYPES,
    )?;
    one_of(
        "spec.strategy.applyStrategy.comparisonOption",
        &apply.comparison_option,
        &COMPARISON_OPTIONS,
    )?;
    one_of(
        "spec.strategy.applyStrategy.whenToApply",
        &apply.when_to_apply,
        &WHEN_TO_APPLY,
    )?;
    one_of(
        "spec.strategy.applyStrategy.whenToTakeOver",
        &apply.when_to_take_over,
        &WHEN_TO_TAKE_OVER,
    )?;
    if !(1..=REVISION_HISTORY_LIMIT_MAX).contains(&spec.revision_history_limit) {
        return fail(
            "spec.revisionHistoryLimit",
            format!("must be between 1 and {REVISION_HISTORY_LIMIT_MAX}"),
        );
    }
    if let Some(scope) = &spec.status_reporting_scope {
        one_of("spec.statusReportingScope", scope, &STATUS_SCOPES)?;
        if scope == "NamespaceAccessible" {
            let namespaces = spec
                .resource_selectors
                .iter()
                .filter(|s| is_namespace(s))
                .count();
            if namespaces != 1 {
                return fail(
                    "spec.resourceSelectors",
                    "statusReportingScope NamespaceAccessible allows exactly one Namespace selector",
                );
            }
        }
    }
    Ok(())
}

/// `rolloutStrategy` belongs to the `Partitioned` type only, and must itself be valid.
fn validate_rollout_strategy(strategy: &RolloutStrategy) -> Result<(), FieldError> {
    let Some(block) = &strategy.rollout_strategy else {
        return Ok(());
    };
    if strategy.strategy_type != StrategyType::Partitioned {
        return fail(
            "spec.strategy.rolloutStrategy",
            format!(
                "is only valid with strategy type Partitioned, not {:?}",
                strategy.strategy_type
            ),
        );
    }
    block.validate("spec.strategy.rolloutStrategy")
}

fn is_namespace(selector: &super::placement::ResourceSelector) -> bool {
    selector.group.is_empty() && selector.kind == "Namespace"
}

fn non_negative(field: &str, value: IntOrPercent) -> Result<(), FieldError> {
    match value {
        IntOrPercent::Int(n) if n < 0 => fail(field, "must not be negative"),
        _ => Ok(()),
    }
}

fn validate_selectors(spec: &PlacementSpec, namespace: Option<&str>) -> Result<(), FieldError> {
    let count = spec.resource_selectors.len();
    if count == 0 || count > RESOURCE_SELECTORS_MAX {
        return fail(
            "spec.resourceSelectors",
            format!("needs between 1 and {RESOURCE_SELECTORS_MAX} selectors, got {count}"),
        );
    }
    for (index, selector) in spec.resource_selectors.iter().enumerate() {
        let field = format!("spec.resourceSelectors[{index}]");
        if selector.kind.is_empty() || selector.version.is_empty() {
            return fail(field, "kind and version are required");
        }
        if selector.name.is_some() && selector.label_selector.is_some() {
            return fail(field, "name and labelSelector are mutually exclusive");
        }
        if let Some(labels) = &selector.label_selector {
            labels.validate().map_err(|message| FieldError {
                field: format!("{field}.labelSelector"),
                message,
            })?;
        }
        if let Some(scope) = &selector.selection_scope {
            one_of(&format!("{field}.selectionScope"), scope, &SELECTION_SCOPES)?;
        }
        if namespace.is_some() && is_namespace(selector) {
            return fail(
                field,
                "a ResourcePlacement may only select namespaced resources of its own namespace",
            );
        }
        if spec.resource_selectors[..index].contains(selector) {
            return fail(field, "duplicate resource selector");
        }
    }
    Ok(())
}

fn validate_policy(policy: &PlacementPolicy) -> Result<(), FieldError> {
    match policy.placement_type {
        PlacementType::PickFixed => validate_pick_fixed(policy)?,
        PlacementType::PickAll => validate_pick_all(policy)?,
        PlacementType::PickN => validate_pick_n(policy)?,
    }
    validate_affinity(policy)?;
    validate_tolerations(policy)
}

/// Whether the policy has a `topologySpreadConstraints` entry.
fn has_spread(policy: &PlacementPolicy) -> bool {
    !policy.topology_spread_constraints.is_empty()
}

/// PickFixed: between 1 and [`CLUSTER_NAMES_MAX`] unique `clusterNames`, and nothing that
/// chooses clusters.
fn validate_pick_fixed(policy: &PlacementPolicy) -> Result<(), FieldError> {
    let has_affinity = policy
        .affinity
        .as_ref()
        .is_some_and(|a| a.cluster_affinity.is_some());
    if policy.cluster_names.is_empty() || policy.cluster_names.len() > CLUSTER_NAMES_MAX {
        return fail(
            "spec.policy.clusterNames",
            format!("PickFixed needs between 1 and {CLUSTER_NAMES_MAX} cluster names"),
        );
    }
    for (index, name) in policy.cluster_names.iter().enumerate() {
        if name.is_empty() || policy.cluster_names[..index].contains(name) {
            return fail(
                format!("spec.policy.clusterNames[{index}]"),
                "cluster names must be non-empty and unique",
            );
        }
    }
    if policy.number_of_clusters.is_some() || has_affinity || has_spread(policy) {
        return fail(
            "spec.policy",
            "PickFixed does not allow numberOfClusters, affinity or topologySpreadConstraints",
        );
    }
    if !policy.tolerations.is_empty() {
        return fail(
            "spec.policy.tolerations",
            "PickFixed does not allow tolerations",
        );
    }
    Ok(())
}

/// PickAll: no count, no names, no spread and no preferred cluster affinity.
fn validate_pick_all(policy: &PlacementPolicy) -> Result<(), FieldError> {
    if !policy.cluster_names.is_empty() || policy.number_of_clusters.is_some() {
        return fail(
            "spec.policy",
            "PickAll does not allow clusterNames or numberOfClusters",
        );
    }
    if has_spread(policy) {
        return fail(
            "spec.policy.topologySpreadConstraints",
            "PickAll does not allow topologySpreadConstraints",
        );
    }
    let preferred = policy
        .affinity
        .as_ref()
        .and_then(|a| a.cluster_affinity.as_ref())
        .is_some_and(|c| {
            !c.preferred_during_scheduling_ignored_during_execution
                .is_empty()
        });
    if preferred {
        return fail(
            "spec.policy.affinity.clusterAffinity.preferredDuringSchedulingIgnoredDuringExecution",
            "PickAll does not allow preferred cluster affinity",
        );
    }
    Ok(())
}

/// PickN: a `numberOfClusters` that is not negative, and no `clusterNames`.
fn validate_pick_n(policy: &PlacementPolicy) -> Result<(), FieldError> {
    match policy.number_of_clusters {
        None => fail(
            "spec.policy.numberOfClusters",
            "PickN needs numberOfClusters",
        ),
        Some(n) if n < 0 => fail("spec.policy.numberOfClusters", "must not be negative"),
        Some(_) if !policy.cluster_names.is_empty() => fail(
            "spec.policy.clusterNames",
            "PickN does not allow clusterNames",
        ),
        Some(_) => Ok(()),
    }
}

fn validate_affinity(policy: &PlacementPolicy) -> Result<(), FieldError> {
    let Some(cluster) = policy
        .affinity
        .as_ref()
        .and_then(|a| a.cluster_affinity.as_ref())
    else {
        return Ok(());
    };
    let base = "spec.policy.affinity.clusterAffinity";
    if let Some(required) = &cluster.required_during_scheduling_ignored_during_execution {
        for (index, term) in required.cluster_selector_terms.iter().enumerate() {
            let field = format!(
                "{base}.requiredDuringSchedulingIgnoredDuringExecution.clusterSelectorTerms[{index}]"
            );
            if term.property_sorter.is_some() {
                return fail(field, "propertySorter is not allowed in required terms");
            }
            for (i, expr) in term
                .property_selector
                .iter()
                .flat_map(|p| &p.match_expressions)
                .enumerate()
            {
                if expr.values.len() != 1 {
                    return fail(
                        format!("{field}.propertySelector.matchExpressions[{i}].values"),
                        "exactly one value is required",
                    );
                }
            }
        }
    }
    for (index, term) in cluster
        .preferred_during_scheduling_ignored_during_execution
        .iter()
        .enumerate()
    {
        let field = format!("{base}.preferredDuringSchedulingIgnoredDuringExecution[{index}]");
        if !(-100..=100).contains(&term.weight) {
            return fail(format!("{field}.weight"), "must be between -100 and 100");
        }
        if term.preference.property_selector.is_some() {
            return fail(field, "propertySelector is not allowed in preferred terms");
        }
    }
    Ok(())
}

fn validate_tolerations(policy: &PlacementPolicy) -> Result<(), FieldError> {
    for (index, toleration) in policy.tolerations.iter().enumerate() {
        let field = format!("spec.policy.tolerations[{index}]");
        match toleration.operator {
            TolerationOperator::Exists if !toleration.value.is_empty() => {
                return fail(field, "operator Exists requires an empty value");
            }
            TolerationOperator::Equal if toleration.key.is_empty() => {
                return fail(field, "operator Equal requires a key");
            }
            _ => {}
        }
        if policy.tolerations[..index].contains(toleration) {
            return fail(field, "duplicate toleration");
        }
    }
    Ok(())
}

/// Validates an update against the stored spec: `placementType` never changes, `tolerations`
/// are only added to, and `statusReportingScope` neither becomes nor stops being
/// `NamespaceAccessible` (which also fixes the namespace selector).
///
/// # Errors
/// The first immutable field that changed.
pub fn validate_update(old: &PlacementSpec, new: &PlacementSpec) -> Result<(), FieldError> {
    let old_policy = old.policy.clone().unwrap_or_default();
    let new_policy = new.policy.clone().unwrap_or_default();
    if old_policy.placement_type != new_policy.placement_type {
        return fail(
            "spec.policy.placementType",
            "the placement type cannot be changed",
        );
    }
    let kept = old_policy
        .tolerations
        .iter()
        .all(|t| new_policy.tolerations.contains(t));
    if !kept {
        return fail(
            "spec.policy.tolerations",
            "tolerations cannot be updated or removed, only added",
        );
    }
    let accessible = |spec: &PlacementSpec| {
        spec.status_reporting_scope.as_deref() == Some("NamespaceAccessible")
    };
    if old.status_reporting_scope != new.status_reporting_scope
        && (accessible(old) || accessible(new))
    {
        return fail(
            "spec.statusReportingScope",
            "statusReportingScope is immutable once set",
        );
    }
    if accessible(old) {
        let namespaces = |spec: &PlacementSpec| {
            spec.resource_selectors
                .iter()
                .filter(|s| is_namespace(s))
                .cloned()
                .collect::<Vec<_>>()
        };
        if namespaces(old) != namespaces(new) {
            return fail(
                "spec.resourceSelectors",
                "the namespace selector is immutable when statusReportingScope is NamespaceAccessible",
            );
        }
    }
    Ok(())
}
