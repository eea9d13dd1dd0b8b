//! Connecting to NATS with credentials, and making them: `flotilla agent-creds` generates an
//! nkey user per agent (or one for the hub) and prints the `nats-server` authorization entry
//! whose permissions let an agent publish only its own cluster's subjects and read only its own
//! Works (see `docs/agents.md`).
//!
//! A credentials file (`--creds FILE`) is either a NATS `.creds` file (a user JWT and its nkey
//! seed, as `nsc` writes them) or an nkey seed alone (`SU…`, as `agent-creds` writes it).
//! `tls://` URLs connect over TLS; `--ca FILE` adds a root certificate.

use std::path::{Path, PathBuf};
use std::time::Duration;

use flotilla_core::wire::subject::cluster_token;
use flotilla_eventstore::nats_log::{NatsOptions, server_urls};

use crate::nats_names::{REJECTED_SUBJECT_PREFIX, cluster_key, works_bucket_name};

/// Bound on connecting and on every request.
pub const NATS_TIMEOUT: Duration = Duration::from_secs(10);

/// Why a connection could not be made.
#[derive(Debug, thiserror::Error)]
pub enum NatsAuthError {
    /// The credentials file could not be read.
    #[error("credentials {path}: {source}")]
    Creds {
        /// The file.
        path: String,
        /// Cause.
        source: std::io::Error,
    },
    /// The server refused or could not be reached.
    #[error("connect to NATS at {url}: {message}")]
    Connect {
        /// The URL.
        url: String,
        /// What failed.
        message: String,
    },
    /// A key could not be generated or written.
    #[error("{0}")]
    Keys(String),
}

/// How to reach a NATS server.
#[derive(Debug, Clone, Default)]
pub struct NatsConnection {
    /// Credentials file.
    pub creds: Option<PathBuf>,
    /// A root certificate (PEM) for `tls://` servers.
    pub ca: Option<PathBuf>,
    /// The inbox prefix (an agent's permissions allow only its own).
    pub inbox_prefix: Option<String>,
}

impl NatsConnection {
    /// Connects to `url` as `name`.
    ///
    /// # Errors
    /// When the credentials cannot be read or the server refuses.
    pub async fn connect(
        &self,
        url: &str,
        name: &str,
    ) -> Result<async_nats::Client, NatsAuthError> {
        let mut options = match &self.creds {
            Some(path) => credentials(path).await?,
            None => async_nats::ConnectOptions::new(),
        };
        options = options
            .name(name)
            .connection_timeout(NATS_TIMEOUT)
            .request_timeout(Some(NATS_TIMEOUT));
        if let Some(prefix) = &self.inbox_prefix {
            options = options.custom_inbox_prefix(prefix);
        }
        if let Some(ca) = &self.ca {
            options = options.add_root_certificates(ca.clone()).require_tls(true);
        }
        // A cluster's node URLs, comma-separated: the client fails over between them.
        options
            .connect(server_urls(url))
            .await
            .map_err(|err| NatsAuthError::Connect {
                url: url.to_owned(),
                message: err.to_string(),
            })
    }
}

/// Options carrying the credentials in `path`.
async fn credentials(path: &Path) -> Result<async_nats::ConnectOptions, NatsAuthError> {
    let failed = |source| NatsAuthError::Creds {
        path: path.display().to_string(),
        source,
    };
    let text = tokio::fs::read_to_string(path).await.map_err(failed)?;
    if text.contains("BEGIN NATS USER JWT") {
        return async_nats::ConnectOptions::new()
            .credentials_file(path)
            .await
            .map_err(failed);
    }
    let seed = text.trim().to_owned();
    if !seed.starts_with("SU") {
        return Err(failed(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            "neither a .creds file nor an nkey user seed (SU…)",
        )));
    }
    Ok(async_nats::ConnectOptions::with_nkey(seed))
}

/// An agent's inbox prefix: replies (acks, consumer deliveries) come only here.
#[must_use]
pub fn agent_inbox_prefix(cluster: &str) -> String {
    format!("_INBOX.{}", cluster_key(cluster))
}

/// The subjects an agent of `cluster` may publish to and subscribe to.
#[must_use]
pub fn agent_permissions(cluster: &str, options: &NatsOptions) -> (Vec<String>, Vec<String>) {
    let token = cluster_token(cluster);
    let key = cluster_key(cluster);
    let bucket = works_bucket_name(options);
    let publish = vec![
        format!("flotilla.in.heartbeat.{token}"),
        format!("flotilla.in.report.{token}"),
        format!("flotilla.in.leave.{token}"),
        // Only a consumer filtered on its own keys (the filter is part of the API subject).
        format!("$JS.API.CONSUMER.CREATE.KV_{bucket}.*.$KV.{bucket}.{key}.>"),
        format!("$JS.FC.KV_{bucket}.>"),
    ];
    let subscribe = vec![
        format!("{}.>", agent_inbox_prefix(cluster)),
        format!("{REJECTED_SUBJECT_PREFIX}.*.{token}"),
    ];
    (publish, subscribe)
}

/// A new nkey user: its seed and public key.
///
/// # Errors
/// When the key cannot be encoded.
pub fn new_user() -> Result<(String, String), NatsAuthError> {
    let pair = nkeys::KeyPair::new_user();
    let seed = pair
        .seed()
        .map_err(|err| NatsAuthError::Keys(format!("encode the seed: {err}")))?;
    Ok((seed, pair.public_key()))
}

/// The `nats-server` authorization entry of an agent (or, with no cluster, of a hub, which may
/// use every subject).
#[must_use]
pub fn user_entry(public_key: &str, cluster: Option<&str>, options: &NatsOptions) -> String {
    let Some(cluster) = cluster else {
        return format!("{{ nkey: \"{public_key}\" }}");
    };
    let (publish, subscribe) = agent_permissions(cluster, options);
    let list = |subjects: &[String]| {
        subjects
            .iter()
            .map(|s| format!("\"{s}\""))
            .collect::<Vec<_>>()
            .join(", ")
    };
    format!(
        "{{ nkey: \"{public_key}\", permissions: {{ publish: {{ allow: [{}] }}, subscribe: {{ allow: [{}] }} }} }}",
        list(&publish),
        list(&subscribe)
    )
}

/// Writes `seed` to `path`, readable by its owner only.
///
/// # Errors
/// When the file cannot be written.
pub fn write_seed(path: &Path, seed: &str) -> Result<(), NatsAuthError> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let failed = |source| NatsAuthError::Creds {
        path: path.display().to_string(),
        source,
    };
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)
        .map_err(failed)?;
    file.write_all(format!("{seed}\n").as_bytes())
        .map_err(failed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_agent_may_publish_only_its_own_subjects() {
        let (publish, subscribe) = agent_permissions("eu.m1", &NatsOptions::default());
        assert!(publish.contains(&"flotilla.in.heartbeat.eu%2Em1".to_owned()));
        assert!(publish.iter().all(|s| !s.contains("flotilla.in.apply")));
        assert!(publish.contains(
            &"$JS.API.CONSUMER.CREATE.KV_FLOTILLA_WORKS.*.$KV.FLOTILLA_WORKS.eu=2Em1.>".to_owned()
        ));
        assert_eq!(subscribe[0], "_INBOX.eu=2Em1.>");
    }

    #[test]
    fn generated_users_are_nkey_users() -> Result<(), NatsAuthError> {
        let (seed, public) = new_user()?;
        assert!(seed.starts_with("SU") && public.starts_with('U'));
        assert!(user_entry(&public, None, &NatsOptions::default()).contains(&public));
        Ok(())
    }
}
