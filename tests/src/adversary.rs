//! What the adversary tests share: a `nats-server` that enforces per-agent permissions made by
//! `flotilla agent-creds`, NATS clients holding a member's or a hub's real credentials, and
//! waits on a hub's status.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use flotilla_adapters::nats_auth::{NatsConnection, agent_inbox_prefix};
use flotilla_eventstore::nats_test_server::NatsTestServer;
use serde_json::Value;

use crate::support::{HubProcess, stdout};

/// A NATS server whose users are one hub and the given member clusters, each with the
/// permissions `flotilla agent-creds` prints; their seeds live in `dir`.
pub struct SecuredNats {
    /// The server.
    pub server: NatsTestServer,
    dir: PathBuf,
}

impl SecuredNats {
    /// Makes the credentials and starts the server.
    ///
    /// # Errors
    /// When `agent-creds` or the server fails.
    pub fn start(binary: &Path, dir: &Path, members: &[&str]) -> Result<Self, String> {
        let mut entries = vec![make_creds(binary, None, &seed_in(dir, "hub"))?];
        for member in members {
            entries.push(make_creds(binary, Some(member), &seed_in(dir, member))?);
        }
        let auth = format!("authorization {{ users = [\n{}\n] }}", entries.join("\n"));
        let server = NatsTestServer::start_with_config(auth).map_err(|e| e.to_string())?;
        Ok(Self {
            server,
            dir: dir.to_owned(),
        })
    }

    /// The server's URL.
    #[must_use]
    pub fn url(&self) -> String {
        self.server.url()
    }

    /// The seed file of `who` (`hub` or a member).
    #[must_use]
    pub fn seed(&self, who: &str) -> PathBuf {
        seed_in(&self.dir, who)
    }

    /// The arguments that start a hub on this server with the hub's credentials.
    #[must_use]
    pub fn hub_args(&self) -> Vec<String> {
        vec![
            "--nats".to_owned(),
            self.url(),
            "--nats-creds".to_owned(),
            self.seed("hub").display().to_string(),
            "--lease-seconds".to_owned(),
            "2".to_owned(),
        ]
    }

    /// A client holding `member`'s credentials, as its agent connects.
    ///
    /// # Errors
    /// When it cannot connect.
    pub async fn member_client(&self, member: &str) -> Result<async_nats::Client, String> {
        let connection = NatsConnection {
            creds: Some(self.seed(member)),
            ca: None,
            inbox_prefix: Some(agent_inbox_prefix(member)),
        };
        connection
            .connect(&self.url(), "adversary")
            .await
            .map_err(|e| e.to_string())
    }

    /// A client holding the hub's credentials.
    ///
    /// # Errors
    /// When it cannot connect.
    pub async fn hub_client(&self) -> Result<async_nats::Client, String> {
        let connection = NatsConnection {
            creds: Some(self.seed("hub")),
            ..NatsConnection::default()
        };
        connection
            .connect(&self.url(), "adversary-hub")
            .await
            .map_err(|e| e.to_string())
    }
}

fn seed_in(dir: &Path, who: &str) -> PathBuf {
    dir.join(format!("{who}.seed"))
}

/// `binary agent-creds` for `cluster` (or the hub): writes the seed, returns the server's
/// authorization entry.
///
/// # Errors
/// When the command fails or prints no entry.
pub fn make_creds(binary: &Path, cluster: Option<&str>, seed: &Path) -> Result<String, String> {
    let mut command = Command::new(binary);
    command.arg("agent-creds");
    match cluster {
        Some(cluster) => command.arg(cluster),
        None => command.arg("--hub"),
    };
    let output = command
        .arg("--out")
        .arg(seed)
        .output()
        .map_err(|e| e.to_string())?;
    let text = stdout(&output);
    text.lines()
        .find(|line| line.starts_with('{'))
        .map(str::to_owned)
        .ok_or_else(|| format!("agent-creds printed no entry: {text}"))
}

/// Waits (at most `limit`) until the hub has folded everything in its log or declined the
/// writer role; its status then.
///
/// # Errors
/// When it does neither in time.
pub fn settled(hub: &HubProcess, limit: Duration) -> Result<Value, String> {
    let started = Instant::now();
    loop {
        if let Ok(status) = hub.status()
            && (status["seq"] == status["logSeq"] || !status["declined"].is_null())
        {
            return Ok(status);
        }
        if started.elapsed() > limit {
            return Err(format!("the hub stopped folding: {:?}", hub.status()));
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Waits (at most `limit`) until the hub's log reaches `seq` and everything is folded.
///
/// # Errors
/// When it does not in time.
pub fn folded_through(hub: &HubProcess, seq: u64, limit: Duration) -> Result<Value, String> {
    let started = Instant::now();
    loop {
        if let Ok(status) = hub.status()
            && status["seq"].as_u64().is_some_and(|folded| folded >= seq)
        {
            return Ok(status);
        }
        if started.elapsed() > limit {
            return Err(format!(
                "the hub did not fold through {seq}: {:?}",
                hub.status()
            ));
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Writes `yaml` to `DIR/NAME.yaml` and `flotilla apply -f`s it.
///
/// # Errors
/// When the file cannot be written or the hub refuses it.
pub fn apply_yaml(hub: &HubProcess, dir: &Path, name: &str, yaml: &str) -> Result<(), String> {
    let file = dir.join(format!("{name}.yaml"));
    std::fs::write(&file, yaml).map_err(|e| e.to_string())?;
    let applied = hub.cli(&["apply", "-f", &file.display().to_string()])?;
    if applied.status.success() {
        Ok(())
    } else {
        Err(crate::support::stderr(&applied))
    }
}

/// One HTTP request with an optional bearer token and JSON body; answers the status and the
/// body (JSON, or the text as a string).
///
/// # Errors
/// When the request cannot be sent or its answer read.
pub fn call(
    method: &str,
    url: &str,
    token: Option<&str>,
    body: Option<&Value>,
) -> Result<(u16, Value), String> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    runtime.block_on(async {
        let method = reqwest::Method::from_bytes(method.as_bytes()).map_err(|e| e.to_string())?;
        let mut request = crate::support::http_client()
            .request(method, url)
            .timeout(Duration::from_secs(20));
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        if let Some(body) = body {
            request = request.json(body);
        }
        let response = request.send().await.map_err(|e| e.to_string())?;
        let status = response.status().as_u16();
        let text = response.text().await.map_err(|e| e.to_string())?;
        let value = serde_json::from_str(&text).unwrap_or(Value::String(text));
        Ok((status, value))
    })
}

/// `flotilla events -o json`, one JSON value per line.
///
/// # Errors
/// When the command fails.
pub fn events(hub: &HubProcess) -> Result<Vec<Value>, String> {
    let listed = hub.cli(&["events", "-o", "json"])?;
    Ok(stdout(&listed)
        .lines()
        .filter_map(|line| serde_json::from_str(line).ok())
        .collect())
}

/// The listed event at `seq`, as text.
///
/// # Errors
/// When it is not listed.
pub fn event_at(hub: &HubProcess, seq: u64) -> Result<String, String> {
    events(hub)?
        .into_iter()
        .find(|line| line["seq"] == seq)
        .map(|line| line.to_string())
        .ok_or_else(|| format!("record {seq} is not listed"))
}
