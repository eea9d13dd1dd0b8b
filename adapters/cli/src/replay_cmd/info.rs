//! `flotilla replay info`'s text: where the log starts and ends, and what its bytes are.

use std::fmt::Write;
use std::path::Path;

use flotilla_eventstore::nats_log::info::NatsInfo;
use flotilla_eventstore::redb_log::info::{InputPoint, LogInfo};

/// The report as text.
pub(super) fn text(path: &Path, info: &LogInfo) -> String {
    let inputs = info.inputs();
    let checkpoints = info.checkpoint_file_bytes();
    let total = info.file_bytes + checkpoints;
    let mut out = String::new();
    let _ = writeln!(out, "log          {}", path.display());
    let _ = writeln!(out, "first input  {}", point(info.first.as_ref()));
    if info.base_seq > 0 {
        let _ = writeln!(
            out,
            "base         checkpoint #{} (a retention window removed the inputs up to it)",
            info.base_seq
        );
    }
    let _ = writeln!(out, "last input   {}", point(info.last.as_ref()));
    if let Some(window) = info.window() {
        let window = flotilla_projections::human_duration(window);
        let _ = writeln!(out, "window       {window} ({inputs} inputs)");
    }
    let _ = writeln!(out, "decided to   #{}", info.last_decided_seq);
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
    let _ = writeln!(out, "first input  {}", point(info.first.as_ref()));
    let _ = writeln!(out, "last input   {}", point(info.last.as_ref()));
    let _ = writeln!(out, "decided to   #{}", info.last_decided_seq);
    let _ = writeln!(out, "\nSTREAM                     MESSAGES        BYTES");
    for stream in &info.streams {
        let _ = writeln!(
            out,
            "{:<26} {:>8} {:>12}",
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
