//! The hub's metrics, in Prometheus text at `GET /metrics` on the hub's own listener
//! (`docs/observability.md` lists them).
//!
//! One `metrics` recorder per process, installed on first use ([`handle`]): every hub in the
//! process records into it, so two hubs in one test process share their series. Counters and
//! the histogram are recorded where the work happens (the writer's and a follower's fold,
//! [`crate::runtime::Hub::submit`], checkpoints); per-event work only adds to counters. What
//! needs a whole-state scan — clusters by health, placements and runs by state — and the fold
//! lag are computed when `/metrics` is scraped, from the folded view
//! ([`crate::metrics_scrape`]).
//!
//! This module knows the series and records into them; it reads no hub, so the runtime
//! records through it and the scrape (which reads the hub) sits above both.

use std::collections::BTreeMap;
use std::sync::OnceLock;
use std::time::Duration;

use flotilla_core::event::ManifestCondition;
use flotilla_core::{Decision, Decisions, Input};
use flotilla_eventstore::StoredEvent;
use metrics_exporter_prometheus::{Matcher, PrometheusBuilder, PrometheusHandle};

/// Inputs folded by this process's writer or follower (not the re-fold at start).
pub const EVENTS_FOLDED: &str = "flotilla_events_folded_total";
/// Decisions of folded inputs, by `kind` (the decision's variant).
pub const DECISIONS: &str = "flotilla_decisions_total";
/// Rejections among them, by `code`.
pub const REJECTIONS: &str = "flotilla_rejections_total";
/// Inputs in the log not folded yet (the log's last sequence minus the folded one).
pub const FOLD_LAG_EVENTS: &str = "flotilla_fold_lag_events";
/// How long the oldest unfolded input has waited: the hub's now minus its log time.
pub const FOLD_LAG_SECONDS: &str = "flotilla_fold_lag_seconds";
/// The last folded input sequence.
pub const FOLDED_SEQ: &str = "flotilla_folded_seq";
/// Member clusters by `health`.
pub const CLUSTERS: &str = "flotilla_clusters";
/// Placements by their last shown `condition` and its `status`.
pub const PLACEMENTS: &str = "flotilla_placements";
/// Staged update runs by `state`.
pub const UPDATE_RUNS: &str = "flotilla_update_runs";
/// Seconds each append to the log took (`Hub::submit`).
pub const APPEND_SECONDS: &str = "flotilla_append_seconds";
/// Size of the last checkpoint written, in bytes.
pub const CHECKPOINT_BYTES: &str = "flotilla_checkpoint_bytes";
/// Seconds each checkpoint took to encode and write.
pub const CHECKPOINT_SECONDS: &str = "flotilla_checkpoint_seconds";
/// Seconds the writer paused for each checkpoint's snapshot.
pub const CHECKPOINT_PAUSE_SECONDS: &str = "flotilla_checkpoint_pause_seconds";
/// Appends the log refused (`Hub::submit`).
pub const APPEND_ERRORS: &str = "flotilla_append_errors_total";
/// 1 while the log's storage is full (writes are refused until space is freed), else 0.
pub const STORAGE_FULL: &str = "flotilla_storage_full";
/// Appends refused because the log's storage was full (`Hub::submit`; also counted in
/// [`APPEND_ERRORS`]).
pub const STORAGE_FULL_REFUSALS: &str = "flotilla_storage_full_refusals_total";
/// Work reports recorded with a manifest that failed to apply or is not available, by
/// `condition` (`Applied`, `Available`).
pub const WORK_REPORTS_FAILED: &str = "flotilla_work_reports_failed_total";
/// Always 1, labelled with this build's version and wire versions.
pub const BUILD_INFO: &str = "flotilla_build_info";
/// 1 for the role this hub has now, 0 for the others, by `role`.
pub const WRITER: &str = "flotilla_writer";
/// The oldest heartbeat among the members of each `health`, in seconds.
pub const HEARTBEAT_AGE_SECONDS: &str = "flotilla_heartbeat_age_seconds";
/// API requests answered, by `method`, `route` and `code`.
pub const HTTP_REQUESTS: &str = "flotilla_http_requests_total";
/// Seconds until each API request's answer began, by `method` and `route`.
pub const HTTP_REQUEST_SECONDS: &str = "flotilla_http_request_duration_seconds";

/// Buckets of the append latency histogram, in seconds.
const APPEND_BUCKETS_SECONDS: [f64; 12] = [
    0.000_25, 0.000_5, 0.001, 0.002_5, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0,
];
/// Buckets of the checkpoint time histogram, in seconds.
const CHECKPOINT_BUCKETS_SECONDS: [f64; 9] = [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1.0, 5.0, 10.0];
/// Buckets of the API request time histogram, in seconds.
const HTTP_BUCKETS_SECONDS: [f64; 11] = [
    0.001, 0.002_5, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 5.0,
];
/// The `condition` of a failed work report: what KubeFleet's work applier reports.
pub const REPORT_CONDITIONS: [&str; 2] = ["Applied", "Available"];
/// How often the recorder drains histogram samples between scrapes (they pile up otherwise).
pub const UPKEEP_EVERY: Duration = Duration::from_secs(5);

/// The process's recorder handle, installing the recorder on first use.
pub fn handle() -> &'static PrometheusHandle {
    static HANDLE: OnceLock<PrometheusHandle> = OnceLock::new();
    HANDLE.get_or_init(|| {
        let recorder = builder().build_recorder();
        let handle = recorder.handle();
        match metrics::set_global_recorder(recorder) {
            Ok(()) => describe(),
            // Another recorder came first (an embedding program's): it gets the series, and
            // `/metrics` renders this one's, which stays empty.
            Err(error) => tracing::warn!(%error, "a metrics recorder is already installed"),
        }
        handle
    })
}

/// The recorder's settings: histograms with buckets rather than summaries.
fn builder() -> PrometheusBuilder {
    let plain = PrometheusBuilder::new();
    let bucketed = PrometheusBuilder::new()
        .set_buckets_for_metric(
            Matcher::Full(APPEND_SECONDS.to_owned()),
            &APPEND_BUCKETS_SECONDS,
        )
        .and_then(|b| {
            b.set_buckets_for_metric(
                Matcher::Full(CHECKPOINT_SECONDS.to_owned()),
                &CHECKPOINT_BUCKETS_SECONDS,
            )
        })
        .and_then(|b| {
            b.set_buckets_for_metric(
                Matcher::Full(CHECKPOINT_PAUSE_SECONDS.to_owned()),
                &CHECKPOINT_BUCKETS_SECONDS,
            )
        })
        .and_then(|b| {
            b.set_buckets_for_metric(
                Matcher::Full(HTTP_REQUEST_SECONDS.to_owned()),
                &HTTP_BUCKETS_SECONDS,
            )
        });
    bucketed.unwrap_or(plain)
}

/// Help texts, and the series every scrape shows from the start: the counters at 0, the
/// checkpoint's size at 0 and its histograms empty until this process writes one (a restarted
/// hub shows them before its first checkpoint), and the build.
fn describe() {
    describe_fold();
    describe_checkpoints();
    describe_more();
    metrics::counter!(EVENTS_FOLDED).increment(0);
    metrics::counter!(APPEND_ERRORS).increment(0);
    metrics::counter!(STORAGE_FULL_REFUSALS).increment(0);
    metrics::gauge!(STORAGE_FULL).set(0.0);
    for condition in REPORT_CONDITIONS {
        metrics::counter!(WORK_REPORTS_FAILED, "condition" => condition).increment(0);
    }
    metrics::gauge!(CHECKPOINT_BYTES).set(0.0);
    // Registered, not recorded: the exporter renders a registered histogram with count 0.
    let _registered = metrics::histogram!(CHECKPOINT_SECONDS);
    let _registered = metrics::histogram!(CHECKPOINT_PAUSE_SECONDS);
    metrics::gauge!(
        BUILD_INFO,
        "version" => env!("CARGO_PKG_VERSION"),
        "schema_version" => flotilla_core::event::SCHEMA_VERSION.to_string(),
        "decision_version" => flotilla_core::wire::DECISION_VERSION.to_string(),
    )
    .set(1.0);
}

fn describe_fold() {
    metrics::describe_counter!(
        EVENTS_FOLDED,
        "Inputs folded by this process's writer or follower"
    );
    metrics::describe_counter!(DECISIONS, "Decisions of folded inputs, by kind");
    metrics::describe_counter!(REJECTIONS, "Rejected inputs, by code");
    metrics::describe_gauge!(FOLD_LAG_EVENTS, "Inputs in the log not folded yet");
    metrics::describe_gauge!(
        FOLD_LAG_SECONDS,
        "Wait of the oldest unfolded input, seconds"
    );
    metrics::describe_gauge!(FOLDED_SEQ, "The last folded input sequence");
    metrics::describe_gauge!(CLUSTERS, "Member clusters by health");
    metrics::describe_gauge!(PLACEMENTS, "Placements by last shown condition and status");
    metrics::describe_gauge!(UPDATE_RUNS, "Staged update runs by state");
    metrics::describe_histogram!(APPEND_SECONDS, "Seconds per append to the log");
}

fn describe_checkpoints() {
    metrics::describe_gauge!(
        CHECKPOINT_BYTES,
        "Size of the last checkpoint written, bytes"
    );
    metrics::describe_histogram!(
        CHECKPOINT_SECONDS,
        "Seconds per checkpoint (encode + write)"
    );
    metrics::describe_histogram!(
        CHECKPOINT_PAUSE_SECONDS,
        "Seconds the writer paused for a checkpoint's snapshot"
    );
}

fn describe_more() {
    metrics::describe_counter!(APPEND_ERRORS, "Appends the log refused");
    metrics::describe_gauge!(
        STORAGE_FULL,
        "1 while the log's storage is full and writes are refused"
    );
    metrics::describe_counter!(
        STORAGE_FULL_REFUSALS,
        "Appends refused because the log's storage was full"
    );
    metrics::describe_counter!(
        WORK_REPORTS_FAILED,
        "Work reports recorded with a manifest failed to apply or not available, by condition"
    );
    metrics::describe_gauge!(BUILD_INFO, "This build: version and wire versions");
    metrics::describe_gauge!(WRITER, "1 for this hub's role (writer, standby, follower)");
    metrics::describe_gauge!(
        HEARTBEAT_AGE_SECONDS,
        "Oldest heartbeat among the members of each health, seconds"
    );
    metrics::describe_counter!(HTTP_REQUESTS, "API requests by method, route and code");
    metrics::describe_histogram!(
        HTTP_REQUEST_SECONDS,
        "Seconds until an API request's answer began, by method and route"
    );
}

/// Counts one fold round: every input folded, its decisions by kind, rejections by code, and
/// the failed work reports among the recorded ones (looked up in `events`, the records folded,
/// by sequence). Tallied first, so the registry is looked up once per kind, not once per
/// decision.
pub fn record_folded(folded: &[(u64, Decisions)], events: &[StoredEvent]) {
    handle();
    let inputs = u64::try_from(folded.len()).unwrap_or(u64::MAX);
    metrics::counter!(EVENTS_FOLDED).increment(inputs);
    let mut kinds: BTreeMap<&'static str, u64> = BTreeMap::new();
    let mut codes: BTreeMap<&'static str, u64> = BTreeMap::new();
    let mut failed: BTreeMap<&'static str, u64> = BTreeMap::new();
    for (seq, decisions) in folded {
        for decision in decisions {
            *kinds.entry(decision.kind_name()).or_default() += 1;
            match decision {
                Decision::Rejected { code, .. } => *codes.entry(code.as_str()).or_default() += 1,
                Decision::WorkReported { .. } => {
                    if let Some(condition) = failed_condition(events, *seq) {
                        *failed.entry(condition).or_default() += 1;
                    }
                }
                _ => {}
            }
        }
    }
    for (kind, count) in kinds {
        metrics::counter!(DECISIONS, "kind" => kind).increment(count);
    }
    for (code, count) in codes {
        metrics::counter!(REJECTIONS, "code" => code).increment(count);
    }
    for (condition, count) in failed {
        metrics::counter!(WORK_REPORTS_FAILED, "condition" => condition).increment(count);
    }
}

/// The condition a recorded work report failed on, as the member reported it: `Applied` when
/// the work or one of its manifests did not apply, else `Available` when it or one of them is
/// not available; `None` for a report without a failure (or an input that is not a report).
fn failed_condition(events: &[StoredEvent], seq: u64) -> Option<&'static str> {
    let index = events.binary_search_by_key(&seq, |event| event.seq).ok()?;
    let Input::WorkReport(report) = &events.get(index)?.event()?.payload else {
        return None;
    };
    let failed_on = |condition: ManifestCondition| {
        report
            .failed_manifests
            .iter()
            .any(|failure| failure.condition == condition)
    };
    if report.applied == Some(false) || failed_on(ManifestCondition::Applied) {
        Some(ManifestCondition::Applied.as_str())
    } else if report.available == Some(false) || failed_on(ManifestCondition::Available) {
        Some(ManifestCondition::Available.as_str())
    } else {
        None
    }
}

/// Records how long one append took.
pub fn record_append(took: Duration) {
    handle();
    metrics::histogram!(APPEND_SECONDS).record(took.as_secs_f64());
}

/// Counts an append the log refused.
pub fn record_append_error() {
    handle();
    metrics::counter!(APPEND_ERRORS).increment(1);
}

/// Counts an append refused because the log's storage was full.
pub fn record_storage_full_refusal() {
    handle();
    metrics::counter!(STORAGE_FULL_REFUSALS).increment(1);
}

/// Sets whether the log's storage is full now (read from the log when `/metrics` is scraped).
pub fn record_storage_full(full: bool) {
    handle();
    metrics::gauge!(STORAGE_FULL).set(if full { 1.0 } else { 0.0 });
}

/// Records one answered API request: `route` is the matched route's template (never the
/// request's path, so the series stay as few as the routes), `method` one of the standard
/// methods or `OTHER`.
pub fn record_http(method: &'static str, route: &str, code: u16, took: Duration) {
    handle();
    let route = route.to_owned();
    metrics::counter!(
        HTTP_REQUESTS,
        "method" => method,
        "route" => route.clone(),
        "code" => code.to_string(),
    )
    .increment(1);
    metrics::histogram!(HTTP_REQUEST_SECONDS, "method" => method, "route" => route)
        .record(took.as_secs_f64());
}

/// Records a checkpoint written: its size and how long it took.
#[allow(clippy::cast_precision_loss)] // a checkpoint is far below 2^52 bytes
pub fn record_checkpoint(bytes: u64, took: Duration) {
    handle();
    metrics::gauge!(CHECKPOINT_BYTES).set(bytes as f64);
    metrics::histogram!(CHECKPOINT_SECONDS).record(took.as_secs_f64());
}

/// Records how long the writer paused to take a checkpoint's snapshot.
pub fn record_checkpoint_pause(took: Duration) {
    handle();
    metrics::histogram!(CHECKPOINT_PAUSE_SECONDS).record(took.as_secs_f64());
}

#[cfg(test)]
mod tests {
    use flotilla_core::event::{ManifestCondition, WorkReport};
    use flotilla_core::{Envelope, Input};
    use flotilla_eventstore::{LogRecord, StoredEvent};

    fn stored(seq: u64, payload: Input) -> StoredEvent {
        let envelope = Envelope::new(uuid::Uuid::nil(), chrono::Utc::now(), "test", payload);
        StoredEvent {
            seq,
            record: LogRecord::Event(envelope),
        }
    }

    #[test]
    fn a_report_fails_on_apply_before_availability() {
        let fine = WorkReport::available("m1", "p", 0);
        let unavailable = WorkReport {
            available: Some(false),
            ..fine.clone()
        };
        let unapplied = WorkReport {
            applied: Some(false),
            available: Some(false),
            ..fine.clone()
        };
        let events = [
            stored(1, Input::WorkReport(fine)),
            stored(2, Input::WorkReport(unavailable)),
            stored(4, Input::WorkReport(unapplied)),
            stored(5, Input::Tick),
        ];
        let failed = |seq| super::failed_condition(&events, seq);
        assert_eq!(failed(1), None);
        assert_eq!(failed(2), Some(ManifestCondition::Available.as_str()));
        assert_eq!(failed(3), None, "no such record");
        assert_eq!(failed(4), Some(ManifestCondition::Applied.as_str()));
        assert_eq!(failed(5), None, "not a report");
    }
}
