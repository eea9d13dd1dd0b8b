//! PickN's fill: filter the clusters not yet picked, score them (topology spread, affinity, an
//! obsolete-binding bonus), and bind the best until the gap is closed — one at a time, scoring
//! again after each pick, when topology spread constraints exist.
//!
//! One walk over the members filters them and numbers their topology domains. Candidates are
//! kept in name order, so comparing two candidates' indexes compares their names.

use std::borrow::Cow;
use std::cmp::Ordering;
use std::collections::BTreeMap;

use super::rejected::Why;
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
/// filters, affinity scores, topology domains); index `i` is one cluster throughout, and
/// indexes follow name order.
struct Candidates<'a> {
    members: Vec<&'a Member>,
    names: Vec<&'a crate::model::ClusterName>,
    affinity: Vec<i32>,
    bonus: Vec<i32>,
    /// Each candidate's domain under each constraint, `width` entries per candidate.
    domains: Vec<Option<usize>>,
    width: usize,
}

/// A group's head as a pick: its scores, its obsolete-binding bonus, its candidate index.
type Head = (ClusterScore, i32, usize);

impl Candidates<'_> {
    /// Higher scores first, then the bonus, then the larger name (as KubeFleet sorts); the
    /// larger index is the larger name.
    fn better(a: &Head, b: &Head) -> Ordering {
        (b.0.topology_spread, b.0.affinity, b.1)
            .cmp(&(a.0.topology_spread, a.0.affinity, a.1))
            .then(b.2.cmp(&a.2))
    }

    /// Within a group (one topology spread score): affinity, bonus, then the larger name.
    fn order_in_group(&self, a: usize, b: usize) -> Ordering {
        (self.affinity[b], self.bonus[b])
            .cmp(&(self.affinity[a], self.bonus[a]))
            .then(b.cmp(&a))
    }

    /// Candidate `i` as a pick with this topology spread score.
    fn head(&self, i: usize, topology_spread: i32) -> Head {
        let score = ClusterScore {
            affinity: self.affinity[i],
            topology_spread,
        };
        (score, self.bonus[i], i)
    }

    fn domains_of(&self, i: usize) -> &[Option<usize>] {
        &self.domains[i * self.width..(i + 1) * self.width]
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

    /// The candidates not picked yet (in order only as far as a fill can reach).
    fn rest(&self) -> &[usize] {
        &self.members[self.next.min(self.members.len())..]
    }
}

impl<'a> Cycle<'a> {
    /// Picks up to `missing` clusters; one at a time when topology spread constraints exist.
    pub(super) fn fill(&mut self, missing: usize) -> bool {
        let constraints = self.policy.topology_spread_constraints.clone();
        let (candidates, mut counts) = self.candidates(&constraints);
        let mut groups = group(&candidates, missing);
        let batch = if constraints.is_empty() { missing } else { 1 };
        let mut remaining = missing;
        while remaining > 0 {
            for group in &mut groups {
                group.spread = score::spread(&group.domains, &constraints, &counts);
            }
            let picked_now = self.pick_round(&candidates, &mut groups, &mut counts, batch);
            remaining -= picked_now;
            if picked_now < batch {
                break;
            }
        }
        // The last round's stand: the groups as the last round scored and left them.
        self.not_picked = runners_up(&candidates, &groups);
        self.reject_violations(&candidates, &groups);
        self.unschedule_obsolete();
        remaining == 0
    }

    /// One walk over the members: the clusters without a current binding that pass the
    /// filters become candidates, the others are recorded as rejected; every member's
    /// topology domains are numbered and current bindings counted in theirs.
    fn candidates(
        &mut self,
        constraints: &[TopologySpreadConstraint],
    ) -> (Candidates<'a>, Vec<DomainCounts<'a>>) {
        let all = self.members;
        let mut counts: Vec<DomainCounts<'a>> = vec![DomainCounts::default(); constraints.len()];
        let mut candidates = Candidates {
            members: Vec::new(),
            names: Vec::new(),
            affinity: Vec::new(),
            bonus: Vec::new(),
            domains: Vec::new(),
            width: constraints.len(),
        };
        let mut domains: Vec<Option<usize>> = Vec::with_capacity(constraints.len());
        for (name, member) in all {
            domains.clear();
            for (constraint, counts) in constraints.iter().zip(&mut counts) {
                domains.push(counts.number(member, &constraint.topology_key));
            }
            let binding = self.placement.bindings.get(name);
            if binding.as_ref().is_some_and(|b| self.is_current(b)) {
                for (counts, domain) in counts.iter_mut().zip(&domains) {
                    domain.inspect(|d| counts.count(*d));
                }
                continue;
            }
            match filter::check(member, &self.policy, self.now) {
                None => {
                    let obsolete = binding.as_ref().is_some_and(|b| self.is_obsolete(b));
                    candidates.members.push(member);
                    candidates.names.push(name);
                    candidates.bonus.push(i32::from(obsolete));
                    candidates.domains.extend_from_slice(&domains);
                }
                Some(rejection) => {
                    let why = Why::Filtered(rejection);
                    self.rejected.insert(Cow::Borrowed(name.as_str()), why);
                }
            }
        }
        counts.iter_mut().for_each(DomainCounts::summarize);
        candidates.affinity = score::affinity_scores(&candidates.members, &self.policy);
        (candidates, counts)
    }

    /// One round: picks up to `batch` group heads, best first, counting each pick in its
    /// domains. Returns how many were picked.
    fn pick_round(
        &mut self,
        candidates: &Candidates<'_>,
        groups: &mut [Group],
        counts: &mut [DomainCounts<'_>],
        batch: usize,
    ) -> usize {
        let mut picked_now = 0;
        while picked_now < batch {
            let best = groups
                .iter()
                .enumerate()
                .filter_map(|(g, group)| group.head(candidates).map(|h| (h, g)))
                .min_by(|a, b| Candidates::better(&a.0, &b.0));
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
    fn reject_violations(&mut self, candidates: &Candidates<'a>, groups: &[Group]) {
        for group in groups {
            let Spread::Violates(position) = group.spread else {
                continue;
            };
            for &i in group.rest() {
                let name = Cow::Borrowed(candidates.names[i].as_str());
                self.rejected.insert(name, Why::Violation(position));
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
/// bonus, then the larger name; a pick then compares group heads, not every cluster. A fill
/// takes at most `missing` from a group and lists the next [`NOT_SELECTED_DECISIONS_MAX`] as
/// runners-up, so only that many are put in order.
fn group(candidates: &Candidates<'_>, missing: usize) -> Vec<Group> {
    let mut numbers: BTreeMap<&[Option<usize>], usize> = BTreeMap::new();
    let mut members: Vec<Vec<usize>> = Vec::new();
    for i in 0..candidates.names.len() {
        let next = numbers.len();
        let number = *numbers.entry(candidates.domains_of(i)).or_insert(next);
        if number == members.len() {
            members.push(Vec::new());
        }
        members[number].push(i);
    }
    let ordered = missing.saturating_add(NOT_SELECTED_DECISIONS_MAX);
    numbers
        .into_iter()
        .map(|(domains, number)| {
            let mut members = std::mem::take(&mut members[number]);
            order_prefix(&mut members, ordered, |&a, &b| {
                candidates.order_in_group(a, b)
            });
            Group {
                domains: domains.to_vec(),
                members,
                next: 0,
                spread: Spread::Score(0),
            }
        })
        .collect()
}

/// Puts the first `count` items in order (the rest after them, in no particular order).
fn order_prefix<T>(items: &mut [T], count: usize, order: impl Fn(&T, &T) -> Ordering) {
    if items.len() > count {
        items.select_nth_unstable_by(count, &order);
        items[..count].sort_unstable_by(&order);
    } else {
        items.sort_unstable_by(order);
    }
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
    runners.sort_by(Candidates::better);
    runners
        .into_iter()
        .take(NOT_SELECTED_DECISIONS_MAX)
        .map(|(score, _, i)| ClusterDecision {
            cluster: candidates.names[i].as_str().into(),
            selected: false,
            score: Some(score),
            reason: compact_str::CompactString::const_new(REASON_NOT_PICKED),
        })
        .collect()
}
