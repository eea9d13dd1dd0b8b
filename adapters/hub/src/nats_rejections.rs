//! The rejection subject: when the writer rejects an input (a malformed record, an unsupported
//! schema version, a heartbeat from an unknown cluster, a body that contradicts its subject …),
//! it publishes a notice on `flotilla.rejected.<kind>[.<cluster>]` — the input subject with
//! `in` replaced by `rejected` — so a publisher can watch for the fate of what it sent (e.g.
//! `flotilla.rejected.heartbeat.member-2`, or `flotilla.rejected.>`). The notice is JSON:
//! `{"seq", "id", "subject", "code", "reason"}` (`id` is absent for a record that could not be
//! read). Notices are plain NATS messages, best effort: the rejection itself is recorded in the
//! log as a `Rejected` decision, which `flotilla events` shows.

use std::time::Duration;

use flotilla_core::Decision;
use flotilla_core::wire::LogRecord;
use flotilla_eventstore::EventLog;
use serde_json::{Value, json};

use crate::runtime::Hub;
use flotilla_adapters::nats_names::rejection_subject;

/// Publishes a notice per rejected input folded while this hub writes, until shutdown.
pub async fn run<L: EventLog>(hub: Hub<L>, client: async_nats::Client) {
    let mut folded = hub.folded_updates();
    let mut shutdown = hub.shutdown_signal();
    // Inputs up to here were handled (or folded before this hub wrote: not ours to announce).
    let mut done = *folded.borrow();
    loop {
        tokio::select! {
            _ = folded.changed() => {}
            _ = shutdown.changed() => return,
        }
        let upto = *folded.borrow();
        if !hub.is_writing() {
            done = upto;
            continue;
        }
        let rejected = rejected_since(&hub, done);
        for (seq, code, reason) in rejected {
            if let Some((subject, body)) = notice(&hub, seq, code, reason).await
                && let Err(error) = client.publish(subject, body.to_string().into()).await
            {
                tracing::warn!(%error, seq, "cannot publish a rejection notice");
            }
        }
        done = upto;
        // Let a burst of folds coalesce.
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// The rejections among the recent decisions after `after`: `(seq, code, reason)`.
fn rejected_since<L: EventLog>(hub: &Hub<L>, after: u64) -> Vec<(u64, &'static str, String)> {
    let Ok(view) = hub.view() else {
        return Vec::new();
    };
    let start = view.recent.partition_point(|(seq, _)| *seq <= after);
    view.recent
        .range(start..)
        .flat_map(|(seq, decisions)| {
            decisions.iter().filter_map(move |decision| match decision {
                Decision::Rejected { code, message } => {
                    Some((*seq, code.as_str(), message.clone()))
                }
                _ => None,
            })
        })
        .collect()
}

/// The notice's subject and body, from the stored record.
async fn notice<L: EventLog>(
    hub: &Hub<L>,
    seq: u64,
    code: &str,
    reason: String,
) -> Option<(String, Value)> {
    let record = hub.log().read(seq, 1).await.ok()?.into_iter().next()?;
    let (subject, id) = match &record.record {
        LogRecord::Event(envelope) => (
            flotilla_core::wire::subject::input_subject(envelope),
            Some(envelope.id.to_string()),
        ),
        LogRecord::Rejected { subject, .. } | LogRecord::Newer { subject, .. } => {
            (subject.clone(), None)
        }
    };
    let mut body = json!({"seq": seq, "subject": subject, "code": code, "reason": reason});
    if let (Some(id), Some(object)) = (id, body.as_object_mut()) {
        object.insert("id".to_owned(), Value::from(id));
    }
    Some((rejection_subject(&subject), body))
}
