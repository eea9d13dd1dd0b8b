//! Records of a newer build met by the writer: declined only on a hub's announcement, rejected
//! otherwise (`docs/schema-evolution.md`, "newer" frames).

use flotilla_eventstore::EventLog;
use flotilla_eventstore::fold::FoldError;

use super::hub::{Hub, HubError};

impl<L: EventLog> Hub<L> {
    /// The fold stopped before a record of a newer build: the writer declines its role only
    /// when a hub of a newer build announced itself ([`LogReader::newer_build`]); otherwise the
    /// record is a publisher's, and the next round rejects it like any undecodable input.
    pub(super) async fn meet_newer_record(&self, newer: &FoldError) -> Result<(), HubError> {
        let FoldError::Newer { seq, .. } = newer else {
            return Ok(());
        };
        match self.log.newer_build().await? {
            Some(announced) => self.decline_writer_role(&format!("{newer}, and {announced}")),
            None => {
                tracing::warn!(
                    seq,
                    "{newer}, but no hub of a newer build announced itself: rejecting it"
                );
                let mut view = self.view.write().map_err(|_| HubError::Poisoned)?;
                view.folder.reject_newer_through(*seq);
                Ok(())
            }
        }
    }

    /// Stops deciding: the log holds a record this build must not decide. The hub stays up
    /// and serves what it folded.
    pub(super) fn decline_writer_role(
        &self,
        newer: &dyn std::fmt::Display,
    ) -> Result<(), HubError> {
        let message = decline_message(newer);
        tracing::error!("{message}");
        let mut view = self.view.write().map_err(|_| HubError::Poisoned)?;
        view.declined = Some(message);
        Ok(())
    }
}

/// What a hub that declines the writer role says, and keeps in its status.
pub(super) fn decline_message(newer: &dyn std::fmt::Display) -> String {
    format!(
        "declining the writer role: {newer}; this hub goes on serving reads of what it folded \
         (upgrade it to write)"
    )
}
