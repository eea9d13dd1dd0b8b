//! The wire is frozen: events encoded by schema versions 1, 2 (unmarked, as release 19da42c
//! wrote them), 3, 4, 5, 6 and 7 (marked; versions 6 and 7 in `wire_golden/`), decision batches of version 1 (unmarked), 2, 3, 4, 5 and 6, and
//! checkpoints of versions 9 and 10 — all checked in as golden bytes — still decode to the same values,
//! upcast to the current types, and re-encode to the same bytes (older versions through their
//! frozen copies in `wire`), and the current checkpoint (of a placement bound and reported on)
//! decodes to the very state its events fold to now; checkpoints of versions 1
//! (`[01 00][body]`) to 8, older state layouts or encodings, are refused cleanly (checkpoints
//! are a cache); arbitrary bytes never make a decoder panic. Only the newest version's files are ever (re)generated, when they are added:
//! `FLOTILLA_WRITE_GOLDEN=1 cargo test -p flotilla-core --test wire_golden`.

use std::path::PathBuf;

use chrono::{TimeZone, Utc};
use flotilla_core::codec::{decode_record, encode_record};
use flotilla_core::wire::{self, CHECKPOINT_VERSION, DECISION_VERSION, checkpoint, decisions};
use flotilla_core::wire::{decode_envelope, encode_envelope};
use flotilla_core::{
    AnalysisResult, Differences, Envelope, Heartbeat, Input, ManifestCondition, ManifestDifference,
    ManifestFailure, ObjectRef, PatchDetail, ResourceUsage, WorkReport,
};
use proptest::prelude::*;
use uuid::Uuid;

#[path = "wire_golden/v6.rs"]
mod v6;
#[path = "wire_golden/v7.rs"]
mod v7;

fn golden_path(version: u16) -> PathBuf {
    golden_file(&format!("v{version}-envelopes.bin"))
}

fn golden_file(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(name)
}

fn writing_golden() -> bool {
    std::env::var_os("FLOTILLA_WRITE_GOLDEN").is_some()
}

/// One event of every input kind, with every optional field set somewhere.
fn v1_events() -> Vec<Envelope> {
    let time = Utc
        .with_ymd_and_hms(2025, 3, 12, 23, 0, 0)
        .single()
        .unwrap_or_default();
    let usage = ResourceUsage {
        capacity: [("cpu", "40"), ("memory", "20Gi")].into_iter().collect(),
        allocatable: [("cpu", "32")].into_iter().collect(),
        available: [("memory", "800Mi")].into_iter().collect(),
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
            properties: [("kubernetes-fleet.io/node-count", "3")]
                .into_iter()
                .collect(),
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
            differences: Default::default(),
        }),
        Input::Approve {
            name: "example-run-after-canary".into(),
            namespace: Some("ns".into()),
            reason: None,
            message: None,
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
                    reason: None,
                },
                ManifestFailure {
                    group: String::new(),
                    version: "v1".into(),
                    kind: "Namespace".into(),
                    namespace: String::new(),
                    name: "app".into(),
                    condition: ManifestCondition::Available,
                    message: String::new(),
                    reason: None,
                },
            ],
            differences: Differences::default(),
        }),
    ));
    if let Some(last) = events.last_mut() {
        last.schema_version = 2;
    }
    events
}

/// Version 3's events: version 2's, as this build writes them, plus one with a claimed time.
fn v3_events() -> Vec<Envelope> {
    let mut events: Vec<Envelope> = v2_events()
        .into_iter()
        .map(|mut e| {
            e.schema_version = 3;
            e
        })
        .collect();
    let mut claimed = events[2].clone();
    claimed.id = Uuid::from_u128(0x0190_b3d2_0000_7000_8000_0000_0000_0200);
    claimed.claimed_time = Utc.with_ymd_and_hms(2030, 1, 1, 0, 0, 0).single();
    events.push(claimed);
    events
}

/// The frames of a golden file.
fn read_frames(version: u16) -> Vec<Vec<u8>> {
    split_frames(&std::fs::read(golden_path(version)).expect("golden file is checked in"))
}

fn split_frames(golden: &[u8]) -> Vec<Vec<u8>> {
    let mut rest = golden;
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
    join_frames(
        events
            .iter()
            .map(|event| encode_envelope(event).expect("encodes")),
    )
}

fn join_frames(frames: impl IntoIterator<Item = Vec<u8>>) -> Vec<u8> {
    let mut out = Vec::new();
    for frame in frames {
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
        v6::unrecorded(v1_events()),
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
    let frames = read_frames(2);
    let decoded: Vec<Envelope> = frames
        .iter()
        .map(|frame| decode_envelope(frame).expect("a v2 frame decodes"))
        .collect();
    assert_eq!(decoded, v6::unrecorded(v2_events()));
    for frame in &frames {
        assert_eq!(
            &frame[..2],
            &2_u16.to_le_bytes(),
            "19da42c's unmarked frame"
        );
        let frozen: wire::v2::Envelope =
            decode_record("event", &frame[2..]).expect("decodes as the frozen v2 copy");
        let again = encode_record("event", &frozen).expect("encodes");
        assert_eq!(
            again,
            frame[2..].to_vec(),
            "wire::v2 is an exact copy of version 2"
        );
    }
}

#[test]
fn version_3_golden_bytes_still_decode_and_reencode() {
    let frames = read_frames(3);
    let decoded: Vec<Envelope> = frames
        .iter()
        .map(|frame| decode_envelope(frame).expect("a v3 frame decodes"))
        .collect();
    assert_eq!(decoded, v6::unrecorded(v3_events()));
    for frame in &frames {
        assert!(frame.starts_with(&wire::MAGIC), "marked frames");
        assert_eq!(&frame[5..7], &3_u16.to_le_bytes(), "of version 3");
        let body = &frame[wire::HEADER_BYTES..];
        let frozen: wire::v3::Envelope =
            decode_record("event", body).expect("decodes as the frozen v3 copy");
        let again = encode_record("event", &frozen).expect("encodes");
        assert_eq!(
            again,
            body.to_vec(),
            "wire::v3 is an exact copy of version 3"
        );
    }
}

/// Version 4's events: version 3's, as this build writes them, plus a report with diffs,
/// drifts, a ReportDiff outcome and a failure reason, and the leave input: a member that joins,
/// is deleted (leaving) and confirms; a leave from it again (gone: `UnknownCluster`) and from a
/// member that is not leaving (`NotLeaving`).
fn v4_events() -> Vec<Envelope> {
    let mut events: Vec<Envelope> = v3_events()
        .into_iter()
        .map(|mut e| {
            e.schema_version = 4;
            e
        })
        .collect();
    let time = events[0].time;
    let member = |name: &str| Input::Apply {
        manifest: format!(
            r#"{{"apiVersion":"cluster.kubernetes-fleet.io/v1beta1","kind":"MemberCluster","metadata":{{"name":"{name}"}},"spec":{{}}}}"#
        ),
    };
    let leave = |name: &str| Input::Leave {
        cluster: name.into(),
    };
    let payloads = vec![
        Input::WorkReport(differing_report()),
        member("leaver"),
        Input::Heartbeat(Heartbeat {
            cluster: "leaver".into(),
            ..Heartbeat::default()
        }),
        Input::Delete {
            target: ObjectRef {
                kind: "MemberCluster".into(),
                group: None,
                namespace: None,
                name: "leaver".into(),
            },
        },
        leave("leaver"),
        leave("leaver"),
        member("stayer"),
        leave("stayer"),
    ];
    for (i, payload) in (0_u128..).zip(payloads) {
        let id = Uuid::from_u128(0x0190_b3d2_0000_7000_8000_0000_0000_0300 + i);
        let mut event = Envelope::new(id, time, "golden", payload);
        event.schema_version = 4;
        events.push(event);
    }
    events
}

/// The state a current checkpoint is written from: version 4's events, then a PickAll placement
/// bound on two members, one reporting its work available and one with a message, failed and
/// diffed manifests, so that bindings, their decisions and both shapes of a work status are
/// encoded.
fn checkpoint_events() -> Vec<Envelope> {
    let mut events = v4_events();
    let time = events[0].time;
    let apply = |manifest: &str| Input::Apply {
        manifest: manifest.into(),
    };
    let mut payloads = Vec::new();
    for name in ["member1", "member2"] {
        payloads.push(apply(&format!(
            r#"{{"apiVersion":"cluster.kubernetes-fleet.io/v1beta1","kind":"MemberCluster","metadata":{{"name":"{name}"}},"spec":{{}}}}"#
        )));
        payloads.push(Input::Heartbeat(Heartbeat {
            cluster: name.into(),
            ..Heartbeat::default()
        }));
    }
    payloads.push(apply(
        r#"{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"app"}}"#,
    ));
    payloads.push(apply(
        r#"{"apiVersion":"placement.kubernetes-fleet.io/v1","kind":"ClusterResourcePlacement","metadata":{"name":"crp-1"},"spec":{"resourceSelectors":[{"group":"","kind":"Namespace","version":"v1","name":"app"}],"policy":{"placementType":"PickAll"}}}"#,
    ));
    payloads.push(Input::WorkReport(WorkReport {
        resource_index: 0,
        ..differing_report()
    }));
    payloads.push(Input::WorkReport(WorkReport::available(
        "member2", "crp-1", 0,
    )));
    for (i, payload) in (0_u128..).zip(payloads) {
        let id = Uuid::from_u128(0x0190_b3d2_0000_7000_8000_0000_0000_0700 + i);
        let at = time + chrono::Duration::seconds(i64::try_from(i).unwrap_or(0) + 1);
        events.push(Envelope::new(id, at, "golden", payload));
    }
    events
}

/// Version 5: version 4's events, and an Analysis task's results (a value, an error).
pub(crate) fn v5_events() -> Vec<Envelope> {
    let mut events: Vec<Envelope> = v4_events()
        .into_iter()
        .map(|mut e| {
            e.schema_version = 5;
            e
        })
        .collect();
    let time = events[0].time;
    let result = |value: Option<&str>, error: Option<&str>| {
        Input::AnalysisResult(AnalysisResult {
            run: "example-run".into(),
            namespace: Some("team".into()),
            stage: "canary".into(),
            task: "afterStageTasks[0]".into(),
            value: value.map(Into::into),
            error: error.map(Into::into),
        })
    };
    let payloads = [
        result(Some("0.0042"), None),
        result(None, Some("the query returned no sample")),
    ];
    for (i, payload) in (0_u128..).zip(payloads) {
        let id = Uuid::from_u128(0x0190_b3d2_0000_7000_8000_0000_0000_0400 + i);
        let mut event = Envelope::new(id, time, "golden", payload);
        event.schema_version = 5;
        events.push(event);
    }
    events
}

#[test]
fn version_5_golden_bytes_decode_and_reencode() {
    let golden = std::fs::read(golden_path(5)).expect("golden file is checked in");
    let decoded: Vec<Envelope> = read_frames(5)
        .iter()
        .map(|frame| decode_envelope(frame).expect("a v5 frame decodes"))
        .collect();
    assert_eq!(decoded, v6::unrecorded(v5_events()));
    assert_eq!(
        v6::frozen_v5_frames(&golden),
        golden,
        "wire::v5 is an exact copy of version 5"
    );
}

/// A report with every version 4 field set.
fn differing_report() -> WorkReport {
    let detail = |path: &str, member: Option<&str>, hub: Option<&str>| PatchDetail {
        path: path.into(),
        value_in_member: member.map(Into::into),
        value_in_hub: hub.map(Into::into),
    };
    let deployment = |generation, details| ManifestDifference {
        group: "apps".into(),
        version: "v1".into(),
        kind: "Deployment".into(),
        namespace: "app".into(),
        name: "web".into(),
        observed_generation: generation,
        details,
    };
    WorkReport {
        cluster: "member1".into(),
        placement: "crp-1".into(),
        namespace: None,
        resource_index: 6,
        applied: None,
        available: None,
        trackable: true,
        message: "diff of 1 manifest failed".into(),
        failed_manifests: vec![ManifestFailure {
            group: String::new(),
            version: "v1".into(),
            kind: "ConfigMap".into(),
            namespace: "app".into(),
            name: "settings".into(),
            condition: ManifestCondition::Applied,
            message: "forbidden".into(),
            reason: Some("FailedToTakeOver".into()),
        }],
        differences: Differences {
            diff_reported: Some(false),
            diffed_manifests: vec![deployment(
                Some(3),
                vec![
                    detail("/spec/replicas", Some("2"), Some("3")),
                    detail("/metadata/labels/team", None, Some("web")),
                ],
            )],
            drifted_manifests: vec![deployment(
                None,
                vec![detail("/spec/paused", Some("true"), None)],
            )],
        },
    }
}

#[test]
fn version_4_golden_bytes_still_decode_and_reencode() {
    let frames = read_frames(4);
    let decoded: Vec<Envelope> = frames
        .iter()
        .map(|frame| decode_envelope(frame).expect("a v4 frame decodes"))
        .collect();
    assert_eq!(decoded, v6::unrecorded(v4_events()));
    for frame in &frames {
        assert!(frame.starts_with(&wire::MAGIC), "marked frames");
        assert_eq!(&frame[5..7], &4_u16.to_le_bytes(), "of version 4");
        // Version 5 only added a variant: a version 4 body is a version 5 body (`wire::v5`).
        let frozen: wire::v5::Envelope =
            decode_record("event", &frame[wire::HEADER_BYTES..]).expect("decodes as wire::v5");
        let again = encode_record("event", &frozen).expect("encodes");
        assert_eq!(&again[..], &frame[wire::HEADER_BYTES..]);
    }
}

/// The decisions and state of folding these golden events from an empty state.
fn folded(events: Vec<Envelope>) -> (Vec<(u64, flotilla_core::Decisions)>, flotilla_core::State) {
    let mut state = flotilla_core::State::default();
    let mut decided = Vec::new();
    for (seq, event) in (1..).zip(events) {
        let decisions = flotilla_core::step(&mut state, &event);
        if !decisions.is_empty() {
            decided.push((seq, decisions));
        }
    }
    (decided, state)
}

/// Writes a golden file: a legacy one only once (it stands for what 19da42c wrote), the
/// current version's whenever asked.
fn write_golden(name: &str, bytes: &[u8], legacy: bool) {
    let path = golden_file(name);
    if writing_golden() && !(legacy && path.exists()) {
        std::fs::write(path, bytes).expect("writes golden file");
    }
}

#[test]
fn decision_batches_of_every_version_still_decode() {
    let (decided, _) = folded(v3_events());
    let last = u64::try_from(v3_events().len()).expect("small");
    // 19da42c wrote the bare bincode of `DecisionBatch { first, last, decisions }`.
    let legacy = flotilla_core::codec::encode_decisions(&(1_u64, last, &decided)).expect("encodes");
    write_golden("v1-decisions.bin", &legacy, true);

    let v1 = std::fs::read(golden_file("v1-decisions.bin")).expect("checked in");
    let v1 = decisions::decode_batch(&v1).expect("a v1 batch decodes");
    assert_eq!(
        (v1.version, v1.first_input_seq, v1.last_input_seq),
        (1, 1, last)
    );
    // Versions 2 and 3 share a body layout; the golden events decided the same under both.
    for version in 2..=3 {
        let bytes =
            std::fs::read(golden_file(&format!("v{version}-decisions.bin"))).expect("checked in");
        let decoded = decisions::decode_batch(&bytes).expect("a batch decodes");
        assert_eq!((decoded.version, decoded.first_input_seq), (version, 1));
        assert_eq!(
            decoded.decisions, v1.decisions,
            "version {version} holds the same decisions"
        );
        assert_eq!(
            decisions::batch_range(&bytes).expect("range"),
            (version, 1, last)
        );
    }
}

#[test]
fn current_decision_batches_decode_and_reencode() {
    let (decided, _) = folded(v4_events());
    let last = u64::try_from(v4_events().len()).expect("small");
    let current = decisions::encode_batch(1, last, &decided).expect("encodes");
    write_golden(
        &format!("v{DECISION_VERSION}-decisions.bin"),
        &current,
        false,
    );
    let bytes = std::fs::read(golden_file(&format!("v{DECISION_VERSION}-decisions.bin")))
        .expect("checked in");
    let decoded = decisions::decode_batch(&bytes).expect("decodes");
    // Version 4 has the same body layout and the same decisions for these events.
    let v4 = std::fs::read(golden_file("v4-decisions.bin")).expect("checked in");
    let v4 = decisions::decode_batch(&v4).expect("a v4 batch decodes");
    assert_eq!(
        (v4.version, v4.decisions.as_slice()),
        (4, decided.as_slice())
    );
    assert_eq!(
        (
            decoded.version,
            decoded.first_input_seq,
            decoded.last_input_seq
        ),
        (DECISION_VERSION, 1, last)
    );
    assert_eq!(decoded.decisions, decided, "this build decides as recorded");
    let codes: Vec<&str> = decided
        .iter()
        .flat_map(|(_, decisions)| decisions)
        .filter_map(|decision| match decision {
            flotilla_core::Decision::Rejected { code, .. } => Some(code.as_str()),
            _ => None,
        })
        .collect();
    assert!(codes.contains(&"NotLeaving"), "{codes:?}");
    let again = decisions::encode_batch(1, last, &decoded.decisions).expect("encodes");
    assert_eq!(again, bytes, "re-encoding changed the bytes");
}

#[test]
fn current_checkpoints_decode_and_older_layouts_are_refused() {
    let (_, state) = folded(checkpoint_events());
    let placement = state.placements().values().next().expect("a placement");
    let reported = placement.bindings.values().filter(|b| b.report.is_some());
    assert_eq!(reported.count(), 2, "both members reported");
    let hash = state.hash().expect("hashes");
    let legacy = checkpoint::encode_legacy_v1(7, &hash, &state).expect("encodes");
    write_golden("v1-checkpoint.bin", &legacy, true);
    let current = checkpoint::encode(7, &hash, &state).expect("encodes");
    write_golden(
        &format!("v{CHECKPOINT_VERSION}-checkpoint.bin"),
        &current,
        false,
    );

    // Versions 1 to 8 hold an older State layout or encoding: refused (the stores skip them and fold
    // from the log), never misread.
    for version in 1..CHECKPOINT_VERSION - 1 {
        let bytes =
            std::fs::read(golden_file(&format!("v{version}-checkpoint.bin"))).expect("checked in");
        assert!(
            matches!(
                checkpoint::decode(&bytes),
                Err(flotilla_core::codec::CodecError::RetiredCheckpoint { found, .. })
                    if found == version
            ),
            "version {version}"
        );
    }
    let bytes = std::fs::read(golden_file(&format!(
        "v{CHECKPOINT_VERSION}-checkpoint.bin"
    )))
    .expect("checked in");
    let body = checkpoint::decode(&bytes).expect("a checkpoint decodes");
    assert_eq!(body.seq, 7);
    assert_eq!(body.state.hash().expect("hashes"), body.hash);
    assert!(
        body.state == state,
        "the checked-in checkpoint decodes to another state than the same events fold to"
    );
    let again = checkpoint::encode(body.seq, &body.hash, &body.state).expect("encodes");
    assert_eq!(again, bytes, "re-encoding changed the bytes");

    // Version 9 is the same state without its section table: read whole, to the same state.
    let unsectioned = std::fs::read(golden_file(&format!(
        "v{}-checkpoint.bin",
        CHECKPOINT_VERSION - 1
    )))
    .expect("checked in");
    let old = checkpoint::decode(&unsectioned).expect("the version before sections decodes");
    assert_eq!((old.seq, &old.hash), (7, &body.hash));
    assert!(old.state == state, "version 9 decodes to another state");

    // Written as it is encoded (the hub's checkpoint files): the same bytes and hash.
    let mut out = std::io::Cursor::new(Vec::new());
    let (written_hash, length) =
        checkpoint::encode_once_to(body.seq, &body.state, &mut out).expect("writes");
    assert_eq!(written_hash, body.hash);
    assert_eq!(length, bytes.len() as u64);
    assert_eq!(out.into_inner(), bytes, "the streamed record differs");
}

proptest! {
    #[test]
    fn arbitrary_bytes_never_panic_the_decoder(bytes in prop::collection::vec(any::<u8>(), 0..512)) {
        let _ = decode_envelope(&bytes);
        let _ = decisions::decode_batch(&bytes);
        let _ = checkpoint::decode(&bytes);
        let origin = wire::InputOrigin { seq: 1, subject: Some("flotilla.in.tick"), log_time: None };
        let _ = wire::read_input(&bytes, &origin);
        let mut marked = wire::MAGIC.to_vec();
        marked.extend_from_slice(&bytes);
        let _ = wire::read_input(&marked, &origin);
    }
}
