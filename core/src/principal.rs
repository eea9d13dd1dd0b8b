//! Who an input event came from, as the hub authenticated it (schema version 6).
//!
//! The envelope's `source` is what a publisher says about itself and can say anything; the
//! principal is set by whoever appended the event and checked at the edges
//! (`docs/security.md`, "Who did it: the principal"): the HTTP API sets it from the bearer token
//! that passed its checks, never from the body; a record read from NATS is bounded by the
//! subject it was published on ([`Principal::bounded_by_subject`]), which the NATS server's
//! per-agent permissions bind to one member cluster. The fold never reads it: it is a record
//! for people, so it changes no decision and no state hash.

use std::fmt;

use serde::{Deserialize, Serialize};

/// The authenticated principal of an input event.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum Principal {
    /// An event of a schema version older than 6: nothing was recorded.
    Unrecorded,
    /// The hub's own inputs: clock ticks, analysis measurements, the demo and simulations,
    /// scenarios. The default of [`crate::Envelope::new`].
    #[default]
    Hub,
    /// An open hub on loopback (no tokens file): whoever could reach the port.
    Local,
    /// A bearer token of the hub's tokens file, by the name and role it has there.
    Token {
        /// The token's `name` in the tokens file (`token-N` when it has none).
        name: String,
        /// Its role.
        role: TokenRole,
    },
    /// A member agent publishing directly on NATS on its own subjects
    /// (`flotilla.in.{heartbeat,report,leave}.<cluster>`).
    Agent {
        /// The member cluster the subject names.
        cluster: String,
    },
    /// A publisher writing directly on NATS on a subject no cluster owns: the NATS user is not
    /// in the record, so only "someone NATS let publish there" is known.
    Nats,
}

/// A token's role, as the tokens file gives it (`adapters/hub/src/auth/tokens.rs`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum TokenRole {
    /// Everything.
    Admin,
    /// One member cluster's agent.
    Agent {
        /// The member cluster.
        cluster: String,
    },
    /// An application team's namespaces.
    Namespace {
        /// The namespaces.
        namespaces: Vec<String>,
    },
}

impl Principal {
    /// The principal a record read from NATS may carry, given the cluster whose agent's subject
    /// it was published on (a record whose body contradicts its subject is rejected before).
    /// The NATS server lets only that cluster's agent (or a hub) publish there, so anything but
    /// that cluster's agent or agent token becomes the agent; on a subject no cluster owns only
    /// hubs and publishers the operator trusts can write, and what they recorded is kept.
    #[must_use]
    pub fn bounded_to(self, subject_cluster: Option<&str>) -> Self {
        let Some(cluster) = subject_cluster else {
            return self;
        };
        let owned = match &self {
            Principal::Agent { cluster: c } => c == cluster,
            Principal::Token {
                role: TokenRole::Agent { cluster: c },
                ..
            } => c == cluster,
            _ => false,
        };
        if owned {
            self
        } else {
            Principal::Agent {
                cluster: cluster.to_owned(),
            }
        }
    }

    /// The principal's kind as the JSON form and `flotilla events` name it.
    #[must_use]
    pub fn kind_name(&self) -> &'static str {
        match self {
            Principal::Unrecorded => "unrecorded",
            Principal::Hub => "hub",
            Principal::Local => "local",
            Principal::Token { .. } => "token",
            Principal::Agent { .. } => "agent",
            Principal::Nats => "nats",
        }
    }
}

impl TokenRole {
    /// The role's name in the tokens file.
    #[must_use]
    pub fn name(&self) -> &'static str {
        match self {
            TokenRole::Admin => "admin",
            TokenRole::Agent { .. } => "agent",
            TokenRole::Namespace { .. } => "namespace",
        }
    }
}

impl fmt::Display for Principal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Principal::Token { name, role } => match role {
                TokenRole::Admin => write!(f, "token {name} (admin)"),
                TokenRole::Agent { cluster } => write!(f, "token {name} (agent {cluster})"),
                TokenRole::Namespace { namespaces } => {
                    write!(f, "token {name} (namespace {})", namespaces.join(","))
                }
            },
            Principal::Agent { cluster } => write!(f, "agent {cluster}"),
            other => f.write_str(other.kind_name()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::Input;

    fn token(cluster: &str) -> Principal {
        Principal::Token {
            name: "m1".into(),
            role: TokenRole::Agent {
                cluster: cluster.into(),
            },
        }
    }

    #[test]
    fn an_agent_subject_bounds_the_principal_to_its_cluster() {
        let cluster = Some("member-1");
        let agent = Principal::Agent {
            cluster: "member-1".into(),
        };
        assert_eq!(token("member-1").bounded_to(cluster), token("member-1"));
        assert_eq!(agent.clone().bounded_to(cluster), agent);
        for forged in [
            Principal::Hub,
            Principal::Local,
            Principal::Nats,
            token("member-2"),
            Principal::Token {
                name: "root".into(),
                role: TokenRole::Admin,
            },
        ] {
            assert_eq!(forged.bounded_to(cluster), agent);
        }
    }

    #[test]
    fn other_subjects_keep_what_the_hub_recorded() {
        let admin = Principal::Token {
            name: "root".into(),
            role: TokenRole::Admin,
        };
        assert_eq!(admin.clone().bounded_to(None), admin);
        let leave = Input::Leave {
            cluster: "m-2".into(),
        };
        assert_eq!(leave.agent_subject_cluster(), Some("m-2"));
        assert_eq!(Input::Tick.agent_subject_cluster(), None);
    }
}
