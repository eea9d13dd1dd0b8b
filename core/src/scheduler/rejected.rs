//! The clusters a pass filtered out, by name, with why. A full pass over a large fleet rejects
//! most of it but records only the first [`super::NOT_SELECTED_DECISIONS_MAX`] names, so the
//! set keeps only the smallest `cap` names and the reasons stay unformatted until recorded.

use std::borrow::Cow;
use std::collections::BTreeMap;

use super::filter::{Rejection, UNSCHEDULABLE};
use crate::model::placement::TopologySpreadConstraint;
use crate::placement::ClusterDecision;

/// Why one cluster was rejected.
#[derive(Debug, Clone)]
pub(super) enum Why<'a> {
    /// A cluster-only filter refused it.
    Filtered(Rejection<'a>),
    /// Picking it would violate the DoNotSchedule constraint at this position.
    Violation(usize),
    /// Already worded (PickFixed's reasons).
    Text(String),
}

/// Rejected clusters by name, keeping the `cap` smallest names.
#[derive(Debug)]
pub(super) struct Rejected<'a> {
    entries: BTreeMap<Cow<'a, str>, Why<'a>>,
    cap: usize,
}

impl<'a> Rejected<'a> {
    /// An empty set that keeps at most `cap` names.
    pub(super) fn new(cap: usize) -> Self {
        Self {
            entries: BTreeMap::new(),
            cap,
        }
    }

    /// Records a rejection, replacing an earlier one of the same cluster. Names are never
    /// removed, so a name larger than `cap` kept ones can never be among the smallest `cap`.
    pub(super) fn insert(&mut self, cluster: Cow<'a, str>, why: Why<'a>) {
        if self.entries.len() >= self.cap
            && self
                .entries
                .last_key_value()
                .is_some_and(|(largest, _)| cluster > *largest)
        {
            return;
        }
        self.entries.insert(cluster, why);
        if self.entries.len() > self.cap {
            self.entries.pop_last();
        }
    }

    /// Whether this cluster was rejected (exact while fewer than `cap` were).
    pub(super) fn contains(&self, cluster: &str) -> bool {
        self.entries.contains_key(cluster)
    }

    /// The rejections as not-selected decisions, in name order, worded now.
    pub(super) fn into_decisions(
        self,
        constraints: &[TopologySpreadConstraint],
    ) -> impl Iterator<Item = ClusterDecision> {
        self.entries
            .into_iter()
            .map(move |(cluster, why)| ClusterDecision {
                cluster: cluster.as_ref().into(),
                selected: false,
                score: None,
                reason: reason(&why, constraints).into(),
            })
    }
}

fn reason(why: &Why<'_>, constraints: &[TopologySpreadConstraint]) -> String {
    match why {
        Why::Filtered(rejection) => format!("{UNSCHEDULABLE}{}", rejection.reason()),
        Why::Violation(position) => constraints.get(*position).map_or_else(String::new, |c| {
            format!(
                "{UNSCHEDULABLE}violated topology spread constraint {:?} (max skew {})",
                c.topology_key, c.max_skew
            )
        }),
        Why::Text(text) => text.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_smallest_names_whatever_the_insertion_order() {
        let mut rejected = Rejected::new(2);
        for name in ["c", "a", "d", "b", "e"] {
            rejected.insert(Cow::Borrowed(name), Why::Text(name.to_owned()));
        }
        let names: Vec<String> = rejected
            .into_decisions(&[])
            .map(|d| d.cluster.to_string())
            .collect();
        assert_eq!(names, ["a", "b"]);
    }
}
