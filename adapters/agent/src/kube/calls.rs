//! The calls the `kube` applier makes, built with kube-rs's request builder and sent through its
//! `Client` as raw JSON (`serde_json::Value`), so an object is compared and patched exactly as the
//! API server wrote it. Every write names the field manager; every failure is a [`CallError`]
//! carrying the API's `Status` message, which the caller reports per manifest.

use ::kube::Client;
use ::kube::api::{DeleteParams, GetParams, Patch, PatchParams, PostParams, Preconditions};
use ::kube::core::Request;
use serde_json::Value;

use super::resources::Resource;

/// The field manager of every write: KubeFleet's work applier's, so an object moved between a
/// KubeFleet member agent and flotilla's keeps one owner of its fields.
pub const FIELD_MANAGER: &str = "work-api-agent";

/// Why a call failed: the API's `Status` (code, reason, message), or a transport error
/// (`code: None`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallError {
    /// The HTTP status code; `None` when the API server was not reached.
    pub code: Option<u16>,
    /// `Status.reason` (`Conflict`, `Invalid`, `NotFound`, …), or empty.
    pub reason: String,
    /// `Status.message`, or the transport error.
    pub message: String,
    /// A server-side apply conflict with another field manager (a `FieldManagerConflict` cause).
    pub field_conflict: bool,
}

impl std::fmt::Display for CallError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl CallError {
    /// Whether trying again later may succeed: the server was unreachable, busy or failing, or
    /// an optimistic-lock conflict (the object changed under the call).
    #[must_use]
    pub fn is_transient(&self) -> bool {
        match self.code {
            None | Some(429 | 500 | 502 | 503 | 504) => true,
            Some(409) => !self.field_conflict,
            Some(_) => false,
        }
    }

    /// A 422: the API server refused the object as invalid.
    #[must_use]
    pub fn is_invalid(&self) -> bool {
        self.code == Some(422)
    }

    fn from_kube(error: ::kube::Error) -> Self {
        match error {
            ::kube::Error::Api(status) => Self {
                code: Some(status.code),
                field_conflict: status.details.as_ref().is_some_and(|details| {
                    details
                        .causes
                        .iter()
                        .any(|cause| cause.reason == "FieldManagerConflict")
                }),
                reason: status.reason.clone(),
                message: if status.message.is_empty() {
                    format!("{} {}", status.code, status.reason)
                } else {
                    status.message.clone()
                },
            },
            other => Self {
                code: None,
                reason: String::new(),
                message: other.to_string(),
                field_conflict: false,
            },
        }
    }

    fn build(error: impl std::fmt::Display) -> Self {
        Self {
            code: None,
            reason: String::new(),
            message: format!("building the request: {error}"),
            field_conflict: false,
        }
    }
}

/// How to write an object that exists: which patch, and whether server-side apply forces.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PatchKind {
    /// `application/strategic-merge-patch+json` (built-in kinds).
    Strategic,
    /// `application/merge-patch+json` (custom resources).
    Merge,
    /// `application/apply-patch+yaml` with `force` as given.
    Apply {
        /// `force=true`: take conflicting fields from other managers.
        force: bool,
    },
}

/// The API calls of one cluster.
#[derive(Clone)]
pub struct Calls {
    client: Client,
}

impl Calls {
    /// Calls through `client`.
    #[must_use]
    pub fn new(client: Client) -> Self {
        Self { client }
    }

    /// The client (discovery uses it).
    #[must_use]
    pub fn client(&self) -> &Client {
        &self.client
    }

    fn request(resource: &Resource, namespace: &str) -> Request {
        Request::new(resource.collection_path(namespace))
    }

    /// GETs an object; `None` when it does not exist.
    ///
    /// # Errors
    /// Any other failure.
    pub async fn get(
        &self,
        resource: &Resource,
        namespace: &str,
        name: &str,
    ) -> Result<Option<Value>, CallError> {
        let request = Self::request(resource, namespace)
            .get(name, &GetParams::default())
            .map_err(CallError::build)?;
        match self.client.request::<Value>(request).await {
            Ok(object) => Ok(Some(object)),
            Err(error) => {
                let error = CallError::from_kube(error);
                if error.code == Some(404) {
                    Ok(None)
                } else {
                    Err(error)
                }
            }
        }
    }

    /// Creates an object (POST to its collection).
    ///
    /// # Errors
    /// The API's refusal.
    pub async fn create(
        &self,
        resource: &Resource,
        namespace: &str,
        object: &Value,
    ) -> Result<Value, CallError> {
        let params = PostParams {
            dry_run: false,
            field_manager: Some(FIELD_MANAGER.to_owned()),
        };
        let body = serde_json::to_vec(object).map_err(CallError::build)?;
        let request = Self::request(resource, namespace)
            .create(&params, body)
            .map_err(CallError::build)?;
        self.client
            .request::<Value>(request)
            .await
            .map_err(CallError::from_kube)
    }

    /// PATCHes an object with `patch` of `kind`; `dry_run` asks the API server to compute the
    /// result without persisting it.
    ///
    /// # Errors
    /// The API's refusal (a server-side apply conflict has `field_conflict`).
    pub async fn patch(
        &self,
        resource: &Resource,
        namespace: &str,
        name: &str,
        kind: PatchKind,
        patch: &Value,
        dry_run: bool,
    ) -> Result<Value, CallError> {
        let params = PatchParams {
            dry_run,
            force: matches!(kind, PatchKind::Apply { force: true }),
            field_manager: Some(FIELD_MANAGER.to_owned()),
            field_validation: None,
        };
        let patch = match kind {
            PatchKind::Strategic => Patch::Strategic(patch),
            PatchKind::Merge => Patch::Merge(patch),
            PatchKind::Apply { .. } => Patch::Apply(patch),
        };
        let request = Self::request(resource, namespace)
            .patch(name, &params, &patch)
            .map_err(CallError::build)?;
        self.client
            .request::<Value>(request)
            .await
            .map_err(CallError::from_kube)
    }

    /// DELETEs an object, only if it is still the one with `uid` (so an object recreated by
    /// someone else meanwhile stays); dependents are removed in the background.
    ///
    /// # Errors
    /// The API's refusal (a 404 or a failed precondition is `Ok`: nothing of ours to delete).
    pub async fn delete(
        &self,
        resource: &Resource,
        namespace: &str,
        name: &str,
        uid: &str,
    ) -> Result<bool, CallError> {
        let mut params = DeleteParams::background();
        params.preconditions = Some(Preconditions {
            resource_version: None,
            uid: Some(uid.to_owned()),
        });
        let request = Self::request(resource, namespace)
            .delete(name, &params)
            .map_err(CallError::build)?;
        match self.client.request::<Value>(request).await {
            Ok(_) => Ok(true),
            Err(error) => {
                let error = CallError::from_kube(error);
                match error.code {
                    Some(404 | 409) => Ok(false),
                    _ => Err(error),
                }
            }
        }
    }

    /// Lists a collection across namespaces, one page of at most `limit` (with `continue`).
    ///
    /// # Errors
    /// The API's refusal.
    pub async fn list_page(
        &self,
        path: &str,
        limit: u32,
        continue_token: Option<&str>,
    ) -> Result<Value, CallError> {
        let mut params = ::kube::api::ListParams::default().limit(limit);
        if let Some(token) = continue_token {
            params = params.continue_token(token);
        }
        let request = Request::new(path).list(&params).map_err(CallError::build)?;
        self.client
            .request::<Value>(request)
            .await
            .map_err(CallError::from_kube)
    }
}
