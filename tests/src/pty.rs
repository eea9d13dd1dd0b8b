//! Running a command inside a pseudo-terminal, for tests of what `flotilla` draws on a terminal
//! (`tests/progress_pty.rs`): its stdin, stdout and stderr are the pty's terminal side, so
//! `isatty` holds for it; everything it writes is collected from the controlling side until it
//! exits, which is waited for at most a given time and then killed. [`run_piped`] is the same
//! with stdout a pipe, for the plain output.

use std::ffi::OsStr;
use std::fs::{File, OpenOptions};
use std::io::Read;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use rustix::pty::{OpenptFlags, grantpt, openpt, ptsname, unlockpt};
use rustix::termios::{Winsize, tcsetwinsize};

/// The terminal's size: wide enough that no bar line wraps.
const WINDOW: Winsize = Winsize {
    ws_row: 40,
    ws_col: 160,
    ws_xpixel: 0,
    ws_ypixel: 0,
};
/// How long the output may take to drain after the process exited.
const DRAIN_MAX: Duration = Duration::from_secs(5);

/// A finished command.
#[derive(Debug)]
pub struct Ran {
    /// How it exited.
    pub status: ExitStatus,
    /// In a pty, everything it wrote to the terminal (escape sequences included, `\r\n` line
    /// ends); piped, its stdout.
    pub output: String,
}

/// Runs `binary args…` with `env` in a new pty and waits for it to exit, at most `limit`.
///
/// # Errors
/// When the pty cannot be made, the process cannot start, or it does not exit within `limit`
/// (it is killed then, and the error carries what it wrote).
pub fn run_in_pty(
    binary: &Path,
    args: &[&str],
    env: &[(&str, &str)],
    limit: Duration,
) -> Result<Ran, String> {
    let (controller, terminal) = open_pty()?;
    let terminal_side = |file: &File| file.try_clone().map(Stdio::from).map_err(|e| e.to_string());
    // A temporary `Command`: it holds its copies of the terminal side until dropped.
    let child = Command::new(binary)
        .args(args)
        .envs(env.iter().copied())
        .stdin(terminal_side(&terminal)?)
        .stdout(terminal_side(&terminal)?)
        .stderr(terminal_side(&terminal)?)
        .spawn()
        .map_err(|e| format!("cannot start {}: {e}", binary.display()))?;
    // Only the child holds the terminal side now, so reading ends when it exits.
    drop(terminal);
    finish(child, collect(controller), args, limit)
}

/// Runs `binary args…` with `env`, stdin empty, stdout a pipe and stderr inherited; waits for
/// it to exit, at most `limit`.
///
/// # Errors
/// When the process cannot start or does not exit within `limit` (it is killed then).
pub fn run_piped(
    binary: &Path,
    args: &[&str],
    env: &[(&str, &str)],
    limit: Duration,
) -> Result<Ran, String> {
    let mut child = Command::new(binary)
        .args(args)
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .map_err(|e| format!("cannot start {}: {e}", binary.display()))?;
    let stdout = child.stdout.take().ok_or("no stdout")?;
    finish(child, collect(stdout), args, limit)
}

/// Waits for `child` to exit (killing it after `limit`) and for its output to drain.
fn finish(
    mut child: Child,
    output: mpsc::Receiver<String>,
    args: &[&str],
    limit: Duration,
) -> Result<Ran, String> {
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().map_err(|e| e.to_string())? {
            break status;
        }
        if started.elapsed() >= limit {
            let _ = child.kill();
            let _ = child.wait();
            let written = output.recv_timeout(DRAIN_MAX).unwrap_or_default();
            return Err(format!(
                "{args:?} did not exit within {}s; it wrote:\n{written}",
                limit.as_secs()
            ));
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let output = output
        .recv_timeout(DRAIN_MAX)
        .map_err(|_| "the output did not drain".to_owned())?;
    Ok(Ran { status, output })
}

/// A new pty of [`WINDOW`]'s size: its controlling side and its terminal side.
fn open_pty() -> Result<(File, File), String> {
    let controller = openpt(OpenptFlags::RDWR | OpenptFlags::NOCTTY | OpenptFlags::CLOEXEC)
        .map_err(|e| format!("openpt: {e}"))?;
    grantpt(&controller).map_err(|e| format!("grantpt: {e}"))?;
    unlockpt(&controller).map_err(|e| format!("unlockpt: {e}"))?;
    let name = ptsname(&controller, Vec::new()).map_err(|e| format!("ptsname: {e}"))?;
    tcsetwinsize(&controller, WINDOW).map_err(|e| format!("setting the window size: {e}"))?;
    let path = Path::new(OsStr::from_bytes(name.as_bytes()));
    let terminal = OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    Ok((File::from(controller), terminal))
}

/// Reads `source` on a thread until its end (a pty's controlling side ends with `EIO` once the
/// terminal side is closed); the text arrives on the channel.
fn collect(mut source: impl Read + Send + 'static) -> mpsc::Receiver<String> {
    let (sender, receiver) = mpsc::channel();
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let mut buffer = [0_u8; 4096];
        while let Ok(read) = source.read(&mut buffer) {
            if read == 0 {
                break;
            }
            bytes.extend_from_slice(&buffer[..read]);
        }
        let _ = sender.send(String::from_utf8_lossy(&bytes).into_owned());
    });
    receiver
}

/// The text a terminal would keep of `output`: escape sequences (`ESC [ … letter`) and
/// carriage returns removed.
#[must_use]
pub fn strip_escapes(output: &str) -> String {
    let mut text = String::with_capacity(output.len());
    let mut chars = output.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\u{1b}' => {
                if chars.peek() == Some(&'[') {
                    chars.next();
                    // Parameters and intermediates, up to the final byte (a letter or `~`).
                    for c in chars.by_ref() {
                        if c.is_ascii_alphabetic() || c == '~' {
                            break;
                        }
                    }
                }
            }
            '\r' => {}
            c => text.push(c),
        }
    }
    text
}
