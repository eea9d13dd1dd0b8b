//! Schema version 7: an approval keeps its approver's reason and message. Version 6 bodies
//! re-encode byte for byte through `wire::v6` and upcast to approvals that gave neither; the
//! version 7 golden file adds approvals with a message, with a reason and message, and with
//! neither.

use flotilla_core::wire::decode_envelope;
use flotilla_core::{Envelope, Input, Principal, SCHEMA_VERSION, TokenRole};
use uuid::Uuid;

use super::{frames, golden_path, read_frames, writing_golden};

/// Version 7: version 6's events, then three approvals.
fn v7_events() -> Vec<Envelope> {
    let mut events: Vec<Envelope> = super::v6::v6_events()
        .into_iter()
        .map(|mut e| {
            e.schema_version = 7;
            e
        })
        .collect();
    let time = events[0].time;
    let approve =
        |namespace: Option<&str>, reason: Option<&str>, message: Option<&str>| Input::Approve {
            name: "example-run-after-canary".into(),
            namespace: namespace.map(Into::into),
            reason: reason.map(Into::into),
            message: message.map(Into::into),
        };
    let payloads = [
        approve(None, Some("lgtm"), Some("lgtm")),
        approve(Some("team-a"), None, Some("canary soaked for an hour")),
        approve(None, None, None),
    ];
    let approver = Principal::Token {
        name: "oncall".into(),
        role: TokenRole::Admin,
    };
    for (i, payload) in (0_u128..).zip(payloads) {
        let id = Uuid::from_u128(0x0190_b3d2_0000_7000_8000_0000_0000_0700 + i);
        let event = Envelope::new(id, time, "golden", payload).with_principal(approver.clone());
        events.push(event);
    }
    events
}

#[test]
fn version_7_golden_bytes_decode_and_reencode() {
    assert_eq!(
        SCHEMA_VERSION, 7,
        "a newer version adds its own golden file"
    );
    let expected = frames(&v7_events());
    if writing_golden() {
        std::fs::write(golden_path(7), &expected).expect("writes golden file");
    }
    let golden = std::fs::read(golden_path(7)).expect("golden file is checked in");
    let decoded: Vec<Envelope> = read_frames(7)
        .iter()
        .map(|frame| decode_envelope(frame).expect("a v7 frame decodes"))
        .collect();
    assert_eq!(decoded, v7_events());
    assert_eq!(frames(&decoded), golden, "re-encoding changed the bytes");
}

#[test]
fn a_version_6_approval_upcasts_with_neither_reason_nor_message() {
    let approvals: Vec<Input> = read_frames(6)
        .iter()
        .map(|frame| decode_envelope(frame).expect("a v6 frame decodes").payload)
        .filter(|input| matches!(input, Input::Approve { .. }))
        .collect();
    assert!(
        !approvals.is_empty(),
        "the version 6 file holds an approval"
    );
    for approval in approvals {
        assert!(
            matches!(
                approval,
                Input::Approve {
                    reason: None,
                    message: None,
                    ..
                }
            ),
            "{approval:?}"
        );
    }
}
