//! One part of an [`ObjectKey`](super::ObjectKey): its group, kind, namespace or name.
//!
//! The fold clones keys on every event (into changes, decisions, the runs it drives), so a key
//! part is a string that clones without allocating: inline up to 24 bytes, and the fleet's own
//! longer groups and kinds point at static text. It orders, hashes, prints and encodes exactly as
//! the `String` it replaced, so states, hashes and checkpoints are unchanged.

use std::borrow::Borrow;
use std::fmt;
use std::ops::Deref;

use compact_str::CompactString;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// The fleet's groups and kinds longer than an inline string (24 bytes).
const LONG_KNOWN: [&str; 5] = [
    super::CLUSTER_GROUP,
    super::PLACEMENT_GROUP,
    super::CLUSTER_RESOURCE_PLACEMENT_EVICTION,
    super::CLUSTER_RESOURCE_PLACEMENT_DISRUPTION_BUDGET,
    super::CLUSTER_STAGED_UPDATE_STRATEGY,
];

/// A group, kind, namespace or name of an object key.
#[derive(Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct KeyPart(CompactString);

impl KeyPart {
    /// The empty part (a cluster-scoped key's namespace, the core group).
    #[must_use]
    pub const fn empty() -> Self {
        Self(CompactString::const_new(""))
    }

    /// `text` as a key part: one of the fleet's long groups and kinds points at static text.
    #[must_use]
    pub fn new(text: &str) -> Self {
        Self(super::uid::static_or_inline(&LONG_KNOWN, text))
    }

    /// The text.
    #[must_use]
    pub fn as_str(&self) -> &str {
        self.0.as_str()
    }
}

impl Deref for KeyPart {
    type Target = str;

    fn deref(&self) -> &str {
        self.0.as_str()
    }
}

impl AsRef<str> for KeyPart {
    fn as_ref(&self) -> &str {
        self.0.as_str()
    }
}

impl Borrow<str> for KeyPart {
    fn borrow(&self) -> &str {
        self.0.as_str()
    }
}

impl fmt::Display for KeyPart {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl fmt::Debug for KeyPart {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl From<&str> for KeyPart {
    fn from(text: &str) -> Self {
        Self::new(text)
    }
}

impl From<&String> for KeyPart {
    fn from(text: &String) -> Self {
        Self::new(text)
    }
}

impl From<String> for KeyPart {
    fn from(text: String) -> Self {
        Self::new(&text)
    }
}

impl From<&KeyPart> for KeyPart {
    fn from(part: &KeyPart) -> Self {
        part.clone()
    }
}

impl From<KeyPart> for String {
    fn from(part: KeyPart) -> Self {
        part.0.into_string()
    }
}

impl PartialEq<str> for KeyPart {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for KeyPart {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl PartialEq<String> for KeyPart {
    fn eq(&self, other: &String) -> bool {
        self.as_str() == other.as_str()
    }
}

impl PartialEq<KeyPart> for str {
    fn eq(&self, other: &KeyPart) -> bool {
        self == other.as_str()
    }
}

impl PartialEq<KeyPart> for &str {
    fn eq(&self, other: &KeyPart) -> bool {
        *self == other.as_str()
    }
}

impl PartialEq<KeyPart> for String {
    fn eq(&self, other: &KeyPart) -> bool {
        self.as_str() == other.as_str()
    }
}

impl Serialize for KeyPart {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for KeyPart {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = CompactString::deserialize(deserializer)?;
        Ok(Self::new(&text))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fleets_long_groups_and_kinds_clone_without_allocating() {
        for known in LONG_KNOWN {
            let part = KeyPart::new(known);
            assert!(known.len() > 24, "{known} would be inline anyway");
            assert_eq!(part.0.as_static_str(), Some(known));
            assert!(!part.clone().0.is_heap_allocated());
        }
        let other = KeyPart::new("an-object-name-longer-than-twenty-four-bytes");
        assert!(other.0.is_heap_allocated());
        assert!(!KeyPart::new("web").0.is_heap_allocated());
    }

    #[test]
    fn a_key_part_encodes_orders_and_prints_as_the_string_it_replaced() {
        let texts = ["", "apps", super::super::PLACEMENT_GROUP, "zeta", "Alpha"];
        for text in texts {
            let part = KeyPart::new(text);
            let ours = crate::codec::encode_checkpoint(&part).expect("encodes");
            let theirs = crate::codec::encode_checkpoint(&text.to_owned()).expect("encodes");
            assert_eq!(ours, theirs);
            let back: KeyPart = crate::codec::decode_checkpoint(&ours).expect("decodes");
            assert_eq!(back, part);
            assert_eq!(part.to_string(), text);
            assert_eq!(format!("{part:?}"), format!("{text:?}"));
        }
        let mut parts: Vec<KeyPart> = texts.iter().map(|t| KeyPart::new(t)).collect();
        let mut strings: Vec<&str> = texts.to_vec();
        parts.sort();
        strings.sort_unstable();
        let sorted: Vec<&str> = parts.iter().map(KeyPart::as_str).collect();
        assert_eq!(sorted, strings);
    }
}
