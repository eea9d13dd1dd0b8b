//! Which placements a hub resource can concern: an index from each resource selector's
//! (group, kind, name) to the placements holding it, so that applying or deleting one resource
//! re-selects only those placements, not every one.
//!
//! A resource `group/kind/name` in namespace `ns` can only be selected by a selector of that
//! group and kind naming it or naming nothing (a label selector or every object of the kind),
//! or, when namespaced, through a `Namespace` selector naming `ns` or naming nothing. Any
//! other placement selects exactly what it selected before, so re-selecting it would change
//! nothing.
//!
//! The index is a cache derived from the placements' specs: never encoded (so not in the
//! hash or a checkpoint), equal to any other, and rebuilt from the placements when it has not
//! been built (after a checkpoint restore). Its maps are ordered; lookups return placements in
//! key order, the order a scan over every placement would visit them in.

use std::collections::{BTreeMap, BTreeSet};

use super::Placement;
use crate::model::ObjectKey;

/// A selector's group, kind, and the name it requires (`None`: any name).
type SelectorKey = (String, String, Option<String>);

/// Placements by the (group, kind, name) of their resource selectors.
#[derive(Debug, Clone, Default)]
pub struct SelectorIndex {
    /// Whether the index reflects every placement (false after a restore).
    built: bool,
    /// Each selector key with the placements holding a selector of it.
    placements: BTreeMap<SelectorKey, BTreeSet<ObjectKey>>,
    /// Each placement's selector keys, to take them out when its spec changes.
    keys: BTreeMap<ObjectKey, Vec<SelectorKey>>,
}

impl PartialEq for SelectorIndex {
    fn eq(&self, _other: &Self) -> bool {
        true
    }
}

impl Eq for SelectorIndex {}

impl SelectorIndex {
    /// Builds the index from every placement unless it is built already.
    pub(crate) fn ensure(&mut self, placements: &BTreeMap<ObjectKey, Placement>) {
        if self.built {
            return;
        }
        self.placements.clear();
        self.keys.clear();
        for (key, placement) in placements {
            self.add(key, placement);
        }
        self.built = true;
    }

    /// Records a placement's current selectors (`None`: it was deleted).
    pub(crate) fn update(&mut self, placements: &BTreeMap<ObjectKey, Placement>, key: &ObjectKey) {
        if !self.built {
            self.ensure(placements);
            return;
        }
        for selector in self.keys.remove(key).unwrap_or_default() {
            if let Some(holders) = self.placements.get_mut(&selector) {
                holders.remove(key);
                if holders.is_empty() {
                    self.placements.remove(&selector);
                }
            }
        }
        if let Some(placement) = placements.get(key) {
            self.add(key, placement);
        }
    }

    fn add(&mut self, key: &ObjectKey, placement: &Placement) {
        let selectors: Vec<SelectorKey> = placement
            .spec
            .resource_selectors
            .iter()
            .map(|s| (s.group.clone(), s.kind.clone(), s.name.clone()))
            .collect();
        for selector in &selectors {
            self.placements
                .entry(selector.clone())
                .or_default()
                .insert(key.clone());
        }
        self.keys.insert(key.clone(), selectors);
    }

    /// The placements whose selectors can select `resource`, in key order.
    pub(crate) fn concerning(&self, resource: &ObjectKey) -> BTreeSet<ObjectKey> {
        let mut concerned = BTreeSet::new();
        let mut collect = |group: &str, kind: &str, name: &str| {
            for name in [Some(name.to_owned()), None] {
                let selector = (group.to_owned(), kind.to_owned(), name);
                if let Some(holders) = self.placements.get(&selector) {
                    concerned.extend(holders.iter().cloned());
                }
            }
        };
        collect(&resource.group, &resource.kind, &resource.name);
        if !resource.namespace.is_empty() {
            collect("", "Namespace", &resource.namespace);
        }
        concerned
    }
}
