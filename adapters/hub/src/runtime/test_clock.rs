//! The hub's time under test (`serve --test-clock`), apart from the clock task
//! ([`super::clock`]) that ticks by it, so the hub's settings can hold one.

use std::sync::{Arc, Mutex};

use chrono::{DateTime, Utc};

/// A clock a test sets (`serve --test-clock`, test only): when a hub has one, it is the hub's
/// only time — every appended input gets its time, and the clock task ticks by it — so a
/// recorded incident has exact times (on NATS, on a test stream that keeps given times).
#[derive(Debug, Clone)]
pub struct TestClock(Arc<Mutex<DateTime<Utc>>>);

impl TestClock {
    /// A clock standing at `start`.
    #[must_use]
    pub fn new(start: DateTime<Utc>) -> Self {
        Self(Arc::new(Mutex::new(start)))
    }

    /// The time it shows.
    #[must_use]
    pub fn now(&self) -> DateTime<Utc> {
        self.0.lock().map_or(DateTime::UNIX_EPOCH, |now| *now)
    }

    /// Moves it to `to`, never backwards; the time it shows then.
    pub fn set(&self, to: DateTime<Utc>) -> DateTime<Utc> {
        match self.0.lock() {
            Ok(mut now) => {
                *now = (*now).max(to);
                *now
            }
            Err(_) => DateTime::UNIX_EPOCH,
        }
    }
}
