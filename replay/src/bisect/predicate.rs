//! The built-in predicates over a folded state, each with a text form that parses back to
//! itself (`Display` and `FromStr` round-trip), for `flotilla replay bisect --until …`:
//!
//! | text | holds when |
//! |---|---|
//! | `unavailable-exceeds-budget:PLACEMENT` | more of a RollingUpdate placement's clusters are unavailable than its `maxUnavailable` allows |
//! | `cluster-at-index:CLUSTER:PLACEMENT:INDEX` | the cluster's binding carries resource index INDEX (`>=INDEX`: INDEX or later) |
//! | `stage-before-approval:RUN` | a stage of the run started before an approval gating it was given |
//! | `object:KIND/[NS/]NAME:POINTER==VALUE` | the object, rendered as `get` shows it, has VALUE at the JSON pointer (`!=VALUE`: it exists and has not; `POINTER exists`: the field exists) |
//! | `condition:KIND/[NS/]NAME:TYPE=STATUS` | the object, rendered as `get` shows it, has the condition of that type in `status.conditions` with that status, wherever it stands in the list |
//!
//! PLACEMENT is `NAME` (a `ClusterResourcePlacement`) or `NAMESPACE/NAME` (a
//! `ResourcePlacement`); RUN likewise (`ClusterStagedUpdateRun` / `StagedUpdateRun`). KIND is
//! anything `get` accepts (`crp`, `deployments.apps`, `ConfigMap`); a namespaced kind without NS
//! means `default`, as in kubectl. VALUE is JSON when it parses as JSON (`2`, `true`, `"a"`),
//! else text; a string field also equals the VALUE text itself.
//!
//! Every predicate is a pure function of the state: bisecting needs nothing else.

use std::fmt;
use std::str::FromStr;

use chrono::SecondsFormat;
use flotilla_core::State;
use flotilla_core::model::placement::StrategyType;
use flotilla_core::model::{
    CLUSTER_RESOURCE_PLACEMENT, ObjectKey, PLACEMENT_GROUP, RESOURCE_PLACEMENT,
};
use flotilla_core::query::placement::Placement;
use flotilla_core::query::placement::{Readiness, working_bindings};
use flotilla_core::query::rollout::{budgets, target};
use flotilla_core::query::staged::gates::approved_at;
use flotilla_core::query::staged::model::TaskType;
use flotilla_core::query::staged::run::{StageStatus, TaskStatus};
use flotilla_core::query::staged::{CLUSTER_STAGED_UPDATE_RUN, STAGED_UPDATE_RUN, Scope};

use super::object;
pub use super::object::NamedObject;

/// A test on a folded state: why it holds, or `None`.
///
/// [`crate::bisect()`] assumes a predicate that stays true once true; [`crate::scan`] does not.
pub trait StatePredicate {
    /// Why the predicate holds in `state` (a sentence for people), or `None` when it does not.
    fn holds(&self, state: &State) -> Option<String>;
}

impl<F: Fn(&State) -> Option<String>> StatePredicate for F {
    fn holds(&self, state: &State) -> Option<String> {
        self(state)
    }
}

/// A built-in predicate (module docs for the text forms).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Predicate {
    /// More of a RollingUpdate placement's clusters are unavailable than `maxUnavailable`
    /// allows (see [`unavailable_clusters`] for what counts).
    UnavailableExceedsBudget {
        /// The placement.
        placement: ObjectKey,
    },
    /// A cluster's binding carries a resource index.
    ClusterAtIndex {
        /// The member cluster.
        cluster: String,
        /// The placement.
        placement: ObjectKey,
        /// The resource snapshot index.
        index: u64,
        /// `>=INDEX`: that index or a later one.
        or_later: bool,
    },
    /// A stage of a staged update run started before an approval gating it was given.
    StageBeforeApproval {
        /// The run.
        run: ObjectKey,
    },
    /// A field of an object as `get` renders it.
    Object {
        /// The object.
        object: NamedObject,
        /// JSON pointer into the rendered object (`/spec/replicas`).
        pointer: String,
        /// The test.
        test: FieldTest,
    },
    /// A condition of an object as `get` renders it (`status.conditions`), named by type.
    Condition {
        /// The object.
        object: NamedObject,
        /// The condition's `type`.
        condition_type: String,
        /// The `status` it must have (`True`, `False`, `Unknown`).
        status: String,
    },
}

/// What an object predicate asks of its field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FieldTest {
    /// The field equals the value (as written after `==`).
    Equals(String),
    /// The object exists and the field is absent or differs (as written after `!=`).
    Differs(String),
    /// The field exists.
    Exists,
}

/// Why a predicate's text did not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("predicate {text:?}: {why}")]
pub struct PredicateError {
    /// The text.
    pub text: String,
    /// What was wrong.
    pub why: String,
}

const SYNTAX: &str = "expected unavailable-exceeds-budget:PLACEMENT, \
    cluster-at-index:CLUSTER:PLACEMENT:INDEX, stage-before-approval:RUN, \
    object:KIND/[NS/]NAME:POINTER==VALUE (or !=VALUE, or ' exists') or \
    condition:KIND/[NS/]NAME:TYPE=STATUS";

impl FromStr for Predicate {
    type Err = PredicateError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let fail = |why: &str| PredicateError {
            text: text.to_owned(),
            why: why.to_owned(),
        };
        let (name, rest) = text.split_once(':').ok_or_else(|| fail(SYNTAX))?;
        match name {
            "unavailable-exceeds-budget" => Ok(Predicate::UnavailableExceedsBudget {
                placement: placement_key(rest)
                    .ok_or_else(|| fail("PLACEMENT is NAME or NS/NAME"))?,
            }),
            "cluster-at-index" => {
                let parts: Vec<&str> = rest.split(':').collect();
                let [cluster, placement, index] = parts.as_slice() else {
                    return Err(fail("expected cluster-at-index:CLUSTER:PLACEMENT:INDEX"));
                };
                let (or_later, digits) = match index.strip_prefix(">=") {
                    Some(digits) => (true, digits),
                    None => (false, *index),
                };
                Ok(Predicate::ClusterAtIndex {
                    cluster: non_empty(cluster).ok_or_else(|| fail("CLUSTER is empty"))?,
                    placement: placement_key(placement)
                        .ok_or_else(|| fail("PLACEMENT is NAME or NS/NAME"))?,
                    index: digits
                        .parse()
                        .map_err(|_| fail("INDEX is a number, or >=NUMBER"))?,
                    or_later,
                })
            }
            "stage-before-approval" => Ok(Predicate::StageBeforeApproval {
                run: run_key(rest).ok_or_else(|| fail("RUN is NAME or NS/NAME"))?,
            }),
            "object" => object::parse_object(rest).map_err(|why| fail(&why)),
            "condition" => object::parse_condition(rest).map_err(|why| fail(&why)),
            _ => Err(fail(SYNTAX)),
        }
    }
}

fn non_empty(text: &str) -> Option<String> {
    (!text.is_empty()).then(|| text.to_owned())
}

/// `NAME` or `NS/NAME` of a placement kind pair.
fn scoped_key(text: &str, cluster_kind: &str, namespaced_kind: &str) -> Option<ObjectKey> {
    match text.split('/').collect::<Vec<_>>().as_slice() {
        [name] if !name.is_empty() => Some(ObjectKey::cluster_scoped(
            PLACEMENT_GROUP,
            cluster_kind,
            name,
        )),
        [namespace, name] if !namespace.is_empty() && !name.is_empty() => Some(
            ObjectKey::namespaced(PLACEMENT_GROUP, namespaced_kind, namespace, name),
        ),
        _ => None,
    }
}

fn placement_key(text: &str) -> Option<ObjectKey> {
    scoped_key(text, CLUSTER_RESOURCE_PLACEMENT, RESOURCE_PLACEMENT)
}

fn run_key(text: &str) -> Option<ObjectKey> {
    scoped_key(text, CLUSTER_STAGED_UPDATE_RUN, STAGED_UPDATE_RUN)
}

/// `NAME` or `NS/NAME`, as in the text forms.
fn scoped_text(key: &ObjectKey) -> String {
    if key.namespace.is_empty() {
        key.name.to_string()
    } else {
        format!("{}/{}", key.namespace, key.name)
    }
}

impl fmt::Display for Predicate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Predicate::UnavailableExceedsBudget { placement } => {
                write!(f, "unavailable-exceeds-budget:{}", scoped_text(placement))
            }
            Predicate::ClusterAtIndex {
                cluster,
                placement,
                index,
                or_later,
            } => {
                let at = if *or_later { ">=" } else { "" };
                write!(
                    f,
                    "cluster-at-index:{cluster}:{}:{at}{index}",
                    scoped_text(placement)
                )
            }
            Predicate::StageBeforeApproval { run } => {
                write!(f, "stage-before-approval:{}", scoped_text(run))
            }
            Predicate::Object {
                object,
                pointer,
                test,
            } => {
                write!(f, "object:{object}:{pointer}")?;
                match test {
                    FieldTest::Equals(value) => write!(f, "=={value}"),
                    FieldTest::Differs(value) => write!(f, "!={value}"),
                    FieldTest::Exists => f.write_str(" exists"),
                }
            }
            Predicate::Condition {
                object,
                condition_type,
                status,
            } => write!(f, "condition:{object}:{condition_type}={status}"),
        }
    }
}

impl StatePredicate for Predicate {
    fn holds(&self, state: &State) -> Option<String> {
        match self {
            Predicate::UnavailableExceedsBudget { placement } => over_budget(state, placement),
            Predicate::ClusterAtIndex {
                cluster,
                placement,
                index,
                or_later,
            } => at_index(state, placement, cluster, *index, *or_later),
            Predicate::StageBeforeApproval { run } => stage_before_approval(state, run),
            Predicate::Object {
                object,
                pointer,
                test,
            } => object::object_field(state, object, pointer, test),
            Predicate::Condition {
                object,
                condition_type,
                status,
            } => object::condition_holds(state, object, condition_type, status),
        }
    }
}

/// One cluster counted unavailable, with why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unavailable {
    /// The member cluster.
    pub cluster: String,
    /// Why, e.g. `failed at index 1`, `silent since 2025-03-12T23:10:00Z`.
    pub why: String,
}

/// The clusters of a placement that count as unavailable against its `maxUnavailable`.
///
/// Among the bindings that carry work (Bound, or Unscheduled from Bound — as the rollout
/// counts them), a cluster is unavailable when its agent's heartbeats timed out (the hub no
/// longer knows what runs there), or when the rollout would not count it ready: its work
/// failed, is reported not available, or has no report yet. A binding awaiting its first
/// report on the placement's first resource snapshot (index 0) is a first placement, not an
/// outage, and is not counted: so a placement's initial rollout does not trip the predicate.
///
/// This differs on purpose from the rollout's own count (`target − ready`, what `explain`
/// shows): a silent cluster counts here though its last report said available, and a first
/// placement does not, so that the predicate stays false through a normal first rollout and
/// a bisection over the whole log finds the outage.
#[must_use]
pub fn unavailable_clusters(state: &State, placement: &Placement) -> Vec<Unavailable> {
    let Some(now) = state.now() else {
        return Vec::new();
    };
    working_bindings(placement, now)
        .filter_map(|(binding, readiness)| {
            let index = binding.resource_index.unwrap_or_default();
            let silent = state
                .members()
                .get(binding.cluster.as_str())
                .and_then(|m| m.agent.as_ref())
                .filter(|agent| !agent.healthy)
                .map(|agent| format!("silent since {}", time_text(agent.health_changed_at)));
            let why = silent.or_else(|| match readiness {
                Readiness::Ready => None,
                Readiness::Failed => Some(format!("failed at index {index}")),
                Readiness::NotReady | Readiness::ReadyAt(_) => match &binding.report {
                    Some(report) if report.resource_index == index => {
                        Some(format!("not available at index {index}"))
                    }
                    Some(report) => Some(format!(
                        "reported index {} while given {index}",
                        report.resource_index
                    )),
                    None if index == 0 => None,
                    None => Some(format!("updating to index {index}")),
                },
            })?;
            Some(Unavailable {
                cluster: binding.cluster.to_string(),
                why,
            })
        })
        .collect()
}

fn time_text(time: chrono::DateTime<chrono::Utc>) -> String {
    time.to_rfc3339_opts(SecondsFormat::AutoSi, true)
}

fn over_budget(state: &State, key: &ObjectKey) -> Option<String> {
    let placement = state.placements().get(key)?;
    if placement.spec.strategy.strategy_type != StrategyType::RollingUpdate {
        return None;
    }
    let target_count = target(placement);
    let (max_unavailable, _) = budgets(placement, target_count);
    let unavailable = unavailable_clusters(state, placement);
    let count = i64::try_from(unavailable.len()).unwrap_or(i64::MAX);
    if count <= max_unavailable {
        return None;
    }
    let clusters: Vec<String> = unavailable
        .iter()
        .map(|u| format!("{} {}", u.cluster, u.why))
        .collect();
    Some(format!(
        "{count} of {target_count} clusters unavailable, maxUnavailable {max_unavailable}: {}",
        clusters.join(", ")
    ))
}

fn at_index(
    state: &State,
    key: &ObjectKey,
    cluster: &str,
    index: u64,
    or_later: bool,
) -> Option<String> {
    let binding = state.placements().get(key)?.bindings.get(cluster)?;
    let carried = binding.resource_index.filter(|_| binding.carries_work())?;
    let matches = if or_later {
        carried >= index
    } else {
        carried == index
    };
    matches.then(|| {
        let since = binding
            .rollout_started_at
            .map(|t| format!(" since {}", time_text(t)))
            .unwrap_or_default();
        format!(
            "{cluster} carries index {carried} of {}{since}",
            key.display()
        )
    })
}

/// A started stage whose before-stage approval, or whose previous stage's after-stage
/// approval, was not given at or before the stage's start time.
fn stage_before_approval(state: &State, key: &ObjectKey) -> Option<String> {
    let run = state.update_runs().get(key)?;
    let stages = &run.status.stages;
    stages.iter().enumerate().find_map(|(position, stage)| {
        let started = stage.start_time?;
        let previous = position
            .checked_sub(1)
            .and_then(|p| stages.get(p))
            .map(|p| p.after_tasks.as_slice())
            .unwrap_or_default();
        previous
            .iter()
            .chain(&stage.before_tasks)
            .filter(|task| task.task_type == TaskType::Approval)
            .find_map(|task| ungiven_approval(state, key, stage, task, started))
    })
}

fn ungiven_approval(
    state: &State,
    run: &ObjectKey,
    stage: &StageStatus,
    task: &TaskStatus,
    started: chrono::DateTime<chrono::Utc>,
) -> Option<String> {
    let name = task.approval_request_name.clone().unwrap_or_default();
    let approved = approved_at(state, &Scope::of(run), &name);
    let when = approval_gap(started, approved)?;
    Some(format!(
        "stage {} of {} started at {}, approval {name} {when}",
        stage.name,
        run.display(),
        time_text(started)
    ))
}

/// How an approval fell short of a stage started at `started`: not given, or given later.
fn approval_gap(
    started: chrono::DateTime<chrono::Utc>,
    approved: Option<chrono::DateTime<chrono::Utc>>,
) -> Option<String> {
    match approved {
        Some(at) if at <= started => None,
        Some(at) => Some(format!("approved only at {}", time_text(at))),
        None => Some("not approved".to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_forms_round_trip() {
        let texts = [
            "unavailable-exceeds-budget:crp-1",
            "unavailable-exceeds-budget:team-a/rp-1",
            "cluster-at-index:cluster-3:crp-1:2",
            "cluster-at-index:cluster-3:team-a/rp-1:>=2",
            "stage-before-approval:example-run",
            "object:Deployment/test-ns/web:/spec/template/spec/containers/0/image==nginx:1.27",
            "object:crp/crp-1:/spec/strategy/rollingUpdate/maxUnavailable!=1",
            "object:ConfigMap/app/settings:/data/mode exists",
            "condition:MemberCluster/member-3:Healthy=False",
            "condition:rp/team-a/rp-1:Available=True",
        ];
        for text in texts {
            let parsed: Predicate = text.parse().expect("parses");
            assert_eq!(parsed.to_string(), text);
        }
    }

    #[test]
    fn bad_texts_say_what_is_expected() {
        for text in [
            "nothing",
            "cluster-at-index:c:p",
            "cluster-at-index:c:p:x",
            "unavailable-exceeds-budget:a/b/c",
            "object:Deployment:/spec==1",
            "object:Deployment/web:spec==1",
            "object:Deployment/web:/spec",
        ] {
            assert!(text.parse::<Predicate>().is_err(), "{text} parsed");
        }
    }

    #[test]
    fn an_approval_counts_when_given_at_or_before_the_start() {
        let start = chrono::DateTime::parse_from_rfc3339("2025-03-12T23:21:39Z")
            .expect("a time")
            .to_utc();
        let later = start + chrono::Duration::seconds(1);
        assert_eq!(approval_gap(start, Some(start)), None);
        assert_eq!(
            approval_gap(start, Some(later)).as_deref(),
            Some("approved only at 2025-03-12T23:21:40Z")
        );
        assert_eq!(approval_gap(start, None).as_deref(), Some("not approved"));
    }
}
