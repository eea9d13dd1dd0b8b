//! The wire is frozen: events encoded by schema version 1 (checked in as golden bytes) still
//! decode to the same values and re-encode to the same bytes, and arbitrary bytes never make
//! the decoder panic. Regenerate the golden file only when adding a new version alongside it:
//! `FLOTILLA_WRITE_GOLDEN=1 cargo test -p flotilla-core --test wire_golden`.

use std::collections::BTreeMap;
use std::path::PathBuf;

use chrono::{TimeZone, Utc};
use flotilla_core::codec::{decode_envelope, encode_envelope};
use flotilla_core::{Envelope, Heartbeat, Input, ObjectRef, ResourceUsage, WorkReport};
use proptest::prelude::*;
use uuid::Uuid;

fn golden_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/golden/v1-envelopes.bin")
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
            Envelope::new(id, time, "golden", payload)
        })
        .collect()
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
fn version_1_golden_bytes_still_decode_and_reencode() {
    let expected = frames(&v1_events());
    if std::env::var_os("FLOTILLA_WRITE_GOLDEN").is_some() {
        std::fs::write(golden_path(), &expected).expect("writes golden file");
    }
    let golden = std::fs::read(golden_path()).expect("golden file is checked in");
    let mut rest = golden.as_slice();
    let mut decoded = Vec::new();
    while !rest.is_empty() {
        let (len, tail) = rest.split_at(4);
        let len = u32::from_le_bytes(len.try_into().expect("4 bytes")) as usize;
        let (frame, tail) = tail.split_at(len);
        decoded.push(decode_envelope(frame).expect("a v1 frame decodes"));
        rest = tail;
    }
    assert_eq!(decoded, v1_events());
    assert_eq!(frames(&decoded), golden, "re-encoding changed the bytes");
}

proptest! {
    #[test]
    fn arbitrary_bytes_never_panic_the_decoder(bytes in prop::collection::vec(any::<u8>(), 0..512)) {
        let _ = decode_envelope(&bytes);
    }
}
