//! The most one input event may take, the same on every backend, checked for every event of an
//! append before any is written: a request is appended whole or not at all
//! (`docs/security.md`).
//!
//! Why 1 MiB less 4 KiB: a NATS server's default `max_payload` is 1 MiB, and it counts a
//! message's headers with its payload; JetStream's `max_msg_size` does the same. The 4 KiB are
//! room for the headers the append adds (`Nats-Msg-Id`, `Nats-Expected-Stream`, an atomic
//! batch's id, place and commit: about 200 bytes). The embedded store applies the same limit
//! so that a request is refused alike on both. It is also about what Kubernetes stores for one
//! object: a ConfigMap's or Secret's data may not exceed 1 MiB, under etcd's default 1.5 MiB
//! request limit.

use crate::LogError;

/// Most bytes one encoded input event (its marked frame) may take.
pub const EVENT_BYTES_MAX: usize = 1024 * 1024 - HEADER_ROOM_BYTES;

/// Room a NATS message's limits leave for the headers of an appended event.
pub const HEADER_ROOM_BYTES: usize = 4 * 1024;

/// Refuses the append if any event's encoded size is over `limit`, naming the first such.
///
/// # Errors
/// [`LogError::TooLarge`] with that event's place, size and the limit.
pub fn check(sizes: impl IntoIterator<Item = usize>, limit: usize) -> Result<(), LogError> {
    match sizes
        .into_iter()
        .enumerate()
        .find(|(_, size)| *size > limit)
    {
        Some((index, size)) => Err(LogError::TooLarge { index, size, limit }),
        None => Ok(()),
    }
}

/// The limit on a NATS log: [`EVENT_BYTES_MAX`], lowered to what the server's `max_payload`
/// and the stream's `max_msg_size` (zero or negative: none, as the server reads it) leave once
/// the headers are in.
#[must_use]
pub fn nats_limit(max_payload: usize, max_msg_size: i32) -> usize {
    let stream = usize::try_from(max_msg_size)
        .ok()
        .filter(|size| *size > 0)
        .unwrap_or(usize::MAX);
    EVENT_BYTES_MAX
        .min(max_payload.saturating_sub(HEADER_ROOM_BYTES))
        .min(stream.saturating_sub(HEADER_ROOM_BYTES))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_event_over_the_limit_is_named() {
        assert!(check([10, 20], 20).is_ok());
        match check([10, 21, 30], 20) {
            Err(LogError::TooLarge { index, size, limit }) => {
                assert_eq!((index, size, limit), (1, 21, 20));
            }
            other => panic!("expected TooLarge, got {other:?}"),
        }
    }

    #[test]
    fn a_smaller_server_or_stream_lowers_the_limit() {
        assert_eq!(nats_limit(1024 * 1024, -1), EVENT_BYTES_MAX);
        assert_eq!(nats_limit(64 * 1024 * 1024, -1), EVENT_BYTES_MAX);
        assert_eq!(nats_limit(512 * 1024, -1), 512 * 1024 - HEADER_ROOM_BYTES);
        assert_eq!(
            nats_limit(1024 * 1024, 100_000),
            100_000 - HEADER_ROOM_BYTES
        );
        assert_eq!(nats_limit(1024 * 1024, 0), EVENT_BYTES_MAX);
    }
}
