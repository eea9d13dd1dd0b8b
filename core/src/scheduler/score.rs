//! Score plugins (PickN only): preferred cluster affinity and topology spread.
//!
//! All arithmetic is in integers. A property sorter interpolates a term's weight between the
//! smallest and largest value among the clusters being scored, rounded half away from zero.

use std::collections::BTreeMap;

use crate::member::Member;
use crate::model::placement::{
    PlacementPolicy, SortOrder, TopologySpreadConstraint, WhenUnsatisfiable,
};

use super::property::property;
use super::quantity::Quantity;

/// Penalty of a ScheduleAnyway constraint a cluster would violate.
pub const SCHEDULE_ANYWAY_PENALTY: i32 = 1000;

/// `round(numerator / denominator)`, half away from zero; `denominator > 0`.
fn round_div(numerator: i128, denominator: i128) -> i128 {
    let half = denominator / 2;
    if numerator >= 0 {
        (numerator + half) / denominator
    } else {
        (numerator - half) / denominator
    }
}

/// Affinity scores of the candidates (same order), from the preferred terms.
#[must_use]
pub fn affinity_scores(candidates: &[&Member], policy: &PlacementPolicy) -> Vec<i32> {
    let mut scores = vec![0_i32; candidates.len()];
    let terms = policy
        .affinity
        .as_ref()
        .and_then(|a| a.cluster_affinity.as_ref())
        .map(|c| {
            c.preferred_during_scheduling_ignored_during_execution
                .as_slice()
        })
        .unwrap_or_default();
    for term in terms.iter().filter(|t| t.weight != 0) {
        let weight = i128::from(term.weight);
        let labels_ok: Vec<bool> = candidates
            .iter()
            .map(|m| {
                term.preference
                    .label_selector
                    .as_ref()
                    .is_none_or(|s| s.matches(&m.meta.labels))
            })
            .collect();
        let Some(sorter) = &term.preference.property_sorter else {
            for (score, ok) in scores.iter_mut().zip(&labels_ok) {
                if *ok {
                    *score += term.weight;
                }
            }
            continue;
        };
        let values: Vec<Option<Quantity>> = candidates
            .iter()
            .map(|m| property(m, &sorter.name))
            .collect();
        let present = values.iter().flatten();
        let (Some(min), Some(max)) = (present.clone().min(), present.max()) else {
            continue;
        };
        if min == max {
            continue;
        }
        let range = max.0 - min.0;
        for ((score, value), ok) in scores.iter_mut().zip(&values).zip(&labels_ok) {
            let (Some(value), true) = (value, ok) else {
                continue;
            };
            let offset = value.0 - min.0;
            let scaled = match sorter.sort_order {
                SortOrder::Descending => round_div(weight * offset, range),
                SortOrder::Ascending => round_div(weight * (range - offset), range),
            };
            *score += i32::try_from(scaled).unwrap_or(0);
        }
    }
    scores
}

/// Bindings per topology domain for one constraint, over all clusters carrying the key.
#[derive(Debug, Clone, Default)]
pub struct DomainCounts {
    counts: BTreeMap<String, i64>,
}

impl DomainCounts {
    /// Domains are the key's values on every member; counts come from `bound_clusters`.
    #[must_use]
    pub fn new<'a>(
        members: impl Iterator<Item = &'a Member>,
        key: &str,
        bound_clusters: impl Iterator<Item = &'a Member>,
    ) -> Self {
        let mut counts: BTreeMap<String, i64> = BTreeMap::new();
        for member in members {
            if let Some(domain) = member.meta.labels.get(key) {
                counts.entry(domain.clone()).or_insert(0);
            }
        }
        for member in bound_clusters {
            if let Some(domain) = member.meta.labels.get(key) {
                *counts.entry(domain.clone()).or_insert(0) += 1;
            }
        }
        Self { counts }
    }

    /// Records one more binding in `domain`.
    pub fn add(&mut self, domain: &str) {
        *self.counts.entry(domain.to_owned()).or_insert(0) += 1;
    }

    /// The skew change of placing one more in `domain` and the current skew.
    fn change(&self, domain: &str) -> (i64, i64) {
        let mut sorted: Vec<i64> = self.counts.values().copied().collect();
        sorted.sort_unstable();
        let (Some(&smallest), Some(&largest)) = (sorted.first(), sorted.last()) else {
            return (0, 0);
        };
        let second = sorted.get(1).copied().unwrap_or(smallest);
        let count = self.counts.get(domain).copied().unwrap_or(0);
        let change = if smallest == largest {
            1
        } else if count == smallest && smallest != second {
            -1
        } else if count == largest {
            1
        } else {
            0
        };
        (change, largest - smallest)
    }
}

/// The outcome of the topology spread plugin for one cluster.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Spread {
    /// Filtered out by a DoNotSchedule constraint.
    Violates(String),
    /// Its topology spread score.
    Score(i32),
}

/// Evaluates every constraint for one cluster against the current counts.
#[must_use]
pub fn spread(
    member: &Member,
    constraints: &[TopologySpreadConstraint],
    counts: &[DomainCounts],
) -> Spread {
    let mut score = 0_i64;
    for (constraint, counts) in constraints.iter().zip(counts) {
        let Some(domain) = member.meta.labels.get(&constraint.topology_key) else {
            continue;
        };
        let (change, skew) = counts.change(domain);
        let violates = skew + change > i64::from(constraint.max_skew);
        match (violates, constraint.when_unsatisfiable) {
            (true, WhenUnsatisfiable::DoNotSchedule) => {
                return Spread::Violates(format!(
                    "{}violated topology spread constraint {:?} (max skew {})",
                    super::filter::UNSCHEDULABLE,
                    constraint.topology_key,
                    constraint.max_skew
                ));
            }
            (true, WhenUnsatisfiable::ScheduleAnyway) => {
                score -= i64::from(SCHEDULE_ANYWAY_PENALTY)
            }
            (false, _) => score -= change,
        }
    }
    Spread::Score(i32::try_from(score).unwrap_or(i32::MIN))
}
