//! The clock adapter: the only place wall-clock time enters the log. It appends a tick when
//! the core's next deadline has passed, so that heartbeat timeouts and timed waits happen even
//! when nothing else arrives. Between deadlines it stays silent, keeping the log small. It
//! looks at the deadline after every fold as well as every [`CLOCK_POLL`], so a deadline the
//! core sets at the event's own time (a partitioned pass stopped at maxNew) gets its tick at
//! once.

use std::time::Duration;

use flotilla_core::{Envelope, Input, next_deadline};
use flotilla_eventstore::EventLog;
use uuid::Uuid;

use super::hub::{Hub, HubError, note_retry, storage_full, transient};
pub use super::test_clock::TestClock;

/// How often the clock looks at the deadline.
pub const CLOCK_POLL: Duration = Duration::from_millis(250);

/// Source name of tick events.
pub const CLOCK_SOURCE: &str = "clock";

/// Runs until shutdown: appends a tick whenever the wall clock passes the core's deadline.
///
/// A tick the log fails to take for a passing reason ([`transient`]: the NATS stream is
/// electing a leader, the server restarts, the log's storage is full) is sent again, with the
/// same id, at the next poll, so the server's deduplication keeps one copy if the first send
/// was stored after all. The clock never stops over it: a hub without ticks would never time
/// out a silent member.
///
/// # Errors
/// When the log refuses a tick for any other reason.
pub async fn run<L: EventLog>(hub: Hub<L>) -> Result<(), HubError> {
    let mut shutdown = hub.shutdown_signal();
    let mut folded = hub.folded.clone();
    // The sequence of the last tick appended; no new tick until the writer has folded it.
    let mut pending: u64 = 0;
    // A due tick whose append failed transiently, to send again.
    let mut unsent: Option<Envelope> = None;
    loop {
        tokio::select! {
            () = tokio::time::sleep(CLOCK_POLL) => {}
            // The writer folded something: a deadline may now be due at once. The sender lives
            // as long as the hub, so this never returns an error while the clock runs.
            _ = folded.changed() => {}
            _ = shutdown.changed() => return Ok(()),
        }
        let (deadline, folded, writing) = {
            let view = hub.view()?;
            let writing = view.declined.is_none() && view.fenced.is_none() && !view.following;
            (next_deadline(&view.folder.state), view.folder.seq, writing)
        };
        let now = hub.now();
        // Only the writer's clock ticks: a hub that declined or lost the role only reads.
        if !writing {
            unsent = None;
            continue;
        }
        let due = folded >= pending && deadline.is_some_and(|d| d <= now);
        let tick = match unsent.take() {
            Some(tick) => tick,
            None if due => Envelope::new(Uuid::now_v7(), now, CLOCK_SOURCE, Input::Tick),
            None => continue,
        };
        match hub.submit(vec![tick.clone()]).await {
            Ok(appended) => pending = appended.first().map_or(pending, |a| a.seq),
            Err(error) if transient(&error) => {
                note_retry("appending a tick", &error, storage_full(&error));
                unsent = Some(tick);
            }
            Err(error) => return Err(error),
        }
    }
}
