//! Fuzzes multi-document YAML through `manifests::parse_file`, what `flotilla apply -f` runs
//! before it sends anything, and the hub's side of the same apply: the document as the JSON
//! event carries it (`JsonInput::Apply`) folded by `flotilla_core::step`.
//!
//! Properties: no panic; a refused file names the file and a document that exists (and the
//! field when the problem is in one); an accepted document round-trips — the hub parses the
//! event's manifest text to the same manifest, the fold does not refuse it as invalid, and the
//! document written back as YAML parses to the same value and manifest.

#![no_main]

use chrono::{TimeZone, Utc};
use flotilla_adapters::json_event::JsonInput;
use flotilla_adapters::manifests::{self, Document};
use flotilla_core::query::manifest::parse_manifest_text;
use flotilla_core::{Decision, Envelope, Input, RejectCode, State, invariants, step};
use libfuzzer_sys::fuzz_target;
use uuid::Uuid;

const FILE: &str = "fuzz.yaml";

fuzz_target!(|bytes: &[u8]| {
    let Ok(text) = std::str::from_utf8(bytes) else {
        return; // `flotilla apply -f` reads the file as UTF-8 text first.
    };
    match manifests::parse_file(FILE, text) {
        Ok(documents) => documents.iter().for_each(round_trips),
        Err(error) => {
            assert_eq!(error.file, FILE);
            let separators = text.lines().count() + 1;
            assert!(
                (1..=separators).contains(&error.document),
                "document {} of at most {separators}",
                error.document
            );
            assert!(!error.message.is_empty());
            if let Some(field) = &error.field {
                assert!(!field.is_empty(), "a named field is not empty");
            }
            let shown = error.to_string();
            assert!(shown.starts_with(&format!("{FILE}: document {}", error.document)));
        }
    }
});

fn round_trips(document: &Document) {
    let Input::Apply { manifest } = (JsonInput::Apply {
        manifest: document.value.clone(),
    })
    .into_input() else {
        panic!("an apply event carries an apply");
    };
    let at_hub = parse_manifest_text(&manifest).expect("the hub accepts what the CLI accepted");
    assert_eq!(at_hub, document.manifest, "CLI and hub parse alike");
    folds(manifest);
    rewritten_as_yaml(document);
}

/// Folded into an empty hub, an accepted manifest is never refused as invalid, and the state
/// it leaves satisfies the invariants.
fn folds(manifest: String) {
    let mut state = State::default();
    let time = Utc
        .timestamp_opt(1_750_000_000, 0)
        .single()
        .unwrap_or_default();
    let event = Envelope::new(Uuid::from_u128(1), time, "fuzz", Input::Apply { manifest });
    let before = state.clone();
    for decision in step(&mut state, &event) {
        if let Decision::Rejected { code, message } = decision {
            assert_ne!(
                code,
                RejectCode::InvalidObject,
                "the fold refused it: {message}"
            );
        }
    }
    if let Err(violation) = invariants::check_step(&before, &event, &state) {
        panic!("invariant broken: {violation}");
    }
}

/// Written back as YAML (serde-saphyr, the parser's own crate), the document reads back as
/// the same value and manifest. A `List` item that is itself a `List` would be split again on
/// reading, so it is not compared.
fn rewritten_as_yaml(document: &Document) {
    if document.value.get("kind").and_then(|k| k.as_str()) == Some("List") {
        return;
    }
    let yaml = serde_saphyr::to_string(&document.value).expect("a JSON value writes as YAML");
    let again = manifests::parse_file(FILE, &yaml)
        .unwrap_or_else(|error| panic!("rewritten YAML refused: {error}\n{yaml}"));
    let [single] = again.as_slice() else {
        panic!("one document written, {} read:\n{yaml}", again.len());
    };
    assert_eq!(
        single.value, document.value,
        "value after YAML round trip:\n{yaml}"
    );
    assert_eq!(
        single.manifest, document.manifest,
        "manifest after YAML round trip"
    );
}
