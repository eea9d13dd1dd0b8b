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
/// Domains are numbered as they are first met (members are met in name order) and the
/// smallest, second smallest and largest counts are kept up to date, so that scoring a cluster
/// is a few array reads. Domain names are borrowed from the members' labels.
#[derive(Debug, Clone, Default)]
pub struct DomainCounts<'a> {
    index: BTreeMap<&'a str, usize>,
    counts: Vec<i64>,
    smallest: i64,
    second: i64,
    largest: i64,
}

impl<'a> DomainCounts<'a> {
    /// The number of a member's domain (numbering it if it is new), if it carries the key.
    pub fn number(&mut self, member: &'a Member, key: &str) -> Option<usize> {
        let domain = member.meta.labels.get(key)?;
        if let Some(&number) = self.index.get(domain.as_str()) {
            return Some(number);
        }
        let number = self.index.len();
        self.index.insert(domain, number);
        self.counts.push(0);
        Some(number)
    }

    /// Counts one binding in `domain` without updating the summary; call [`Self::summarize`]
    /// once the counting is done.
    pub fn count(&mut self, domain: usize) {
        if let Some(count) = self.counts.get_mut(domain) {
            *count += 1;
        }
    }

    /// Brings the smallest, second smallest and largest counts up to date.
    pub fn summarize(&mut self) {
        let mut sorted = self.counts.clone();
        sorted.sort_unstable();
        self.smallest = sorted.first().copied().unwrap_or(0);
        self.second = sorted.get(1).copied().unwrap_or(self.smallest);
        self.largest = sorted.last().copied().unwrap_or(0);
    }

    /// Records one more binding in `domain`.
    pub fn add(&mut self, domain: usize) {
        if let Some(count) = self.counts.get_mut(domain) {
            *count += 1;
            self.summarize();
        }
    }

    /// The skew change of placing one more in `domain` and the current skew.
    fn change(&self, domain: usize) -> (i64, i64) {
        let Some(&count) = self.counts.get(domain) else {
            return (0, 0);
        };
        let change = if self.smallest == self.largest {
            1
        } else if count == self.smallest && self.smallest != self.second {
            -1
        } else if count == self.largest {
            1
        } else {
            0
        };
        (change, self.largest - self.smallest)
    }
}

/// The outcome of the topology spread plugin for one cluster.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Spread {
    /// Filtered out by the DoNotSchedule constraint at this position.
    Violates(usize),
    /// Its topology spread score.
    Score(i32),
}

/// Evaluates every constraint for a cluster in `domains` (one per constraint; `None` when the
/// cluster lacks the key, which scores 0) against the current counts.
#[must_use]
pub fn spread(
    domains: &[Option<usize>],
    constraints: &[TopologySpreadConstraint],
    counts: &[DomainCounts<'_>],
) -> Spread {
    let mut score = 0_i64;
    for (position, ((constraint, counts), domain)) in
        constraints.iter().zip(counts).zip(domains).enumerate()
    {
        let Some(domain) = domain else { continue };
        let (change, skew) = counts.change(*domain);
        let violates = skew + change > i64::from(constraint.max_skew);
        match (violates, constraint.when_unsatisfiable) {
            (true, WhenUnsatisfiable::DoNotSchedule) => return Spread::Violates(position),
            (true, WhenUnsatisfiable::ScheduleAnyway) => {
                score -= i64::from(SCHEDULE_ANYWAY_PENALTY);
            }
            (false, _) => score -= change,
        }
    }
    Spread::Score(i32::try_from(score).unwrap_or(i32::MIN))
}
