//! What the load generator measures as it runs: appended and folded events per second, fold
//! lag in events and seconds (the age of the oldest appended input not yet folded; its maximum
//! per 1-second window, whose 99th percentile and maximum are reported), decision latency (from
//! an append's acknowledgement to the fold that decided it), the process's RSS and the last
//! checkpoint's size. The folds are timed as they happen ([`FoldClock`]), not when the load
//! generator next looks: its 50-ms tick would otherwise be the floor of every latency.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use tokio::sync::{mpsc, watch};

/// The measurements of one simulation.
#[derive(Debug)]
pub struct Stats {
    started: Instant,
    appended: u64,
    last_appended_seq: u64,
    folded_seq: u64,
    /// `(last seq, acknowledged at)` of every append not yet folded.
    unfolded: VecDeque<(u64, Instant)>,
    window_start: Instant,
    window_max_lag: f64,
    /// The largest fold lag (seconds) of each 1-second window.
    window_maxima: Vec<f64>,
    /// Seconds from an append's acknowledgement to the fold of its last input.
    latencies: Vec<f64>,
    /// `(at, appended, folded)` at the last line, for rates.
    last_line: (Instant, u64, u64),
}

/// Fold lag of one window, or the whole run.
const WINDOW: Duration = Duration::from_secs(1);

impl Stats {
    /// Starts measuring now, from folded sequence `folded_seq`.
    #[must_use]
    pub fn new(folded_seq: u64) -> Self {
        let now = Instant::now();
        Self {
            started: now,
            appended: 0,
            last_appended_seq: folded_seq,
            folded_seq,
            unfolded: VecDeque::new(),
            window_start: now,
            window_max_lag: 0.0,
            window_maxima: Vec::new(),
            latencies: Vec::new(),
            last_line: (now, 0, folded_seq),
        }
    }

    /// Notes an acknowledged append of `count` inputs ending at `last_seq`.
    pub fn appended(&mut self, count: usize, last_seq: u64) {
        self.appended += count as u64;
        self.last_appended_seq = self.last_appended_seq.max(last_seq);
        self.unfolded.push_back((last_seq, Instant::now()));
    }

    /// Notes that the hub has folded up to `folded_seq` by now.
    pub fn folded(&mut self, folded_seq: u64) {
        self.folded_at(folded_seq, Instant::now());
    }

    /// Notes the folds `clock` timed since it was last read, then the lag as it is now.
    pub fn read_clock(&mut self, clock: &mut FoldClock) {
        while let Ok((seq, at)) = clock.folds.try_recv() {
            self.folded_at(seq, at);
        }
        self.observe_lag(Instant::now());
    }

    /// Notes that the hub had folded up to `folded_seq` at `at` (no earlier than any instant
    /// noted before). The oldest unfolded append's age just before this fold is the lag the
    /// fold ended; an append acknowledged after its fold was timed is decided in 0 s.
    fn folded_at(&mut self, folded_seq: u64, at: Instant) {
        self.observe_lag(at);
        self.folded_seq = self.folded_seq.max(folded_seq);
        while let Some(&(seq, acknowledged)) = self.unfolded.front() {
            if seq > self.folded_seq {
                break;
            }
            self.latencies
                .push(at.saturating_duration_since(acknowledged).as_secs_f64());
            self.unfolded.pop_front();
        }
    }

    /// Counts the lag at `at` into its 1-second window.
    fn observe_lag(&mut self, at: Instant) {
        let lag = self.lag_seconds(at);
        if at.saturating_duration_since(self.window_start) >= WINDOW {
            self.window_maxima.push(self.window_max_lag);
            self.window_max_lag = 0.0;
            self.window_start = at;
        }
        self.window_max_lag = self.window_max_lag.max(lag);
    }

    fn lag_seconds(&self, now: Instant) -> f64 {
        self.unfolded.front().map_or(0.0, |(_, at)| {
            now.saturating_duration_since(*at).as_secs_f64()
        })
    }

    /// One progress line: rates since the last line, lag, latency, memory, checkpoint.
    pub fn line(&mut self, pending: usize, checkpoint_bytes: Option<u64>) -> String {
        let now = Instant::now();
        let (at, appended, folded) = self.last_line;
        let seconds = now.duration_since(at).as_secs_f64().max(1e-3);
        let rate = |count: u64| count as f64 / seconds;
        let line = format!(
            "{:>5.0} s  appended {:>8.0}/s  folded {:>8.0}/s  lag {} events {:.2} s  \
             decided p99 {:.0} ms  answers waiting {pending}  rss {}  checkpoint {}",
            now.duration_since(self.started).as_secs_f64(),
            rate(self.appended - appended),
            rate(self.folded_seq.saturating_sub(folded)),
            self.last_appended_seq.saturating_sub(self.folded_seq),
            self.lag_seconds(now),
            percentile(&self.latencies, 99) * 1_000.0,
            memory(),
            mib(checkpoint_bytes),
        );
        self.last_line = (now, self.appended, self.folded_seq);
        line
    }

    /// The run's summary: totals, lag p99 and maximum over 1-second windows, latency.
    #[must_use]
    pub fn summary(&self) -> Vec<String> {
        let seconds = self.started.elapsed().as_secs_f64().max(1e-3);
        let maxima = &self.window_maxima;
        vec![
            format!(
                "appended {} events in {seconds:.0} s ({:.0}/s); folded to #{}",
                self.appended,
                self.appended as f64 / seconds,
                self.folded_seq
            ),
            format!(
                "fold lag over {} one-second windows: p99 {:.3} s, max {:.3} s",
                maxima.len(),
                percentile(maxima, 99),
                maxima.iter().copied().fold(0.0, f64::max)
            ),
            format!(
                "decision latency over {} appends: p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms",
                self.latencies.len(),
                percentile(&self.latencies, 50) * 1_000.0,
                percentile(&self.latencies, 99) * 1_000.0,
                self.latencies.iter().copied().fold(0.0, f64::max) * 1_000.0
            ),
        ]
    }
}

/// Times the hub's folds as they happen: a task watching the folded sequence hands each new
/// value over with the instant it saw it, for [`Stats::read_clock`].
#[derive(Debug)]
pub struct FoldClock {
    folds: mpsc::UnboundedReceiver<(u64, Instant)>,
    task: tokio::task::JoinHandle<()>,
}

impl FoldClock {
    /// Starts timing the folds `updates` announces (`Hub::folded_updates`).
    #[must_use]
    pub fn start(mut updates: watch::Receiver<u64>) -> Self {
        let (sender, folds) = mpsc::unbounded_channel();
        let task = tokio::spawn(async move {
            while updates.changed().await.is_ok() {
                let seq = *updates.borrow_and_update();
                if sender.send((seq, Instant::now())).is_err() {
                    return;
                }
            }
        });
        Self { folds, task }
    }
}

impl Drop for FoldClock {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// The `p`th percentile (nearest rank) of `values`; 0 when empty.
fn percentile(values: &[f64], p: usize) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let rank = (sorted.len() * p).div_ceil(100).clamp(1, sorted.len());
    sorted[rank - 1]
}

/// How a measurement build (`cargo build --release --features heap-count`) reads the bytes the
/// process has allocated and not freed; unset in a normal build.
static HEAP_IN_USE: std::sync::OnceLock<fn() -> u64> = std::sync::OnceLock::new();

/// Makes progress lines report the heap in use, as `reader` counts it.
pub fn count_heap_with(reader: fn() -> u64) {
    let _ = HEAP_IN_USE.set(reader);
}

/// The heap in use, in a build that counts it.
#[must_use]
pub fn heap_bytes() -> Option<u64> {
    HEAP_IN_USE.get().map(|reader| reader())
}

/// RSS, and the heap in use when it is counted: `1948 MiB (heap 1201 MiB)`.
#[must_use]
pub fn memory() -> String {
    match heap_bytes() {
        Some(heap) => format!("{} (heap {})", mib(rss_bytes()), mib(Some(heap))),
        None => mib(rss_bytes()),
    }
}

/// The process's resident set size, from `/proc/self/status` (Linux; `None` elsewhere).
#[must_use]
pub fn rss_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|line| line.starts_with("VmRSS:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1_024)
}

/// Bytes as MiB, or `?`.
#[must_use]
pub fn mib(bytes: Option<u64>) -> String {
    bytes.map_or_else(
        || "?".to_owned(),
        |b| format!("{:.0} MiB", b as f64 / 1_048_576.0),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_percentiles() {
        let values: Vec<f64> = (1..=100).map(f64::from).collect();
        assert_eq!(percentile(&values, 99), 99.0);
        assert_eq!(percentile(&values, 50), 50.0);
        assert_eq!(percentile(&[], 99), 0.0);
    }

    #[test]
    fn an_append_is_decided_once_folded() {
        let mut stats = Stats::new(0);
        stats.appended(10, 10);
        stats.folded(5);
        assert!(stats.latencies.is_empty());
        stats.folded(10);
        assert_eq!(stats.latencies.len(), 1);
        assert!(stats.unfolded.is_empty());
    }

    #[test]
    fn a_fold_counts_when_it_happened_not_when_it_was_looked_at() {
        let mut stats = Stats::new(0);
        let acknowledged = stats.started;
        stats.unfolded.push_back((10, acknowledged));
        stats.folded_at(10, acknowledged + Duration::from_millis(2));
        assert_eq!(stats.latencies, vec![0.002]);
        assert_eq!(stats.window_max_lag, 0.002, "the lag this fold ended");
        // Folded before the append's acknowledgement came back: decided at once.
        stats
            .unfolded
            .push_back((20, acknowledged + Duration::from_millis(5)));
        stats.folded_at(20, acknowledged + Duration::from_millis(3));
        assert_eq!(stats.latencies, vec![0.002, 0.0]);
        // A second later the first window closes with its largest lag.
        stats
            .unfolded
            .push_back((30, acknowledged + Duration::from_millis(10)));
        stats.folded_at(30, acknowledged + Duration::from_millis(1_010));
        assert_eq!(stats.window_maxima, vec![0.002]);
        assert_eq!(stats.window_max_lag, 1.0);
    }

    #[tokio::test]
    async fn the_clock_hands_over_each_fold_it_sees() {
        let (folded, updates) = watch::channel(0_u64);
        let mut clock = FoldClock::start(updates);
        let mut stats = Stats::new(0);
        stats.appended(5, 5);
        folded.send_replace(5);
        for _ in 0..1_000 {
            stats.read_clock(&mut clock);
            if !stats.latencies.is_empty() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        assert_eq!(stats.folded_seq, 5);
        assert_eq!(stats.latencies.len(), 1);
    }
}
