//! Labels and annotations as a sorted vector of pairs rather than a `BTreeMap`.
//!
//! A `BTreeMap` allocates a whole leaf node (room for eleven entries, about 540 bytes for
//! string pairs) for its first entry, and every stored object carries two of these maps: at a
//! million member clusters with two labels each, that node alone is half a gigabyte. Objects
//! carry a handful of labels, so a sorted vector costs one right-sized allocation, and a lookup
//! is a binary search over a few entries.
//!
//! It serializes exactly as a `BTreeMap<String, String>` does — a map, in key order — so the
//! JSON form, the checkpoint encoding and the state hash are unchanged.

use std::collections::BTreeMap;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A map of strings in key order, kept as a sorted vector (see the module docs).
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct StringMap(Vec<(String, String)>);

/// Lookup of a label's value by key, over whichever map holds them.
pub trait LabelLookup {
    /// The value stored under `key`.
    fn label(&self, key: &str) -> Option<&str>;
}

impl LabelLookup for StringMap {
    fn label(&self, key: &str) -> Option<&str> {
        self.get(key).map(String::as_str)
    }
}

impl LabelLookup for BTreeMap<String, String> {
    fn label(&self, key: &str) -> Option<&str> {
        self.get(key).map(String::as_str)
    }
}

impl StringMap {
    /// An empty map.
    #[must_use]
    pub const fn new() -> Self {
        Self(Vec::new())
    }

    fn position(&self, key: &str) -> Result<usize, usize> {
        self.0
            .binary_search_by(|(stored, _)| stored.as_str().cmp(key))
    }

    /// The value stored under `key`.
    #[must_use]
    pub fn get(&self, key: &str) -> Option<&String> {
        self.position(key).ok().map(|at| &self.0[at].1)
    }

    /// Whether `key` is stored.
    #[must_use]
    pub fn contains_key(&self, key: &str) -> bool {
        self.position(key).is_ok()
    }

    /// Stores `value` under `key`; returns the value it replaced.
    pub fn insert(&mut self, key: String, value: String) -> Option<String> {
        match self.position(&key) {
            Ok(at) => Some(std::mem::replace(&mut self.0[at].1, value)),
            Err(at) => {
                self.0.insert(at, (key, value));
                None
            }
        }
    }

    /// Removes `key`; returns its value.
    pub fn remove(&mut self, key: &str) -> Option<String> {
        self.position(key).ok().map(|at| self.0.remove(at).1)
    }

    /// Removes every entry.
    pub fn clear(&mut self) {
        self.0.clear();
    }

    /// How many entries.
    #[must_use]
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether there are none.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The entries in key order.
    pub fn iter(&self) -> Iter<'_> {
        self.0.iter().map(|(key, value)| (key, value))
    }

    /// The keys in order.
    pub fn keys(&self) -> impl Iterator<Item = &String> {
        self.0.iter().map(|(key, _)| key)
    }

    /// The values in key order.
    pub fn values(&self) -> impl Iterator<Item = &String> {
        self.0.iter().map(|(_, value)| value)
    }
}

/// The iterator of [`StringMap::iter`].
pub type Iter<'a> = std::iter::Map<
    std::slice::Iter<'a, (String, String)>,
    fn(&(String, String)) -> (&String, &String),
>;

impl<'a> IntoIterator for &'a StringMap {
    type Item = (&'a String, &'a String);
    type IntoIter = Iter<'a>;

    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl IntoIterator for StringMap {
    type Item = (String, String);
    type IntoIter = std::vec::IntoIter<(String, String)>;

    fn into_iter(self) -> Self::IntoIter {
        self.0.into_iter()
    }
}

impl From<BTreeMap<String, String>> for StringMap {
    fn from(map: BTreeMap<String, String>) -> Self {
        // Already in key order and free of repeats.
        let mut pairs: Vec<(String, String)> = map.into_iter().collect();
        pairs.shrink_to_fit();
        Self(pairs)
    }
}

impl FromIterator<(String, String)> for StringMap {
    /// Later pairs win over earlier ones with the same key, as inserting into a map would.
    fn from_iter<I: IntoIterator<Item = (String, String)>>(pairs: I) -> Self {
        Self::from(pairs.into_iter().collect::<BTreeMap<_, _>>())
    }
}

impl PartialEq<BTreeMap<String, String>> for StringMap {
    fn eq(&self, other: &BTreeMap<String, String>) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}

impl Serialize for StringMap {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_map(self.iter())
    }
}

impl<'de> Deserialize<'de> for StringMap {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        BTreeMap::<String, String>::deserialize(deserializer).map(Self::from)
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
        Ok(())
    }

    #[test]
    fn behaves_as_a_map() {
        let mut map: StringMap = [("b", "1"), ("a", "2"), ("b", "3")]
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v.to_owned()))
            .collect();
        assert_eq!(map.keys().collect::<Vec<_>>(), ["a", "b"]);
        assert_eq!(map.get("b").map(String::as_str), Some("3"));
        assert_eq!(map.insert("c".into(), "4".into()), None);
        assert_eq!(map.insert("a".into(), "5".into()), Some("2".into()));
        assert_eq!(map.remove("b"), Some("3".into()));
        assert!(!map.contains_key("b"));
        assert_eq!(map.label("c"), Some("4"));
        assert_eq!(map.len(), 2);
        map.clear();
        assert!(map.is_empty());
    }
}
