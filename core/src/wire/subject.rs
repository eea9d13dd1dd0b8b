//! The NATS subjects of input events. **Frozen once shipped**: followers, operators' `nats` CLI
//! filters, account permissions and external publishers name them. They live in core because
//! reading a record checks that its body agrees with the subject it was published on.
//!
//! | input | subject |
//! |---|---|
//! | `Input::Heartbeat` | `flotilla.in.heartbeat.<cluster>` |
//! | `Input::WorkReport` | `flotilla.in.report.<cluster>` |
//! | `Input::Apply` | `flotilla.in.apply` |
//! | `Input::Delete` | `flotilla.in.delete` |
//! | `Input::Approve` | `flotilla.in.approve` |
//! | `Input::Tick` | `flotilla.in.tick` |
//! | `Input::Leave` | `flotilla.in.leave.<cluster>` |
//! | `Input::AnalysisResult` | `flotilla.in.analysisResult` |
//!
//! The kind token is [`Input::kind_name`]. Only inputs that speak for one member cluster carry a
//! second token, so a follower can filter one cluster's traffic (`flotilla.in.*.member1`);
//! objects are named inside the manifest, which the log does not parse.
//!
//! A cluster token is the name with every byte outside `[A-Za-z0-9_-]` written as `%XX`
//! (uppercase hex), so `eu.member-1` becomes `eu%2Emember-1`: the mapping is injective and the
//! token can never hold `.`, `*`, `>` or whitespace. An empty name becomes `_`, and a token
//! longer than [`TOKEN_BYTES_MAX`] is cut and suffixed with a hash of the whole name, because the
//! log appends *before* validation and must accept (to reject visibly) a 1 MB cluster name.

use crate::event::{Envelope, Input};

/// Every input subject lives under this prefix (`flotilla.in.>` is the input stream's filter).
pub const INPUT_SUBJECT_PREFIX: &str = "flotilla.in";
/// Longest cluster token written into a subject, in bytes.
pub const TOKEN_BYTES_MAX: usize = 64;

/// Bytes of the escaped name kept in front of the hash when a token is cut.
const TOKEN_PREFIX_BYTES: usize = TOKEN_BYTES_MAX - 17;

/// The subject an input event is published on.
#[must_use]
pub fn input_subject(envelope: &Envelope) -> String {
    let kind = envelope.payload.kind_name();
    match &envelope.payload {
        Input::Heartbeat(heartbeat) => {
            format!(
                "{INPUT_SUBJECT_PREFIX}.{kind}.{}",
                cluster_token(&heartbeat.cluster)
            )
        }
        Input::WorkReport(report) => {
            format!(
                "{INPUT_SUBJECT_PREFIX}.{kind}.{}",
                cluster_token(&report.cluster)
            )
        }
        Input::Leave { cluster } => {
            format!("{INPUT_SUBJECT_PREFIX}.{kind}.{}", cluster_token(cluster))
        }
        Input::Apply { .. }
        | Input::Delete { .. }
        | Input::Approve { .. }
        | Input::Tick
        | Input::AnalysisResult(_) => {
            format!("{INPUT_SUBJECT_PREFIX}.{kind}")
        }
    }
}

/// Escapes a name into one valid subject token (see the module docs).
#[must_use]
pub fn cluster_token(name: &str) -> String {
    if name.is_empty() {
        return "_".to_owned();
    }
    let mut token = String::with_capacity(name.len());
    for byte in name.bytes() {
        if byte.is_ascii_alphanumeric() || byte == b'_' || byte == b'-' {
            token.push(char::from(byte));
        } else {
            token.push_str(&format!("%{byte:02X}"));
        }
    }
    if token.len() <= TOKEN_BYTES_MAX {
        return token;
    }
    // The escaped token is ASCII, so any byte index is a char boundary.
    token.truncate(TOKEN_PREFIX_BYTES);
    format!("{token}~{:016x}", fnv1a_64(name.as_bytes()))
}

/// FNV-1a, 64 bit: a stable, dependency-free hash; collisions only merge two subjects, the
/// payload still carries the full name.
fn fnv1a_64(bytes: &[u8]) -> u64 {
    const OFFSET_BASIS: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x0000_0100_0000_01b3;
    bytes.iter().fold(OFFSET_BASIS, |hash, &byte| {
        (hash ^ u64::from(byte)).wrapping_mul(PRIME)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::{Heartbeat, ObjectRef, WorkReport};
    use chrono::DateTime;
    use uuid::Uuid;

    fn envelope(payload: Input) -> Envelope {
        Envelope::new(Uuid::from_u128(1), DateTime::UNIX_EPOCH, "test", payload)
    }

    fn heartbeat(cluster: &str) -> Input {
        Input::Heartbeat(Heartbeat {
            cluster: cluster.into(),
            ..Heartbeat::default()
        })
    }

    #[test]
    fn subjects_follow_the_documented_table() {
        let report = Input::WorkReport(WorkReport {
            cluster: "member2".into(),
            placement: "web".into(),
            namespace: None,
            resource_index: 0,
            applied: None,
            available: None,
            trackable: true,
            message: String::new(),
            failed_manifests: Vec::new(),
            differences: crate::event::Differences::default(),
        });
        let delete = Input::Delete {
            target: ObjectRef {
                kind: "X".into(),
                group: None,
                namespace: None,
                name: "y".into(),
            },
        };
        let approve = Input::Approve {
            name: "a".into(),
            namespace: None,
            reason: None,
            message: None,
        };
        let cases = [
            (heartbeat("member1"), "flotilla.in.heartbeat.member1"),
            (report, "flotilla.in.report.member2"),
            (
                Input::Apply {
                    manifest: "{}".into(),
                },
                "flotilla.in.apply",
            ),
            (delete, "flotilla.in.delete"),
            (approve, "flotilla.in.approve"),
            (Input::Tick, "flotilla.in.tick"),
            (
                Input::Leave {
                    cluster: "eu.member-3".into(),
                },
                "flotilla.in.leave.eu%2Emember-3",
            ),
        ];
        for (input, subject) in cases {
            assert_eq!(input_subject(&envelope(input)), subject);
        }
    }

    #[test]
    fn tokens_never_hold_subject_syntax() {
        assert_eq!(cluster_token("eu.member-1"), "eu%2Emember-1");
        assert_eq!(cluster_token("a b*>\t%"), "a%20b%2A%3E%09%25");
        assert_eq!(cluster_token("ü"), "%C3%BC");
        assert_eq!(cluster_token(""), "_");
        assert_ne!(cluster_token("a.b"), cluster_token("a_b"));
    }

    #[test]
    fn long_names_are_cut_with_a_hash() {
        let long = "x".repeat(10_000);
        let token = cluster_token(&long);
        assert_eq!(token.len(), TOKEN_BYTES_MAX);
        assert_ne!(token, cluster_token(&"x".repeat(10_001)));
        let subject = input_subject(&envelope(heartbeat(&long)));
        assert!(subject.len() < 100, "{subject}");
    }
}
