//! `metadata.generateName` on create: the API server's `names.SimpleNameGenerator` — the prefix
//! (cut to 58 bytes) and five characters from apimachinery's `util/rand` alphabet. The name is
//! chosen here, at the edge, before the event is appended, so the event carries the final name
//! and replaying the log never draws it again.

use serde_json::Value;
use uuid::Uuid;

/// The characters `util/rand.String` draws from (no vowels, no look-alikes).
const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
/// Random characters appended to the prefix.
const RANDOM_LENGTH: usize = 5;
/// Longest prefix kept: a name is at most 63 bytes.
const PREFIX_BYTES_MAX: usize = 63 - RANDOM_LENGTH;
/// Names tried before a create gives up (each collides with 1 in 27^5 odds).
pub const ATTEMPTS_MAX: usize = 8;

/// The `generateName` prefix of an object that has no name; `None` when it is named or has
/// no prefix.
pub fn prefix(object: &Value) -> Option<String> {
    let metadata = &object["metadata"];
    let named = metadata["name"]
        .as_str()
        .is_some_and(|name| !name.is_empty());
    let prefix = metadata["generateName"]
        .as_str()
        .filter(|p| !p.is_empty())?;
    (!named).then(|| prefix.to_owned())
}

/// A name for `prefix`.
pub fn generate(prefix: &str) -> String {
    let mut end = prefix.len().min(PREFIX_BYTES_MAX);
    while !prefix.is_char_boundary(end) {
        end -= 1;
    }
    let mut bits = Uuid::now_v7().as_u64_pair().1;
    let mut name = prefix[..end].to_owned();
    for _ in 0..RANDOM_LENGTH {
        let index = usize::try_from(bits % ALPHABET.len() as u64).unwrap_or(0);
        name.push(char::from(ALPHABET[index]));
        bits /= ALPHABET.len() as u64;
    }
    name
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_generated_name_is_the_prefix_and_five_characters() {
        let name = generate("web-");
        assert_eq!(name.len(), 9);
        assert!(name.starts_with("web-"));
        assert!(name[4..].bytes().all(|b| ALPHABET.contains(&b)), "{name}");
        assert_eq!(generate(&"x".repeat(80)).len(), 63);
    }

    #[test]
    fn only_an_unnamed_object_uses_its_prefix() {
        assert_eq!(
            prefix(&json!({"metadata": {"generateName": "a-"}})),
            Some("a-".into())
        );
        assert_eq!(
            prefix(&json!({"metadata": {"name": "b", "generateName": "a-"}})),
            None
        );
        assert_eq!(prefix(&json!({"metadata": {}})), None);
    }
}
