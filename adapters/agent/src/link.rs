//! How an agent reaches its hub: the hub's HTTP API (`--hub URL`) or a NATS server
//! (`--nats URL`), or — for the agents a scenario runs — the runner in the same process. Each
//! offers the same three things: the cluster's membership, publishing
//! events, and following the cluster's Works.

use serde_json::Value;
use tokio::sync::mpsc;

use super::hub::{HubClient, HubError, Membership};
use super::local_link::LocalHub;
use super::nats_link::NatsLink;
use super::watch::{WorkChange, follow};

/// The agent's hub.
#[derive(Debug, Clone)]
pub enum HubLink {
    /// Over the hub's HTTP API.
    Http(HubClient),
    /// Over NATS.
    Nats(Box<NatsLink>),
    /// Inside the process that folds the log (the scenario runner's agents).
    Local(LocalHub),
}

impl HubLink {
    /// The cluster's membership.
    ///
    /// # Errors
    /// When the hub cannot be asked, or does not know the membership yet.
    pub async fn membership(&self) -> Result<Membership, HubError> {
        match self {
            HubLink::Http(hub) => hub.membership().await,
            HubLink::Nats(link) => link.membership().await,
            // An in-process agent is driven by its runner, which knows the membership.
            HubLink::Local(_) => Err(HubError::Protocol {
                url: "in-process".to_owned(),
                message: "an in-process agent does not ask for its membership".to_owned(),
            }),
        }
    }

    /// Publishes events; one answer per event.
    ///
    /// # Errors
    /// When every attempt failed or the hub refused them.
    pub async fn post_events(&self, events: &[Value]) -> Result<Vec<Value>, HubError> {
        match self {
            HubLink::Http(hub) => hub.post_events(events).await,
            HubLink::Nats(link) => link.post_events(events).await,
            HubLink::Local(hub) => hub.post_events(events),
        }
    }

    /// Follows the cluster's Works until `changes` is dropped.
    pub async fn follow(self, label: String, changes: mpsc::Sender<WorkChange>) {
        match self {
            HubLink::Http(hub) => follow(hub, label, changes).await,
            HubLink::Nats(link) => (*link).follow(label, changes).await,
            // The runner hands an in-process agent its Works itself.
            HubLink::Local(_) => drop(changes),
        }
    }
}
