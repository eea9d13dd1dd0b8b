//! How the writer forms a group: it stages the first request at once and takes each request
//! queued behind it while it stages, so requests that arrive during the staging join the same
//! commit, and the staging overlaps the publishers' encoding of what they send next.

use tokio::sync::mpsc::error::TryRecvError;

use super::{Request, Writer};

impl Writer {
    /// The next queued request to join a group that weighs `weight`, without waiting. `None`
    /// ends the group; a request that would take it past the event limit is carried over to
    /// the next group.
    pub(super) fn take_next(&mut self, weight: usize) -> Option<Request> {
        let limit = self.limits.events_per_commit_max;
        if weight >= limit {
            return None;
        }
        let next = match self.requests.try_recv() {
            Ok(next) => next,
            Err(TryRecvError::Empty | TryRecvError::Disconnected) => return None,
        };
        if weight + next.weight() > limit {
            self.carried = Some(next);
            return None;
        }
        Some(next)
    }
}
