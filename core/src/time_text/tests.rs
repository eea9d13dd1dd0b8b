//! The fast text must be chrono's, byte for byte and value for value, over every time and every
//! text: events already stored were written by chrono, and events written now are read by older
//! builds.

use chrono::{DateTime, NaiveDate, NaiveTime, Utc};
use proptest::prelude::*;
use serde::{Deserialize, Serialize};

/// Times through this module.
#[derive(Debug, PartialEq, Serialize, Deserialize)]
struct Fast {
    #[serde(with = "super")]
    time: DateTime<Utc>,
    #[serde(default, with = "super::option")]
    claimed: Option<DateTime<Utc>>,
}

/// The same times through chrono's serde.
#[derive(Debug, PartialEq, Serialize, Deserialize)]
struct Chrono {
    time: DateTime<Utc>,
    claimed: Option<DateTime<Utc>>,
}

fn bincode_bytes<T: Serialize>(value: &T) -> Vec<u8> {
    bincode::serde::encode_to_vec(value, bincode::config::legacy()).expect("encodes")
}

fn from_bincode<T: serde::de::DeserializeOwned>(bytes: &[u8]) -> Result<T, String> {
    bincode::serde::decode_from_slice(bytes, bincode::config::legacy())
        .map(|(value, _)| value)
        .map_err(|error| error.to_string())
}

/// Any time chrono holds: years far outside 0–9999, every fraction, leap seconds.
fn any_time() -> impl Strategy<Value = DateTime<Utc>> {
    (
        -200_000i32..200_000,
        1u32..=366,
        0u32..24,
        0u32..60,
        0u32..60,
        prop_oneof![
            Just(0u32),
            (0u32..1_000).prop_map(|ms| ms * 1_000_000),
            (0u32..1_000_000).prop_map(|us| us * 1_000),
            0u32..1_000_000_000,
            1_000_000_000u32..2_000_000_000,
        ],
    )
        .prop_filter_map(
            "a valid time",
            |(year, day, hour, minute, second, nanos)| {
                let date = NaiveDate::from_yo_opt(year, day)?;
                // chrono holds a leap second only at second 59.
                let second = if nanos >= 1_000_000_000 { 59 } else { second };
                let time = NaiveTime::from_hms_nano_opt(hour, minute, second, nanos)?;
                Some(date.and_time(time).and_utc())
            },
        )
}

/// Text shaped like a time, near and inside the fast path's form, and anything at all.
fn time_like_text() -> impl Strategy<Value = String> {
    prop_oneof![
        "[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt ][0-9]{2}:[0-9]{2}:[0-9]{2}(\\.[0-9]{0,11})?(Z|z|UTC|[+-][0-9]{2}:[0-9]{2})?",
        "(19|20)[0-9]{2}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])T([01][0-9]|2[0-4]):[0-5][0-9]:([0-5][0-9]|60)(\\.[0-9]{1,9})?Z",
        "[+-]?[0-9]{4,6}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z",
        "\\PC{0,32}",
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1_024))]

    #[test]
    fn times_encode_as_chrono_encodes_them(time in any_time(), claimed in proptest::option::of(any_time())) {
        let fast = Fast { time, claimed };
        let chrono = Chrono { time, claimed };
        prop_assert_eq!(bincode_bytes(&fast), bincode_bytes(&chrono));
        let json = serde_json::to_string(&fast).expect("json");
        prop_assert_eq!(&json, &serde_json::to_string(&chrono).expect("json"));
        prop_assert_eq!(from_bincode::<Fast>(&bincode_bytes(&chrono)), Ok(fast));
        let back: Fast = serde_json::from_str(&json).expect("json reads back");
        prop_assert_eq!(back, Fast { time, claimed });
    }

    #[test]
    fn text_decodes_as_chrono_decodes_it(text in time_like_text()) {
        let bytes = bincode_bytes(&(text.as_str(), Some(text.as_str())));
        let fast = from_bincode::<Fast>(&bytes);
        let chrono = from_bincode::<Chrono>(&bytes);
        prop_assert_eq!(fast, chrono.map(|Chrono { time, claimed }| Fast { time, claimed }));
    }
}

#[test]
fn the_form_every_event_carries_reads_and_writes_by_the_fast_path() {
    let text = "2025-03-12T23:00:00.001Z";
    let time = super::parse_fast(text.as_bytes()).expect("the fast path reads it");
    let mut out = [0; super::TEXT_MAX];
    let len = super::write_fast(&time, &mut out).expect("the fast path writes it");
    assert_eq!(&out[..len], text.as_bytes());
    for other in [
        "2025-03-12T23:00:60Z",
        "+12025-03-12T23:00:00Z",
        "2025-03-12 23:00:00Z",
    ] {
        assert_eq!(super::parse_fast(other.as_bytes()), None, "{other}");
    }
}
