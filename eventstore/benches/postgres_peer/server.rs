//! A throwaway PostgreSQL server for the peer benchmark: Debian's binaries, `initdb` into a
//! temporary directory, `postgres` on a free loopback port, stopped by its pid at the end.
//!
//! Both programs refuse to run as root, so when the bench runs as root they run as the
//! `postgres` user (`CommandExt::uid`/`gid`, so the pid held is the postmaster's own, not a
//! wrapper's) and the temporary directory is handed to that user. Every wait is bounded.

use std::fs::File;
use std::net::{Ipv4Addr, TcpListener};
use std::os::unix::fs::MetadataExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use tempfile::TempDir;

/// Environment variable naming the directory that holds `initdb` and `postgres`.
pub const BIN_DIR_ENV: &str = "FLOTILLA_PG_BIN";
/// Where Debian's `postgresql` package puts each major version's binaries.
const DEBIAN_ROOT: &str = "/usr/lib/postgresql";
/// Longest `initdb` may take.
const INITDB_TIMEOUT: Duration = Duration::from_secs(120);
/// Longest the server may take to accept connections.
const READY_TIMEOUT: Duration = Duration::from_secs(60);
/// Longest a fast shutdown (SIGINT) may take before the server is killed.
const STOP_TIMEOUT: Duration = Duration::from_secs(30);
/// Pause between polls of a child process or a port.
const POLL: Duration = Duration::from_millis(50);

/// The server settings, passed as `-c` options so the code is the one place they are stated.
/// Durability as redb's `Durability::Immediate`: a commit returns once its WAL is on disk.
/// `shared_buffers` matches the redb cache of the benches; connections cover 512 publishers.
const SETTINGS: &[(&str, &str)] = &[
    ("fsync", "on"),
    ("synchronous_commit", "on"),
    ("full_page_writes", "on"),
    ("wal_sync_method", "fdatasync"),
    ("shared_buffers", "256MB"),
    ("max_connections", "600"),
    ("unix_socket_directories", ""),
    ("listen_addresses", "127.0.0.1"),
];

/// The settings as one line, for the bench's report.
pub fn settings_line() -> String {
    SETTINGS
        .iter()
        .map(|(name, value)| format!("{name}='{value}'"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// A running server; stopped (SIGINT, then SIGKILL) when dropped.
pub struct PgServer {
    dir: TempDir,
    port: u16,
    child: Option<Child>,
    /// `postgres --version`, for the report.
    pub version: String,
}

/// The directory with `initdb` and `postgres`: [`BIN_DIR_ENV`], or the newest Debian version.
pub fn find_binaries() -> Option<PathBuf> {
    let has_both = |dir: &Path| dir.join("initdb").is_file() && dir.join("postgres").is_file();
    if let Some(dir) = std::env::var_os(BIN_DIR_ENV) {
        let dir = PathBuf::from(dir);
        return has_both(&dir).then_some(dir);
    }
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir(DEBIAN_ROOT)
        .ok()?
        .filter_map(Result::ok)
        .filter_map(|entry| {
            let major = entry.file_name().to_str()?.parse::<u32>().ok()?;
            Some((major, entry.path().join("bin")))
        })
        .filter(|(_, bin)| has_both(bin))
        .collect();
    versions.sort();
    versions.pop().map(|(_, bin)| bin)
}

/// The uid and gid the server runs as: the `postgres` user's when this process is root
/// (`/proc/self` is owned by the effective uid), none otherwise.
fn server_user() -> Result<Option<(u32, u32)>, String> {
    let euid = std::fs::metadata("/proc/self")
        .map_err(|e| format!("stat /proc/self: {e}"))?
        .uid();
    if euid != 0 {
        return Ok(None);
    }
    let id = |flag: &str| -> Result<u32, String> {
        let out = Command::new("id")
            .args([flag, "postgres"])
            .output()
            .map_err(|e| format!("run `id {flag} postgres`: {e}"))?;
        String::from_utf8_lossy(&out.stdout)
            .trim()
            .parse()
            .map_err(|_| "running as root and there is no `postgres` user".to_owned())
    };
    Ok(Some((id("-u")?, id("-g")?)))
}

impl PgServer {
    /// `initdb` and start a server from the binaries in `bin`; returns once it accepts TCP
    /// connections on its loopback port.
    ///
    /// # Errors
    /// A message saying what failed, with the end of the server's log where there is one.
    pub fn start(bin: &Path) -> Result<Self, String> {
        let user = server_user()?;
        let dir = tempfile::Builder::new()
            .prefix("flotilla-pg-")
            .tempdir()
            .map_err(|e| format!("create a temporary directory: {e}"))?;
        if let Some((uid, gid)) = user {
            std::os::unix::fs::chown(dir.path(), Some(uid), Some(gid))
                .map_err(|e| format!("hand the temporary directory to postgres: {e}"))?;
        }
        let data = dir.path().join("data");
        // --no-sync: initdb's own files need not survive a crash; the server fsyncs its WAL.
        let mut initdb = command(bin, "initdb", user, dir.path());
        initdb
            .arg("-D")
            .arg(&data)
            .args(["-U", "postgres", "-A", "trust", "-E", "UTF8", "--locale=C"])
            .arg("--no-sync");
        run_bounded(initdb, &dir.path().join("initdb.log"), INITDB_TIMEOUT)?;
        let version = Command::new(bin.join("postgres"))
            .arg("--version")
            .output()
            .map(|out| String::from_utf8_lossy(&out.stdout).trim().to_owned())
            .unwrap_or_default();
        let port = free_port()?;
        let mut postgres = command(bin, "postgres", user, dir.path());
        postgres
            .arg("-D")
            .arg(&data)
            .args(["-p", &port.to_string()]);
        for (name, value) in SETTINGS {
            postgres.arg("-c").arg(format!("{name}={value}"));
        }
        let log_path = dir.path().join("postgres.log");
        let child = spawn_logged(postgres, &log_path)?;
        let mut server = Self {
            dir,
            port,
            child: Some(child),
            version,
        };
        server.wait_ready()?;
        Ok(server)
    }

    /// The connection string of the `postgres` database, over TCP on loopback.
    pub fn conninfo(&self) -> String {
        format!(
            "host=127.0.0.1 port={} user=postgres dbname=postgres connect_timeout=10",
            self.port
        )
    }

    fn log_tail(&self) -> String {
        let log = std::fs::read(self.dir.path().join("postgres.log")).unwrap_or_default();
        let start = log.len().saturating_sub(3_000);
        String::from_utf8_lossy(&log[start..]).into_owned()
    }

    /// Polls until the port accepts a connection, the server exits, or the deadline passes.
    fn wait_ready(&mut self) -> Result<(), String> {
        let deadline = Instant::now() + READY_TIMEOUT;
        loop {
            if let Some(child) = self.child.as_mut()
                && let Ok(Some(status)) = child.try_wait()
            {
                self.child = None;
                return Err(format!("postgres exited ({status}):\n{}", self.log_tail()));
            }
            let addr = (Ipv4Addr::LOCALHOST, self.port).into();
            if std::net::TcpStream::connect_timeout(&addr, POLL).is_ok()
                && self.log_tail().contains("ready to accept connections")
            {
                return Ok(());
            }
            if Instant::now() >= deadline {
                let tail = self.log_tail();
                self.stop();
                return Err(format!("postgres not ready in {READY_TIMEOUT:?}:\n{tail}"));
            }
            std::thread::sleep(POLL);
        }
    }

    /// Fast shutdown by pid (SIGINT: abort sessions, checkpoint, exit), then SIGKILL if it
    /// has not exited within [`STOP_TIMEOUT`].
    pub fn stop(&mut self) {
        let Some(mut child) = self.child.take() else {
            return;
        };
        let _ = Command::new("kill")
            .args(["-INT", &child.id().to_string()])
            .status();
        let deadline = Instant::now() + STOP_TIMEOUT;
        while Instant::now() < deadline {
            if matches!(child.try_wait(), Ok(Some(_))) {
                return;
            }
            std::thread::sleep(POLL);
        }
        eprintln!("postgres did not stop in {STOP_TIMEOUT:?}; killing it");
        let _ = child.kill();
        let _ = child.wait();
    }
}

impl Drop for PgServer {
    fn drop(&mut self) {
        self.stop();
    }
}

fn command(bin: &Path, program: &str, user: Option<(u32, u32)>, cwd: &Path) -> Command {
    let mut command = Command::new(bin.join(program));
    // The bench's own directory may not be readable by the postgres user.
    command.current_dir(cwd).stdin(Stdio::null());
    if let Some((uid, gid)) = user {
        command.uid(uid).gid(gid).env("HOME", cwd);
    }
    command
}

fn spawn_logged(mut command: Command, log: &Path) -> Result<Child, String> {
    let out = File::create(log).map_err(|e| format!("create {}: {e}", log.display()))?;
    let err = out
        .try_clone()
        .map_err(|e| format!("open {}: {e}", log.display()))?;
    command
        .stdout(out)
        .stderr(err)
        .spawn()
        .map_err(|e| format!("spawn {command:?}: {e}"))
}

/// Runs a command to completion within `timeout`, killing it (by its pid) past that.
fn run_bounded(command: Command, log: &Path, timeout: Duration) -> Result<(), String> {
    let mut child = spawn_logged(command, log)?;
    let deadline = Instant::now() + timeout;
    let tail = || {
        let text = std::fs::read(log).unwrap_or_default();
        String::from_utf8_lossy(&text[text.len().saturating_sub(3_000)..]).into_owned()
    };
    loop {
        match child.try_wait() {
            Ok(Some(status)) if status.success() => return Ok(()),
            Ok(Some(status)) => return Err(format!("initdb failed ({status}):\n{}", tail())),
            Ok(None) if Instant::now() >= deadline => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("initdb took over {timeout:?}:\n{}", tail()));
            }
            Ok(None) => std::thread::sleep(POLL),
            Err(e) => return Err(format!("wait for initdb: {e}")),
        }
    }
}

/// A loopback port free a moment ago; the server binds it right after.
fn free_port() -> Result<u16, String> {
    TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
        .and_then(|listener| listener.local_addr())
        .map(|addr| addr.port())
        .map_err(|e| format!("probe a free port: {e}"))
}
