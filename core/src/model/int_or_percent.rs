//! Kubernetes' int-or-string as used by rollout knobs: `3` or `"25%"`.
//!
//! In JSON/YAML it reads and writes as users write it. In the binary log it is a plain enum,
//! because bincode is not self-describing and cannot tell an int from a string on its own.

use std::fmt;

use serde::de::{self, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// An absolute count or a percentage (0–100) of some target.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum IntOrPercent {
    /// An absolute number.
    Int(i64),
    /// A percentage, `0..=100`.
    Percent(u32),
}

/// How a percentage becomes a count; each seed states which one applies where.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rounding {
    /// Round up (RollingUpdate maxUnavailable / maxSurge).
    Up,
    /// Round down (staged maxConcurrency, Rancher Fleet partitions).
    Down,
}

impl IntOrPercent {
    /// Parses the textual form: an integer, or `^(100|[0-9]{1,2})%$`.
    ///
    /// # Errors
    /// A message saying what was expected.
    pub fn parse(text: &str) -> Result<Self, String> {
        if let Some(number) = text.strip_suffix('%') {
            let valid = !number.is_empty()
                && number.len() <= 3
                && number.bytes().all(|b| b.is_ascii_digit())
                && (number.len() < 3 || number == "100");
            return match number.parse::<u32>() {
                Ok(value) if valid => Ok(IntOrPercent::Percent(value)),
                _ => Err(format!("{text:?} is not a percentage between 0% and 100%")),
            };
        }
        text.parse::<i64>()
            .map(IntOrPercent::Int)
            .map_err(|_| format!("{text:?} is neither an integer nor a percentage like \"25%\""))
    }

    /// Resolves against a target count with the given rounding, in integer arithmetic.
    #[must_use]
    pub fn resolve(self, target: u64, rounding: Rounding) -> i64 {
        match self {
            IntOrPercent::Int(value) => value,
            IntOrPercent::Percent(pct) => {
                let product = u128::from(target) * u128::from(pct);
                let count = match rounding {
                    Rounding::Up => product.div_ceil(100),
                    Rounding::Down => product / 100,
                };
                i64::try_from(count).unwrap_or(i64::MAX)
            }
        }
    }

    /// The value as JSON, as a user would have written it.
    #[must_use]
    pub fn to_json(self) -> serde_json::Value {
        match self {
            IntOrPercent::Int(value) => serde_json::Value::from(value),
            IntOrPercent::Percent(pct) => serde_json::Value::from(format!("{pct}%")),
        }
    }
}

impl fmt::Display for IntOrPercent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            IntOrPercent::Int(value) => write!(f, "{value}"),
            IntOrPercent::Percent(pct) => write!(f, "{pct}%"),
        }
    }
}

#[derive(Serialize, Deserialize)]
enum Binary {
    Int(i64),
    Percent(u32),
}

impl Serialize for IntOrPercent {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        if serializer.is_human_readable() {
            match self {
                IntOrPercent::Int(value) => serializer.serialize_i64(*value),
                IntOrPercent::Percent(_) => serializer.serialize_str(&self.to_string()),
            }
        } else {
            match *self {
                IntOrPercent::Int(value) => Binary::Int(value),
                IntOrPercent::Percent(pct) => Binary::Percent(pct),
            }
            .serialize(serializer)
        }
    }
}

impl<'de> Deserialize<'de> for IntOrPercent {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        if deserializer.is_human_readable() {
            deserializer.deserialize_any(TextVisitor)
        } else {
            Ok(match Binary::deserialize(deserializer)? {
                Binary::Int(value) => IntOrPercent::Int(value),
                Binary::Percent(pct) => IntOrPercent::Percent(pct),
            })
        }
    }
}

struct TextVisitor;

impl Visitor<'_> for TextVisitor {
    type Value = IntOrPercent;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an integer or a percentage like \"25%\"")
    }

    fn visit_i64<E: de::Error>(self, value: i64) -> Result<Self::Value, E> {
        Ok(IntOrPercent::Int(value))
    }

    fn visit_u64<E: de::Error>(self, value: u64) -> Result<Self::Value, E> {
        i64::try_from(value)
            .map(IntOrPercent::Int)
            .map_err(|_| E::custom("integer too large"))
    }

    fn visit_str<E: de::Error>(self, text: &str) -> Result<Self::Value, E> {
        IntOrPercent::parse(text).map_err(E::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_kubefleet_pattern() {
        assert_eq!(IntOrPercent::parse("25%"), Ok(IntOrPercent::Percent(25)));
        assert_eq!(IntOrPercent::parse("100%"), Ok(IntOrPercent::Percent(100)));
        assert_eq!(IntOrPercent::parse("3"), Ok(IntOrPercent::Int(3)));
        assert!(IntOrPercent::parse("101%").is_err());
        assert!(IntOrPercent::parse("%").is_err());
        assert!(IntOrPercent::parse("1000%").is_err());
        assert!(IntOrPercent::parse("x").is_err());
    }

    #[test]
    fn rounds_in_integers() {
        assert_eq!(IntOrPercent::Percent(25).resolve(10, Rounding::Up), 3);
        assert_eq!(IntOrPercent::Percent(25).resolve(10, Rounding::Down), 2);
        assert_eq!(IntOrPercent::Percent(25).resolve(8, Rounding::Up), 2);
        assert_eq!(IntOrPercent::Int(4).resolve(10, Rounding::Up), 4);
    }

    #[test]
    fn json_keeps_the_users_spelling() {
        let parsed: IntOrPercent = serde_json::from_str("\"25%\"").expect("percent");
        assert_eq!(parsed, IntOrPercent::Percent(25));
        assert_eq!(serde_json::to_string(&parsed).expect("json"), "\"25%\"");
        let parsed: IntOrPercent = serde_json::from_str("2").expect("int");
        assert_eq!(serde_json::to_string(&parsed).expect("json"), "2");
    }
}
