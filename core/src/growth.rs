//! Large maps rebuilt with full nodes as they grow. A B-tree that grows one key at a time in
//! key order (a fleet joining in name order, a placement binding each cluster as its first
//! heartbeat arrives) keeps its nodes a little over half full; one built from sorted entries
//! fills them, as a checkpoint's decoding does. Rebuilding a map whenever it has doubled since
//! it was last rebuilt keeps most of it full, at amortized O(1) per insert. A rebuild keeps
//! every entry, so no state, hash or decision changes.

use std::collections::BTreeMap;

/// Below this many entries a map is never rebuilt: its nodes are too few to matter.
pub(crate) const REBUILT_FROM: usize = 4_096;

/// When a map was last rebuilt, to rebuild it again once it has doubled: derived, not encoded
/// (a state decoded from a checkpoint starts counting from the size it first sees).
#[derive(Debug, Clone, Default)]
pub(crate) struct Growth {
    /// The map's size at its last rebuild; 0 before the first size was noted.
    rebuilt_at: usize,
}

crate::derived::derived_cache!(Growth);

impl Growth {
    /// After an insert into `map`: notes its size the first time it is large enough (a map
    /// decoded from a checkpoint is full already), and rebuilds it each time it has doubled
    /// since.
    pub(crate) fn note_insert<K: Ord, V>(&mut self, map: &mut BTreeMap<K, V>) {
        let len = map.len();
        if len < REBUILT_FROM {
            return;
        }
        if self.rebuilt_at == 0 {
            self.rebuilt_at = len;
        } else if len >= self.rebuilt_at.saturating_mul(2) {
            *map = std::mem::take(map).into_iter().collect();
            self.rebuilt_at = len;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_map_is_rebuilt_each_time_it_doubles_and_keeps_its_entries() {
        let mut map = BTreeMap::new();
        let mut growth = Growth::default();
        let mut rebuilds = Vec::new();
        for key in 0..(REBUILT_FROM * 4 + 1) {
            map.insert(key, key * 2);
            let before = growth.rebuilt_at;
            growth.note_insert(&mut map);
            if growth.rebuilt_at != before && before != 0 {
                rebuilds.push(map.len());
            }
        }
        assert_eq!(rebuilds, vec![REBUILT_FROM * 2, REBUILT_FROM * 4]);
        assert!(map.iter().all(|(key, value)| *value == key * 2));
        assert_eq!(map.len(), REBUILT_FROM * 4 + 1);
    }

    #[test]
    fn a_map_flapping_at_a_size_is_not_rebuilt_again_and_again() {
        let mut map: BTreeMap<usize, ()> = (0..REBUILT_FROM * 2).map(|k| (k, ())).collect();
        let mut growth = Growth::default();
        for _ in 0..100 {
            map.remove(&0);
            map.insert(0, ());
            growth.note_insert(&mut map);
        }
        assert_eq!(growth.rebuilt_at, REBUILT_FROM * 2);
    }
}
