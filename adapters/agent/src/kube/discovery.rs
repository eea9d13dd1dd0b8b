//! Resolving a manifest's kind to its resource: the built-in table first
//! (`Resource::built_in`), then discovery — once per group, version and kind
//! (`/apis/GROUP/VERSION`), remembered. Discovery is a call, so this sits above both the calls
//! and the resource table.

use std::collections::BTreeMap;

use ::kube::api::GroupVersionKind;
use ::kube::discovery::Scope;

use super::calls::{CallError, Calls};
use super::resources::Resource;
use crate::work::ManifestId;

/// Kinds remembered from discovery; past this the cache is cleared (a bound on what input can
/// grow, not a size any real cluster reaches).
pub const DISCOVERED_KINDS_MAX: usize = 1_000;

/// Resolves manifests to resources: the table, then discovery (remembered).
#[derive(Debug, Default)]
pub struct Resolver {
    discovered: BTreeMap<(String, String, String), Resource>,
}

impl Resolver {
    /// The resource of `id`'s kind.
    ///
    /// # Errors
    /// When discovery fails or the API does not serve the kind.
    pub async fn resolve(&mut self, calls: &Calls, id: &ManifestId) -> Result<Resource, CallError> {
        if let Some(resource) = Resource::built_in(id) {
            return Ok(resource);
        }
        let key = (id.group.clone(), id.version.clone(), id.kind.clone());
        if let Some(resource) = self.discovered.get(&key) {
            return Ok(resource.clone());
        }
        let gvk = GroupVersionKind::gvk(&id.group, &id.version, &id.kind);
        let (api_resource, capabilities) = ::kube::discovery::pinned_kind(calls.client(), &gvk)
            .await
            .map_err(|error| CallError {
                // A kind the API does not serve answers like a missing object: 404.
                code: match &error {
                    ::kube::Error::Api(status) => Some(status.code),
                    ::kube::Error::Discovery(_) => Some(404),
                    _ => None,
                },
                reason: String::new(),
                message: format!(
                    "discovering {}/{} {}: {error}",
                    id.group, id.version, id.kind
                ),
                field_conflict: false,
            })?;
        let resource = Resource {
            group: api_resource.group,
            version: api_resource.version,
            kind: api_resource.kind,
            plural: api_resource.plural,
            namespaced: capabilities.scope == Scope::Namespaced,
        };
        if self.discovered.len() >= DISCOVERED_KINDS_MAX {
            self.discovered.clear();
        }
        self.discovered.insert(key, resource.clone());
        Ok(resource)
    }
}
