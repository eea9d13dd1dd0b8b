//! `GET /v1/stream`: one server-sent event `folded` (data: the folded sequence) when the page
//! connects and after each fold. The hub's `folded` watch channel keeps only its latest value,
//! so a burst of folds reaches a slow reader as one event.
//!
//! The stream ends when the hub shuts down or the process is asked to stop (Ctrl-C, SIGTERM:
//! [`flotilla_adapters::signals::shutdown_signal`]). The second matters: a graceful stop drains the open
//! responses before the hub's own shutdown is signalled, so a stream waiting only for that
//! would hold the stop up for as long as a page stays open.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use axum::extract::State;
use axum::response::sse::{Event, KeepAlive, Sse};
use flotilla_eventstore::EventLog;
use futures::Stream;
use tokio::sync::watch;

use crate::runtime::Hub;

/// How often an idle stream sends a comment, so proxies and browsers keep it open.
const KEEP_ALIVE_INTERVAL: Duration = Duration::from_secs(15);

/// The SSE response over the hub's folded sequence.
pub(super) async fn folded<L: EventLog>(
    State(hub): State<Hub<L>>,
) -> Sse<impl Stream<Item = Result<Event, Infallible>>> {
    let watching = Watching {
        folded: hub.folded_updates(),
        shutdown: hub.shutdown_signal(),
        stop: Box::pin(flotilla_adapters::signals::shutdown_signal()),
        first: true,
    };
    let events = futures::stream::unfold(watching, |mut watching| async move {
        let seq = watching.next().await?;
        let event = Event::default()
            .event("folded")
            .id(seq.to_string())
            .data(seq.to_string());
        Some((Ok(event), watching))
    });
    Sse::new(events).keep_alive(KeepAlive::new().interval(KEEP_ALIVE_INTERVAL))
}

/// The receivers one stream waits on.
struct Watching {
    folded: watch::Receiver<u64>,
    shutdown: watch::Receiver<bool>,
    stop: Pin<Box<dyn Future<Output = ()> + Send>>,
    first: bool,
}

impl Watching {
    /// The folded sequence now (at first) or after the next fold; `None` once the hub or the
    /// process stops.
    async fn next(&mut self) -> Option<u64> {
        if *self.shutdown.borrow() {
            return None;
        }
        if !std::mem::take(&mut self.first) {
            tokio::select! {
                changed = self.folded.changed() => changed.ok()?,
                _ = self.shutdown.changed() => return None,
                () = &mut self.stop => return None,
            }
        }
        Some(*self.folded.borrow_and_update())
    }
}
