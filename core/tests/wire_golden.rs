//! The wire is frozen: events encoded by schema version 1 and version 2 (checked in as golden
//! bytes) still decode to the same values — version 1 upcast to the current types — and
//! re-encode to the same bytes (version 1 through its frozen copy in `wire::v1`); arbitrary bytes
//! never make the decoder panic. Only the newest version's file is ever (re)generated, when it
//! is added: `FLOTILLA_WRITE_GOLDEN=1 cargo test -p flotilla-core --test wire_golden`.

use std::collections::BTreeMap;
use std::path::PathBuf;

use chrono::{TimeZone, Utc};
use flotilla_core::codec::{decode_envelope, decode_record, encode_envelope, encode_record};
use flotilla_core::wire;
use flotilla_core::{
    Envelope, Heartbeat, Input, ManifestCondition, ManifestFailure, ObjectRef, ResourceUsage,
    WorkReport,
};
use proptest::prelude::*;
use uuid::Uuid;

fn golden_path(version: u16) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(format!("tests/golden/v{version}-envelopes.bin"))
}

/// One event of every input kind, with every optional field set somewhere.
fn v1_events() -> Vec<Envelope> {
    let time = Utc
        .with_ymd_and_hms(2025, 3, 12, 23, 0, 0)
        .single()
        .unwrap_or_default();
    let usage = ResourceUsage {
        capacity: BTreeMap::from([
            ("cpu".into(), "40".into()),
            ("memory".into(), "20Gi".into()),
        ]),
        allocatable: BTreeMap::from([("cpu".into(), "32".into())]),
        available: BTreeMap::from([("memory".into(), "800Mi".into())]),
    };
    let payloads = vec![
        Input::Apply {
            manifest: r#"{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"test"}}"#.into(),
        },
        Input::Delete {
            target: ObjectRef {
                kind: "ConfigMap".into(),
                group: Some(String::new()),
                namespace: Some("test".into()),
                name: "test-1".into(),
            },
        },
        Input::Heartbeat(Heartbeat {
            cluster: "member1".into(),
            properties: BTreeMap::from([("kubernetes-fleet.io/node-count".into(), "3".into())]),
            resource_usage: Some(usage),
        }),
        Input::WorkReport(WorkReport {
            cluster: "member1".into(),
            placement: "crp-1".into(),
            namespace: None,
            resource_index: 4,
            applied: Some(true),
            available: None,
            trackable: false,
            message: "NotAllWorkAreAvailabilityTrackable".into(),
            failed_manifests: Vec::new(),
        }),
        Input::Approve {
            name: "example-run-after-canary".into(),
            namespace: Some("ns".into()),
        },
        Input::Tick,
    ];
    payloads
        .into_iter()
        .enumerate()
        .map(|(i, payload)| {
            let id = Uuid::from_u128(0x0190_b3d2_0000_7000_8000_0000_0000_0000 + i as u128);
            let mut envelope = Envelope::new(id, time, "golden", payload);
            envelope.schema_version = 1;
            envelope
        })
        .collect()
}

/// Version 2's events: version 1's, as this build writes them, plus a report with failed
/// manifests.
fn v2_events() -> Vec<Envelope> {
    let mut events: Vec<Envelope> = v1_events()
        .into_iter()
        .map(|mut e| {
            e.schema_version = 2;
            e
        })
        .collect();
    let time = events[0].time;
    events.push(Envelope::new(
        Uuid::from_u128(0x0190_b3d2_0000_7000_8000_0000_0000_0100),
        time,
        "golden",
        Input::WorkReport(WorkReport {
            cluster: "member2".into(),
            placement: "crp-1".into(),
            namespace: Some("app".into()),
            resource_index: 5,
            applied: Some(false),
            available: None,
            trackable: true,
            message: "1 manifest failed".into(),
            failed_manifests: vec![
                ManifestFailure {
                    group: "apps".into(),
                    version: "v1".into(),
                    kind: "Deployment".into(),
                    namespace: "app".into(),
                    name: "web".into(),
                    condition: ManifestCondition::Applied,
                    message: "image pull failed".into(),
                },
                ManifestFailure {
                    group: String::new(),
                    version: "v1".into(),
                    kind: "Namespace".into(),
                    namespace: String::new(),
                    name: "app".into(),
                    condition: ManifestCondition::Available,
                    message: String::new(),
                },
            ],
        }),
    ));
    events
}

/// The frames of a golden file.
fn read_frames(version: u16) -> Vec<Vec<u8>> {
    let golden = std::fs::read(golden_path(version)).expect("golden file is checked in");
    let mut rest = golden.as_slice();
    let mut frames = Vec::new();
    while !rest.is_empty() {
        let (len, tail) = rest.split_at(4);
        let len = u32::from_le_bytes(len.try_into().expect("4 bytes")) as usize;
        let (frame, tail) = tail.split_at(len);
        frames.push(frame.to_vec());
        rest = tail;
    }
    frames
}

/// Length-prefixed frames, so the file holds several records.
fn frames(events: &[Envelope]) -> Vec<u8> {
    let mut out = Vec::new();
    for event in events {
        let frame = encode_envelope(event).expect("encodes");
        out.extend_from_slice(&u32::try_from(frame.len()).expect("small").to_le_bytes());
        out.extend_from_slice(&frame);
    }
    out
}

#[test]
fn version_1_golden_bytes_still_decode_and_upcast() {
    let frames = read_frames(1);
    let decoded: Vec<Envelope> = frames
        .iter()
        .map(|frame| decode_envelope(frame).expect("a v1 frame decodes"))
        .collect();
    assert_eq!(
        decoded,
        v1_events(),
        "v1 upcasts to the current types unchanged"
    );
    for frame in &frames {
        assert_eq!(&frame[..2], &1_u16.to_le_bytes());
        let frozen: wire::v1::Envelope =
            decode_record("event", &frame[2..]).expect("decodes as the frozen v1 copy");
        let again = encode_record("event", &frozen).expect("encodes");
        assert_eq!(
            again,
            frame[2..].to_vec(),
            "wire::v1 is an exact copy of version 1"
        );
    }
}

#[test]
fn version_2_golden_bytes_still_decode_and_reencode() {
    let expected = frames(&v2_events());
    if std::env::var_os("FLOTILLA_WRITE_GOLDEN").is_some() {
        std::fs::write(golden_path(2), &expected).expect("writes golden file");
    }
    let golden = std::fs::read(golden_path(2)).expect("golden file is checked in");
    let decoded: Vec<Envelope> = read_frames(2)
        .iter()
        .map(|frame| decode_envelope(frame).expect("a v2 frame decodes"))
        .collect();
    assert_eq!(decoded, v2_events());
    assert_eq!(frames(&decoded), golden, "re-encoding changed the bytes");
}

proptest! {
    #[test]
    fn arbitrary_bytes_never_panic_the_decoder(bytes in prop::collection::vec(any::<u8>(), 0..512)) {
        let _ = decode_envelope(&bytes);
    }
}
