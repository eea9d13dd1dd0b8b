//! The run's trace: one line per thing that happened (a fault, an append, a restart, a fold
//! round), folded into a digest. Two runs of one seed give one digest; `SIM_TRACE=1` prints the
//! lines as they happen, and a failure shows the last of them.

use std::collections::VecDeque;

use sha2::{Digest, Sha256};

/// Lines kept for a failure message.
pub const TAIL_LINES_MAX: usize = 40;

/// The trace of one run.
#[derive(Debug)]
pub struct Trace {
    digest: Sha256,
    tail: VecDeque<String>,
    lines: u64,
    print: bool,
}

impl Trace {
    /// An empty trace; `print` echoes every line to stderr.
    #[must_use]
    pub fn new(print: bool) -> Self {
        Self {
            digest: Sha256::new(),
            tail: VecDeque::new(),
            lines: 0,
            print,
        }
    }

    /// Records one line at simulated time `now_ms`.
    pub fn line(&mut self, now_ms: u64, text: impl AsRef<str>) {
        let line = format!("{now_ms:>9} {}", text.as_ref());
        self.digest.update(line.as_bytes());
        self.digest.update(b"\n");
        self.lines += 1;
        if self.print {
            eprintln!("{line}");
        }
        self.tail.push_back(line);
        while self.tail.len() > TAIL_LINES_MAX {
            self.tail.pop_front();
        }
    }

    /// How many lines were recorded.
    #[must_use]
    pub fn len(&self) -> u64 {
        self.lines
    }

    /// Whether nothing was recorded.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.lines == 0
    }

    /// The digest of every line so far, in hex.
    #[must_use]
    pub fn digest(&self) -> String {
        hex_of(&self.digest.clone().finalize())
    }

    /// The last lines, for a failure message.
    #[must_use]
    pub fn tail(&self) -> String {
        self.tail.iter().cloned().collect::<Vec<_>>().join("\n")
    }
}

fn hex_of(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
