//! The fold meets every kind of stored record: a rejected record is answered with an
//! `Undecodable` rejection and changes nothing — not the state, not its clock — while the
//! sequence moves on; a newer build's record stops the fold before it, without folding it.

use flotilla_core::wire::{LogRecord, RecordKind};
use flotilla_core::{Decision, RejectCode, State};
use flotilla_eventstore::StoredEvent;
use flotilla_replay::{Folder, ReplayError};

#[test]
fn a_rejected_record_decides_undecodable_and_changes_nothing() -> Result<(), ReplayError> {
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
    };
    let stopped = folder.fold(&StoredEvent { seq: 1, record });
    assert!(matches!(
        stopped,
        Err(ReplayError::Newer {
            seq: 1,
            version: 9,
            ..
        })
    ));
    assert_eq!(folder.seq, 0, "not folded");
}
