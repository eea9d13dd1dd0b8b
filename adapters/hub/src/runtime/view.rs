//! What readers of a hub see: the folded state, the decisions of the latest inputs, and the
//! resource versions of the states readers were handed (where a Kubernetes watch from a
//! `resourceVersion` starts).

use std::collections::VecDeque;

use flotilla_core::Decisions;
use flotilla_core::codec::CodecError;
use flotilla_core::state::StateHash;
use flotilla_eventstore::fold::Folder;

/// Decisions kept in memory for callers waiting on their own events.
pub const RECENT_DECISIONS_MAX: usize = 50_000;

/// What readers see: the folded state and the most recent decisions.
#[derive(Debug, Default)]
pub struct View {
    /// State and the sequence it has folded.
    pub folder: Folder,
    /// `(input seq, decisions)` of the latest inputs that decided something.
    pub recent: VecDeque<(u64, Decisions)>,
    /// The inputs through this sequence have their decisions in `recent` (while they fit):
    /// the writer adds a batch's once they are recorded, after it folded them.
    pub remembered: u64,
    /// Set when this process lost the writer role.
    pub fenced: Option<String>,
    /// Set when this build declined the writer role: the log holds a record of a newer build.
    pub declined: Option<String>,
    /// `(resourceVersion, input seq)` of the states readers were handed, oldest first, at
    /// most [`VERSIONS_KEPT`]: where a Kubernetes watch from a `resourceVersion` starts
    /// replaying the log (an older one is answered `410 Gone`, and the client lists again).
    pub versions: VecDeque<(u64, u64)>,
    /// The newest marks for the web page's time slider, from the decisions remembered here
    /// (those of inputs this process folded); older ones are read from the log on demand
    /// (`Hub::marks`).
    pub marks: flotilla_projections::Marks,
    /// Set while this hub follows another writer (a standby or read follower on NATS).
    pub following: bool,
    /// Set on a hub that only follows and never contends for the writer role (`--read-only`).
    pub read_only: bool,
    /// The state's hash at the sequence it was last asked at: hashing encodes the whole state
    /// (about 0.2 s at 100,000 clusters), and the state after a sequence never changes.
    hashed: std::sync::Mutex<Option<(u64, StateHash)>>,
}

impl View {
    /// The folded state's hash ([`flotilla_core::State::hash`]), computed once per sequence.
    ///
    /// # Errors
    /// When the state cannot be encoded for hashing.
    pub fn state_hash(&self) -> Result<StateHash, CodecError> {
        let seq = self.folder.seq;
        let mut hashed = self
            .hashed
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some((at, hash)) = hashed.as_ref()
            && *at == seq
        {
            return Ok(hash.clone());
        }
        let hash = self.folder.state.hash()?;
        *hashed = Some((seq, hash.clone()));
        Ok(hash)
    }

    /// The decisions recorded for one input, if still in memory.
    #[must_use]
    pub fn decisions_for(&self, seq: u64) -> Option<Decisions> {
        if seq > self.remembered {
            return None;
        }
        let found = self.recent.binary_search_by_key(&seq, |(s, _)| *s);
        Some(found.map(|i| self.recent[i].1.clone()).unwrap_or_default())
    }
}

impl View {
    /// Keeps the decisions of the inputs through `through` for answers, the newest
    /// [`RECENT_DECISIONS_MAX`] of them.
    pub(super) fn remember(&mut self, decided: Vec<(u64, Decisions)>, through: u64) {
        for (seq, decisions) in &decided {
            self.marks.note(*seq, decisions);
        }
        let recent = &mut self.recent;
        recent.extend(decided.into_iter().filter(|(_, d)| !d.is_empty()));
        while recent.len() > RECENT_DECISIONS_MAX {
            recent.pop_front();
        }
        self.remembered = self.remembered.max(through);
        self.note_version();
    }

    /// Notes the folded state's resource version and sequence, unless the version is noted.
    pub(super) fn note_version(&mut self) {
        let noted = (self.folder.state.resource_version(), self.folder.seq);
        if self.versions.back().is_some_and(|(rv, _)| *rv >= noted.0) {
            return;
        }
        self.versions.push_back(noted);
        while self.versions.len() > VERSIONS_KEPT {
            self.versions.pop_front();
        }
    }

    /// The sequence a watch from `resource_version` replays from: the newest noted state at or
    /// before it; `None` when it is older than every noted state.
    #[must_use]
    pub fn seq_of_version(&self, resource_version: u64) -> Option<u64> {
        let after = self
            .versions
            .partition_point(|(rv, _)| *rv <= resource_version);
        after.checked_sub(1).map(|index| self.versions[index].1)
    }
}

/// States noted for watches from a `resourceVersion` (the hub's watch cache window, counted in
/// folds).
pub const VERSIONS_KEPT: usize = 4_096;

#[cfg(test)]
mod tests {
    use super::View;

    #[test]
    fn a_watch_replays_from_the_newest_state_at_or_before_its_version() {
        let view = View {
            versions: [(3, 10), (5, 12)].into_iter().collect(),
            ..View::default()
        };
        assert_eq!(view.seq_of_version(2), None, "older than the window: 410");
        assert_eq!(view.seq_of_version(3), Some(10));
        assert_eq!(view.seq_of_version(4), Some(10));
        assert_eq!(view.seq_of_version(9), Some(12));
    }

    #[test]
    fn the_hash_is_the_states_and_is_kept_for_its_sequence() {
        let kept_at = |view: &View| {
            let hashed = view.hashed.lock().expect("lock");
            hashed.as_ref().map(|(seq, _)| *seq)
        };
        let mut view = View::default();
        let empty = view.folder.state.hash().expect("hashes");
        assert_eq!(view.state_hash().expect("hashes"), empty);
        assert_eq!(kept_at(&view), Some(0));
        view.folder.seq = 1;
        assert_eq!(
            view.state_hash().expect("hashes"),
            empty,
            "recomputed at #1"
        );
        assert_eq!(kept_at(&view), Some(1));
    }
}
