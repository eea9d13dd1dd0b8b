//! The NATS subjects of the log. **Frozen once shipped**: followers, operators' `nats` CLI
//! filters and account permissions name them.
//!
//! Input subjects (`flotilla.in.<kind>[.<cluster token>]`) are defined in
//! [`flotilla_core::wire::subject`], because reading a record checks its body against its
//! subject; they are re-exported here.

pub use flotilla_core::wire::subject::{
    INPUT_SUBJECT_PREFIX, TOKEN_BYTES_MAX, cluster_token, input_subject,
};

/// The input stream's subject filter.
pub const INPUT_SUBJECTS: &str = "flotilla.in.>";
/// The one subject of the decisions stream.
pub const DECISIONS_SUBJECT: &str = "flotilla.decisions";
