//! Requests a JetStream cluster drops, unanswered, while a stream elects a leader: reads of a
//! stream's leader (stream info, the last message) or of a bucket (a key-value get), and
//! key-value creates. Each is sent again when unanswered.
//!
//! While an R3 stream elects a new leader (about 5 s after losing one, `docs/reliability.md`)
//! such a request is not refused, it is dropped: nobody answers, and the client waits out its
//! whole timeout ([`super::NatsOptions::request_timeout`], 10 s by default) even when the new
//! leader was elected a moment after the request was sent. So each attempt is given
//! [`RESEND_WAIT_FIRST`], doubling per attempt, and one that gets no answer is sent again, all
//! within the caller's budget: the answer comes at most about a second after a new leader is
//! elected, and a slow but live server still gets the time it needs. Only requests that may be
//! sent twice come here: reads, and creates whose repeat is refused as already existing.

use std::future::Future;
use std::time::Duration;

use tokio::time::Instant;

use crate::LogError;

/// How long the first attempt waits for an answer; each later attempt waits twice as long.
pub const RESEND_WAIT_FIRST: Duration = Duration::from_secs(1);

/// No answer came within the budget.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Unanswered;

impl Unanswered {
    /// The error a caller returns: `what` got no answer within `budget`.
    pub(crate) fn error(self, what: &str, budget: Duration) -> LogError {
        LogError::Nats(format!(
            "{what}: no answer within {budget:?} (sent again every \
             {RESEND_WAIT_FIRST:?}, doubling)"
        ))
    }
}

/// Sends `ask` until it is answered (with a value or an error) or `budget` is spent.
pub(crate) async fn ask_until_answered<T, E, Fut>(
    budget: Duration,
    ask: impl FnMut() -> Fut,
) -> Result<Result<T, E>, Unanswered>
where
    Fut: Future<Output = Result<T, E>>,
{
    ask_with_first_wait(budget, RESEND_WAIT_FIRST, ask).await
}

async fn ask_with_first_wait<T, E, Fut>(
    budget: Duration,
    first_wait: Duration,
    mut ask: impl FnMut() -> Fut,
) -> Result<Result<T, E>, Unanswered>
where
    Fut: Future<Output = Result<T, E>>,
{
    let deadline = Instant::now() + budget;
    let mut wait = first_wait;
    // Bounded by the budget: every attempt lasts until its wait or the deadline.
    loop {
        let now = Instant::now();
        if now >= deadline {
            return Err(Unanswered);
        }
        let attempt_end = deadline.min(now + wait);
        if let Ok(answer) = tokio::time::timeout_at(attempt_end, ask()).await {
            return Ok(answer);
        }
        wait = wait.saturating_mul(2);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU32, Ordering};

    const FIRST_WAIT: Duration = Duration::from_millis(10);

    #[tokio::test]
    async fn an_unanswered_request_is_sent_again_until_answered() {
        let attempts = AtomicU32::new(0);
        let answer = ask_with_first_wait(Duration::from_secs(10), FIRST_WAIT, || {
            let attempt = attempts.fetch_add(1, Ordering::Relaxed);
            async move {
                if attempt < 2 {
                    std::future::pending::<()>().await;
                }
                Ok::<_, ()>(attempt)
            }
        })
        .await;
        assert!(matches!(answer, Ok(Ok(2))), "{answer:?}");
    }

    #[tokio::test]
    async fn the_budget_bounds_every_attempt() {
        let budget = Duration::from_millis(100);
        let started = Instant::now();
        let answer = ask_with_first_wait(budget, FIRST_WAIT, || {
            std::future::pending::<Result<(), ()>>()
        })
        .await;
        assert!(matches!(answer, Err(Unanswered)));
        let elapsed = started.elapsed();
        // 10 + 20 + 40 ms, then the rest of the budget: never past it by more than a tick.
        assert!(elapsed >= budget && elapsed < budget * 5, "{elapsed:?}");
    }
}
