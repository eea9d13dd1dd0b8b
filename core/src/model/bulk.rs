//! Decoding the largest maps in bulk. serde fills a `BTreeMap` one insert at a time, in key
//! order, which leaves every node about half full: a state restored from a checkpoint held its
//! million-entry maps (members, bindings, heartbeat deadlines, a run's positions) in nearly
//! twice the memory their entries need. Collecting the entries first and building the map
//! from them (`FromIterator` sorts, then fills each node) holds the same map, equal in every
//! way, in about 55 % of it. Where two entries share a key the later wins, as inserting does.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::marker::PhantomData;

use serde::de::{MapAccess, Visitor};
use serde::{Deserialize, Deserializer};

/// The most entries reserved up front from a length the input claims (it may lie).
const RESERVED_MAX: usize = 4_096;

/// Deserializes a map with [`BTreeMap::from_iter`] instead of one insert per entry.
///
/// # Errors
/// When the input is not a map of these keys and values.
pub fn map<'de, D, K, V>(deserializer: D) -> Result<BTreeMap<K, V>, D::Error>
where
    D: Deserializer<'de>,
    K: Deserialize<'de> + Ord,
    V: Deserialize<'de>,
{
    let entries = deserializer.deserialize_map(Entries(PhantomData))?;
    Ok(entries.into_iter().collect())
}

/// Deserializes a set with [`BTreeSet::from_iter`] instead of one insert per item.
///
/// # Errors
/// When the input is not a sequence of these items.
pub fn set<'de, D, T>(deserializer: D) -> Result<BTreeSet<T>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de> + Ord,
{
    let items: Vec<T> = Vec::deserialize(deserializer)?;
    Ok(items.into_iter().collect())
}

/// Collects a map's entries in the order they come.
struct Entries<K, V>(PhantomData<(K, V)>);

impl<'de, K: Deserialize<'de>, V: Deserialize<'de>> Visitor<'de> for Entries<K, V> {
    type Value = Vec<(K, V)>;

    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("a map")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<Self::Value, A::Error> {
        let mut entries = Vec::with_capacity(access.size_hint().unwrap_or(0).min(RESERVED_MAX));
        while let Some(entry) = access.next_entry()? {
            entries.push(entry);
        }
        Ok(entries)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, PartialEq, Deserialize, serde::Serialize)]
    struct Held {
        #[serde(deserialize_with = "map")]
        map: BTreeMap<String, u64>,
        #[serde(deserialize_with = "set")]
        set: BTreeSet<(u64, String)>,
    }

    #[test]
    fn maps_and_sets_decode_to_what_was_encoded() {
        let held = Held {
            map: (0..100).map(|i| (format!("k{i:03}"), i)).collect(),
            set: (0..100).map(|i| (i % 7, format!("s{i}"))).collect(),
        };
        let bytes = crate::codec::encode_checkpoint(&held).expect("encodes");
        let back: Held = crate::codec::decode_checkpoint(&bytes).expect("decodes");
        assert_eq!(back, held);
        let json = serde_json::to_string(&held).expect("json");
        assert_eq!(serde_json::from_str::<Held>(&json).expect("json"), held);
    }

    #[test]
    fn of_two_entries_with_one_key_the_later_wins() {
        let held: Held =
            serde_json::from_str(r#"{"map": {"a": 1, "a": 2}, "set": [[1, "x"], [1, "x"]]}"#)
                .expect("decodes");
        assert_eq!(held.map["a"], 2);
        assert_eq!(held.set.len(), 1);
    }
}
