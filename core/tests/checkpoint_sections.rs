//! A checkpoint of a fleet large enough that its sections decode on their own threads comes
//! back as the very state it was written from, with the same hash, whichever way it was
//! written; one damaged byte in any section, or a section table cut out of order, is refused.

mod common;

use common::{crp, member, namespace, start};
use flotilla_core::codec::CodecError;
use flotilla_core::wire::checkpoint;
use flotilla_core::{Envelope, Heartbeat, Input, State, step};
use serde_json::json;
use uuid::Uuid;

/// Clusters enough for a state over a megabyte, where decoding goes parallel.
const CLUSTERS: usize = 4_000;

/// A joined fleet with a PickAll placement over it (members, deadlines, placements, rest).
fn fleet() -> State {
    let mut state = State::default();
    let mut issued = 0_u128;
    let mut send = |state: &mut State, input: Input| {
        issued += 1;
        let event = Envelope::new(Uuid::from_u128(issued), start(), "test", input);
        step(state, &event);
    };
    let apply = |manifest: serde_json::Value| Input::Apply {
        manifest: manifest.to_string(),
    };
    for index in 0..CLUSTERS {
        let name = format!("member-{index:05}");
        send(
            &mut state,
            apply(member(&name, json!({"env": "prod"}), json!([]))),
        );
        let beat = Heartbeat {
            cluster: name.as_str().into(),
            ..Heartbeat::default()
        };
        send(&mut state, Input::Heartbeat(beat));
    }
    send(&mut state, apply(namespace("test-ns")));
    send(
        &mut state,
        apply(crp("everywhere", json!({"placementType": "PickAll"}))),
    );
    state
}

#[test]
fn a_large_checkpoint_decodes_in_sections_to_the_state_it_was_written_from() {
    let state = fleet();
    let once = checkpoint::encode_once(9, &state).expect("encodes");
    assert!(once.record.len() > 1 << 20, "{} bytes", once.record.len());
    assert_eq!(once.hash, state.hash().expect("hashes"));
    assert_eq!(
        once.record,
        checkpoint::encode(9, &once.hash, &state).expect("encodes")
    );
    let mut streamed = std::io::Cursor::new(Vec::new());
    let (hash, length) = checkpoint::encode_once_to(9, &state, &mut streamed).expect("writes");
    assert_eq!(
        (hash, length),
        (once.hash.clone(), once.record.len() as u64)
    );
    assert_eq!(streamed.into_inner(), once.record);
    let body = checkpoint::decode(&once.record).expect("decodes");
    assert_eq!((body.seq, &body.hash), (9, &once.hash));
    assert!(body.state == state, "decoded into another state");
}

#[test]
fn a_damaged_section_or_table_is_refused() {
    let state = fleet();
    let once = checkpoint::encode_once(9, &state).expect("encodes");
    let length = once.record.len();
    // A byte in each quarter of the state, and each of the table's offsets.
    for at in [length / 8, length * 3 / 8, length * 5 / 8, length * 7 / 8] {
        let mut damaged = once.record.clone();
        damaged[at] ^= 0x20;
        assert!(checkpoint::decode(&damaged).is_err(), "byte {at}");
    }
    for word in 0..3 {
        let mut damaged = once.record.clone();
        let at = length - 24 + word * 8;
        damaged[at..at + 8].copy_from_slice(&u64::MAX.to_le_bytes());
        assert!(
            matches!(checkpoint::decode(&damaged), Err(CodecError::Truncated(_))),
            "offset {word}"
        );
    }
}
