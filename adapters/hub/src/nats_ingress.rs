//! JSON events over NATS for external publishers: a request on [`INGEST_SUBJECT`] carrying one
//! JSON event (or an array; schema: `flotilla schema`) is validated, appended to the log and
//! answered with `{"results": [{id, seq, duplicate, decisions}]}`, or `{"error": "…"}` when
//! it is malformed — in which case nothing is appended. Hubs subscribe in one queue group, so
//! each request is handled once.

use std::sync::Arc;

use flotilla_core::Principal;
use flotilla_eventstore::EventLog;
use futures::StreamExt;
use serde_json::json;
use tokio::sync::Semaphore;

use crate::ingest::submit_json_as;
use crate::runtime::Hub;

/// Subject external publishers send JSON events to (request/reply).
pub const INGEST_SUBJECT: &str = "flotilla.ingest";
/// Queue group of the hubs serving [`INGEST_SUBJECT`].
pub const INGEST_QUEUE: &str = "flotilla-hub";
/// Source recorded for events that arrive here without one.
pub const NATS_SOURCE: &str = "nats";
/// Requests handled at once; more wait (their appends share group commits).
pub const REQUESTS_IN_FLIGHT_MAX: usize = 256;

/// Serves [`INGEST_SUBJECT`] until the hub shuts down.
///
/// # Errors
/// When the subscription cannot be made.
pub async fn run<L: EventLog>(
    hub: Hub<L>,
    client: async_nats::Client,
) -> Result<(), async_nats::SubscribeError> {
    let mut requests = client
        .queue_subscribe(INGEST_SUBJECT, INGEST_QUEUE.to_owned())
        .await?;
    let mut shutdown = hub.shutdown_signal();
    let slots = Arc::new(Semaphore::new(REQUESTS_IN_FLIGHT_MAX));
    loop {
        let request = tokio::select! {
            request = requests.next() => request,
            _ = shutdown.changed() => None,
        };
        let Some(request) = request else { break };
        let Ok(slot) = Arc::clone(&slots).acquire_owned().await else {
            break;
        };
        let (hub, client) = (hub.clone(), client.clone());
        tokio::spawn(async move {
            // NATS does not tell the hub which user sent the request: `Principal::Nats`.
            let principal = Principal::Nats;
            let payload = &request.payload;
            let answer = match submit_json_as(&hub, payload, NATS_SOURCE, &principal, true).await {
                Ok(results) => json!({ "results": results }),
                Err(error) => json!({ "error": error.to_string() }),
            };
            if let Some(reply) = request.reply {
                let body = answer.to_string().into_bytes();
                if let Err(error) = client.publish(reply, body.into()).await {
                    tracing::warn!(%error, "cannot answer an ingest request");
                }
            }
            drop(slot);
        });
    }
    Ok(())
}
