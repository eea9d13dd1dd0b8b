//! `flotilla replay info`'s text: where the log starts and ends, and what its bytes are.

use std::fmt::Write;
use std::path::Path;

use flotilla_eventstore::nats_log::info::NatsInfo;
use flotilla_eventstore::redb_log::archive::ArchiveInfo;
use flotilla_eventstore::redb_log::info::{InputPoint, LogInfo};
use serde::Serialize;

/// Segments `replay info` lists one by one, the newest (all of them with `-o json`).
const SEGMENT_ROWS_MAX: usize = 20;

/// `replay info --archive DIR`: the log's report and the archive's.
#[derive(Debug, Serialize)]
pub(super) struct Archived {
    /// The log, as without an archive.
    #[serde(flatten)]
    pub(super) log: LogInfo,
    /// The archive.
    pub(super) archive: ArchiveReport,
}

/// What the archive holds, and where a replay through it starts.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct ArchiveReport {
    /// Its files.
    #[serde(flatten)]
    pub(super) info: ArchiveInfo,
    /// The input a replay through the archive and the log starts after (0: the first).
    pub(super) replays_from: Option<u64>,
    /// Why the archive and the log cannot be read as one, when they cannot.
    pub(super) problem: Option<String>,
}

/// The report of a log and its archive as text.
pub(super) fn archived_text(path: &Path, report: &Archived) -> String {
    let mut out = text(path, &report.log);
    let archive = &report.archive;
    let info = &archive.info;
    let _ = writeln!(out, "\nARCHIVE      {}", info.dir.display());
    let range = match (info.first, info.last) {
        (Some(first), Some(last)) => format!(
            ", inputs #{first}..=#{last}, decisions to #{}",
            info.decided_to
        ),
        _ => String::new(),
    };
    let _ = writeln!(
        out,
        "segments     {} ({}){range}",
        info.segments.len(),
        bytes(info.bytes)
    );
    if !info.checkpoints.is_empty() {
        let seqs: Vec<String> = info
            .checkpoints
            .iter()
            .map(|c| format!("#{}", c.seq))
            .collect();
        let _ = writeln!(out, "checkpoints  {}", seqs.join(" "));
    }
    match (&archive.replays_from, &archive.problem) {
        (Some(0), _) => {
            let _ = writeln!(
                out,
                "replays      from the first input, the archive and the log as one"
            );
        }
        (Some(start), _) => {
            let _ = writeln!(
                out,
                "replays      from checkpoint #{start}, the archive and the log as one"
            );
        }
        (None, Some(problem)) => {
            let _ = writeln!(out, "replays      cannot go through the archive: {problem}");
        }
        (None, None) => {}
    }
    for file in &info.unreadable {
        let _ = writeln!(out, "unreadable   {file}");
    }
    if info.segments.is_empty() {
        return out;
    }
    let _ = writeln!(
        out,
        "\n  {:<14} {:<14} {:<24} {:>10}",
        "FIRST", "LAST", "BASES", "BYTES"
    );
    let older = info.segments.len().saturating_sub(SEGMENT_ROWS_MAX);
    if older > 0 {
        let _ = writeln!(out, "  ({older} older segments; -o json lists every one)");
    }
    for segment in info.segments.iter().skip(older) {
        let bases = format!("#{} -> #{}", segment.from_base, segment.to_base);
        let _ = writeln!(
            out,
            "  #{:<13} #{:<13} {bases:<24} {:>10}",
            segment.first,
            segment.last,
            bytes(segment.bytes)
        );
    }
    out
}

/// The report as text.
pub(super) fn text(path: &Path, info: &LogInfo) -> String {
    let inputs = info.inputs();
    let checkpoints = info.checkpoint_file_bytes();
    let total = info.file_bytes + checkpoints;
    let mut out = String::new();
    let _ = writeln!(out, "log          {}", path.display());
    span(
        &mut out,
        [info.first.as_ref(), info.last.as_ref()],
        info.base_seq,
        info.window().map(|window| (window, inputs)),
        info.last_decided_seq,
    );
    let _ = writeln!(
        out,
        "on disk      {} ({} log file, {} checkpoint files){}",
        bytes(total),
        bytes(info.file_bytes),
        bytes(checkpoints),
        per_input(total, inputs)
    );
    let _ = writeln!(out, "\nTABLE              ENTRIES        BYTES   PER INPUT");
    for table in &info.tables {
        let _ = writeln!(
            out,
            "{:<18} {:>8} {:>12} {:>11}",
            table.name,
            table.entries,
            bytes(table.bytes()),
            per_input(table.bytes(), inputs).trim_start_matches(", ")
        );
    }
    let _ = writeln!(out, "\nCHECKPOINTS  {}", info.checkpoints.len());
    for checkpoint in &info.checkpoints {
        let _ = writeln!(
            out,
            "  #{:<12} {:>12}  in a {}",
            checkpoint.seq,
            bytes(checkpoint.bytes),
            checkpoint.stored
        );
    }
    out
}

/// The report of a NATS log as text.
pub(super) fn nats_text(url: &str, info: &NatsInfo) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "log          NATS JetStream at {url}");
    span(
        &mut out,
        [info.first.as_ref(), info.last.as_ref()],
        info.base_seq,
        info.window().map(|window| (window, info.inputs())),
        info.last_decided_seq,
    );
    let _ = writeln!(
        out,
        "\nSTREAM                     MESSAGES        BYTES  MAX AGE"
    );
    for stream in &info.streams {
        let max_age = match stream.max_age_secs {
            0 => "none".to_owned(),
            secs => {
                let secs = i64::try_from(secs).unwrap_or(i64::MAX);
                flotilla_projections::human_duration(chrono::Duration::seconds(secs))
            }
        };
        let _ = writeln!(
            out,
            "{:<26} {:>8} {:>12}  {max_age}",
            stream.name,
            stream.messages,
            bytes(stream.bytes)
        );
    }
    let _ = writeln!(out, "\nCHECKPOINTS  {}", info.checkpoints.len());
    for object in &info.checkpoints {
        let _ = writeln!(out, "  {:<28} {:>12}", object.name, bytes(object.bytes));
    }
    out
}

/// The lines every log's report opens with: its first input, its base (under a retention
/// window), its last input, the window it keeps (with its inputs) and how far it is decided.
fn span(
    out: &mut String,
    [first, last]: [Option<&InputPoint>; 2],
    base_seq: u64,
    window: Option<(chrono::Duration, u64)>,
    decided: u64,
) {
    let _ = writeln!(out, "first input  {}", point(first));
    if base_seq > 0 {
        let _ = writeln!(
            out,
            "base         checkpoint #{base_seq} (a retention window removed the inputs up to it)"
        );
    }
    let _ = writeln!(out, "last input   {}", point(last));
    if let Some((window, inputs)) = window {
        let window = flotilla_projections::human_duration(window);
        let _ = writeln!(out, "window       {window} ({inputs} inputs)");
    }
    let _ = writeln!(out, "decided to   #{decided}");
}

fn point(point: Option<&InputPoint>) -> String {
    match point {
        None => "none".to_owned(),
        Some(InputPoint { seq, time: None }) => format!("#{seq}"),
        Some(InputPoint {
            seq,
            time: Some(time),
        }) => format!("#{seq} at {}", time.format("%Y-%m-%dT%H:%M:%S%.3fZ")),
    }
}

fn per_input(bytes: u64, inputs: u64) -> String {
    if inputs == 0 {
        return String::new();
    }
    format!(", {} bytes per input", bytes / inputs)
}

fn bytes(n: u64) -> String {
    const MIB: u64 = 1 << 20;
    if n >= MIB {
        format!("{:.1} MiB", n as f64 / MIB as f64)
    } else {
        format!("{:.1} KiB", n as f64 / 1024.0)
    }
}
