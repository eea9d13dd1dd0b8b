//! The NATS names the hub and a member agent both use: the rejection subjects, the works
//! bucket's name and its key formats. Both sides import them from here, so a member agent
//! needs none of the hub's modules (`nats_works`, `nats_rejections` publish; the agent reads).
//!
//! Works bucket keys (see `nats_works` for the values):
//!
//! | key | value |
//! |---|---|
//! | `<cluster>.member` | the cluster's membership record |
//! | `<cluster>.work.<work name>` | one Work object |
//!
//! `<cluster>` is [`cluster_key`]: the input subjects' cluster token with `%` written as `=` and
//! `~` as `/`, the bytes key-value keys allow.

use flotilla_core::wire::subject::{INPUT_SUBJECT_PREFIX, cluster_token};
use flotilla_eventstore::nats_log::NatsOptions;

/// Every rejection subject lives under this prefix.
pub const REJECTED_SUBJECT_PREFIX: &str = "flotilla.rejected";

/// The rejection subject of an input subject (`flotilla.in.X` → `flotilla.rejected.X`).
#[must_use]
pub fn rejection_subject(input_subject: &str) -> String {
    let rest = input_subject
        .strip_prefix(INPUT_SUBJECT_PREFIX)
        .and_then(|rest| rest.strip_prefix('.'))
        .filter(|rest| !rest.is_empty())
        .unwrap_or("other");
    format!("{REJECTED_SUBJECT_PREFIX}.{rest}")
}

/// The works bucket's name.
#[must_use]
pub fn works_bucket_name(options: &NatsOptions) -> String {
    format!("{}_WORKS", options.stream_prefix)
}

/// A cluster's first key token in the works bucket (module docs).
#[must_use]
pub fn cluster_key(cluster: &str) -> String {
    cluster_token(cluster).replace('%', "=").replace('~', "/")
}

/// The key of a cluster's membership record.
#[must_use]
pub fn member_key(cluster: &str) -> String {
    format!("{}.member", cluster_key(cluster))
}

/// The key of one of a cluster's Works.
#[must_use]
pub fn work_key(cluster: &str, work: &str) -> String {
    format!("{}.work.{work}", cluster_key(cluster))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rejection_subjects_mirror_input_subjects() {
        assert_eq!(
            rejection_subject("flotilla.in.heartbeat.member-2"),
            "flotilla.rejected.heartbeat.member-2"
        );
        assert_eq!(
            rejection_subject("flotilla.in.apply"),
            "flotilla.rejected.apply"
        );
        assert_eq!(rejection_subject("redb"), "flotilla.rejected.other");
    }

    #[test]
    fn cluster_keys_are_valid_key_value_keys() {
        assert_eq!(cluster_key("member-1"), "member-1");
        assert_eq!(cluster_key("eu.member-1"), "eu=2Emember-1");
        assert_eq!(work_key("eu.m", "shop-work"), "eu=2Em.work.shop-work");
        let long = "x.".repeat(100);
        let key = cluster_key(&long);
        assert!(
            key.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"-/_=".contains(&b))
        );
    }
}
