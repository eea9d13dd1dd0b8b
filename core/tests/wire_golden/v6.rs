//! Schema version 6: the principal. Events of versions 1 to 5 upcast with
//! `Principal::Unrecorded`; version 5 bodies re-encode byte for byte through `wire::v5`; the
//! version 6 golden file holds an event from every kind of principal.

use flotilla_core::codec::{decode_record, encode_record};
use flotilla_core::wire::decode_envelope;
use flotilla_core::wire::{self, RecordKind};
use flotilla_core::{Envelope, Principal, TokenRole};

use super::{golden_path, read_frames, split_frames, v5_events};

/// The events as an older version decodes them: no principal was recorded.
pub(crate) fn unrecorded(events: Vec<Envelope>) -> Vec<Envelope> {
    events
        .into_iter()
        .map(|event| event.with_principal(Principal::Unrecorded))
        .collect()
}

/// The golden file's frames re-encoded through the frozen `wire::v5` types.
pub(crate) fn frozen_v5_frames(golden: &[u8]) -> Vec<u8> {
    super::join_frames(split_frames(golden).into_iter().map(|frame| {
        assert_eq!(&frame[5..7], &5_u16.to_le_bytes(), "of version 5");
        let body = &frame[wire::HEADER_BYTES..];
        let frozen: wire::v5::Envelope = decode_record("event", body).expect("decodes as wire::v5");
        let again = encode_record("event", &frozen).expect("encodes");
        wire::marked_frame(RecordKind::Event, 5, &again)
    }))
}

/// Every kind of principal, in turn.
fn principals() -> Vec<Principal> {
    vec![
        Principal::Hub,
        Principal::Local,
        Principal::Nats,
        Principal::Unrecorded,
        Principal::Agent {
            cluster: "member1".into(),
        },
        Principal::Token {
            name: "root".into(),
            role: TokenRole::Admin,
        },
        Principal::Token {
            name: "member1-agent".into(),
            role: TokenRole::Agent {
                cluster: "member1".into(),
            },
        },
        Principal::Token {
            name: "team-a".into(),
            role: TokenRole::Namespace {
                namespaces: vec!["team-a".into(), "team-b".into()],
            },
        },
    ]
}

/// Version 6: version 5's events, each from one of the principals in turn.
pub(crate) fn v6_events() -> Vec<Envelope> {
    let principals = principals();
    v5_events()
        .into_iter()
        .zip(principals.iter().cycle())
        .map(|(mut event, principal)| {
            event.schema_version = 6;
            event.with_principal(principal.clone())
        })
        .collect()
}

/// The golden file's frames re-encoded through the frozen `wire::v6` types.
fn frozen_v6_frames(golden: &[u8]) -> Vec<u8> {
    super::join_frames(split_frames(golden).into_iter().map(|frame| {
        assert_eq!(&frame[5..7], &6_u16.to_le_bytes(), "of version 6");
        let body = &frame[wire::HEADER_BYTES..];
        let frozen: wire::v6::Envelope = decode_record("event", body).expect("decodes as wire::v6");
        let again = encode_record("event", &frozen).expect("encodes");
        wire::marked_frame(RecordKind::Event, 6, &again)
    }))
}

#[test]
fn version_6_golden_bytes_decode_and_reencode() {
    let golden = std::fs::read(golden_path(6)).expect("golden file is checked in");
    let decoded: Vec<Envelope> = read_frames(6)
        .iter()
        .map(|frame| decode_envelope(frame).expect("a v6 frame decodes"))
        .collect();
    assert_eq!(decoded, v6_events());
    assert_eq!(
        frozen_v6_frames(&golden),
        golden,
        "wire::v6 is an exact copy of version 6"
    );
}

#[test]
fn a_version_5_event_upcasts_with_no_principal() {
    let decoded: Vec<Envelope> = read_frames(5)
        .iter()
        .map(|frame| decode_envelope(frame).expect("a v5 frame decodes"))
        .collect();
    assert!(!decoded.is_empty());
    for event in decoded {
        assert_eq!(event.schema_version, 5, "the version it was written with");
        assert_eq!(event.principal, Principal::Unrecorded);
    }
}

#[test]
fn the_fold_does_not_read_the_principal() {
    let from_hub = super::folded(v5_events());
    let from_tokens = super::folded(v6_events());
    assert_eq!(from_hub.0, from_tokens.0, "the same decisions");
    assert_eq!(
        from_hub.1.hash().expect("hashes"),
        from_tokens.1.hash().expect("hashes"),
        "the same state"
    );
}
