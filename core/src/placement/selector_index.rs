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

crate::derived::derived_cache!(SelectorIndex);

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

#[cfg(test)]
mod tests {
    use chrono::DateTime;
    use uuid::Uuid;

    use crate::codec::{decode_checkpoint, encode_checkpoint};
    use crate::event::{Envelope, Input};
    use crate::state::State;

    fn apply(state: &mut State, id: u128, manifest: &str) -> crate::Decisions {
        let input = Input::Apply {
            manifest: manifest.to_owned(),
        };
        let event = Envelope::new(Uuid::from_u128(id), DateTime::UNIX_EPOCH, "test", input);
        crate::fold::step(state, &event)
    }

    #[test]
    fn a_restored_state_rebuilds_the_index_and_decides_as_the_fold_does() {
        let mut folded = State::default();
        apply(
            &mut folded,
            1,
            r#"{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"app"}}"#,
        );
        apply(
            &mut folded,
            2,
            r#"{"apiVersion":"placement.kubernetes-fleet.io/v1","kind":"ClusterResourcePlacement","metadata":{"name":"p"},"spec":{"resourceSelectors":[{"group":"","kind":"Namespace","version":"v1","name":"app"}]}}"#,
        );
        let bytes = encode_checkpoint(&folded).unwrap_or_default();
        let mut restored: State = decode_checkpoint(&bytes).unwrap_or_default();
        assert!(!restored.selector_index.built, "the index is never encoded");
        let config_map = r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","namespace":"app"},"data":{"k":"v"}}"#;
        let from_fold = apply(&mut folded, 3, config_map);
        let from_restore = apply(&mut restored, 3, config_map);
        assert!(
            from_fold
                .iter()
                .any(|d| matches!(d, crate::Decision::ResourceSnapshotTaken { .. })),
            "the ConfigMap in the selected namespace is selected"
        );
        assert_eq!(from_fold, from_restore);
        assert_eq!(folded.hash().ok(), restored.hash().ok());
    }
}
