//! Rancher Fleet's `rolloutStrategy` block (`docs/partitioned-rollout.md`), carried by a placement
//! whose `spec.strategy.type` is `Partitioned`, spelled exactly as in `fleet.yaml` so that a Fleet
//! user can paste theirs; and Fleet's `limit` rounding of its int-or-percent knobs.
//!
//! Values stay as written (`None` when omitted); the effective values, with the seed's defaults
//! (`maxUnavailable: 100%`, `maxUnavailablePartitions: 0`, `autoPartitionSize: 25%`, threshold
//! 200, maxNew 50), come from the accessor methods.

use serde::{Deserialize, Serialize};

use super::FieldError;
use super::int_or_percent::IntOrPercent;
use super::safety::{OnFailure, Safety};
use super::selector::LabelSelector;

/// Most manual partitions one placement may define.
pub const PARTITIONS_MAX: usize = 100;
/// Fewer targets than this form a single automatic partition (Rancher Fleet: "fewer than 200").
pub const AUTO_PARTITION_THRESHOLD_DEFAULT: i64 = 200;
/// Most deployments one rollout pass stages (Rancher Fleet: "MaxNew is always 50").
pub const MAX_NEW_DEFAULT: i64 = 50;
/// The namespace a `ClusterResourcePlacement` looks its `clusterGroup`s up in: Rancher
/// Fleet's default workspace. A `ResourcePlacement` uses its own namespace.
pub const CLUSTER_GROUP_NAMESPACE_DEFAULT: &str = "fleet-default";

/// `spec.strategy.rolloutStrategy`: Rancher Fleet's rollout strategy block.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PartitionedRollout {
    /// Clusters of a partition that may be NotReady before it is NotReady (default 100%).
    #[serde(default)]
    pub max_unavailable: Option<IntOrPercent>,
    /// Partitions that may be NotReady while the rollout goes on (default 0).
    #[serde(default)]
    pub max_unavailable_partitions: Option<IntOrPercent>,
    /// Size of an automatic partition (default 25%); ignored with manual partitions.
    #[serde(default)]
    pub auto_partition_size: Option<IntOrPercent>,
    /// Fewer targets than this form one automatic partition (default 200).
    #[serde(default)]
    pub auto_partition_threshold: Option<i64>,
    /// Most deployments one rollout pass stages (default 50).
    #[serde(default)]
    pub max_new: Option<i64>,
    /// Manual partitions, rolled out in the order written.
    #[serde(default)]
    pub partitions: Vec<PartitionSpec>,
    /// Rollout safety (`docs/rollout-safety.md`): no cluster ready on its new work for this long
    /// trips it.
    #[serde(default)]
    pub progress_deadline_seconds: Option<i64>,
    /// Rollout safety: failed clusters tolerated (percent of the targets, rounded down).
    #[serde(default)]
    pub max_failures: Option<IntOrPercent>,
    /// Rollout safety: `Halt` (default) or `Rollback`.
    #[serde(default)]
    pub on_failure: Option<OnFailure>,
}

/// `rolloutStrategy.partitions[]`: one manual partition. A cluster is a member when it meets
/// every criterion given.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PartitionSpec {
    /// Name shown in the status and in pause reasons.
    #[serde(default)]
    pub name: String,
    /// Overrides `rolloutStrategy.maxUnavailable` for this partition.
    #[serde(default)]
    pub max_unavailable: Option<IntOrPercent>,
    /// One cluster by name.
    #[serde(default)]
    pub cluster_name: Option<String>,
    /// Clusters by their labels.
    #[serde(default)]
    pub cluster_selector: Option<LabelSelector>,
    /// Clusters of one `ClusterGroup`, by name.
    #[serde(default)]
    pub cluster_group: Option<String>,
    /// Clusters of every `ClusterGroup` whose labels match.
    #[serde(default)]
    pub cluster_group_selector: Option<LabelSelector>,
    /// Rollout safety (`docs/rollout-safety.md`): failed members tolerated (percent of the
    /// partition's members, rounded down); overrides the block's `maxFailures` for them.
    #[serde(default)]
    pub max_failures: Option<IntOrPercent>,
}

impl PartitionedRollout {
    /// The block's safety fields; a manual partition's `maxFailures` turns failure counting on.
    #[must_use]
    pub fn safety(&self) -> Safety {
        Safety {
            progress_deadline_seconds: self.progress_deadline_seconds,
            max_failures: self.max_failures,
            on_failure: self.on_failure,
        }
    }

    /// Whether failures are counted: the block's fields, or some partition's `maxFailures`.
    #[must_use]
    pub fn counts_failures(&self) -> bool {
        self.safety().counts_failures() || self.partitions.iter().any(|p| p.max_failures.is_some())
    }

    /// `maxUnavailable` as given, else 100%.
    #[must_use]
    pub fn max_unavailable(&self) -> IntOrPercent {
        self.max_unavailable.unwrap_or(IntOrPercent::Percent(100))
    }

    /// `maxUnavailablePartitions` as given, else 0.
    #[must_use]
    pub fn max_unavailable_partitions(&self) -> IntOrPercent {
        self.max_unavailable_partitions
            .unwrap_or(IntOrPercent::Int(0))
    }

    /// `autoPartitionSize` as given, else 25%.
    #[must_use]
    pub fn auto_partition_size(&self) -> IntOrPercent {
        self.auto_partition_size
            .unwrap_or(IntOrPercent::Percent(25))
    }

    /// `autoPartitionThreshold` as given, else 200.
    #[must_use]
    pub fn auto_partition_threshold(&self) -> i64 {
        self.auto_partition_threshold
            .unwrap_or(AUTO_PARTITION_THRESHOLD_DEFAULT)
    }

    /// `maxNew` as given, else 50.
    #[must_use]
    pub fn max_new(&self) -> u64 {
        self.max_new
            .or(Some(MAX_NEW_DEFAULT))
            .and_then(|n| u64::try_from(n).ok())
            .unwrap_or(1)
    }

    /// Checks the block; `field` is its path (`spec.strategy.rolloutStrategy`).
    ///
    /// # Errors
    /// The first problem, naming its field.
    pub fn validate(&self, field: &str) -> Result<(), FieldError> {
        not_negative(&format!("{field}.maxUnavailable"), self.max_unavailable)?;
        not_negative(
            &format!("{field}.maxUnavailablePartitions"),
            self.max_unavailable_partitions,
        )?;
        not_negative(
            &format!("{field}.autoPartitionSize"),
            self.auto_partition_size,
        )?;
        if self.auto_partition_threshold.is_some_and(|n| n < 0) {
            return Err(FieldError::new(
                format!("{field}.autoPartitionThreshold"),
                "must not be negative",
            ));
        }
        if self.max_new.is_some_and(|n| n < 1) {
            return Err(FieldError::new(
                format!("{field}.maxNew"),
                "must be at least 1",
            ));
        }
        self.safety().validate(field)?;
        if self.partitions.len() > PARTITIONS_MAX {
            return Err(FieldError::new(
                format!("{field}.partitions"),
                format!(
                    "at most {PARTITIONS_MAX} partitions, got {}",
                    self.partitions.len()
                ),
            ));
        }
        for (index, partition) in self.partitions.iter().enumerate() {
            let at = format!("{field}.partitions[{index}]");
            partition.validate(&at)?;
            if self.partitions[..index]
                .iter()
                .any(|p| p.name == partition.name)
            {
                return Err(FieldError::new(
                    format!("{at}.name"),
                    format!("duplicate partition name {:?}", partition.name),
                ));
            }
        }
        Ok(())
    }
}

impl PartitionSpec {
    fn validate(&self, at: &str) -> Result<(), FieldError> {
        if self.name.is_empty() {
            return Err(FieldError::new(format!("{at}.name"), "is required"));
        }
        not_negative(&format!("{at}.maxUnavailable"), self.max_unavailable)?;
        not_negative(&format!("{at}.maxFailures"), self.max_failures)?;
        if self.cluster_name.is_none()
            && self.cluster_selector.is_none()
            && self.cluster_group.is_none()
            && self.cluster_group_selector.is_none()
        {
            return Err(FieldError::new(
                at,
                "needs clusterName, clusterSelector, clusterGroup or clusterGroupSelector",
            ));
        }
        for (name, selector) in [
            ("clusterSelector", &self.cluster_selector),
            ("clusterGroupSelector", &self.cluster_group_selector),
        ] {
            if let Some(selector) = selector {
                selector
                    .validate()
                    .map_err(|message| FieldError::new(format!("{at}.{name}"), message))?;
            }
        }
        Ok(())
    }
}

fn not_negative(field: &str, value: Option<IntOrPercent>) -> Result<(), FieldError> {
    match value {
        Some(IntOrPercent::Int(n)) if n < 0 => Err(FieldError::new(field, "must not be negative")),
        _ => Ok(()),
    }
}

/// Rancher Fleet's `limit(count, value)`: an int is clamped to `[0, count]`; a percent `p`
/// is `count × p / 100` rounded **down**, raised to 1 when it comes out 0 (also for `p = 0`),
/// capped at `count`; a count of 0 gives 1. Integer arithmetic only.
#[must_use]
pub fn limit(count: u64, value: IntOrPercent) -> u64 {
    if count == 0 {
        return 1;
    }
    match value {
        IntOrPercent::Int(n) => u64::try_from(n.max(0)).unwrap_or(0).min(count),
        IntOrPercent::Percent(pct) => {
            let share = u128::from(count) * u128::from(pct) / 100;
            u64::try_from(share).unwrap_or(u64::MAX).clamp(1, count)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limit_rounds_like_rancher_fleet() {
        // Rancher Fleet's documented rounding examples.
        assert_eq!(limit(10, IntOrPercent::Percent(49)), 4);
        assert_eq!(limit(5, IntOrPercent::Percent(10)), 1);
        assert_eq!(limit(10, IntOrPercent::Percent(150)), 10);
        assert_eq!(limit(4, IntOrPercent::Percent(25)), 1);
        assert_eq!(limit(4, IntOrPercent::Percent(50)), 2);
        assert_eq!(limit(0, IntOrPercent::Percent(50)), 1);
        assert_eq!(limit(0, IntOrPercent::Int(0)), 1);
        // Ints clamp to [0, count]; 0% still gives 1.
        assert_eq!(limit(10, IntOrPercent::Int(0)), 0);
        assert_eq!(limit(10, IntOrPercent::Int(30)), 10);
        assert_eq!(limit(10, IntOrPercent::Int(-3)), 0);
        assert_eq!(limit(10, IntOrPercent::Percent(0)), 1);
        // The seed's numbers: 230 at 25% → 57; 200 at 10% → 20; 40 at 10% → 4.
        assert_eq!(limit(230, IntOrPercent::Percent(25)), 57);
        assert_eq!(limit(200, IntOrPercent::Percent(10)), 20);
        assert_eq!(limit(40, IntOrPercent::Percent(10)), 4);
    }
}
