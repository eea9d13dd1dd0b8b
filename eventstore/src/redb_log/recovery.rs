//! What a reopen of the redb log can say about a crash before it: whether redb had to recover
//! the file, and — given a witness of what was acknowledged — whether acknowledged inputs are
//! missing. The file alone cannot show the second: after lost fsyncs it is a consistent earlier
//! log.

/// How the file was found at open.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OpenReport {
    /// The file was not closed cleanly (its writer crashed or lost power): redb recovered it to
    /// its last durable commit before anything was read.
    pub repaired: bool,
    /// The last input sequence found.
    pub last_seq: u64,
    /// The last input sequence with decisions found.
    pub last_decided_seq: u64,
}

/// Acknowledged events are missing after a reopen: the storage did not keep what it said it had
/// synced (see [`super::RedbLog::confirm_acknowledged`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error(
    "the log ends at input {last_seq}, but input {acknowledged} was acknowledged: \
     {} acknowledged inputs were lost (the storage did not honour fsync)",
    acknowledged.saturating_sub(*last_seq)
)]
pub struct LostAcknowledged {
    /// The highest sequence a witness saw acknowledged.
    pub acknowledged: u64,
    /// The last input sequence the log holds.
    pub last_seq: u64,
}
