//! One rendering of a kind's objects per fold, shared by every watch of that kind.
//!
//! A watch compares the objects it last sent with the objects of the newest state. Rendering a
//! kind's objects is the costly part and happens under the hub's read lock, which the writer
//! waits for; done by every watch, a hundred watches of one kind rendered the same objects a
//! hundred times per fold. Here the first watch to look at a fold renders the kind once; the
//! others take that rendering. An object whose rendering did not change keeps the same `Arc`
//! from one fold to the next, so a watch tells "unchanged" by comparing pointers.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use flotilla_core::State;
use serde_json::Value;

use super::request::Target;

/// Objects by `namespace/name`, as rendered for watches.
pub(crate) type Rendered = BTreeMap<String, Arc<Object>>;

/// One rendered object, and its JSON text once a watch needed it: a hundred watches sending
/// the same change serialize it once.
#[derive(Debug)]
pub(crate) struct Object {
    /// The object.
    pub value: Value,
    json: OnceLock<String>,
}

impl Object {
    fn new(value: Value) -> Self {
        Self {
            value,
            json: OnceLock::new(),
        }
    }

    /// The object as JSON text.
    pub fn json(&self) -> &str {
        self.json.get_or_init(|| self.value.to_string())
    }
}

/// Kinds (and namespaces) rendered at most this many at once; beyond it the cache starts over.
const KINDS_MAX: usize = 256;

/// The newest rendering of each watched kind (and namespace), with the fold it was made at.
#[derive(Debug, Default)]
pub(crate) struct RenderCache {
    by_target: Mutex<HashMap<String, (u64, Arc<Rendered>)>>,
}

/// The key of an object in a rendering and in what a watch knows.
pub(crate) fn id(object: &Value) -> String {
    format!(
        "{}/{}",
        object["metadata"]["namespace"].as_str().unwrap_or(""),
        object["metadata"]["name"].as_str().unwrap_or("")
    )
}

/// The target's objects in `state`, rendered afresh: `previous` lends its `Arc` to every object
/// that rendered the same, so pointer equality means "unchanged".
pub(crate) fn render(state: &State, target: &Target, previous: Option<&Rendered>) -> Rendered {
    flotilla_projections::list(state, &target.kind_info(), target.namespace.as_deref())
        .into_iter()
        .map(|mut object| {
            super::request::as_served(target, &mut object);
            let key = id(&object);
            let shared = match previous.and_then(|before| before.get(&key)) {
                Some(before) if before.value == object => before.clone(),
                _ => Arc::new(Object::new(object)),
            };
            (key, shared)
        })
        .collect()
}

impl RenderCache {
    /// The target's objects in `state`, folded through `seq`: rendered once per fold whatever
    /// the number of watches asking.
    pub(crate) fn objects(&self, state: &State, seq: u64, target: &Target) -> Arc<Rendered> {
        let key = format!(
            "{}|{}|{}",
            target.api_version(),
            target.served.kind,
            target.namespace.as_deref().unwrap_or("")
        );
        // A poisoned cache only ever holds complete renderings: still usable.
        let mut cache = self
            .by_target
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let previous = match cache.get(&key) {
            Some((at, rendered)) if *at == seq => return rendered.clone(),
            Some((_, rendered)) => Some(rendered.clone()),
            None => None,
        };
        let rendered = Arc::new(render(state, target, previous.as_deref()));
        if cache.len() >= KINDS_MAX && !cache.contains_key(&key) {
            cache.clear();
        }
        cache.insert(key, (seq, rendered.clone()));
        rendered
    }
}
