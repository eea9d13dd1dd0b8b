//! The agent's side of the hub's HTTP API: its MemberCluster and Works through the Kubernetes
//! API, and events posted to `/v1/events?wait=true`. Every call has a timeout; posting retries
//! a bounded number of times with the same event ids, so a retry is never folded twice.

use std::time::Duration;

use serde_json::Value;

/// Timeout of one ordinary request.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);
/// Timeout of connecting to the hub.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// Attempts at posting one batch of events.
pub const POST_ATTEMPTS_MAX: u32 = 5;
/// The pause between two attempts at posting.
pub const POST_RETRY_PAUSE: Duration = Duration::from_millis(300);
/// `timeoutSeconds` of one watch; the watcher lists again after each, which also catches a
/// deletion the hub's watch does not replay.
pub const WATCH_TIMEOUT_SECS: u64 = 60;

/// Why a call to the hub failed.
#[derive(Debug, thiserror::Error)]
pub enum HubError {
    /// The hub could not be reached, or the connection broke.
    #[error("hub {url}: {}", causes(.source))]
    Unreachable {
        /// The URL called.
        url: String,
        /// Cause.
        source: reqwest::Error,
    },
    /// The hub answered with an error status.
    #[error("hub {url}: {status}: {body}")]
    Status {
        /// The URL called.
        url: String,
        /// The HTTP status.
        status: u16,
        /// The answer's body.
        body: String,
    },
    /// The hub's HTTPS certificate is not trusted: retrying cannot help.
    #[error("hub {url}: {detail}")]
    Untrusted {
        /// The URL called.
        url: String,
        /// The TLS error, with the hint to pass `--ca`.
        detail: String,
    },
    /// The CA file of `--ca` cannot be used.
    #[error("--ca: {0}")]
    Ca(#[from] flotilla_adapters::tls::TlsError),
    /// The answer was not what was expected.
    #[error("hub {url}: unexpected answer: {message}")]
    Protocol {
        /// The URL called.
        url: String,
        /// What was wrong.
        message: String,
    },
}

/// The MemberCluster as the agent needs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Membership {
    /// The member exists; it beats at this period.
    Member {
        /// `spec.heartbeatPeriodSeconds` (60 when absent).
        heartbeat_period_secs: u64,
        /// `metadata.deletionTimestamp` is set: the member is leaving.
        leaving: bool,
    },
    /// There is no such MemberCluster.
    Gone,
}

/// The default `heartbeatPeriodSeconds` (KubeFleet's).
pub const HEARTBEAT_PERIOD_DEFAULT_SECS: u64 = 60;

/// A client of one hub for one cluster.
#[derive(Debug, Clone)]
pub struct HubClient {
    base: String,
    cluster: String,
    http: reqwest::Client,
    /// The agent's bearer token, when the hub requires one.
    token: Option<String>,
}

impl HubClient {
    /// A client of the hub at `base` (e.g. `http://127.0.0.1:7420`) for `cluster`.
    ///
    /// # Errors
    /// When the HTTP client cannot be built.
    pub fn new(base: &str, cluster: &str) -> Result<Self, HubError> {
        flotilla_adapters::tls::install_crypto_provider();
        let http = reqwest::Client::builder()
            .connect_timeout(CONNECT_TIMEOUT)
            .build()
            .map_err(|source| HubError::Unreachable {
                url: base.to_owned(),
                source,
            })?;
        Ok(Self {
            base: base.trim_end_matches('/').to_owned(),
            cluster: cluster.to_owned(),
            http,
            token: None,
        })
    }

    /// Trusts exactly the certificates of the CA file `ca` for an `https://` hub.
    ///
    /// # Errors
    /// When the file holds no usable certificate, or the HTTP client cannot be built.
    pub fn with_ca(mut self, ca: &std::path::Path) -> Result<Self, HubError> {
        let config = flotilla_adapters::tls::client_config(ca)?;
        self.http = reqwest::Client::builder()
            .connect_timeout(CONNECT_TIMEOUT)
            .use_preconfigured_tls(config)
            .build()
            .map_err(|source| HubError::Unreachable {
                url: self.base.clone(),
                source,
            })?;
        Ok(self)
    }

    /// Fails when the hub answers over HTTPS with a certificate this client does not trust;
    /// any other failure (a hub not up yet) is left to the agent's retries.
    ///
    /// # Errors
    /// [`HubError::Untrusted`].
    pub async fn check_trust(&self) -> Result<(), HubError> {
        if !self.base.starts_with("https://") {
            return Ok(());
        }
        let url = format!("{}/v1/status", self.base);
        match self.request(reqwest::Method::GET, &url).send().await {
            Err(error) if is_certificate_error(&error) => Err(HubError::Untrusted {
                url,
                detail: causes(&error),
            }),
            _ => Ok(()),
        }
    }

    /// Sends `token` as the bearer token of every request (an agent token of
    /// `docs/security.md`).
    #[must_use]
    pub fn with_token(mut self, token: Option<String>) -> Self {
        self.token = token;
        self
    }

    /// A request with the agent's token, if it has one.
    fn request(&self, method: reqwest::Method, url: &str) -> reqwest::RequestBuilder {
        let request = self.http.request(method, url);
        match &self.token {
            Some(token) => request.bearer_auth(token),
            None => request,
        }
    }

    fn works_path(&self) -> String {
        format!(
            "{}/apis/placement.kubernetes-fleet.io/v1beta1/namespaces/fleet-member-{}/works",
            self.base, self.cluster
        )
    }

    async fn get_json(&self, url: &str) -> Result<Option<Value>, HubError> {
        let unreachable = |source| HubError::Unreachable {
            url: url.to_owned(),
            source,
        };
        let response = self
            .request(reqwest::Method::GET, url)
            .timeout(REQUEST_TIMEOUT)
            .send()
            .await
            .map_err(unreachable)?;
        if response.status() == reqwest::StatusCode::NOT_FOUND {
            return Ok(None);
        }
        let response = checked(url, response).await?;
        response.json().await.map(Some).map_err(unreachable)
    }

    /// Reads the cluster's MemberCluster.
    ///
    /// # Errors
    /// When the hub cannot be reached or answers with an error other than 404.
    pub async fn membership(&self) -> Result<Membership, HubError> {
        let url = format!(
            "{}/apis/cluster.kubernetes-fleet.io/v1beta1/memberclusters/{}",
            self.base, self.cluster
        );
        let Some(member) = self.get_json(&url).await? else {
            return Ok(Membership::Gone);
        };
        Ok(Membership::Member {
            heartbeat_period_secs: member["spec"]["heartbeatPeriodSeconds"]
                .as_u64()
                .filter(|period| *period > 0)
                .unwrap_or(HEARTBEAT_PERIOD_DEFAULT_SECS),
            leaving: !member["metadata"]["deletionTimestamp"].is_null(),
        })
    }

    /// Lists the cluster's Works: the objects and the list's `resourceVersion`.
    ///
    /// # Errors
    /// When the hub cannot be reached or the answer is not a list.
    pub async fn list_works(&self) -> Result<(Vec<Value>, String), HubError> {
        let url = self.works_path();
        let list = self.get_json(&url).await?.unwrap_or(Value::Null);
        let Some(items) = list["items"].as_array() else {
            return Err(HubError::Protocol {
                url,
                message: "a work list without items".to_owned(),
            });
        };
        let version = list["metadata"]["resourceVersion"]
            .as_str()
            .unwrap_or("0")
            .to_owned();
        Ok((items.clone(), version))
    }

    /// Starts a watch of the cluster's Works from `resource_version`; the caller reads the
    /// response's lines.
    ///
    /// # Errors
    /// When the hub cannot be reached or refuses the watch.
    pub async fn watch_works(&self, resource_version: &str) -> Result<reqwest::Response, HubError> {
        let url = format!(
            "{}?watch=true&resourceVersion={resource_version}&timeoutSeconds={WATCH_TIMEOUT_SECS}",
            self.works_path()
        );
        let response = self
            .request(reqwest::Method::GET, &url)
            .timeout(Duration::from_secs(WATCH_TIMEOUT_SECS + 30))
            .send()
            .await
            .map_err(|source| HubError::Unreachable {
                url: url.clone(),
                source,
            })?;
        checked(&url, response).await
    }

    /// Posts events (retrying with the same ids) and returns the hub's per-event answers.
    ///
    /// # Errors
    /// When every attempt failed, or the hub refused the events.
    pub async fn post_events(&self, events: &[Value]) -> Result<Vec<Value>, HubError> {
        let mut attempt = 1;
        loop {
            match self.post_once(events).await {
                Ok(answers) => return Ok(answers),
                // The last error is the caller's to print, with its label.
                Err(HubError::Unreachable { .. }) if attempt < POST_ATTEMPTS_MAX => {}
                Err(error) => return Err(error),
            }
            attempt += 1;
            tokio::time::sleep(POST_RETRY_PAUSE).await;
        }
    }

    async fn post_once(&self, events: &[Value]) -> Result<Vec<Value>, HubError> {
        let url = format!("{}/v1/events?wait=true", self.base);
        let unreachable = |source| HubError::Unreachable {
            url: url.clone(),
            source,
        };
        let response = self
            .request(reqwest::Method::POST, &url)
            .timeout(REQUEST_TIMEOUT)
            .json(&Value::Array(events.to_vec()))
            .send()
            .await
            .map_err(unreachable)?;
        let response = checked(&url, response).await?;
        let answers: Value = response.json().await.map_err(unreachable)?;
        match answers {
            Value::Array(answers) => Ok(answers),
            other => Err(HubError::Protocol {
                url,
                message: format!("not a list of results: {other}"),
            }),
        }
    }
}

/// The response when its status is a success, else the hub's error.
async fn checked(url: &str, response: reqwest::Response) -> Result<reqwest::Response, HubError> {
    if response.status().is_success() {
        return Ok(response);
    }
    let status = response.status().as_u16();
    let body = response.text().await.unwrap_or_default();
    Err(HubError::Status {
        url: url.to_owned(),
        status,
        body,
    })
}

/// The reasons the hub rejected any of these answers (a `Rejected` decision), as text.
#[must_use]
pub fn rejections(answers: &[Value]) -> Vec<String> {
    answers
        .iter()
        .map(|answer| answer["decisions"].to_string())
        .filter(|decisions| decisions.contains("Rejected"))
        .collect()
}

/// A reqwest error with its causes (reqwest's own message hides them), and a hint when the
/// hub's certificate is not trusted.
fn causes(error: &reqwest::Error) -> String {
    let mut text = error.to_string();
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    if is_certificate_error(error) {
        text.push_str(" (to trust the hub's certificate, pass its CA with --ca FILE)");
    }
    text
}

fn is_certificate_error(error: &reqwest::Error) -> bool {
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        if cause.to_string().contains("certificate") {
            return true;
        }
        source = cause.source();
    }
    false
}
