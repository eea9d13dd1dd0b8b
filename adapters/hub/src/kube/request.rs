//! What a request names and carries, as every handler reads it: the [`Target`] a resource path
//! names (its served type, version, namespace, name, subresource), the query [`Params`] and the
//! [`Request`]'s parts.

use std::collections::HashMap;

use axum::body::Bytes;
use axum::http::HeaderMap;
use flotilla_core::model::ObjectKey;
use flotilla_projections::{KindInfo, ServedType};
use serde_json::Value;

use super::status::Subject;

/// What a resource path names.
#[derive(Debug, Clone)]
pub(crate) struct Target {
    /// The served type.
    pub served: ServedType,
    /// The version in the path.
    pub version: String,
    /// The namespace in the path, for namespaced kinds.
    pub namespace: Option<String>,
    /// The object's name, if the path names one.
    pub name: Option<String>,
    /// The subresource (`status`), if any.
    pub subresource: Option<String>,
}

impl Target {
    /// `apiVersion` of the path.
    pub fn api_version(&self) -> String {
        self.served.api_version(&self.version)
    }

    /// The projections' description of the kind.
    pub fn kind_info(&self) -> KindInfo {
        KindInfo {
            group: self.served.group.clone(),
            kind: self.served.kind.clone(),
            api_version_default: self.api_version(),
            namespaced: self.served.namespaced,
        }
    }

    /// The stored key of the object named `name` (in the path's namespace).
    pub fn key(&self, name: &str) -> ObjectKey {
        ObjectKey {
            group: self.served.group.as_str().into(),
            kind: self.served.kind.as_str().into(),
            namespace: if self.served.namespaced {
                self.namespace.as_deref().unwrap_or("default").into()
            } else {
                "".into()
            },
            name: name.into(),
        }
    }

    /// What errors about the object named `name` say.
    pub fn subject(&self, name: &str) -> Subject {
        let resource = if self.served.group.is_empty() {
            self.served.plural.clone()
        } else {
            format!("{}.{}", self.served.plural, self.served.group)
        };
        Subject {
            resource,
            plural: self.served.plural.clone(),
            group: self.served.group.clone(),
            kind: self.served.kind.clone(),
            name: name.to_owned(),
        }
    }
}

/// A request's query, parameters by name (the last value of a repeated one).
pub(crate) type Params = HashMap<String, String>;

/// `object` in the path's version: its `apiVersion`, and — in `v1alpha1`, whose schemas lack
/// fields of the stored `v1beta1` shape — without the fields that version does not declare.
/// `v1` and `v1beta1` declare the same fields for the kinds flotilla renders.
pub(crate) fn as_served(target: &Target, object: &mut Value) {
    object["apiVersion"] = Value::from(target.api_version());
    if target.version == "v1alpha1" {
        let (group, kind) = (&target.served.group, &target.served.kind);
        flotilla_adapters::schema::prune_to_version(group, kind, &target.version, object);
    }
}

/// The request's parts a handler reads.
pub(crate) struct Request {
    /// The query parameters.
    pub params: Params,
    /// The headers.
    pub headers: HeaderMap,
    /// The body.
    pub body: Bytes,
    /// Who makes it, as `crate::auth` authenticated it: what its writes record.
    pub principal: flotilla_core::Principal,
}
