//! Helpers shared by the end-to-end tests: a `flotilla serve` child process on a free loopback
//! port with a temporary data directory, stopped by pid, and running CLI commands against it.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::mpsc;
use std::time::Duration;

/// How long a hub may take to start listening.
pub const START_TIMEOUT: Duration = Duration::from_secs(30);

/// How long a hub may take to exit after SIGTERM before a test fails.
pub const STOP_TIMEOUT: Duration = Duration::from_secs(30);

/// Lines a hub printed before it listened that [`HubProcess::printed`] keeps.
const PRINTED_KEPT_MAX: usize = 100;

/// A running `flotilla serve` process.
pub struct HubProcess {
    child: Child,
    /// `http://127.0.0.1:PORT`.
    pub url: String,
    /// The lines it printed before its listening line (the log it opened, …).
    pub printed: Vec<String>,
    binary: PathBuf,
}

/// Errors of the test harness, as text.
pub type HarnessResult<T> = Result<T, String>;

impl HubProcess {
    /// Starts `binary serve --data DATA --listen 127.0.0.1:0 [extra…]` and waits for its
    /// listening line.
    ///
    /// # Errors
    /// When it does not start within [`START_TIMEOUT`].
    pub fn start(binary: &Path, data: &Path, extra: &[&str]) -> HarnessResult<Self> {
        Self::start_on(binary, data, "127.0.0.1:0", extra)
    }

    /// Starts `binary serve --data DATA --listen LISTEN [extra…]` and waits for its listening
    /// line; `url` is what the hub printed (`http://0.0.0.0:PORT` for a wildcard address).
    ///
    /// # Errors
    /// When it does not start within [`START_TIMEOUT`].
    pub fn start_on(
        binary: &Path,
        data: &Path,
        listen: &str,
        extra: &[&str],
    ) -> HarnessResult<Self> {
        Self::spawn(binary, data, listen, extra, Stdio::inherit())
    }

    /// As [`Self::start`], with the hub's log (its standard error) written to the file `log`,
    /// for a test that reads what the hub logged.
    ///
    /// # Errors
    /// When `log` cannot be created, or the hub does not start within [`START_TIMEOUT`].
    pub fn start_logged(
        binary: &Path,
        data: &Path,
        extra: &[&str],
        log: &Path,
    ) -> HarnessResult<Self> {
        let file = std::fs::File::create(log)
            .map_err(|e| format!("cannot create {}: {e}", log.display()))?;
        Self::spawn(binary, data, "127.0.0.1:0", extra, Stdio::from(file))
    }

    fn spawn(
        binary: &Path,
        data: &Path,
        listen: &str,
        extra: &[&str],
        stderr: Stdio,
    ) -> HarnessResult<Self> {
        let mut child = Command::new(binary)
            .arg("serve")
            .arg("--data")
            .arg(data)
            .args(["--listen", listen])
            .args(extra)
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", binary.display()))?;
        let stdout = child.stdout.take().ok_or("no stdout")?;
        let (sender, receiver) = mpsc::channel();
        std::thread::spawn(move || {
            let mut printed = Vec::new();
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if let Some(url) = line.strip_prefix("flotilla hub listening on ") {
                    let _ = sender.send((url.to_owned(), std::mem::take(&mut printed)));
                } else if printed.len() < PRINTED_KEPT_MAX {
                    printed.push(line);
                }
            }
        });
        match receiver.recv_timeout(START_TIMEOUT) {
            Ok((url, printed)) => Ok(Self {
                child,
                url,
                printed,
                binary: binary.to_owned(),
            }),
            Err(_) => {
                let _ = child.kill();
                let _ = child.wait();
                Err("flotilla serve did not start listening in time".into())
            }
        }
    }

    /// The process id.
    #[must_use]
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// `kill -9`: no chance to flush or checkpoint.
    pub fn kill_hard(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// SIGTERM and wait for a clean exit (which writes a checkpoint).
    ///
    /// # Errors
    /// When the process does not exit cleanly.
    pub fn stop(mut self) -> HarnessResult<()> {
        let pid = self.child.id().to_string();
        let status = Command::new("kill")
            .args(["-TERM", &pid])
            .status()
            .map_err(|e| e.to_string())?;
        if !status.success() {
            return Err(format!("kill -TERM {pid} failed"));
        }
        let began = std::time::Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().map_err(|e| e.to_string())? {
                return if status.success() {
                    Ok(())
                } else {
                    Err(format!("serve exited with {status}"))
                };
            }
            if began.elapsed() >= STOP_TIMEOUT {
                // Dropping `self` kills it: a hub that hangs on stop fails the test instead of
                // stalling the whole run.
                return Err(format!(
                    "serve (pid {pid}) did not exit within {STOP_TIMEOUT:?} of SIGTERM"
                ));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Sets the test clock of a hub started with `--test-clock START` to `seconds` after
    /// `start` (`POST /v1/test/clock`).
    ///
    /// # Errors
    /// When `start` is not RFC 3339 or the hub refuses.
    pub fn set_clock(&self, start: &str, seconds: i64) -> HarnessResult<()> {
        let time = chrono::DateTime::parse_from_rfc3339(start).map_err(|e| e.to_string())?
            + chrono::Duration::seconds(seconds);
        let url = format!("{}/v1/test/clock", self.url);
        let body = serde_json::json!({"set": time.to_rfc3339()});
        tokio::runtime::Runtime::new()
            .map_err(|e| e.to_string())?
            .block_on(async {
                let response = http_client().post(url).json(&body).send().await?;
                response.error_for_status().map(|_| ())
            })
            .map_err(|e| e.to_string())
    }

    /// Runs a CLI command against this hub.
    ///
    /// # Errors
    /// When the command cannot be started.
    pub fn cli(&self, args: &[&str]) -> HarnessResult<Output> {
        Command::new(&self.binary)
            .args(args)
            .env("FLOTILLA_SERVER", &self.url)
            .output()
            .map_err(|e| e.to_string())
    }

    /// POSTs JSON events to `/v1/events?wait=true` (what a member agent does) and returns the
    /// hub's answer.
    ///
    /// # Errors
    /// When the hub does not answer or refuses the request.
    pub fn post_events(&self, events: &serde_json::Value) -> HarnessResult<serde_json::Value> {
        let url = format!("{}/v1/events?wait=true", self.url);
        on_own_runtime(|| async {
            let response = http_client()
                .post(url)
                .json(events)
                .send()
                .await
                .map_err(|e| e.to_string())?;
            if !response.status().is_success() {
                let status = response.status();
                let body = response.text().await.unwrap_or_default();
                return Err(format!("POST /v1/events: {status}: {body}"));
            }
            response.json().await.map_err(|e| e.to_string())
        })
    }

    /// GETs `path` from the hub as text.
    ///
    /// # Errors
    /// When the hub does not answer within 10 s or answers with an error status.
    pub fn get_text(&self, path: &str) -> HarnessResult<String> {
        let url = format!("{}{path}", self.url);
        on_own_runtime(|| async {
            let response = http_client()
                .get(url)
                .timeout(std::time::Duration::from_secs(10))
                .send()
                .await
                .map_err(|e| e.to_string())?;
            if !response.status().is_success() {
                return Err(format!("GET {path}: {}", response.status()));
            }
            response.text().await.map_err(|e| e.to_string())
        })
    }

    /// GETs `/v1/status` as JSON.
    ///
    /// # Errors
    /// When the hub does not answer.
    pub fn status(&self) -> HarnessResult<serde_json::Value> {
        let url = format!("{}/v1/status", self.url);
        on_own_runtime(|| async {
            let response = http_client()
                .get(url)
                .send()
                .await
                .map_err(|e| e.to_string())?;
            response.json().await.map_err(|e| e.to_string())
        })
    }
}

/// Runs `work` to completion on a fresh single-threaded runtime on its own thread, so that the
/// blocking helpers above work from async tests too.
fn on_own_runtime<T, F, Fut>(work: F) -> HarnessResult<T>
where
    T: Send,
    F: FnOnce() -> Fut + Send,
    Fut: std::future::Future<Output = HarnessResult<T>>,
{
    std::thread::scope(|scope| {
        let worker = scope.spawn(|| {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .map_err(|e| e.to_string())?;
            runtime.block_on(work())
        });
        worker
            .join()
            .map_err(|_| "request thread panicked".to_owned())?
    })
}

impl Drop for HubProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Runs `binary` with `args` to completion; its standard output when it succeeded.
///
/// # Errors
/// When it cannot start or fails (the message carries the arguments and both outputs).
pub fn run_ok(binary: &Path, args: &[&str]) -> HarnessResult<String> {
    let output = std::process::Command::new(binary)
        .args(args)
        .output()
        .map_err(|e| e.to_string())?;
    if output.status.success() {
        Ok(stdout(&output))
    } else {
        Err(format!("{args:?}: {}{}", stdout(&output), stderr(&output)))
    }
}

/// A reqwest client; installs the process's rustls provider first (reqwest is built without one
/// and panics otherwise, see `flotilla_adapters::tls::install_crypto_provider`).
#[must_use]
pub fn http_client() -> reqwest::Client {
    flotilla_adapters::tls::install_crypto_provider();
    reqwest::Client::new()
}

/// stdout of a finished command as text.
#[must_use]
pub fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// stderr of a finished command as text.
#[must_use]
pub fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// Copies a directory tree (a fixture data directory or JetStream store) into `to`.
///
/// # Errors
/// When a file cannot be read or written.
pub fn copy_dir(from: &Path, to: &Path) -> HarnessResult<()> {
    std::fs::create_dir_all(to).map_err(|e| format!("{}: {e}", to.display()))?;
    for entry in std::fs::read_dir(from).map_err(|e| format!("{}: {e}", from.display()))? {
        let entry = entry.map_err(|e| e.to_string())?;
        let target = to.join(entry.file_name());
        if entry.path().is_dir() {
            copy_dir(&entry.path(), &target)?;
        } else {
            std::fs::copy(entry.path(), &target)
                .map_err(|e| format!("{}: {e}", target.display()))?;
        }
    }
    Ok(())
}

/// The path of a file under `tests/fixtures/`, as text for a command line.
#[must_use]
pub fn fixture(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join(name)
        .display()
        .to_string()
}

/// Writes a self-signed certificate for 127.0.0.1 and its key as `<name>.crt` and `<name>.key`
/// in `dir`; returns their paths.
///
/// # Errors
/// When the certificate cannot be made or written.
pub fn self_signed_certificate(dir: &Path, name: &str) -> HarnessResult<(PathBuf, PathBuf)> {
    let key = rcgen::KeyPair::generate().map_err(|e| e.to_string())?;
    let params =
        rcgen::CertificateParams::new(vec!["127.0.0.1".to_owned()]).map_err(|e| e.to_string())?;
    let cert = params.self_signed(&key).map_err(|e| e.to_string())?;
    let (cert_path, key_path) = (
        dir.join(format!("{name}.crt")),
        dir.join(format!("{name}.key")),
    );
    std::fs::write(&cert_path, cert.pem()).map_err(|e| e.to_string())?;
    std::fs::write(&key_path, key.serialize_pem()).map_err(|e| e.to_string())?;
    Ok((cert_path, key_path))
}
