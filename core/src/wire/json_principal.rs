//! The JSON form of an event's principal ([`Principal`]), as `flotilla events -o json` lists it
//! and `flotilla replay import` reads it back. A submitted event never names one: the HTTP API
//! refuses the field, and a record read from NATS ignores it (`docs/security.md`).

use serde::{Deserialize, Serialize};

use crate::principal::{Principal, TokenRole};

/// Who an event came from, as the hub authenticated it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct JsonPrincipal {
    /// `token` (a bearer token of the hub's tokens file), `agent` (a member agent on its own
    /// NATS subjects), `nats` (another NATS publisher), `local` (an open loopback hub), `hub`
    /// (the hub's own inputs) or `unrecorded` (events of schema versions before 6).
    pub kind: String,
    /// The token's name (`token`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The token's role: `admin`, `agent` or `namespace` (`token`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
    /// The member cluster (`agent`, and a `token` of role `agent`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cluster: Option<String>,
    /// The namespaces (a `token` of role `namespace`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespaces: Option<Vec<String>>,
}

impl JsonPrincipal {
    /// The JSON form of a principal.
    #[must_use]
    pub fn from_principal(principal: &Principal) -> Self {
        let mut json = Self {
            kind: principal.kind_name().to_owned(),
            name: None,
            role: None,
            cluster: None,
            namespaces: None,
        };
        match principal {
            Principal::Token { name, role } => {
                json.name = Some(name.clone());
                json.role = Some(role.name().to_owned());
                match role {
                    TokenRole::Admin => {}
                    TokenRole::Agent { cluster } => json.cluster = Some(cluster.clone()),
                    TokenRole::Namespace { namespaces } => {
                        json.namespaces = Some(namespaces.clone());
                    }
                }
            }
            Principal::Agent { cluster } => json.cluster = Some(cluster.clone()),
            _ => {}
        }
        json
    }

    /// The principal a listed event recorded; one this build does not know reads as
    /// [`Principal::Unrecorded`], never as more.
    #[must_use]
    pub fn into_principal(self) -> Principal {
        match (self.kind.as_str(), self.name, self.role.as_deref()) {
            ("hub", ..) => Principal::Hub,
            ("local", ..) => Principal::Local,
            ("nats", ..) => Principal::Nats,
            ("agent", ..) => {
                self.cluster
                    .map_or(Principal::Unrecorded, |cluster| Principal::Agent {
                        cluster,
                    })
            }
            ("token", Some(name), Some(role)) => {
                let role = match (role, self.cluster, self.namespaces) {
                    ("admin", ..) => TokenRole::Admin,
                    ("agent", Some(cluster), _) => TokenRole::Agent { cluster },
                    ("namespace", _, Some(namespaces)) => TokenRole::Namespace { namespaces },
                    _ => return Principal::Unrecorded,
                };
                Principal::Token { name, role }
            }
            _ => Principal::Unrecorded,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_principal_round_trips_through_json() {
        let all = [
            Principal::Unrecorded,
            Principal::Hub,
            Principal::Local,
            Principal::Nats,
            Principal::Agent {
                cluster: "m1".into(),
            },
            Principal::Token {
                name: "root".into(),
                role: TokenRole::Admin,
            },
            Principal::Token {
                name: "m1-agent".into(),
                role: TokenRole::Agent {
                    cluster: "m1".into(),
                },
            },
            Principal::Token {
                name: "team-a".into(),
                role: TokenRole::Namespace {
                    namespaces: vec!["team-a".into()],
                },
            },
        ];
        for principal in all {
            let json =
                serde_json::to_value(JsonPrincipal::from_principal(&principal)).unwrap_or_default();
            let back: Option<JsonPrincipal> = serde_json::from_value(json).ok();
            assert_eq!(back.map(JsonPrincipal::into_principal), Some(principal));
        }
    }
}
