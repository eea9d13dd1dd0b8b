//! `ClusterResourcePlacement` and `ResourcePlacement` specs (`placement.kubernetes-fleet.io`
//! v1 and v1beta1), with KubeFleet's defaults and the validation its webhook performs.

use serde::{Deserialize, Serialize};

use super::int_or_percent::IntOrPercent;
use super::partitioned::PartitionedRollout;
use super::safety::{OnFailure, Safety};
use super::selector::LabelSelector;

/// Most resource selectors one placement may carry.
pub const RESOURCE_SELECTORS_MAX: usize = 100;
/// Default `revisionHistoryLimit` (KubeFleet's).
pub const REVISION_HISTORY_LIMIT_DEFAULT: u32 = 10;
/// Largest `revisionHistoryLimit` (KubeFleet's API bound).
pub const REVISION_HISTORY_LIMIT_MAX: u32 = 1000;
/// Default `unavailablePeriodSeconds` (KubeFleet's
/// `spec.strategy.rollingUpdate.unavailablePeriodSeconds`).
pub const UNAVAILABLE_PERIOD_SECS_DEFAULT: i64 = 60;
/// Most clusters a PickFixed list may name.
pub const CLUSTER_NAMES_MAX: usize = 100;

/// `spec` of a `ClusterResourcePlacement` or a `ResourcePlacement`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PlacementSpec {
    /// Which hub resources to place.
    pub resource_selectors: Vec<ResourceSelector>,
    /// Which clusters to place them on (PickAll when omitted).
    #[serde(default)]
    pub policy: Option<PlacementPolicy>,
    /// How changes roll out and how they are applied.
    #[serde(default)]
    pub strategy: RolloutStrategy,
    /// How many old snapshots to keep.
    #[serde(default = "default_revision_history_limit")]
    pub revision_history_limit: u32,
    /// `ClusterScopeOnly` (default) or `NamespaceAccessible` (mirror status into the namespace).
    #[serde(default)]
    pub status_reporting_scope: Option<String>,
}

fn default_revision_history_limit() -> u32 {
    REVISION_HISTORY_LIMIT_DEFAULT
}

/// One resource selector: group/version/kind plus an optional name or label selector.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceSelector {
    /// API group; empty for core.
    #[serde(default)]
    pub group: String,
    /// API version.
    pub version: String,
    /// Kind.
    pub kind: String,
    /// Exact name; selects one object.
    #[serde(default)]
    pub name: Option<String>,
    /// Label selector; exclusive with `name`.
    #[serde(default)]
    pub label_selector: Option<LabelSelector>,
    /// `NamespaceWithResources` (default) or `NamespaceOnly`.
    #[serde(default)]
    pub selection_scope: Option<String>,
}

/// `PickAll`, `PickN` or `PickFixed`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum PlacementType {
    /// Every eligible cluster that matches affinity.
    #[default]
    PickAll,
    /// `numberOfClusters` clusters, scored and sorted.
    PickN,
    /// The listed `clusterNames`.
    PickFixed,
}

/// `spec.policy`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PlacementPolicy {
    /// Placement type; `PickAll` when omitted.
    #[serde(default)]
    pub placement_type: PlacementType,
    /// Clusters for PickFixed.
    #[serde(default)]
    pub cluster_names: Vec<String>,
    /// Cluster count for PickN.
    #[serde(default)]
    pub number_of_clusters: Option<i64>,
    /// Cluster affinity.
    #[serde(default)]
    pub affinity: Option<Affinity>,
    /// Topology spread constraints (PickN only).
    #[serde(default)]
    pub topology_spread_constraints: Vec<TopologySpreadConstraint>,
    /// Tolerations for member-cluster taints; they can only be added to, never changed.
    #[serde(default)]
    pub tolerations: Vec<Toleration>,
}

/// `policy.affinity`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Affinity {
    /// Cluster affinity terms.
    #[serde(default)]
    pub cluster_affinity: Option<ClusterAffinity>,
}

/// Required and preferred cluster affinity.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClusterAffinity {
    /// Terms a cluster must satisfy (any one term).
    #[serde(default)]
    pub required_during_scheduling_ignored_during_execution: Option<ClusterSelector>,
    /// Weighted terms that raise a cluster's affinity score.
    #[serde(default)]
    pub preferred_during_scheduling_ignored_during_execution: Vec<PreferredClusterSelector>,
}

/// A set of OR'd cluster selector terms.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClusterSelector {
    /// The terms.
    #[serde(default)]
    pub cluster_selector_terms: Vec<ClusterSelectorTerm>,
}

/// One term: a label selector AND property expressions (or a property sorter when preferred).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClusterSelectorTerm {
    /// Labels to match.
    #[serde(default)]
    pub label_selector: Option<LabelSelector>,
    /// Cluster properties to match (required terms only).
    #[serde(default)]
    pub property_selector: Option<PropertySelector>,
    /// Property to sort by (preferred terms only).
    #[serde(default)]
    pub property_sorter: Option<PropertySorter>,
}

/// Property requirements, all of which must hold.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PropertySelector {
    /// The requirements.
    #[serde(default)]
    pub match_expressions: Vec<PropertySelectorRequirement>,
}

/// `name operator value`, e.g. `kubernetes-fleet.io/node-count Ge 3`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PropertySelectorRequirement {
    /// Property name.
    pub name: String,
    /// `Eq`, `Ne`, `Gt`, `Ge`, `Lt` or `Le`.
    pub operator: PropertyOperator,
    /// Exactly one quantity.
    #[serde(default)]
    pub values: Vec<String>,
}

/// Property comparison operators.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum PropertyOperator {
    /// Equal.
    Eq,
    /// Not equal.
    Ne,
    /// Greater than.
    Gt,
    /// Greater or equal.
    Ge,
    /// Less than.
    Lt,
    /// Less or equal.
    Le,
}

/// Sort clusters by a property to interpolate a preferred term's weight.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PropertySorter {
    /// Property name.
    pub name: String,
    /// `Ascending` or `Descending`.
    pub sort_order: SortOrder,
}

/// Sort direction of a property sorter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum SortOrder {
    /// Smaller values score higher.
    Ascending,
    /// Larger values score higher.
    Descending,
}

/// A weighted preferred term.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PreferredClusterSelector {
    /// Weight, −100..=100.
    pub weight: i32,
    /// The term.
    pub preference: ClusterSelectorTerm,
}

/// A topology spread constraint.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TopologySpreadConstraint {
    /// Largest allowed difference between domains (default 1).
    #[serde(default = "default_max_skew")]
    pub max_skew: i32,
    /// Cluster label that names the domain.
    pub topology_key: String,
    /// `DoNotSchedule` (default) or `ScheduleAnyway`.
    #[serde(default)]
    pub when_unsatisfiable: WhenUnsatisfiable,
}

fn default_max_skew() -> i32 {
    1
}

/// What to do with a cluster that would violate a spread constraint.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum WhenUnsatisfiable {
    /// Filter the cluster out.
    #[default]
    DoNotSchedule,
    /// Keep it, with a score penalty.
    ScheduleAnyway,
}

/// A toleration of member-cluster taints.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Toleration {
    /// Taint key; empty with `Exists` tolerates every key.
    #[serde(default)]
    pub key: String,
    /// `Equal` (default) or `Exists`.
    #[serde(default)]
    pub operator: TolerationOperator,
    /// Value for `Equal`.
    #[serde(default)]
    pub value: String,
    /// Effect; empty tolerates every effect.
    #[serde(default)]
    pub effect: Option<String>,
}

/// Toleration operators.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum TolerationOperator {
    /// Key and value equal.
    #[default]
    Equal,
    /// Key present (any value).
    Exists,
}

/// `spec.strategy`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RolloutStrategy {
    /// `RollingUpdate` (default) or `External` (staged update runs drive it).
    #[serde(default, rename = "type")]
    pub strategy_type: StrategyType,
    /// RollingUpdate knobs.
    #[serde(default)]
    pub rolling_update: RollingUpdateConfig,
    /// How members apply the work.
    #[serde(default)]
    pub apply_strategy: ApplyStrategy,
    /// Rancher Fleet's rollout strategy block, for the `Partitioned` type.
    #[serde(default)]
    pub rollout_strategy: Option<PartitionedRollout>,
}

impl RolloutStrategy {
    /// The partitioned block, Rancher Fleet's defaults where it is absent.
    #[must_use]
    pub fn partitioned(&self) -> PartitionedRollout {
        self.rollout_strategy.clone().unwrap_or_default()
    }
}

impl PlacementSpec {
    /// Reads a `serverSideApplyConfig` that says only what the default says (`force: false`)
    /// as absent, so that the object `get` shows (which fills the default in) re-applies
    /// unchanged.
    pub fn normalize(&mut self) {
        let apply = &mut self.strategy.apply_strategy;
        apply.server_side_apply_config = apply
            .server_side_apply_config
            .take()
            .filter(|config| *config != ServerSideApplyConfig::default());
    }
}

impl Default for RolloutStrategy {
    fn default() -> Self {
        Self {
            strategy_type: StrategyType::RollingUpdate,
            rolling_update: RollingUpdateConfig::default(),
            apply_strategy: ApplyStrategy::default(),
            rollout_strategy: None,
        }
    }
}

/// Rollout strategy type.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum StrategyType {
    /// KubeFleet's availability-gated rolling update.
    #[default]
    RollingUpdate,
    /// Nothing rolls out until a staged update run triggers it.
    External,
    /// Rancher Fleet's partitioned rollout (`docs/partitioned-rollout.md`), configured by
    /// `rolloutStrategy`.
    Partitioned,
}

impl StrategyType {
    /// The spelling in `spec.strategy.type`.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            StrategyType::RollingUpdate => "RollingUpdate",
            StrategyType::External => "External",
            StrategyType::Partitioned => "Partitioned",
        }
    }
}

/// `strategy.rollingUpdate`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RollingUpdateConfig {
    /// Default 25%; at least 1 in effect.
    #[serde(default = "default_quarter")]
    pub max_unavailable: IntOrPercent,
    /// Default 25%.
    #[serde(default = "default_quarter")]
    pub max_surge: IntOrPercent,
    /// Default 60.
    #[serde(default = "default_unavailable_period")]
    pub unavailable_period_seconds: i64,
    /// Rollout safety (`docs/rollout-safety.md`): no cluster ready on its new work for this long
    /// trips the rollout. Unset: no deadline.
    #[serde(default)]
    pub progress_deadline_seconds: Option<i64>,
    /// Rollout safety: failed clusters tolerated (int, or percent of the target rounded down).
    #[serde(default)]
    pub max_failures: Option<IntOrPercent>,
    /// Rollout safety: `Halt` (default) or `Rollback` when the rollout trips.
    #[serde(default)]
    pub on_failure: Option<OnFailure>,
}

impl RollingUpdateConfig {
    /// The block's safety fields.
    #[must_use]
    pub fn safety(&self) -> Safety {
        Safety {
            progress_deadline_seconds: self.progress_deadline_seconds,
            max_failures: self.max_failures,
            on_failure: self.on_failure,
        }
    }
}

impl Default for RollingUpdateConfig {
    fn default() -> Self {
        Self {
            max_unavailable: default_quarter(),
            max_surge: default_quarter(),
            unavailable_period_seconds: UNAVAILABLE_PERIOD_SECS_DEFAULT,
            progress_deadline_seconds: None,
            max_failures: None,
            on_failure: None,
        }
    }
}

fn default_quarter() -> IntOrPercent {
    IntOrPercent::Percent(25)
}

fn default_unavailable_period() -> i64 {
    UNAVAILABLE_PERIOD_SECS_DEFAULT
}

/// `strategy.applyStrategy`: accepted, validated and carried to the members.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ApplyStrategy {
    /// `ClientSideApply` (default), `ServerSideApply` or `ReportDiff`.
    #[serde(default = "default_apply_type", rename = "type")]
    pub apply_type: String,
    /// `PartialComparison` (default) or `FullComparison`.
    #[serde(default = "default_comparison")]
    pub comparison_option: String,
    /// `Always` (default) or `IfNotDrifted`.
    #[serde(default = "default_always")]
    pub when_to_apply: String,
    /// `Always` (default), `IfNoDiff` or `Never`.
    #[serde(default = "default_always")]
    pub when_to_take_over: String,
    /// Whether resources owned by others may be co-owned.
    #[serde(default)]
    pub allow_co_ownership: bool,
    /// Server-side apply settings.
    #[serde(default)]
    pub server_side_apply_config: Option<ServerSideApplyConfig>,
}

impl Default for ApplyStrategy {
    fn default() -> Self {
        Self {
            apply_type: default_apply_type(),
            comparison_option: default_comparison(),
            when_to_apply: default_always(),
            when_to_take_over: default_always(),
            allow_co_ownership: false,
            server_side_apply_config: None,
        }
    }
}

impl ApplyStrategy {
    /// Whether members only report how the work differs from their objects (`ReportDiff`).
    #[must_use]
    pub fn reports_diff(&self) -> bool {
        self.apply_type == APPLY_TYPE_REPORT_DIFF
    }
}

/// The apply strategy type under which members compare, never apply.
pub const APPLY_TYPE_REPORT_DIFF: &str = "ReportDiff";

/// `applyStrategy.serverSideApplyConfig`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ServerSideApplyConfig {
    /// Force conflicts.
    #[serde(default)]
    pub force: bool,
}

fn default_apply_type() -> String {
    "ClientSideApply".into()
}

fn default_comparison() -> String {
    "PartialComparison".into()
}

fn default_always() -> String {
    "Always".into()
}
