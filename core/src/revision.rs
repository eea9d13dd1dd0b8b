//! An object's revisions: what an apply stores as its next metadata (resource version,
//! generation, uid, creation time), and the `ObjectStored` or `ObjectUnchanged` it decides —
//! one rule for every kind, so `kubectl apply` of an unchanged object changes nothing whatever
//! its kind.

use chrono::{DateTime, Utc};
use uuid::Uuid;

use crate::change::{Change, Changes};
use crate::decision::Decision;
use crate::model::{ObjectKey, ObjectMeta};

/// Hands out the next resource version from the state's counter.
pub(crate) fn next_version(resource_version: &mut u64) -> u64 {
    *resource_version += 1;
    *resource_version
}

/// What the event that applies an object contributes to its metadata.
pub(crate) struct Origin {
    pub(crate) event_id: Uuid,
    pub(crate) now: DateTime<Utc>,
}

/// A typed object as stored before an apply: its metadata and whether the applied spec equals
/// the stored one.
pub(crate) struct Previous {
    pub(crate) meta: ObjectMeta,
    pub(crate) same_spec: bool,
}

impl Previous {
    /// Whether an apply with these labels and annotations changes nothing: spec, labels and
    /// annotations all as stored.
    pub(crate) fn unchanged_by(&self, user: &crate::model::UserMeta) -> bool {
        self.same_spec
            && self.meta.labels == user.labels
            && self.meta.annotations == user.annotations
    }
}

/// What an apply brings besides the spec: the object's apiVersion, its labels and annotations,
/// and the event it came with.
pub(crate) struct Applied<'a> {
    pub(crate) api_version: &'a str,
    pub(crate) user: crate::model::UserMeta,
    pub(crate) origin: &'a Origin,
}

impl<'a> Applied<'a> {
    /// An apply of `api_version` with `user` metadata, from the event `origin`.
    pub(crate) fn new(
        api_version: &'a str,
        user: crate::model::UserMeta,
        origin: &'a Origin,
    ) -> Self {
        Self {
            api_version,
            user,
            origin,
        }
    }
}

/// A typed object as stored, as an apply compares it: its metadata and its spec.
pub(crate) trait Stored {
    /// The spec an apply gives it.
    type Spec: PartialEq;
    /// Its metadata.
    fn meta(&self) -> &ObjectMeta;
    /// Its spec.
    fn spec(&self) -> &Self::Spec;
}

/// Makes each named type, with `meta` and `spec` fields, a [`Stored`] object of that spec.
macro_rules! stored_objects {
    ($($object:ty => $spec:ty),+ $(,)?) => {
        $(
            impl crate::revision::Stored for $object {
                type Spec = $spec;

                fn meta(&self) -> &crate::model::ObjectMeta {
                    &self.meta
                }

                fn spec(&self) -> &$spec {
                    &self.spec
                }
            }
        )+
    };
}

pub(crate) use stored_objects;

/// What stands before an apply that gives `spec` to the object stored as `existing`.
pub(crate) fn previous_of<T: Stored>(existing: Option<&T>, spec: &T::Spec) -> Option<Previous> {
    existing.map(|stored| Previous {
        meta: stored.meta().clone(),
        same_spec: stored.spec() == spec,
    })
}

/// The new revision of a typed object an apply stores.
pub(crate) struct Revision {
    /// Its metadata (resource version, generation bumped when the spec changed).
    pub(crate) meta: ObjectMeta,
    /// `ObjectStored`.
    pub(crate) decision: Decision,
    /// Whether the spec changed (or the object is new).
    pub(crate) spec_changed: bool,
}

/// Decides what an apply of a typed object stores: `Err(ObjectUnchanged)` (boxed: it is rare) when spec, labels and
/// annotations are all as stored, else the next revision's metadata and its decision.
pub(crate) fn revise(
    resource_version: &mut u64,
    key: &ObjectKey,
    previous: Option<Previous>,
    applied: Applied<'_>,
    changes: &mut Changes,
) -> Result<Revision, Box<Decision>> {
    let Applied {
        api_version,
        user,
        origin,
    } = applied;
    if previous.as_ref().is_some_and(|p| p.unchanged_by(&user)) {
        return Err(Box::new(Decision::ObjectUnchanged {
            object: key.clone(),
        }));
    }
    let spec_changed = previous.as_ref().is_none_or(|p| !p.same_spec);
    let old_meta = previous.map(|p| p.meta);
    let meta = next_meta(
        resource_version,
        old_meta.as_ref(),
        api_version,
        user,
        spec_changed,
        origin,
    );
    let decision = stored(key, &meta, old_meta.is_none(), changes);
    Ok(Revision {
        meta,
        decision,
        spec_changed,
    })
}

/// The `ObjectStored` decision for a key just stored, recording the change.
pub(crate) fn stored(
    key: &ObjectKey,
    meta: &ObjectMeta,
    created: bool,
    changes: &mut Changes,
) -> Decision {
    changes.push(Change::ObjectStored(key.clone()));
    Decision::ObjectStored {
        object: key.clone(),
        resource_version: meta.resource_version,
        generation: meta.generation,
        created,
    }
}

/// The metadata of an object's next revision: the next resource version, the generation
/// bumped when the spec changed, the uid and creation time kept from the first revision.
pub(crate) fn next_meta(
    resource_version: &mut u64,
    old: Option<&ObjectMeta>,
    api_version: &str,
    user: crate::model::UserMeta,
    spec_changed: bool,
    origin: &Origin,
) -> ObjectMeta {
    let resource_version = next_version(resource_version);
    let generation = old.map_or(1, |m| m.generation + u64::from(spec_changed));
    ObjectMeta {
        api_version: crate::model::uid::api_version(api_version),
        labels: user.labels.into(),
        annotations: user.annotations.into(),
        uid: old.map_or_else(|| origin.event_id.into(), |m| m.uid.clone()),
        resource_version,
        generation,
        creation_timestamp: old.map_or(origin.now, |m| m.creation_timestamp),
    }
}
