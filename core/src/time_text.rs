//! An envelope's times as text: byte for byte what chrono's serde writes (RFC 3339, `Z`, the
//! fraction in 0, 3, 6 or 9 digits) and the values its parser reads, without its general
//! formatter and parser on the form every event carries.
//!
//! Formatting and parsing this text through chrono was about two thirds of encoding a
//! heartbeat and a fifth of decoding one (`perf` of the `ingest` bench). The fast path covers
//! years 0–9999 with no leap second, in exactly the form chrono writes; anything else, and every
//! error, goes through chrono itself, so what is accepted, its value and the message refusing it
//! are chrono's.

use std::fmt;

use chrono::{DateTime, Datelike, NaiveDate, NaiveTime, TimeZone, Timelike, Utc};
use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize, Serializer};

/// The longest text the fast path writes: `YYYY-MM-DDTHH:MM:SS.nnnnnnnnnZ`.
const TEXT_MAX: usize = 30;

/// Serializes an envelope time as chrono's serde does.
///
/// # Errors
/// Whatever the serializer returns.
pub fn serialize<S: Serializer>(time: &DateTime<Utc>, serializer: S) -> Result<S::Ok, S::Error> {
    let mut text = [0u8; TEXT_MAX];
    match write_fast(time, &mut text).and_then(|len| std::str::from_utf8(&text[..len]).ok()) {
        Some(text) => serializer.serialize_str(text),
        None => time.serialize(serializer),
    }
}

/// Deserializes an envelope time as chrono's serde does.
///
/// # Errors
/// chrono's, for text that is not an RFC 3339 time.
pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<DateTime<Utc>, D::Error> {
    deserializer.deserialize_str(TimeVisitor)
}

/// The same for an optional time (`claimed_time`).
pub mod option {
    use super::{DateTime, Deserialize, Deserializer, Serialize, Serializer, Utc};

    /// Serializes `Some(time)` as the derive would, with the fast text inside.
    ///
    /// # Errors
    /// Whatever the serializer returns.
    pub fn serialize<S: Serializer>(
        time: &Option<DateTime<Utc>>,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        match time {
            Some(time) => serializer.serialize_some(&Text(*time)),
            None => serializer.serialize_none(),
        }
    }

    /// Deserializes an optional time as the derive would.
    ///
    /// # Errors
    /// chrono's, for text that is not an RFC 3339 time.
    pub fn deserialize<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Option<DateTime<Utc>>, D::Error> {
        Ok(Option::<Text>::deserialize(deserializer)?.map(|text| text.0))
    }

    /// A time serialized through the fast text.
    struct Text(DateTime<Utc>);

    impl Serialize for Text {
        fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
            super::serialize(&self.0, serializer)
        }
    }

    impl<'de> Deserialize<'de> for Text {
        fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
            super::deserialize(deserializer).map(Text)
        }
    }
}

struct TimeVisitor;

impl Visitor<'_> for TimeVisitor {
    type Value = DateTime<Utc>;

    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("an RFC 3339 formatted date and time string")
    }

    fn visit_str<E: de::Error>(self, text: &str) -> Result<Self::Value, E> {
        match parse_fast(text.as_bytes()) {
            Some(time) => Ok(time),
            None => text
                .parse::<DateTime<chrono::FixedOffset>>()
                .map(|time| time.with_timezone(&Utc))
                .map_err(E::custom),
        }
    }
}

/// Writes `time` as chrono's serde would, when the year is 0–9999 and it is not a leap
/// second; returns the length written.
fn write_fast(time: &DateTime<Utc>, out: &mut [u8; TEXT_MAX]) -> Option<usize> {
    let year = u32::try_from(time.year())
        .ok()
        .filter(|year| *year <= 9999)?;
    let nanos = time.nanosecond();
    if nanos >= 1_000_000_000 {
        return None;
    }
    put_digits(&mut out[0..4], year);
    out[4] = b'-';
    put_digits(&mut out[5..7], time.month());
    out[7] = b'-';
    put_digits(&mut out[8..10], time.day());
    out[10] = b'T';
    put_digits(&mut out[11..13], time.hour());
    out[13] = b':';
    put_digits(&mut out[14..16], time.minute());
    out[16] = b':';
    put_digits(&mut out[17..19], time.second());
    let mut len = 19;
    let (fraction, digits) = match nanos {
        0 => (0, 0),
        _ if nanos.is_multiple_of(1_000_000) => (nanos / 1_000_000, 3),
        _ if nanos.is_multiple_of(1_000) => (nanos / 1_000, 6),
        _ => (nanos, 9),
    };
    if digits > 0 {
        out[len] = b'.';
        put_digits(&mut out[len + 1..len + 1 + digits], fraction);
        len += 1 + digits;
    }
    out[len] = b'Z';
    Some(len + 1)
}

/// Writes `value`'s last `out.len()` decimal digits, zero-padded.
fn put_digits(out: &mut [u8], mut value: u32) {
    for digit in out.iter_mut().rev() {
        *digit = b'0' + (value % 10) as u8;
        value /= 10;
    }
}

/// Reads exactly the form [`write_fast`] writes (a fraction of 1–9 digits allowed, as chrono
/// reads it); `None` for anything else, which chrono's parser then reads or refuses.
fn parse_fast(text: &[u8]) -> Option<DateTime<Utc>> {
    let (&b'Z', text) = text.split_last()? else {
        return None;
    };
    if text.len() < 19 || [text[4], text[7], text[10], text[13], text[16]] != *b"--T::" {
        return None;
    }
    let year = digits(&text[0..4])?;
    let (month, day) = (digits(&text[5..7])?, digits(&text[8..10])?);
    let (hour, minute) = (digits(&text[11..13])?, digits(&text[14..16])?);
    let second = digits(&text[17..19])?;
    let nanos = match &text[19..] {
        [] => 0,
        [b'.', fraction @ ..] if (1..=9).contains(&fraction.len()) => {
            digits(fraction)? * 10u32.pow(9 - fraction.len() as u32)
        }
        _ => return None,
    };
    // A leap second (60) is left to chrono.
    if second >= 60 {
        return None;
    }
    let date = NaiveDate::from_ymd_opt(i32::try_from(year).ok()?, month, day)?;
    let time = NaiveTime::from_hms_nano_opt(hour, minute, second, nanos)?;
    Some(Utc.from_utc_datetime(&date.and_time(time)))
}

/// The value of ASCII decimal digits; `None` if any byte is not one.
fn digits(text: &[u8]) -> Option<u32> {
    text.iter().try_fold(0u32, |value, byte| {
        byte.is_ascii_digit()
            .then(|| value * 10 + u32::from(byte - b'0'))
    })
}

#[cfg(test)]
mod tests;
