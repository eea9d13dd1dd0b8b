//! What a NATS log holds, for `flotilla replay --nats URL info`: the first and last input the
//! log keeps (sequence and the time the log assigned), its base under a retention window, each
//! stream's messages, bytes and `max_age`, and the checkpoint objects.

use futures::StreamExt;
use serde::Serialize;

use super::{NatsLog, nats};
use crate::LogError;
use crate::LogReader;
use crate::redb_log::info::InputPoint;

/// One stream of the log.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StreamUsage {
    /// The stream's name.
    pub name: String,
    /// Messages it holds.
    pub messages: u64,
    /// Bytes it holds.
    pub bytes: u64,
    /// Its `max_age` in seconds (0: none).
    pub max_age_secs: u64,
}

/// One object of the checkpoint bucket.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CheckpointObject {
    /// Its name (`newest`, or `seek-<sequence>`).
    pub name: String,
    /// Its size.
    pub bytes: u64,
}

/// What a NATS log holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NatsInfo {
    /// The first input the log keeps (after its base), if any.
    pub first: Option<InputPoint>,
    /// The last input, if any.
    pub last: Option<InputPoint>,
    /// The last input whose decisions are recorded.
    pub last_decided_seq: u64,
    /// The checkpoint a retention window made the log's start (0: it holds every input).
    pub base_seq: u64,
    /// The input and decision streams.
    pub streams: Vec<StreamUsage>,
    /// The checkpoint bucket's objects, by name.
    pub checkpoints: Vec<CheckpointObject>,
}

impl NatsInfo {
    /// Inputs kept: from the first to the last, both included.
    #[must_use]
    pub fn inputs(&self) -> u64 {
        match (&self.first, &self.last) {
            (Some(first), Some(last)) => (last.seq + 1).saturating_sub(first.seq),
            _ => 0,
        }
    }

    /// The time from the first kept input to the last.
    #[must_use]
    pub fn window(&self) -> Option<chrono::Duration> {
        let first = self.first.as_ref()?.time?;
        Some(self.last.as_ref()?.time? - first)
    }
}

impl NatsLog {
    /// What the log holds (`flotilla replay info`).
    ///
    /// # Errors
    /// When the server does not answer.
    pub async fn info(&self) -> Result<NatsInfo, LogError> {
        let mut streams = Vec::new();
        let mut first_seq = 0;
        for stream in [&self.input, &self.decisions] {
            let mut stream = stream.clone();
            let info = stream.info().await.map_err(nats("stream info"))?;
            if streams.is_empty() {
                first_seq = info.state.first_sequence;
            }
            streams.push(StreamUsage {
                name: info.config.name.clone(),
                messages: info.state.messages,
                bytes: info.state.bytes,
                max_age_secs: info.config.max_age.as_secs(),
            });
        }
        let base_seq = self.base_seq().await?;
        let first_seq = first_seq.max(base_seq + 1);
        let last_seq = self.last_seq().await?;
        let point = |seq: u64| async move {
            let read = self.read(seq, 1).await?;
            let time = read.first().filter(|input| input.seq == seq);
            let time = time.and_then(|input| input.event().map(|event| event.time));
            Ok::<_, LogError>(InputPoint { seq, time })
        };
        let (first, last) = if last_seq < first_seq {
            (None, None)
        } else {
            (Some(point(first_seq).await?), Some(point(last_seq).await?))
        };
        Ok(NatsInfo {
            first,
            last,
            last_decided_seq: self.last_decided_seq().await?,
            base_seq,
            streams,
            checkpoints: self.checkpoint_objects().await?,
        })
    }

    async fn checkpoint_objects(&self) -> Result<Vec<CheckpointObject>, LogError> {
        let mut listing = self
            .checkpoints
            .list()
            .await
            .map_err(|err| LogError::Nats(format!("list checkpoints: {err}")))?;
        let mut objects = Vec::new();
        while let Some(info) = listing.next().await {
            let info = info.map_err(|err| LogError::Nats(format!("list checkpoints: {err}")))?;
            // The base is shown as `baseSeq`; it holds no state.
            if !info.deleted && info.name != super::retention::BASE_OBJECT {
                let bytes = u64::try_from(info.size).unwrap_or(u64::MAX);
                objects.push(CheckpointObject {
                    name: info.name,
                    bytes,
                });
            }
        }
        objects.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(objects)
    }
}
