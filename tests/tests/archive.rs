//! A served hub with a retention window and an archive (`serve --retain 60s --archive DIR`), on
//! a test clock: the window cuts the log as without an archive, what it removes is in the
//! archive, and `replay --archive DIR` reads the archive and the log as one — `verify` passes
//! from the first input, `state --at` answers before the log's base (which the log alone
//! refuses), `timeline` reaches across the cut, and `info` lists the segments. The hub
//! restarts on the cut log with its archive and goes on archiving.

use std::path::{Path, PathBuf};

use flotilla_tests::support::{HubProcess, fixture, run_ok, stderr};
use serde_json::{Value, json};

const START: &str = "2026-03-01T00:00:00Z";

fn binary() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_flotilla-e2e"))
}

fn start(data: &Path, archive: &Path) -> Result<HubProcess, String> {
    let archive = archive.display().to_string();
    let args = [
        "--test-clock",
        START,
        "--retain",
        "60s",
        "--checkpoint-every",
        "20",
        "--archive",
        &archive,
    ];
    HubProcess::start(&binary(), data, &args)
}

/// `flotilla replay --data DATA [--archive DIR] ARGS`: its stdout, or why it failed.
fn replay(data: &Path, archive: Option<&Path>, args: &[&str]) -> Result<String, String> {
    let mut command = vec![
        "replay".to_owned(),
        "--data".to_owned(),
        data.display().to_string(),
    ];
    if let Some(archive) = archive {
        command.extend(["--archive".to_owned(), archive.display().to_string()]);
    }
    command.extend(args.iter().map(|arg| (*arg).to_owned()));
    let command: Vec<&str> = command.iter().map(String::as_str).collect();
    run_ok(&binary(), &command)
}

fn heartbeats() -> Value {
    let beats = ["member1", "member2", "member3"]
        .map(|cluster| json!({"schemaVersion": 1, "type": "heartbeat", "cluster": cluster}));
    Value::Array(beats.to_vec())
}

/// Beats of three members every 10 s of the test clock, for steps `steps`.
fn beat(hub: &HubProcess, steps: std::ops::RangeInclusive<i64>) -> Result<(), String> {
    for step in steps {
        hub.set_clock(START, step * 10)?;
        hub.post_events(&heartbeats())?;
    }
    Ok(())
}

fn info(data: &Path, archive: &Path) -> Result<Value, String> {
    let text = replay(data, Some(archive), &["info", "-o", "json"])?;
    serde_json::from_str(&text).map_err(|e| format!("{e}: {text}"))
}

#[test]
fn an_archived_log_replays_from_its_first_input_across_the_cut() -> Result<(), String> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let (data, archive) = (dir.path().join("data"), dir.path().join("archive"));
    let hub = start(&data, &archive)?;
    let applied = hub.cli(&["apply", "-f", &fixture("staged-fleet.yaml")])?;
    assert!(applied.status.success(), "{}", stderr(&applied));
    beat(&hub, 1..=40)?;
    let seq = hub.status()?["seq"].as_u64().ok_or("no seq")?;
    hub.stop()?;

    let report = info(&data, &archive)?;
    let base = report["baseSeq"].as_u64().ok_or("no base")?;
    assert!(base > 0, "the window cut the log: {report:#}");
    let segments = report["archive"]["segments"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert!(!segments.is_empty(), "{report:#}");
    assert_eq!(segments[0]["first"].as_u64(), Some(1), "{report:#}");
    assert_eq!(report["archive"]["decidedTo"].as_u64(), Some(base));
    assert_eq!(report["archive"]["replaysFrom"].as_u64(), Some(0));
    let text = replay(&data, Some(&archive), &["info"])?;
    assert!(
        text.contains("ARCHIVE") && text.contains(&format!("decisions to #{base}")),
        "{text}"
    );

    // Through the archive: every input from the first verifies, and a point before the base
    // has a state; the log alone refuses that point, as before.
    let verified = replay(&data, Some(&archive), &["verify"])?;
    assert!(
        verified.contains(&format!("verified inputs 1..={seq}")),
        "{verified}"
    );
    let before = (base - 1).to_string();
    let member = [
        "state",
        "--at",
        &before,
        "membercluster",
        "member1",
        "-o",
        "json",
    ];
    let state = replay(&data, Some(&archive), &member)?;
    assert!(state.contains("member1"), "{state}");
    let refused = replay(&data, None, &member).err().unwrap_or_default();
    assert!(
        refused.contains("before the log's retained inputs"),
        "{refused}"
    );
    let timeline = replay(
        &data,
        Some(&archive),
        &["timeline", "--cluster", "member1", "-o", "json"],
    )?;
    let timeline: Value = serde_json::from_str(&timeline).map_err(|e| e.to_string())?;
    let first = &timeline["entries"][0];
    assert!(
        first["seq"].as_u64().is_some_and(|at| at < base) && first["recorded"] == true,
        "the timeline starts before the base, with its recorded decisions: {timeline:#}"
    );

    // The hub restarts on the cut log with its archive, and the next cuts go on from it.
    let restarted = start(&data, &archive)?;
    assert_eq!(restarted.status()?["seq"].as_u64(), Some(seq));
    beat(&restarted, 41..=60)?;
    let last = restarted.status()?["seq"].as_u64().ok_or("no seq")?;
    restarted.stop()?;
    let report = info(&data, &archive)?;
    let later = report["baseSeq"].as_u64().ok_or("no base")?;
    assert!(later > base, "the base moved on: {report:#}");
    assert_eq!(report["archive"]["decidedTo"].as_u64(), Some(later));
    let verified = replay(&data, Some(&archive), &["verify"])?;
    assert!(
        verified.contains(&format!("verified inputs 1..={last}")),
        "{verified}"
    );
    Ok(())
}

/// `simulate --archive DIR` opens its hub's log with the archive (a run this short makes no
/// cut, so the directory is not made yet), and `replay --archive DIR` reads such a log alone.
#[test]
fn a_simulation_takes_the_archive_and_replay_reads_a_log_not_cut_yet() -> Result<(), String> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let (data, archive) = (dir.path().join("sim"), dir.path().join("archive"));
    let (data_arg, archive_arg) = (data.display().to_string(), archive.display().to_string());
    let out = run_ok(
        &binary(),
        &[
            "simulate",
            "--clusters",
            "20",
            "--heartbeat",
            "2s",
            "--duration",
            "1s",
            "--data",
            &data_arg,
            "--retain",
            "1s",
            "--archive",
            &archive_arg,
        ],
    )?;
    assert!(
        out.contains(&format!("older ones archived in {archive_arg} (--archive)")),
        "{out}"
    );
    let verified = replay(&data, Some(&archive), &["verify"])?;
    assert!(verified.contains("verified inputs 1..="), "{verified}");
    Ok(())
}
