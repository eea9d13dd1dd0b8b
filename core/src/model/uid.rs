//! The compact forms of two strings every stored object holds: its `uid` and `apiVersion`. A
//! million member clusters would otherwise hold two million 35-byte strings on the heap. Both
//! serialize as the text they stand for, so encodings and the JSON form are unchanged.

use std::fmt;

use compact_str::CompactString;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use uuid::Uuid;

/// An object's `uid`: the id of the event that created it, held as its 16 bytes; any other
/// text (an approval request's `<run>-<stage>` uid) as text.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Uid {
    /// The canonical (lower-case, hyphenated) form of an event id.
    Event(Uuid),
    /// Anything else.
    Text(CompactString),
}

impl Uid {
    /// The uid `text` stands for: an event id when `text` is one's canonical form.
    #[must_use]
    pub fn parse(text: &str) -> Self {
        match Uuid::try_parse(text) {
            Ok(id) if id.hyphenated().encode_lower(&mut Uuid::encode_buffer()) == text => {
                Uid::Event(id)
            }
            _ => Uid::Text(text.into()),
        }
    }

    /// Its text, written into `buffer` when it is an event id (no allocation).
    #[must_use]
    pub fn text<'a>(&'a self, buffer: &'a mut [u8; 45]) -> &'a str {
        match self {
            Uid::Event(id) => id.hyphenated().encode_lower(buffer),
            Uid::Text(text) => text,
        }
    }
}

impl Default for Uid {
    fn default() -> Self {
        Uid::Text(CompactString::default())
    }
}

impl From<Uuid> for Uid {
    fn from(id: Uuid) -> Self {
        Uid::Event(id)
    }
}

impl fmt::Display for Uid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Uid::Event(id) => fmt::Display::fmt(&id.hyphenated(), f),
            Uid::Text(text) => f.write_str(text),
        }
    }
}

impl Serialize for Uid {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.text(&mut Uuid::encode_buffer()))
    }
}

impl<'de> Deserialize<'de> for Uid {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = CompactString::deserialize(deserializer)?;
        Ok(Uid::parse(&text))
    }
}

/// The API versions flotilla's own kinds are applied with: longer than an inline string, and
/// held by every member cluster, placement and run.
const FLEET_API_VERSIONS: [&str; 4] = [
    "cluster.kubernetes-fleet.io/v1beta1",
    "cluster.kubernetes-fleet.io/v1",
    "placement.kubernetes-fleet.io/v1beta1",
    "placement.kubernetes-fleet.io/v1",
];

/// `text` as an `apiVersion`: one of the fleet's own points at static text (no allocation);
/// any other is inline up to 24 bytes.
#[must_use]
pub fn api_version(text: &str) -> CompactString {
    static_or_inline(&FLEET_API_VERSIONS, text)
}

/// `text` pointing at the static copy in `known` when it is one of them (no allocation, however
/// long), else a string inline up to 24 bytes.
#[must_use]
pub fn static_or_inline(known: &[&'static str], text: &str) -> CompactString {
    known.iter().find(|k| **k == text).map_or_else(
        || CompactString::from(text),
        |k| CompactString::const_new(k),
    )
}

/// Deserializes an `apiVersion` through [`api_version`].
///
/// # Errors
/// When the input is not a string.
pub fn deserialize_api_version<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<CompactString, D::Error> {
    let text = CompactString::deserialize(deserializer)?;
    Ok(api_version(&text))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_event_id_is_held_as_its_bytes_and_reads_back_as_its_text() {
        let id = Uuid::from_u128(0x0193_5a2b_7c00_7abc_8def_0123_4567_89ab);
        let text = id.to_string();
        assert_eq!(Uid::parse(&text), Uid::Event(id));
        assert_eq!(Uid::parse(&text).to_string(), text);
        let upper = text.to_uppercase();
        assert_eq!(Uid::parse(&upper), Uid::Text(upper.as_str().into()));
        assert_eq!(Uid::parse("run-before-prod").to_string(), "run-before-prod");
    }

    #[test]
    fn a_uid_encodes_as_the_string_it_replaced() {
        for text in [
            "01935a2b-7c00-7abc-8def-0123456789ab",
            "run-after-canary",
            "",
        ] {
            let uid = Uid::parse(text);
            let ours = crate::codec::encode_checkpoint(&uid).expect("encodes");
            assert_eq!(
                ours,
                crate::codec::encode_checkpoint(&text).expect("encodes")
            );
            let back: Uid = crate::codec::decode_checkpoint(&ours).expect("decodes");
            assert_eq!(back, uid);
            let json = serde_json::to_string(&uid).expect("json");
            assert_eq!(json, serde_json::to_string(text).expect("json"));
        }
    }

    #[test]
    fn fleet_api_versions_are_shared_static_text() {
        let version = api_version("placement.kubernetes-fleet.io/v1beta1");
        assert_eq!(version, "placement.kubernetes-fleet.io/v1beta1");
        assert!(!version.is_heap_allocated());
        assert_eq!(api_version("apps/v1"), "apps/v1");
        let custom = "example.com/a-very-long-version-name";
        assert_eq!(api_version(custom), custom);
    }
}
