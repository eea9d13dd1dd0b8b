//! A hub resource as stored: every object that is not one of flotilla's own kinds.

use serde::{Deserialize, Serialize};

use super::ObjectMeta;

/// A stored hub resource.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Resource {
    /// Metadata.
    pub meta: ObjectMeta,
    /// Canonical JSON of everything but apiVersion/kind/metadata.
    pub content: String,
}
