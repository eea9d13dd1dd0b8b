//! The view model's parts — [`Bar`]s, their [`BarKind`], the [`Outcome`], the [`View`] — and the
//! readers of KubeFleet's JSON shapes that the placement and run views share.

use serde_json::Value;

/// What a bar counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BarKind {
    /// A stage of a staged update run: clusters succeeded of the stage's clusters.
    Stage,
    /// A partition of a partitioned rollout: clusters ready of the partition's clusters.
    Partition,
    /// A cluster of a rolling update: conditions reached of the rollout's chain.
    Cluster,
}

impl BarKind {
    /// The word before a bar's name.
    #[must_use]
    pub fn word(self) -> &'static str {
        match self {
            BarKind::Stage => "stage",
            BarKind::Partition => "partition",
            BarKind::Cluster => "cluster",
        }
    }

    /// What `done` and `total` count.
    #[must_use]
    pub fn unit(self) -> &'static str {
        match self {
            BarKind::Stage => "clusters",
            BarKind::Partition => "ready",
            BarKind::Cluster => "conditions",
        }
    }
}

/// One line of progress.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bar {
    /// Stage, partition or cluster.
    pub kind: BarKind,
    /// Its name.
    pub name: String,
    /// How many are done.
    pub done: u64,
    /// Out of how many.
    pub total: u64,
    /// Where it is, in words (`updating member-2`, `waiting for approval …`).
    pub note: String,
}

impl Bar {
    /// The bar as one plain line: `stage staging: 1/1 clusters, succeeded`.
    #[must_use]
    pub fn line(&self) -> String {
        let mut line = format!(
            "{} {}: {}/{} {}",
            self.kind.word(),
            self.name,
            self.done,
            self.total,
            self.kind.unit()
        );
        if !self.note.is_empty() {
            line.push_str(", ");
            line.push_str(&self.note);
        }
        line
    }
}

/// Where the rollout is, as far as the object shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Moving, or not known to be stuck.
    Progressing,
    /// Done: every cluster updated (a run that succeeded, a placement all available).
    Completed(String),
    /// Failed: the run failed, or a cluster failed to apply.
    Failed(String),
    /// Waiting for something that will not come by itself soon: an approval, a timed wait, a
    /// run to be started or resumed.
    Waiting(String),
}

impl Outcome {
    /// Whether following should stop here.
    #[must_use]
    pub fn is_final(&self) -> bool {
        !matches!(self, Outcome::Progressing)
    }
}

/// The progress of one rollout at one moment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct View {
    /// What is followed: `clusterstagedupdaterun/shop-run (placement shop)`.
    pub title: String,
    /// Its state in a few words (`UpdateRunStarted`, `3/4 clusters available`).
    pub state: String,
    /// One per stage, partition or cluster, in the object's order.
    pub bars: Vec<Bar>,
    /// What the object says of the end.
    pub outcome: Outcome,
}

impl View {
    /// The headline as one plain line: `title: state`.
    #[must_use]
    pub fn headline(&self) -> String {
        format!("{}: {}", self.title, self.state)
    }
}

/// `kind/name` as kubectl spells it (kind lowercased).
pub(crate) fn object_label(object: &Value) -> String {
    format!(
        "{}/{}",
        text(object, "/kind").to_lowercase(),
        text(object, "/metadata/name")
    )
}

/// The string at a JSON pointer, or `""`.
pub(crate) fn text<'a>(value: &'a Value, pointer: &str) -> &'a str {
    value.pointer(pointer).and_then(Value::as_str).unwrap_or("")
}

/// The condition of `condition_type` in a `conditions` array, if present.
pub(crate) fn condition<'a>(
    conditions: Option<&'a Value>,
    condition_type: &str,
) -> Option<&'a Value> {
    conditions?
        .as_array()?
        .iter()
        .find(|c| c.get("type").and_then(Value::as_str) == Some(condition_type))
}

/// Whether the condition of `condition_type` has `status`.
pub(crate) fn has(conditions: Option<&Value>, condition_type: &str, status: &str) -> bool {
    condition(conditions, condition_type)
        .is_some_and(|c| c.get("status").and_then(Value::as_str) == Some(status))
}

/// A count as `u64` (collections here are far below `u64::MAX`).
pub(crate) fn count(n: usize) -> u64 {
    u64::try_from(n).unwrap_or(u64::MAX)
}
