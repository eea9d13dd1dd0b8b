//! Small string-keyed maps — labels, annotations, a member's properties and resource
//! quantities — as a sorted vector of pairs rather than a `BTreeMap`.
//!
//! A `BTreeMap` allocates a whole leaf node (room for eleven entries, about 540 bytes for
//! string pairs) for its first entry, and every stored object carries two of these maps: at a
//! million member clusters with two labels each, that node alone is half a gigabyte. Objects
//! carry a handful of entries, so a sorted vector costs one right-sized allocation, and a lookup
//! is a binary search over a few entries. Keys (and a `StringMap`'s values) are
//! `CompactString`s: up to 24 bytes inline, so `env: production` or `cpu: 40` is one
//! allocation for the whole map, and comparing a heartbeat's report with what a member holds
//! reads one block of memory instead of chasing a pointer per string.
//!
//! It serializes exactly as a `BTreeMap<String, V>` does — a map, in key order — so the JSON
//! form, the checkpoint encoding and the state hash are unchanged.

use std::collections::BTreeMap;

use compact_str::CompactString;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use thin_vec::ThinVec;

/// A map in key order, kept as a sorted vector of pairs (see the module docs). The vector is
/// thin (one pointer, its length and capacity on the heap, nothing allocated while empty): a
/// member cluster holds three of these maps, most of them empty.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct VecMap<V>(ThinVec<(CompactString, V)>);

/// Labels, annotations, resource quantities: strings to strings.
pub type StringMap = VecMap<CompactString>;

/// Lookup of a label's value by key, over whichever map holds them.
pub trait LabelLookup {
    /// The value stored under `key`.
    fn label(&self, key: &str) -> Option<&str>;
}

impl LabelLookup for StringMap {
    fn label(&self, key: &str) -> Option<&str> {
        self.get(key).map(CompactString::as_str)
    }
}

impl LabelLookup for BTreeMap<String, String> {
    fn label(&self, key: &str) -> Option<&str> {
        self.get(key).map(String::as_str)
    }
}

impl<V> Default for VecMap<V> {
    fn default() -> Self {
        Self::new()
    }
}

impl<V> VecMap<V> {
    /// An empty map.
    #[must_use]
    pub const fn new() -> Self {
        Self(ThinVec::new())
    }

    fn position(&self, key: &str) -> Result<usize, usize> {
        self.0
            .binary_search_by(|(stored, _)| stored.as_str().cmp(key))
    }

    /// The value stored under `key`.
    #[must_use]
    pub fn get(&self, key: &str) -> Option<&V> {
        self.position(key).ok().map(|at| &self.0[at].1)
    }

    /// Whether `key` is stored.
    #[must_use]
    pub fn contains_key(&self, key: &str) -> bool {
        self.position(key).is_ok()
    }

    /// Stores `value` under `key`, returning the value it replaced.
    pub fn insert(&mut self, key: impl Into<CompactString> + AsRef<str>, value: V) -> Option<V> {
        match self.position(key.as_ref()) {
            Ok(at) => Some(std::mem::replace(&mut self.0[at].1, value)),
            Err(at) => {
                self.0.insert(at, (key.into(), value));
                None
            }
        }
    }

    /// Removes `key`, returning its value.
    pub fn remove(&mut self, key: &str) -> Option<V> {
        self.position(key).ok().map(|at| self.0.remove(at).1)
    }

    /// Removes every entry.
    pub fn clear(&mut self) {
        self.0.clear();
    }

    /// The number of entries.
    #[must_use]
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether there are no entries.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The entries in key order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &V)> {
        self.0.iter().map(|(key, value)| (key.as_str(), value))
    }

    /// The keys in order.
    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.0.iter().map(|(key, _)| key.as_str())
    }

    /// The values in key order.
    pub fn values(&self) -> impl Iterator<Item = &V> {
        self.0.iter().map(|(_, value)| value)
    }

    /// The values in key order, to change in place.
    pub fn values_mut(&mut self) -> impl Iterator<Item = &mut V> {
        self.0.iter_mut().map(|(_, value)| value)
    }

    /// From pairs already in strict key order (a `BTreeMap`'s), sized to fit.
    fn from_sorted(pairs: impl Iterator<Item = (CompactString, V)>) -> Self {
        let mut pairs: ThinVec<_> = pairs.collect();
        pairs.shrink_to_fit();
        Self(pairs)
    }
}

/// Iterator over a map's entries in key order.
pub type Iter<'a, V> = std::iter::Map<
    std::slice::Iter<'a, (CompactString, V)>,
    fn(&'a (CompactString, V)) -> (&'a str, &'a V),
>;

impl<'a, V> IntoIterator for &'a VecMap<V> {
    type Item = (&'a str, &'a V);
    type IntoIter = Iter<'a, V>;

    fn into_iter(self) -> Self::IntoIter {
        self.0.iter().map(|(key, value)| (key.as_str(), value))
    }
}

impl<V> std::ops::Index<&str> for VecMap<V> {
    type Output = V;

    /// The value under `key`; panics without one, as a map's index does.
    fn index(&self, key: &str) -> &V {
        match self.get(key) {
            Some(value) => value,
            None => panic!("no entry {key:?} in the map"),
        }
    }
}

impl<V> IntoIterator for VecMap<V> {
    type Item = (CompactString, V);
    type IntoIter = thin_vec::IntoIter<(CompactString, V)>;

    fn into_iter(self) -> Self::IntoIter {
        self.0.into_iter()
    }
}

impl From<BTreeMap<String, String>> for StringMap {
    fn from(map: BTreeMap<String, String>) -> Self {
        Self::from_sorted(map.into_iter().map(|(k, v)| (k.into(), v.into())))
    }
}

impl From<&BTreeMap<String, String>> for StringMap {
    fn from(map: &BTreeMap<String, String>) -> Self {
        Self::from_sorted(map.iter().map(|(k, v)| (k.into(), v.into())))
    }
}

impl<K: Into<CompactString> + Ord, W: Into<V>, V> FromIterator<(K, W)> for VecMap<V> {
    fn from_iter<I: IntoIterator<Item = (K, W)>>(pairs: I) -> Self {
        // Through a `BTreeMap`: key order, and the last of repeated keys wins.
        let sorted: BTreeMap<K, W> = pairs.into_iter().collect();
        Self::from_sorted(sorted.into_iter().map(|(k, v)| (k.into(), v.into())))
    }
}

impl From<&StringMap> for BTreeMap<String, String> {
    fn from(map: &StringMap) -> Self {
        map.iter()
            .map(|(k, v)| (k.to_owned(), v.to_string()))
            .collect()
    }
}

impl PartialEq<BTreeMap<String, String>> for StringMap {
    fn eq(&self, other: &BTreeMap<String, String>) -> bool {
        self.len() == other.len()
            && self
                .iter()
                .zip(other)
                .all(|((k, v), (other_k, other_v))| k == other_k && v == other_v)
    }
}

impl<V: Serialize> Serialize for VecMap<V> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_map(self.iter())
    }
}

impl<'de, V: Deserialize<'de>> Deserialize<'de> for VecMap<V> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let map = BTreeMap::<CompactString, V>::deserialize(deserializer)?;
        Ok(Self::from_sorted(map.into_iter()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> BTreeMap<String, String> {
        [("zone", "zone-1"), ("environment", "production"), ("a", "")]
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v.to_owned()))
            .collect()
    }

    #[test]
    fn encodes_exactly_as_the_btree_map_it_replaces() -> Result<(), Box<dyn std::error::Error>> {
        let map = sample();
        let compact = StringMap::from(map.clone());
        assert_eq!(
            serde_json::to_string(&compact)?,
            serde_json::to_string(&map)?
        );
        let config = bincode::config::legacy();
        assert_eq!(
            bincode::serde::encode_to_vec(&compact, config)?,
            bincode::serde::encode_to_vec(&map, config)?
        );
        let back: StringMap = serde_json::from_str(&serde_json::to_string(&map)?)?;
        assert_eq!(back, compact);
        assert_eq!(compact, map);
        assert_eq!(BTreeMap::from(&compact), map);
        Ok(())
    }

    #[test]
    fn behaves_as_a_map() {
        let mut map: StringMap = [("b", "1"), ("a", "2"), ("b", "3")]
            .into_iter()
            .map(|(k, v)| (k, CompactString::from(v)))
            .collect();
        assert_eq!(map.keys().collect::<Vec<_>>(), ["a", "b"]);
        assert_eq!(map.get("b").map(CompactString::as_str), Some("3"));
        assert_eq!(map.insert("c", "4".into()), None);
        assert_eq!(map.insert("a", "5".into()), Some("2".into()));
        assert_eq!(map.remove("b"), Some("3".into()));
        assert!(!map.contains_key("b"));
        assert_eq!(map.label("c"), Some("4"));
        assert_eq!(map.len(), 2);
        map.clear();
        assert!(map.is_empty());
    }

    #[test]
    fn a_map_of_other_values_is_a_map_too() -> Result<(), Box<dyn std::error::Error>> {
        let map: VecMap<u32> = [("b", 2_u32), ("a", 1)].into_iter().collect();
        let tree = BTreeMap::from([("a", 1_u32), ("b", 2)]);
        let config = bincode::config::legacy();
        assert_eq!(
            bincode::serde::encode_to_vec(&map, config)?,
            bincode::serde::encode_to_vec(&tree, config)?
        );
        assert_eq!(map.values().copied().collect::<Vec<_>>(), [1, 2]);
        Ok(())
    }
}
