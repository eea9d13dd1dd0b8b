//! The Kubernetes API's shared state, which every handler receives: the hub, the write lock and
//! the watch renders.

use std::sync::Arc;

use flotilla_eventstore::EventLog;

use super::server_side_apply::FieldOwners;
use super::watch_render;
use crate::runtime::Hub;

/// Source of the events this API appends.
pub const KUBE_SOURCE: &str = "kube-api";

/// The API's shared state: the hub, and the lock that serializes writes (it also guards the
/// field owners server-side apply records).
pub struct Api<L: EventLog> {
    pub(super) hub: Hub<L>,
    pub(super) writes: Arc<tokio::sync::Mutex<FieldOwners>>,
    /// Kinds rendered once per fold for all their watches.
    pub(super) renders: Arc<watch_render::RenderCache>,
}

impl<L: EventLog> Clone for Api<L> {
    fn clone(&self) -> Self {
        Self {
            hub: self.hub.clone(),
            writes: Arc::clone(&self.writes),
            renders: Arc::clone(&self.renders),
        }
    }
}
