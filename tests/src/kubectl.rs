//! The machine's real `kubectl` against a served hub: a kubeconfig whose server is the hub's
//! loopback address (no credentials, or a bearer token), and a discovery cache of the test's own.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};

use crate::support::{HarnessResult, HubProcess, stderr, stdout};

/// `kubectl` configured for one hub.
pub struct Kubectl {
    config: PathBuf,
    cache: PathBuf,
}

impl Kubectl {
    /// Writes a kubeconfig for `hub` under `dir`.
    ///
    /// # Errors
    /// When the file cannot be written.
    pub fn for_hub(hub: &HubProcess, dir: &Path) -> HarnessResult<Self> {
        Self::for_hub_as(hub, dir, None, None)
    }

    /// Writes a kubeconfig for `hub` under `dir` whose user sends `token` as a bearer token
    /// (kubectl sends it only over HTTPS) and which trusts the CA certificate file `ca`.
    ///
    /// # Errors
    /// When the file cannot be written.
    pub fn for_hub_as(
        hub: &HubProcess,
        dir: &Path,
        token: Option<&str>,
        ca: Option<&Path>,
    ) -> HarnessResult<Self> {
        let config = dir.join("kubeconfig");
        let user = token.map_or_else(|| "{}".to_owned(), |t| format!("{{token: {t}}}"));
        let ca = ca.map_or_else(String::new, |ca| {
            format!("    certificate-authority: {}\n", ca.display())
        });
        let text = format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: hub\n  cluster:\n    server: {}\n{ca}\
             contexts:\n- name: hub\n  context: {{cluster: hub, user: tester}}\n\
             current-context: hub\nusers:\n- name: tester\n  user: {user}\n",
            hub.url
        );
        std::fs::write(&config, text).map_err(|e| e.to_string())?;
        Ok(Self {
            config,
            cache: dir.join("kube-cache"),
        })
    }

    /// The kubeconfig's path (for client libraries).
    #[must_use]
    pub fn config(&self) -> &Path {
        &self.config
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut command = Command::new("kubectl");
        command
            .env("KUBECONFIG", &self.config)
            .arg("--cache-dir")
            .arg(&self.cache)
            .args(["--request-timeout", "20s"])
            .args(args);
        command
    }

    /// Runs kubectl and returns what it did.
    ///
    /// # Errors
    /// When kubectl cannot be started.
    pub fn run(&self, args: &[&str]) -> HarnessResult<Output> {
        self.command(args)
            .output()
            .map_err(|e| format!("kubectl: {e}"))
    }

    /// Runs kubectl, which must succeed; returns its stdout.
    ///
    /// # Errors
    /// When it fails, with its output.
    pub fn ok(&self, args: &[&str]) -> HarnessResult<String> {
        let output = self.run(args)?;
        if output.status.success() {
            Ok(stdout(&output))
        } else {
            Err(format!(
                "kubectl {args:?} failed: {}{}",
                stdout(&output),
                stderr(&output)
            ))
        }
    }

    /// Runs kubectl, which must fail; returns its stderr.
    ///
    /// # Errors
    /// When it succeeds.
    pub fn fails(&self, args: &[&str]) -> HarnessResult<String> {
        let output = self.run(args)?;
        if output.status.success() {
            Err(format!("kubectl {args:?} succeeded: {}", stdout(&output)))
        } else {
            Ok(stderr(&output))
        }
    }

    /// Starts kubectl in the background with its stdout piped (for `get -w`).
    ///
    /// # Errors
    /// When kubectl cannot be started.
    pub fn spawn(&self, args: &[&str]) -> HarnessResult<Child> {
        self.command(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("kubectl: {e}"))
    }
}
