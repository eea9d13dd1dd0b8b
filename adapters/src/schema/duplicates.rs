//! Duplicate fields of a JSON body, which `fieldValidation=Strict` refuses and `Warn` warns of
//! (KEP-2885; the API server's strict decoding reports `duplicate field "spec.x"`).
//! `serde_json` keeps the last of two equal keys in silence, so the body is read once more by a
//! visitor that only remembers the keys of each object.

use std::collections::HashSet;
use std::fmt;

use serde::de::{DeserializeSeed, MapAccess, SeqAccess, Visitor};

use super::path::{FieldPath, Segment};

/// Every key of `body` (JSON) that appears twice in one object, by path; empty for a body that
/// is not JSON (its parse reports that).
#[must_use]
pub fn duplicate_fields(body: &[u8]) -> Vec<FieldPath> {
    let mut found = Vec::new();
    let mut deserializer = serde_json::Deserializer::from_slice(body);
    let seed = Seed {
        path: FieldPath::default(),
        found: &mut found,
    };
    if seed.deserialize(&mut deserializer).is_err() {
        return Vec::new();
    }
    found
}

struct Seed<'f> {
    path: FieldPath,
    found: &'f mut Vec<FieldPath>,
}

impl<'de> DeserializeSeed<'de> for Seed<'_> {
    type Value = ();

    fn deserialize<D: serde::Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Seed<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }

    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }

    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }

    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }

    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }

    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let Seed { path, found } = self;
        let mut index = 0;
        loop {
            let seed = Seed {
                path: path.child(Segment::Index(index)),
                found: &mut *found,
            };
            if seq.next_element_seed(seed)?.is_none() {
                return Ok(());
            }
            index += 1;
        }
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let Seed { path, found } = self;
        let mut seen = HashSet::new();
        while let Some(key) = map.next_key::<String>()? {
            let child = path.key(&key);
            if !seen.insert(key) {
                found.push(child.clone());
            }
            map.next_value_seed(Seed {
                path: child,
                found: &mut *found,
            })?;
        }
        Ok(())
    }
}
