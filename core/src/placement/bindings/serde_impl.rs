//! What [`Bindings`] are, apart from how they are held: equal when their bindings are, shown
//! and encoded as a map of cluster name to binding (the encoding of the map they replaced, so
//! checkpoints and state hashes are unchanged).

use std::fmt;
use std::marker::PhantomData;

use serde::de::{MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::Bindings;
use crate::model::ClusterName;
use crate::placement::binding::Binding;

/// The most entries reserved up front from a length the input claims (it may lie).
const RESERVED_MAX: usize = 4_096;

impl PartialEq for Bindings {
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}

impl Eq for Bindings {}

impl fmt::Debug for Bindings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

impl Serialize for Bindings {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.len()))?;
        for (cluster, binding) in self.iter() {
            map.serialize_entry(&cluster, &binding)?;
        }
        map.end()
    }
}

impl<'de> Deserialize<'de> for Bindings {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(Entries(PhantomData))
    }
}

/// Collects the map's entries, then packs them in order.
struct Entries(PhantomData<()>);

impl<'de> Visitor<'de> for Entries {
    type Value = Bindings;

    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("a map of cluster name to binding")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<Self::Value, A::Error> {
        // Collected in runs of a bounded size rather than one vector grown by doubling, which
        // at a million clusters copies the bindings over and over.
        let reserved = access.size_hint().unwrap_or(0).min(RESERVED_MAX);
        let mut runs: Vec<Vec<(ClusterName, Binding)>> = Vec::new();
        let mut run = Vec::with_capacity(reserved);
        while let Some(entry) = access.next_entry()? {
            if run.len() == RESERVED_MAX {
                runs.push(std::mem::replace(
                    &mut run,
                    Vec::with_capacity(RESERVED_MAX),
                ));
            }
            run.push(entry);
        }
        runs.push(run);
        // An encoded map is in key order: packed as it comes; anything else is sorted first.
        let ascending = {
            let mut keys = runs.iter().flatten().map(|(cluster, _)| cluster);
            let first = keys.next();
            keys.try_fold(first, |last, key| (last < Some(key)).then_some(Some(key)))
                .is_some()
        };
        if ascending {
            return Ok(Bindings::from_sorted(runs.into_iter().flatten()));
        }
        Ok(Bindings::from_keyed(runs.into_iter().flatten().collect()))
    }
}
