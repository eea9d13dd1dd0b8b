//! A heartbeat property in the JSON form: a bare quantity (`"3"`, or the number `3`) as
//! flotilla's own agents send it, or KubeFleet's `PropertyValue` shape
//! (`{"value": "3", "observationTime": "2025-03-12T23:00:00Z"}`) as a KubeFleet member agent
//! writes it into `MemberCluster.status.properties`. Both carry the same value; the observation
//! time is a claim of the agent and is not stored (the heartbeat's time is the log's).

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::model::StringMap;

/// One property value as a publisher may write it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "json-schema", derive(schemars::JsonSchema))]
#[serde(untagged, remote = "Self")]
pub enum JsonPropertyValue {
    /// A bare quantity, e.g. `"3"` or `"20Gi"`.
    Quantity(String),
    /// A bare whole number, e.g. `3`.
    Number(i64),
    /// KubeFleet's `PropertyValue`.
    #[serde(rename_all = "camelCase")]
    Observed {
        /// The quantity.
        value: String,
        /// When the agent observed it (KubeFleet's `observationTime`); not stored.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        observation_time: Option<DateTime<Utc>>,
    },
}

/// What a property may look like, for the error message (an untagged enum's own message names
/// no shape).
const SHAPES: &str =
    r#"a property is a quantity ("3" or 3) or {"value": "3", "observationTime": "<RFC 3339>"}"#;

impl Serialize for JsonPropertyValue {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        JsonPropertyValue::serialize(self, serializer)
    }
}

impl<'de> Deserialize<'de> for JsonPropertyValue {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        JsonPropertyValue::deserialize(deserializer).map_err(|_| D::Error::custom(SHAPES))
    }
}

impl JsonPropertyValue {
    /// The quantity, whatever shape carried it.
    #[must_use]
    pub fn into_value(self) -> String {
        match self {
            JsonPropertyValue::Quantity(value) | JsonPropertyValue::Observed { value, .. } => value,
            JsonPropertyValue::Number(number) => number.to_string(),
        }
    }
}

/// The stored properties: name → quantity.
#[must_use]
pub fn into_values(properties: BTreeMap<String, JsonPropertyValue>) -> BTreeMap<String, String> {
    properties
        .into_iter()
        .map(|(name, value)| (name, value.into_value()))
        .collect()
}

/// The JSON form of stored properties: bare quantities.
#[must_use]
pub fn from_values(properties: &StringMap) -> BTreeMap<String, JsonPropertyValue> {
    properties
        .iter()
        .map(|(name, value)| {
            (
                name.to_owned(),
                JsonPropertyValue::Quantity(value.to_string()),
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<BTreeMap<String, String>, serde_json::Error> {
        serde_json::from_str::<BTreeMap<String, JsonPropertyValue>>(text).map(into_values)
    }

    #[test]
    fn every_shape_gives_the_same_quantity() {
        let bare = parse(r#"{"kubernetes-fleet.io/node-count": "3"}"#);
        let number = parse(r#"{"kubernetes-fleet.io/node-count": 3}"#);
        let kubefleet = parse(
            r#"{"kubernetes-fleet.io/node-count":
                {"value": "3", "observationTime": "2025-03-12T23:00:00Z"}}"#,
        );
        let untimed = parse(r#"{"kubernetes-fleet.io/node-count": {"value": "3"}}"#);
        for parsed in [bare, number, kubefleet, untimed] {
            let parsed = parsed.map_err(|e| e.to_string());
            assert_eq!(
                parsed
                    .as_ref()
                    .map(|p| p["kubernetes-fleet.io/node-count"].as_str()),
                Ok("3")
            );
        }
    }

    #[test]
    fn other_shapes_are_refused() {
        assert!(parse(r#"{"p": {"observationTime": "2025-03-12T23:00:00Z"}}"#).is_err());
        assert!(parse(r#"{"p": {"value": "3", "observationTime": "yesterday"}}"#).is_err());
        assert!(parse(r#"{"p": [3]}"#).is_err());
        assert!(parse(r#"{"p": true}"#).is_err());
    }
}
