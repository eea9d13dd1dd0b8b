//! A stream of the log at its limits. The log's streams keep everything and refuse new writes
//! at a limit (`discard: new`, [`super::streams`]), so when an operator sets `max_bytes` or
//! `max_msgs` on one, or the server's JetStream storage is used up, JetStream answers a publish
//! with an error and stores nothing of it: [`LogError::StreamFull`]. Nothing is latched on the
//! client, so the next publish after the limit is raised (or space freed) simply succeeds.
//! The condition is logged once when a write first meets it and once when a write to that stream
//! is stored again, and [`crate::EventLog::storage_full`] reports it meanwhile.

use std::sync::{Mutex, PoisonError};

use async_nats::jetstream;
use async_nats::jetstream::ErrorCode;

use crate::LogError;

/// Which of the log's streams is at its limits now, if any.
#[derive(Debug, Default)]
pub(crate) struct Limits {
    full: Mutex<Option<String>>,
}

impl Limits {
    /// Records that `stream` refused a write at its limits; the error to answer with.
    pub(crate) fn refused(&self, stream: &str, detail: String) -> LogError {
        let mut full = self.full.lock().unwrap_or_else(PoisonError::into_inner);
        if full.as_deref() != Some(stream) {
            tracing::error!(
                stream,
                %detail,
                "the log's stream {stream} on NATS is full: writes are refused and nothing of \
                 them is stored; raise its limits (max_bytes, max_msgs) or free JetStream \
                 storage, and writing resumes by itself, without a restart"
            );
            *full = Some(stream.to_owned());
        }
        LogError::StreamFull {
            stream: stream.to_owned(),
            detail,
        }
    }

    /// Records that `stream` stored a write.
    pub(crate) fn stored(&self, stream: &str) {
        let mut full = self.full.lock().unwrap_or_else(PoisonError::into_inner);
        if full.as_deref() == Some(stream) {
            tracing::warn!(stream, "the log's stream {stream} on NATS has room again");
            *full = None;
        }
    }

    /// Whether a stream of the log is at its limits now.
    pub(crate) fn is_full(&self) -> bool {
        self.full
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .is_some()
    }
}

/// Whether JetStream refused a write because the stream or the server's storage is at its
/// limits: the stream's `max_bytes` or `max_msgs` (`err_code` 10077, "maximum bytes exceeded",
/// "maximum messages exceeded"), the server's JetStream storage (10023, "insufficient
/// resources") or the account's (10002).
pub(crate) fn at_limits(err_code: u64, description: &str) -> bool {
    let code = ErrorCode(err_code);
    code == ErrorCode::INSUFFICIENT_RESOURCES
        || code == ErrorCode::ACCOUNT_RESOURCES_EXCEEDED
        || (code == ErrorCode::STREAM_STORE_FAILED
            && (description.contains("maximum bytes") || description.contains("maximum messages")))
}

/// [`at_limits`] for a publish error whose cause is JetStream's answer.
pub(crate) fn publish_at_limits(error: &(dyn std::error::Error + 'static)) -> bool {
    std::error::Error::source(error)
        .and_then(|source| source.downcast_ref::<jetstream::Error>())
        .is_some_and(|answer| at_limits(answer.error_code().0, &answer.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_answers_of_a_stream_at_its_limits_are_told_from_other_failures() {
        assert!(at_limits(10077, "maximum bytes exceeded"));
        assert!(at_limits(10077, "maximum messages exceeded"));
        assert!(at_limits(10023, "insufficient resources"));
        assert!(at_limits(10002, "resource limits exceeded for account"));
        assert!(!at_limits(10077, "some other store failure"));
        assert!(!at_limits(10071, "wrong last sequence"));
    }

    #[test]
    fn the_condition_is_reported_until_the_full_stream_stores_again() {
        let limits = Limits::default();
        assert!(!limits.is_full());
        let refused = limits.refused("IN", "maximum bytes exceeded".into());
        assert!(matches!(refused, LogError::StreamFull { ref stream, .. } if stream == "IN"));
        assert!(limits.is_full());
        limits.stored("OTHER");
        assert!(
            limits.is_full(),
            "another stream's write says nothing of this one"
        );
        limits.stored("IN");
        assert!(!limits.is_full());
    }
}
