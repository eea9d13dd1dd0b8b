//! Field paths as the API server prints them: `spec.policy.affinity`, `spec.selectors[0].kind`,
//! `metadata.labels[app]`.

use std::fmt;

use serde_json::Value;

/// One step of a path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Segment {
    /// A declared property.
    Key(String),
    /// A list item.
    Index(usize),
    /// A key of a map (`additionalProperties`).
    MapKey(String),
}

/// A path from an object's root.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FieldPath(pub Vec<Segment>);

impl FieldPath {
    /// This path with one more step.
    #[must_use]
    pub fn child(&self, segment: Segment) -> Self {
        let mut segments = self.0.clone();
        segments.push(segment);
        Self(segments)
    }

    /// This path with a property.
    #[must_use]
    pub fn key(&self, key: &str) -> Self {
        self.child(Segment::Key(key.to_owned()))
    }

    /// The value at this path in `value`, if there is one.
    #[must_use]
    pub fn lookup<'v>(&self, value: &'v Value) -> Option<&'v Value> {
        self.0.iter().try_fold(value, |at, segment| match segment {
            Segment::Key(key) | Segment::MapKey(key) => at.get(key.as_str()),
            Segment::Index(index) => at.get(*index),
        })
    }

    /// Removes the field at this path from `value`, if it is there.
    pub fn remove_from(&self, value: &mut Value) {
        let Some((last, parents)) = self.0.split_last() else {
            return;
        };
        let mut at = value;
        for segment in parents {
            let next = match segment {
                Segment::Key(key) | Segment::MapKey(key) => at.get_mut(key.as_str()),
                Segment::Index(index) => at.get_mut(*index),
            };
            match next {
                Some(next) => at = next,
                None => return,
            }
        }
        if let (Segment::Key(key) | Segment::MapKey(key), Value::Object(map)) = (last, at) {
            map.remove(key);
        }
    }
}

impl fmt::Display for FieldPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (position, segment) in self.0.iter().enumerate() {
            match segment {
                Segment::Key(key) if position == 0 => write!(f, "{key}")?,
                Segment::Key(key) => write!(f, ".{key}")?,
                Segment::Index(index) => write!(f, "[{index}]")?,
                Segment::MapKey(key) => write!(f, "[{key}]")?,
            }
        }
        Ok(())
    }
}
