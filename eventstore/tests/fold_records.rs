//! The fold meets every kind of stored record: a rejected record is answered with an
//! `Undecodable` rejection and changes nothing — not the state, not its clock — while the
//! sequence moves on; a newer build's record stops the fold before it, without folding it; an
//! event whose id was folded before, earlier in the page or as the log knew, decides
//! `DuplicateEvent` and changes nothing. Records are handed to the folder as stored, or kept
//! in a `MemoryLog` where the fold reads them itself.

use std::collections::BTreeMap;

use chrono::{TimeZone, Utc};
use flotilla_core::wire::{LogRecord, RecordKind};
use flotilla_core::{Decision, Envelope, Input, RejectCode, State};
use flotilla_eventstore::fold::{FoldError, Folder};
use flotilla_eventstore::memory_log::MemoryLog;
use flotilla_eventstore::{AppendTime, EventLog, StoredEvent};
use uuid::Uuid;

#[test]
fn a_rejected_record_decides_undecodable_and_changes_nothing() -> Result<(), FoldError> {
    let mut folder = Folder::default();
    let record = LogRecord::Rejected {
        subject: "flotilla.in.heartbeat.member-2".into(),
        reason: "not the JSON form".into(),
        bytes: b"\x00garbage".to_vec(),
    };
    let decisions = folder.fold(&StoredEvent { seq: 1, record })?;
    assert!(matches!(
        decisions.as_slice(),
        [Decision::Rejected { code: RejectCode::Undecodable, message }]
            if message.contains("flotilla.in.heartbeat.member-2")
    ));
    assert_eq!(folder.seq, 1);
    assert_eq!(
        folder.state.hash()?,
        State::default().hash()?,
        "nothing changed"
    );
    assert_eq!(folder.state.now(), None, "not even the clock");
    Ok(())
}

#[test]
fn a_newer_record_stops_the_fold_before_it() {
    let mut folder = Folder::default();
    let record = LogRecord::Newer {
        kind: RecordKind::Event,
        version: 9,
        subject: "redb".to_owned(),
        bytes: Vec::new(),
    };
    let stopped = folder.fold(&StoredEvent { seq: 1, record });
    assert!(matches!(
        stopped,
        Err(FoldError::Newer {
            seq: 1,
            version: 9,
            ..
        })
    ));
    assert_eq!(folder.seq, 0, "not folded");
}

/// A namespace apply with `id`, stored at `seq`.
fn namespace_at(seq: u64, id: Uuid) -> StoredEvent {
    let time = Utc
        .timestamp_opt(1_700_000_000, 0)
        .single()
        .unwrap_or_default();
    let manifest = r#"{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"app"}}"#;
    let envelope = Envelope::new(
        id,
        time,
        "test",
        Input::Apply {
            manifest: manifest.into(),
        },
    );
    StoredEvent {
        seq,
        record: LogRecord::Event(envelope),
    }
}

fn is_duplicate(decisions: &[Decision]) -> bool {
    matches!(
        decisions,
        [Decision::Rejected {
            code: RejectCode::DuplicateEvent,
            ..
        }]
    )
}

#[test]
fn an_id_repeated_within_a_page_is_a_duplicate_and_first_seen_once() -> Result<(), FoldError> {
    let (id, other) = (Uuid::from_u128(7), Uuid::from_u128(8));
    let mut folder = Folder::default();
    let mut first = BTreeMap::new();
    let folded =
        folder.fold_records_with(&[namespace_at(1, id), namespace_at(2, id)], &mut first, &[])?;
    assert!(
        is_duplicate(&folded.decisions[1].1),
        "{:?}",
        folded.decisions
    );
    assert_eq!(folded.first_seen, vec![(id, 1)]);
    let mut once = Folder::default();
    once.fold_records(&[namespace_at(1, id)], BTreeMap::new(), &[])?;
    assert_eq!(
        folder.state.hash()?,
        once.state.hash()?,
        "the repeat changed nothing"
    );
    // A later part of the page sees the earlier parts' ids through the same map.
    let later = folder.fold_records_with(
        &[namespace_at(3, id), namespace_at(4, other)],
        &mut first,
        &[],
    )?;
    assert!(is_duplicate(&later.decisions[0].1), "{:?}", later.decisions);
    assert!(
        !is_duplicate(&later.decisions[1].1),
        "{:?}",
        later.decisions
    );
    assert_eq!(
        later.first_seen,
        vec![(other, 4)],
        "the repeat is not seen first"
    );
    assert_eq!(first, BTreeMap::from([(id, 1), (other, 4)]));
    assert_eq!(folder.seq, 4);
    Ok(())
}

#[test]
fn an_id_the_log_knew_at_an_earlier_sequence_is_a_duplicate() -> Result<(), FoldError> {
    let id = Uuid::from_u128(9);
    let mut first = BTreeMap::from([(id, 0)]);
    let mut folder = Folder::default();
    let folded = folder.fold_records_with(&[namespace_at(1, id)], &mut first, &[])?;
    assert!(
        is_duplicate(&folded.decisions[0].1),
        "{:?}",
        folded.decisions
    );
    assert!(folded.first_seen.is_empty());
    assert_eq!(
        folder.state.hash()?,
        State::default().hash()?,
        "nothing changed"
    );
    Ok(())
}

#[tokio::test]
async fn catching_up_folds_the_log_and_stops_before_a_newer_record() -> Result<(), FoldError> {
    let log = MemoryLog::new();
    let LogRecord::Event(envelope) = namespace_at(1, Uuid::from_u128(1)).record else {
        unreachable!("an event");
    };
    log.append(vec![envelope], AppendTime::AsGiven).await?;
    log.push_record(LogRecord::Rejected {
        subject: "flotilla.in.heartbeat.member-2".into(),
        reason: "not the JSON form".into(),
        bytes: Vec::new(),
    });
    log.push_record(LogRecord::Newer {
        kind: RecordKind::Event,
        version: 9,
        subject: "redb".to_owned(),
        bytes: Vec::new(),
    });
    let mut folder = Folder::default();
    let stopped = folder.catch_up(&log, 3).await;
    assert!(
        matches!(stopped, Err(FoldError::Newer { seq: 3, .. })),
        "{stopped:?}"
    );
    assert_eq!(folder.seq, 2, "folded up to the newer record");
    assert_ne!(
        folder.state.hash()?,
        State::default().hash()?,
        "the event folded"
    );
    Ok(())
}
