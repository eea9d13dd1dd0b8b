//! Packed bindings hold exactly what was stored: every binding comes back equal, in cluster
//! name order, encoded as the map they replaced, through inserts, updates, removals, repacks
//! and snapshots.

use std::collections::BTreeMap;
use std::sync::Arc;

use chrono::{DateTime, TimeZone, Utc};
use proptest::prelude::*;
use thin_vec::thin_vec;

use super::{Bindings, CHUNK, Fill, REPACKED_FROM, TagSet, compare_names};
use crate::model::ClusterName;
use crate::placement::binding::{Binding, BindingState, ClusterDecision, ClusterScore};
use crate::work_status::{ReportDetails, WorkStatus};

fn time(nanos: i64) -> DateTime<Utc> {
    DateTime::from_timestamp_nanos(nanos)
}

fn scheduled(cluster: &str) -> Binding {
    let decision = ClusterDecision {
        cluster: cluster.into(),
        selected: true,
        score: Some(ClusterScore::default()),
        reason: "picked by scheduling policy".into(),
    };
    Binding::scheduled([1, 2, 3, 4], decision, 3, time(1_700_000_000_123_456_789))
}

fn state_of(code: u8) -> BindingState {
    match code % 3 {
        0 => BindingState::Scheduled,
        1 => BindingState::Bound,
        _ => BindingState::Unscheduled,
    }
}

/// Times a row holds, and some it does not (before 1677, after 2262, a leap second).
fn any_time() -> impl Strategy<Value = DateTime<Utc>> {
    prop_oneof![
        4 => any::<i64>().prop_filter("not the row's none", |n| *n != i64::MIN).prop_map(time),
        1 => Just(Utc.with_ymd_and_hms(1500, 1, 1, 0, 0, 0).single().unwrap_or_default()),
        1 => Just(Utc.with_ymd_and_hms(2300, 1, 1, 0, 0, 0).single().unwrap_or_default()),
        1 => Just(time(i64::MIN + 1)),
        1 => Just(
            chrono::NaiveDate::from_ymd_opt(2016, 12, 31)
                .and_then(|d| d.and_hms_nano_opt(23, 59, 59, 1_500_000_000))
                .map(|t| t.and_utc())
                .unwrap_or_default()
        ),
    ]
}

/// Indices a row holds, and some it does not.
fn any_index() -> impl Strategy<Value = u64> {
    prop_oneof![8 => 0u64..1_000, 1 => Just(u64::from(u32::MAX)), 1 => any::<u64>()]
}

fn any_report() -> impl Strategy<Value = Option<WorkStatus>> {
    let flag = prop_oneof![Just(None), Just(Some(false)), Just(Some(true))];
    let fields = (
        any_index(),
        any_time(),
        any_time(),
        flag.clone(),
        flag.clone(),
        flag,
    );
    let rest = (
        any::<bool>(),
        prop_oneof![4 => Just(String::new()), 1 => "[a-z ]{1,12}"],
    );
    proptest::option::of((fields, rest).prop_map(
        |((index, at, since, applied, available, diff), (trackable, message))| {
            let mut report = WorkStatus::new(index, at);
            report.applied = applied;
            report.available = available;
            report.diff_reported = diff;
            report.trackable = trackable;
            report.available_since = since;
            report.set_details(ReportDetails {
                message,
                ..ReportDetails::default()
            });
            report
        },
    ))
}

fn any_binding(cluster: String) -> impl Strategy<Value = Binding> {
    let head = (
        any::<[u8; 4]>(),
        any::<u8>(),
        any::<Option<u8>>(),
        any_index(),
    );
    let indices = (proptest::option::of(any_index()), any_index(), any_time());
    let decision = (
        any::<bool>(),
        prop_oneof![
            Just(None),
            Just(Some(ClusterScore::default())),
            (any::<i32>(), any::<i32>()).prop_map(|(a, t)| Some(ClusterScore {
                affinity: a,
                topology_spread: t
            })),
        ],
        prop_oneof![Just("picked".to_owned()), "[a-z]{1,40}"],
    );
    let work = (
        proptest::option::of(any_time()),
        any_report(),
        prop_oneof![Just(None), Just(Some("run-a")), Just(Some("run-b"))],
        any::<bool>(),
    );
    (head, indices, decision, work).prop_map(
        move |((suffix, state, previous, policy), (resource, generation, created), pick, rest)| {
            let (started, report, run, overrides) = rest;
            let mut binding = scheduled(&cluster);
            binding.name_suffix = suffix;
            binding.state = state_of(state);
            binding.previous_state = previous.map(state_of);
            binding.policy_index = policy;
            binding.resource_index = resource;
            binding.generation = generation;
            binding.created = created;
            binding.decision.selected = pick.0;
            binding.decision.score = pick.1;
            binding.decision.reason = pick.2.into();
            binding.rollout_started_at = started;
            binding.report = report;
            binding.update_run = run.map(Arc::from);
            if overrides {
                binding.override_snapshots = (
                    thin_vec!["cro-1".to_owned()],
                    thin_vec![("ns".into(), "ro-2".into())],
                );
            }
            binding
        },
    )
}

fn any_bindings() -> impl Strategy<Value = Vec<Binding>> {
    proptest::collection::vec(
        (0u32..400).prop_flat_map(|n| any_binding(format!("member-{n:03}"))),
        0..200,
    )
}

/// How the bindings are held agrees with itself: no chunk empty, each chunk's first cluster
/// noted, every cluster once and in order, the count right, and exactly the rows kept aside
/// have a binding aside.
fn assert_held_consistently(packed: &Bindings) {
    assert_eq!(packed.firsts.len(), packed.chunks.len());
    for (first, chunk) in packed.firsts.iter().zip(&packed.chunks) {
        assert_eq!(*first, chunk.name(0));
    }
    let rows: Vec<_> = packed.named_rows().collect();
    assert_eq!(rows.len(), packed.len());
    assert!(rows.windows(2).all(|pair| pair[0].0 < pair[1].0));
    let aside: Vec<&ClusterName> = rows
        .iter()
        .filter(|(_, row)| row.is_aside())
        .map(|(cluster, _)| cluster)
        .collect();
    assert!(aside.iter().copied().eq(packed.aside.keys()));
    assert!(packed.tags_summarized(), "the chunks' tag sets are exact");
}

/// The clusters whose tags are in `wanted`, as the model has them.
fn tagged_in(model: &BTreeMap<ClusterName, u8>, wanted: TagSet) -> Vec<ClusterName> {
    let tagged = model.iter().filter(|(_, tag)| wanted.contains(**tag));
    tagged.map(|(cluster, _)| cluster.clone()).collect()
}

/// The encoding a checkpoint gives, as bytes.
fn encoded<T: serde::Serialize>(value: &T) -> Vec<u8> {
    bincode::serde::encode_to_vec(value, bincode::config::legacy()).unwrap_or_default()
}

proptest! {
    #[test]
    fn names_compare_as_strings_do(
        a in "[a-c-]{0,20}",
        b in "[a-c-]{0,20}",
        shared in "[a-z0-9-]{0,20}",
    ) {
        prop_assert_eq!(compare_names(&a, &b), a.cmp(&b));
        let (a, b) = (format!("{shared}{a}"), format!("{shared}{b}"));
        prop_assert_eq!(compare_names(&a, &b), a.cmp(&b));
        prop_assert_eq!(compare_names("é", "z"), "é".cmp("z"));
    }

    #[test]
    fn every_binding_comes_back_as_stored(bindings in any_bindings()) {
        let mut packed = Bindings::new();
        let mut model: BTreeMap<ClusterName, Binding> = BTreeMap::new();
        for binding in bindings {
            model.insert(binding.cluster.clone(), binding.clone());
            packed.insert(binding);
        }
        prop_assert_eq!(packed.len(), model.len());
        assert_held_consistently(&packed);
        for (cluster, binding) in &model {
            prop_assert_eq!(packed.get(cluster), Some(binding.clone()));
            prop_assert_eq!(packed.state(cluster), Some(binding.state));
        }
        let listed: Vec<(ClusterName, Binding)> =
            packed.iter().map(|(c, b)| (c.clone(), b)).collect();
        let expected: Vec<(ClusterName, Binding)> = model.clone().into_iter().collect();
        prop_assert_eq!(listed, expected);
        prop_assert_eq!(encoded(&packed), encoded(&model));
        let built: Bindings = model.values().cloned().collect();
        prop_assert_eq!(&built, &packed);
    }

    #[test]
    fn a_fill_holds_what_inserting_one_by_one_does(
        bindings in any_bindings(),
        sorted in any::<bool>(),
    ) {
        let mut given = bindings;
        if sorted {
            given.sort_by(|a, b| a.cluster.cmp(&b.cluster));
            given.dedup_by(|later, earlier| later.cluster == earlier.cluster);
        }
        let mut inserted = Bindings::new();
        let mut fill = Fill::default();
        for binding in given {
            inserted.insert(binding.clone());
            fill.push(binding);
        }
        let mut filled = Bindings::new();
        fill.finish(&mut filled);
        assert_held_consistently(&filled);
        prop_assert_eq!(&filled, &inserted);
        prop_assert_eq!(encoded(&filled), encoded(&inserted));
    }

    #[test]
    fn names_sharing_little_or_much_text_are_held_and_found(
        steps in proptest::collection::vec(("[abé-]{0,9}", any::<bool>()), 0..600),
    ) {
        // Names from a small alphabet, some multi-byte, share beginnings of every length:
        // a chunk's shared prefix is cut short (on a character boundary) and remade.
        let mut packed = Bindings::new();
        let mut model: BTreeMap<ClusterName, Binding> = BTreeMap::new();
        for (name, keep) in &steps {
            if *keep {
                packed.insert(scheduled(name));
                model.insert(name.as_str().into(), scheduled(name));
            } else {
                prop_assert_eq!(packed.remove(name), model.remove(name.as_str()));
            }
        }
        assert_held_consistently(&packed);
        for (name, _) in &steps {
            prop_assert_eq!(packed.contains_key(name), model.contains_key(name.as_str()));
        }
        prop_assert!(packed.iter().eq(model.into_iter()));
    }

    #[test]
    fn updates_and_removals_keep_the_order_and_a_snapshot_unchanged(
        bindings in any_bindings(),
        removed in proptest::collection::vec(0u32..400, 0..100),
    ) {
        let mut packed: Bindings = bindings.iter().cloned().collect();
        let mut model: BTreeMap<ClusterName, Binding> =
            bindings.into_iter().map(|b| (b.cluster.clone(), b)).collect();
        let snapshot = packed.clone();
        let before = model.clone();
        for n in removed {
            let cluster = format!("member-{n:03}");
            prop_assert_eq!(packed.remove(&cluster), model.remove(cluster.as_str()));
            let bumped = packed.update(&format!("member-{:03}", n / 2), |b| {
                b.generation += 1;
                b.generation
            });
            let modelled = model.get_mut(format!("member-{:03}", n / 2).as_str()).map(|b| {
                b.generation += 1;
                b.generation
            });
            prop_assert_eq!(bumped, modelled);
        }
        assert_held_consistently(&packed);
        assert_held_consistently(&snapshot);
        prop_assert!(packed.iter().map(|(c, b)| (c.clone(), b)).eq(model.into_iter()));
        prop_assert!(snapshot.iter().map(|(c, b)| (c.clone(), b)).eq(before.into_iter()));
    }

    #[test]
    fn updates_in_order_change_what_updates_one_by_one_do(
        bindings in any_bindings(),
        mut updated in proptest::collection::vec(0u32..400, 0..300),
        sorted in any::<bool>(),
    ) {
        if sorted {
            updated.sort_unstable();
        }
        let names: Vec<ClusterName> =
            updated.iter().map(|n| format!("member-{n:03}").into()).collect();
        let mut in_order: Bindings = bindings.iter().cloned().collect();
        let mut one_by_one = in_order.clone();
        let mut seen = Vec::new();
        in_order.update_in_order(&names, |cluster, b| {
            b.generation += 1;
            seen.push(cluster.to_owned());
        });
        let mut expected = Vec::new();
        for name in &names {
            one_by_one.update(name, |b| {
                b.generation += 1;
                expected.push(name.to_string());
            });
        }
        prop_assert_eq!(seen, expected);
        assert_held_consistently(&in_order);
        prop_assert_eq!(&in_order, &one_by_one);
    }

    #[test]
    fn rows_with_given_tags_are_found_in_name_order(
        bindings in any_bindings(),
        retagged in proptest::collection::vec((0u32..400, 0u8..8), 0..200),
        removed in proptest::collection::vec(0u32..400, 0..50),
        wanted in proptest::collection::vec(0u8..8, 0..4),
    ) {
        let mut packed: Bindings = bindings.iter().cloned().collect();
        let mut model: BTreeMap<ClusterName, u8> =
            packed.keys().map(|cluster| (cluster.clone(), 0)).collect();
        for (n, tag) in retagged {
            let cluster = format!("member-{n:03}");
            packed.rejudge(&cluster, |_| ((), tag));
            if let Some(kept) = model.get_mut(cluster.as_str()) {
                *kept = tag;
            }
        }
        for n in removed {
            let cluster = format!("member-{n:03}");
            packed.remove(&cluster);
            model.remove(cluster.as_str());
        }
        assert_held_consistently(&packed);
        let wanted = wanted.into_iter().fold(TagSet::EMPTY, TagSet::with);
        let found: Vec<ClusterName> = packed.tagged(wanted).collect();
        prop_assert_eq!(found, tagged_in(&model, wanted));
    }
}

#[test]
fn tags_are_found_across_groups_of_chunks_through_splits_and_removals() {
    // Enough bindings for several groups of chunks, joined out of name order so chunks split.
    let count = 20_000u64;
    let spread = |n: u64| n.wrapping_mul(7_919) % count;
    let mut packed = Bindings::new();
    let mut model: BTreeMap<ClusterName, u8> = BTreeMap::new();
    for n in 0..count {
        let name = format!("member-{:06}", spread(n));
        packed.insert(scheduled(&name));
        model.insert(name.into(), 0);
    }
    // A few tags, sparse and dense; one in the last rows only.
    for n in 0..count {
        let cluster = format!("member-{n:06}");
        let tag = match n {
            _ if n % 997 == 0 => 3,
            _ if n % 3 == 0 => 5,
            _ if n >= count - 10 => 9,
            _ => continue,
        };
        packed.rejudge(&cluster, |_| ((), tag));
        model.insert(cluster.into(), tag);
    }
    for n in (0..count).step_by(5) {
        let cluster = format!("member-{n:06}");
        packed.remove(&cluster);
        model.remove(cluster.as_str());
    }
    assert_held_consistently(&packed);
    for wanted in [vec![3], vec![5], vec![9], vec![3, 9], vec![42], vec![0]] {
        let wanted = wanted.into_iter().fold(TagSet::EMPTY, TagSet::with);
        let found: Vec<ClusterName> = packed.tagged(wanted).collect();
        assert_eq!(found, tagged_in(&model, wanted));
    }
    // A snapshot keeps its tags while the rows change under the fold.
    let snapshot = packed.clone();
    packed.set_tags(std::iter::repeat_n(7, model.len()));
    assert_held_consistently(&packed);
    assert_eq!(packed.tagged(TagSet::EMPTY.with(7)).count(), model.len());
    let fives = TagSet::EMPTY.with(5);
    assert_eq!(
        snapshot.tagged(fives).count(),
        tagged_in(&model, fives).len()
    );
}

#[test]
fn a_fleet_joining_in_name_order_fills_its_chunks() {
    let mut packed = Bindings::new();
    for n in 0..(CHUNK * 10) {
        packed.insert(scheduled(&format!("member-{n:05}")));
    }
    assert_eq!(packed.chunks.len(), 10);
    assert!(packed.chunks.iter().all(|chunk| chunk.len() == CHUNK));
    assert!(
        packed.aside.is_empty(),
        "common bindings are held in their rows"
    );
}

#[test]
fn chunks_split_by_inserts_are_packed_full_again_when_the_bindings_double() {
    let mut packed = Bindings::new();
    // Every other name first, then the rest: each insert of the second half splits chunks.
    let names = (0..REPACKED_FROM * 2).map(|n| format!("member-{n:06}"));
    let (even, odd): (Vec<_>, Vec<_>) = names.enumerate().partition(|(i, _)| i % 2 == 0);
    for (_, name) in even.iter().chain(odd.iter()) {
        packed.insert(scheduled(name));
    }
    assert_eq!(packed.len(), REPACKED_FROM * 2);
    assert_eq!(packed.chunks.len(), REPACKED_FROM * 2 / CHUNK);
    assert_held_consistently(&packed);
    let names: Vec<ClusterName> = packed.keys().collect();
    assert!(names.windows(2).all(|pair| pair[0] < pair[1]));
}

#[test]
fn past_a_full_table_bindings_are_kept_aside_and_still_come_back() {
    let bindings: Vec<Binding> = (0..300)
        .map(|n| {
            let mut binding = scheduled(&format!("member-{n:03}"));
            binding.decision.reason = format!("reason {n}").into();
            binding
        })
        .collect();
    let mut packed = Bindings::new();
    for binding in &bindings {
        packed.insert(binding.clone());
    }
    assert_eq!(packed.aside.len(), 300 - 255);
    assert!(packed.values().eq(bindings.iter().cloned()));
    // Built whole, from a checkpoint's map or a first scheduling pass, alike.
    let built: Bindings = bindings.iter().cloned().collect();
    assert_held_consistently(&built);
    assert!(built.values().eq(bindings.iter().cloned()));
    let mut fill = Fill::default();
    bindings
        .iter()
        .cloned()
        .for_each(|binding| fill.push(binding));
    let mut filled = Bindings::new();
    fill.finish(&mut filled);
    assert_held_consistently(&filled);
    assert!(filled.values().eq(bindings.iter().cloned()));
    // A binding kept aside that a row can hold again leaves the side.
    packed.update("member-299", |b| b.decision.reason = "reason 0".into());
    assert_eq!(packed.aside.len(), 300 - 256);
    assert_held_consistently(&packed);
}

#[test]
fn a_long_lived_placement_keeps_its_bindings_in_rows_past_a_full_table() {
    // Each policy change moves every binding to a new (policy index, generation) pair; the
    // table of pairs fills after 255 of them, and is made afresh with the pairs still used.
    let mut packed: Bindings = (0..100)
        .map(|n| scheduled(&format!("member-{n:03}")))
        .collect();
    for generation in 1..=600u64 {
        let clusters: Vec<ClusterName> = packed.keys().collect();
        for cluster in clusters {
            packed.update(&cluster, |b| {
                b.policy_index = generation;
                b.generation = generation;
            });
        }
    }
    assert!(packed.aside.is_empty(), "no binding is kept aside");
    assert!(
        packed
            .values()
            .all(|b| b.policy_index == 600 && b.generation == 600)
    );
    assert_held_consistently(&packed);
    assert_eq!(std::mem::size_of::<super::row::Row>(), 48);
}

#[test]
fn a_binding_stored_under_another_cluster_comes_back_under_that_key() {
    let entries = vec![("member-b".into(), scheduled("member-a"))];
    let packed = Bindings::from_keyed(entries);
    let listed: Vec<(ClusterName, Binding)> = packed.iter().collect();
    assert_eq!(listed, vec![("member-b".into(), scheduled("member-a"))]);
}

/// Decoded from a map in key order (as bindings encode) over several collecting runs, and from
/// one out of order with a repeated key (which only another encoder writes): the bindings an
/// insert of each in turn would hold.
#[test]
fn decoded_maps_in_order_or_not_hold_what_inserting_them_does() {
    let names: Vec<String> = (0..9_000).map(|i| format!("member-{i:05}")).collect();
    let in_order: Vec<(String, Binding)> = names
        .iter()
        .map(|name| (name.clone(), scheduled(name)))
        .collect();
    let decode = |pairs: &[(String, Binding)]| -> Bindings {
        let bytes = bincode::serde::encode_to_vec(MapOf(pairs), bincode::config::legacy())
            .unwrap_or_default();
        bincode::serde::decode_from_slice(&bytes, bincode::config::legacy())
            .map(|(bindings, _)| bindings)
            .unwrap_or_default()
    };
    let expected: Bindings = in_order.iter().map(|(_, b)| b.clone()).collect();
    assert_eq!(decode(&in_order), expected);
    let mut shuffled: Vec<(String, Binding)> = in_order.iter().rev().cloned().collect();
    shuffled.push((names[0].clone(), scheduled("member-again")));
    let keyed = shuffled
        .iter()
        .map(|(cluster, binding)| (cluster.as_str().into(), binding.clone()))
        .collect();
    let later = Bindings::from_keyed(keyed);
    assert_eq!(later.get("member-00000"), Some(scheduled("member-again")));
    assert_eq!(decode(&shuffled), later);
}

/// Pairs encoded as a map in the order given.
struct MapOf<'a>(&'a [(String, Binding)]);

impl serde::Serialize for MapOf<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for (key, value) in self.0 {
            map.serialize_entry(key, value)?;
        }
        map.end()
    }
}
