//! An agent's hub inside the same process: the scenario runner, which runs one agent per member
//! with the same reconcile code as `flotilla agent`. What an agent publishes waits in a queue
//! that the runner drains, appends to its log at the scenario's time and folds before its next
//! step — so a publish is acknowledged as soon as it is queued, as the hub's answer to a post
//! is given once the event is in the log.

use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

use super::hub::HubError;

/// The queue between in-process agents and the scenario runner.
#[derive(Debug, Clone, Default)]
pub struct LocalHub {
    queue: Arc<Mutex<Vec<Value>>>,
}

impl LocalHub {
    /// Queues events; one answer per event (`{id, queued}`).
    ///
    /// # Errors
    /// When the queue is unusable (a thread panicked while holding it).
    pub fn post_events(&self, events: &[Value]) -> Result<Vec<Value>, HubError> {
        let mut queue = self.queue.lock().map_err(|_| unusable())?;
        queue.extend(events.iter().cloned());
        Ok(events
            .iter()
            .map(|event| json!({"id": event["id"], "queued": true}))
            .collect())
    }

    /// Takes every queued event, oldest first.
    ///
    /// # Errors
    /// When the queue is unusable (a thread panicked while holding it).
    pub fn take(&self) -> Result<Vec<Value>, HubError> {
        let mut queue = self.queue.lock().map_err(|_| unusable())?;
        Ok(std::mem::take(&mut *queue))
    }
}

fn unusable() -> HubError {
    HubError::Protocol {
        url: "in-process".to_owned(),
        message: "the event queue was poisoned".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queued_events_are_taken_once_in_order() -> Result<(), HubError> {
        let hub = LocalHub::default();
        let answers = hub.post_events(&[json!({"id": "a"}), json!({"id": "b"})])?;
        assert_eq!(
            answers,
            [
                json!({"id": "a", "queued": true}),
                json!({"id": "b", "queued": true})
            ]
        );
        let taken: Vec<Value> = hub.take()?.into_iter().map(|e| e["id"].clone()).collect();
        assert_eq!(taken, [json!("a"), json!("b")]);
        assert!(hub.take()?.is_empty());
        Ok(())
    }
}
