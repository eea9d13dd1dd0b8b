//! The CLI's client of the hub's HTTP API.

use serde_json::Value;

use crate::json_event::{AppendResult, JsonEnvelope};

/// Default address of `flotilla serve`'s API.
pub const DEFAULT_SERVER: &str = "http://127.0.0.1:7420";

/// Why a call to the hub failed.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// The hub could not be reached.
    #[error("cannot reach the flotilla hub at {server}: {source} (is `flotilla serve` running?)")]
    Unreachable {
        /// Server address.
        server: String,
        /// Cause.
        source: reqwest::Error,
    },
    /// The hub wants a valid token (401).
    #[error(
        "the hub at {server} refused the request: Unauthorized (no valid token; give one with \
         --token FILE or FLOTILLA_TOKEN_FILE)"
    )]
    Unauthorized {
        /// Server address.
        server: String,
    },
    /// The hub's Kubernetes API answered with a `Status` of failure; `reason` is its machine
    /// word (`NotFound`, `Conflict`, `AlreadyExists`, …), which callers branch on.
    #[error("Error from server ({reason}): {message}")]
    Status {
        /// `Status.reason`.
        reason: String,
        /// `Status.message`.
        message: String,
    },
    /// The hub answered with an error.
    #[error("{0}")]
    Server(String),
    /// The answer was not what was expected.
    #[error("unexpected answer from the hub: {0}")]
    Protocol(String),
}

/// A connection to one hub.
#[derive(Clone)]
pub struct Client {
    server: String,
    http: reqwest::Client,
    token: Option<String>,
}

impl std::fmt::Debug for Client {
    // By hand, so that the token is never printed.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("server", &self.server)
            .field("token", &self.token.as_ref().map(|_| "<redacted>"))
            .finish_non_exhaustive()
    }
}

impl ClientError {
    /// Whether the hub answered with a Kubernetes `Status` whose reason is `reason`.
    #[must_use]
    pub fn has_reason(&self, reason: &str) -> bool {
        matches!(self, ClientError::Status { reason: r, .. } if r == reason)
    }
}

impl Client {
    /// A client for `server` (e.g. `http://127.0.0.1:7420`).
    #[must_use]
    pub fn new(server: &str) -> Self {
        Self {
            server: server.trim_end_matches('/').to_owned(),
            http: {
                crate::tls::install_crypto_provider();
                reqwest::Client::new()
            },
            token: None,
        }
    }

    /// The same client, trusting the roots of `config` for an `https://` server.
    ///
    /// # Errors
    /// When the HTTP client cannot be built.
    pub fn with_tls_roots(mut self, config: rustls::ClientConfig) -> Result<Self, ClientError> {
        self.http = reqwest::Client::builder()
            .use_preconfigured_tls(config)
            .build()
            .map_err(|e| ClientError::Protocol(format!("building the HTTPS client: {e}")))?;
        Ok(self)
    }

    /// The same client, sending `Authorization: Bearer <token>` with every request.
    #[must_use]
    pub fn with_token(mut self, token: String) -> Self {
        self.token = Some(token);
        self
    }

    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.server)
    }

    async fn send(
        &self,
        request: reqwest::RequestBuilder,
    ) -> Result<reqwest::Response, ClientError> {
        let request = match &self.token {
            Some(token) => request.bearer_auth(token),
            None => request,
        };
        let response = request
            .send()
            .await
            .map_err(|source| ClientError::Unreachable {
                server: self.server.clone(),
                source,
            })?;
        if response.status().is_success() {
            return Ok(response);
        }
        let status = response.status();
        if status == reqwest::StatusCode::UNAUTHORIZED {
            return Err(ClientError::Unauthorized {
                server: self.server.clone(),
            });
        }
        let body = response.text().await.unwrap_or_default();
        let parsed = serde_json::from_str::<Value>(&body).ok();
        // A Kubernetes `Status` is printed as kubectl prints it: `Error from server (Reason)`.
        if let Some(status) = parsed.as_ref().filter(|v| v["kind"] == "Status") {
            return Err(ClientError::Status {
                reason: status["reason"].as_str().unwrap_or("Unknown").to_owned(),
                message: status["message"].as_str().unwrap_or_default().to_owned(),
            });
        }
        let message = parsed
            .and_then(|v| v.get("error").and_then(Value::as_str).map(str::to_owned))
            .unwrap_or(body);
        Err(ClientError::Server(format!(
            "Error from server ({status}): {message}"
        )))
    }

    /// Sends a request to the hub's Kubernetes API and returns the JSON it answers.
    ///
    /// # Errors
    /// When the hub is unreachable or answers with a `Status` of failure.
    pub async fn kube(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<(&str, String)>,
    ) -> Result<Value, ClientError> {
        let mut request = self.http.request(method, self.url(path));
        if let Some((content_type, body)) = body {
            request = request
                .header(reqwest::header::CONTENT_TYPE, content_type)
                .body(body);
        }
        let response = self.send(request).await?;
        response
            .json()
            .await
            .map_err(|e| ClientError::Protocol(e.to_string()))
    }

    /// Appends events and waits for their decisions.
    ///
    /// # Errors
    /// When the hub is unreachable or refuses the events.
    pub async fn submit(&self, events: &[JsonEnvelope]) -> Result<Vec<AppendResult>, ClientError> {
        let request = self
            .http
            .post(self.url("/v1/events?wait=true"))
            .json(events);
        let response = self.send(request).await?;
        response
            .json()
            .await
            .map_err(|e| ClientError::Protocol(e.to_string()))
    }

    /// GETs a JSON document.
    ///
    /// # Errors
    /// When the hub is unreachable or answers with an error.
    pub async fn get_json(
        &self,
        path: &str,
        query: &[(&str, String)],
    ) -> Result<Value, ClientError> {
        let response = self
            .send(self.http.get(self.url(path)).query(query))
            .await?;
        response
            .json()
            .await
            .map_err(|e| ClientError::Protocol(e.to_string()))
    }

    /// GETs a text document.
    ///
    /// # Errors
    /// When the hub is unreachable or answers with an error.
    pub async fn get_text(
        &self,
        path: &str,
        query: &[(&str, String)],
    ) -> Result<String, ClientError> {
        let response = self
            .send(self.http.get(self.url(path)).query(query))
            .await?;
        response
            .text()
            .await
            .map_err(|e| ClientError::Protocol(e.to_string()))
    }

    /// GETs a document of any size into `file`, a chunk at a time.
    ///
    /// # Errors
    /// When the hub is unreachable, answers with an error or cuts the body short, or the file
    /// cannot be written.
    pub async fn get_to_file(
        &self,
        path: &str,
        file: &std::path::Path,
    ) -> Result<u64, ClientError> {
        use std::io::Write;
        let mut response = self.send(self.http.get(self.url(path))).await?;
        let written = std::fs::File::create(file)
            .map_err(|e| ClientError::Protocol(format!("creating {}: {e}", file.display())))?;
        let mut out = std::io::BufWriter::new(written);
        let mut bytes = 0_u64;
        while let Some(chunk) = response
            .chunk()
            .await
            .map_err(|e| ClientError::Protocol(format!("reading {path}: {e}")))?
        {
            out.write_all(&chunk)
                .map_err(|e| ClientError::Protocol(format!("writing {}: {e}", file.display())))?;
            bytes += chunk.len() as u64;
        }
        out.flush()
            .map_err(|e| ClientError::Protocol(format!("writing {}: {e}", file.display())))?;
        Ok(bytes)
    }
}
