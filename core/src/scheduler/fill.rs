//! PickN's fill: filter the clusters not yet picked, score them (topology spread, affinity, an
//! obsolete-binding bonus), and bind the best until the gap is closed — one at a time, scoring
//! again after each pick, when topology spread constraints exist.

use std::cmp::Ordering;
use std::collections::BTreeMap;

use super::score::{self, DomainCounts, Spread};
use super::{Cycle, NOT_SELECTED_DECISIONS_MAX, REASON_NOT_PICKED, filter};
use crate::member::Member;
use crate::model::placement::TopologySpreadConstraint;
use crate::placement::{ClusterDecision, ClusterScore};

/// PickN candidates that share one combination of topology domains, best first.
struct Group {
    domains: Vec<Option<usize>>,
    members: Vec<usize>,
    next: usize,
    spread: Spread,
}

/// The clusters a fill may pick, with what does not change between picks (cluster-only
/// filters and affinity scores); index `i` is one cluster throughout.
struct Candidates<'a> {
    members: Vec<&'a Member>,
    names: Vec<&'a String>,
    affinity: Vec<i32>,
    bonus: Vec<i32>,
}

/// A group's head as a pick: its scores, its obsolete-binding bonus, its candidate index.
type Head = (ClusterScore, i32, usize);

impl Candidates<'_> {
    /// Higher scores first, then the bonus, then the larger name (as KubeFleet sorts).
    fn better(&self, a: &Head, b: &Head) -> Ordering {
        (b.0.topology_spread, b.0.affinity, b.1)
            .cmp(&(a.0.topology_spread, a.0.affinity, a.1))
            .then(self.names[b.2].cmp(self.names[a.2]))
    }

    /// Candidate `i` as a pick with this topology spread score.
    fn head(&self, i: usize, topology_spread: i32) -> Head {
        let score = ClusterScore {
            affinity: self.affinity[i],
            topology_spread,
        };
        (score, self.bonus[i], i)
    }
}

impl Group {
    /// The group's best unpicked candidate, unless the group violates a constraint.
    fn head(&self, candidates: &Candidates<'_>) -> Option<Head> {
        let Spread::Score(topology_spread) = self.spread else {
            return None;
        };
        let i = *self.members.get(self.next)?;
        Some(candidates.head(i, topology_spread))
    }

    /// The candidates not picked yet.
    fn rest(&self) -> &[usize] {
        &self.members[self.next.min(self.members.len())..]
    }
}

impl<'a> Cycle<'a> {
    /// Picks up to `missing` clusters; one at a time when topology spread constraints exist.
    pub(super) fn fill(&mut self, missing: usize) -> bool {
        let constraints = self.policy.topology_spread_constraints.clone();
        let candidates = self.candidates();
        let mut counts = self.domain_counts(&constraints);
        let mut groups = group(&candidates, &constraints, &counts);
        let batch = if constraints.is_empty() { missing } else { 1 };
        let mut remaining = missing;
        while remaining > 0 {
            for group in &mut groups {
                group.spread = score::spread(&group.domains, &constraints, &counts);
            }
            let picked_now = self.pick_round(&candidates, &mut groups, &mut counts, batch);
            remaining -= picked_now;
            self.not_picked = runners_up(&candidates, &groups);
            if picked_now < batch {
                break;
            }
        }
        self.reject_violations(&candidates, &groups, &constraints);
        self.unschedule_obsolete();
        remaining == 0
    }

    /// The clusters without a current binding that pass the filters; the others are recorded
    /// as rejected with why.
    fn candidates(&mut self) -> Candidates<'a> {
        let all = self.members;
        let mut members: Vec<&'a Member> = Vec::new();
        let mut names: Vec<&'a String> = Vec::new();
        for (name, member) in all {
            if self
                .placement
                .bindings
                .get(name)
                .is_some_and(|b| self.is_current(b))
            {
                continue;
            }
            match filter::filter(member, &self.policy, self.now) {
                None => {
                    members.push(member);
                    names.push(name);
                }
                Some(reason) => {
                    self.rejected.insert(name.clone(), reason);
                }
            }
        }
        let affinity = score::affinity_scores(&members, &self.policy);
        let bonus = names
            .iter()
            .map(|name| {
                let obsolete = self.placement.bindings.get(*name);
                i32::from(obsolete.is_some_and(|b| self.is_obsolete(b)))
            })
            .collect();
        Candidates {
            members,
            names,
            affinity,
            bonus,
        }
    }

    /// Per constraint, how many current bindings each topology domain holds.
    fn domain_counts(&self, constraints: &[TopologySpreadConstraint]) -> Vec<DomainCounts> {
        let members = self.members;
        let bound: Vec<&Member> = self
            .placement
            .bindings
            .values()
            .filter(|b| self.is_current(b))
            .filter_map(|b| members.get(&b.cluster))
            .collect();
        constraints
            .iter()
            .map(|c| DomainCounts::new(members.values(), &c.topology_key, bound.iter().copied()))
            .collect()
    }

    /// One round: picks up to `batch` group heads, best first, counting each pick in its
    /// domains. Returns how many were picked.
    fn pick_round(
        &mut self,
        candidates: &Candidates<'_>,
        groups: &mut [Group],
        counts: &mut [DomainCounts],
        batch: usize,
    ) -> usize {
        let mut picked_now = 0;
        while picked_now < batch {
            let best = groups
                .iter()
                .enumerate()
                .filter_map(|(g, group)| group.head(candidates).map(|h| (h, g)))
                .min_by(|a, b| candidates.better(&a.0, &b.0));
            let Some(((score, _, i), g)) = best else {
                break;
            };
            groups[g].next += 1;
            self.bind(candidates.names[i], Some(score));
            for (counts, domain) in counts.iter_mut().zip(&groups[g].domains) {
                if let Some(domain) = domain {
                    counts.add(*domain);
                }
            }
            picked_now += 1;
        }
        picked_now
    }

    /// Candidates left in groups that violate a constraint are rejected, naming it.
    fn reject_violations(
        &mut self,
        candidates: &Candidates<'_>,
        groups: &[Group],
        constraints: &[TopologySpreadConstraint],
    ) {
        for group in groups {
            let Spread::Violates(position) = group.spread else {
                continue;
            };
            let constraint = &constraints[position];
            for &i in group.rest() {
                self.rejected.insert(
                    candidates.names[i].clone(),
                    format!(
                        "{}violated topology spread constraint {:?} (max skew {})",
                        filter::UNSCHEDULABLE,
                        constraint.topology_key,
                        constraint.max_skew
                    ),
                );
            }
        }
    }

    /// Bindings of an older policy that were not picked again are released.
    fn unschedule_obsolete(&mut self) {
        for cluster in self.obsolete_clusters() {
            self.unschedule(
                &cluster,
                "the cluster is no longer picked by the scheduling policy",
            );
        }
    }
}

/// Groups the candidates by their combination of topology domains. Every cluster in one
/// group has the same topology spread score, so within a group the order is fixed: affinity,
/// bonus, then the larger name; a pick then compares group heads, not every cluster.
fn group(
    candidates: &Candidates<'_>,
    constraints: &[TopologySpreadConstraint],
    counts: &[DomainCounts],
) -> Vec<Group> {
    let mut grouped: BTreeMap<Vec<Option<usize>>, Vec<usize>> = BTreeMap::new();
    for (i, member) in candidates.members.iter().enumerate() {
        let key = constraints
            .iter()
            .zip(counts)
            .map(|(c, d)| d.domain_of(member, &c.topology_key))
            .collect();
        grouped.entry(key).or_default().push(i);
    }
    let (affinity, bonus, names) = (&candidates.affinity, &candidates.bonus, &candidates.names);
    grouped
        .into_iter()
        .map(|(domains, mut members)| {
            members.sort_by(|&a, &b| {
                (affinity[b], bonus[b])
                    .cmp(&(affinity[a], bonus[a]))
                    .then(names[b].cmp(names[a]))
            });
            Group {
                domains,
                members,
                next: 0,
                spread: Spread::Score(0),
            }
        })
        .collect()
}

/// The runners-up of a round, best first (the last round's stand), as not-picked decisions.
fn runners_up(candidates: &Candidates<'_>, groups: &[Group]) -> Vec<ClusterDecision> {
    let mut runners: Vec<Head> = groups
        .iter()
        .flat_map(|group| {
            let Spread::Score(topology_spread) = group.spread else {
                return Vec::new();
            };
            group
                .rest()
                .iter()
                .take(NOT_SELECTED_DECISIONS_MAX)
                .map(|&i| candidates.head(i, topology_spread))
                .collect()
        })
        .collect();
    runners.sort_by(|a, b| candidates.better(a, b));
    runners
        .into_iter()
        .take(NOT_SELECTED_DECISIONS_MAX)
        .map(|(score, _, i)| ClusterDecision {
            cluster: candidates.names[i].clone(),
            selected: false,
            score: Some(score),
            reason: REASON_NOT_PICKED.to_owned(),
        })
        .collect()
}
