//! What an input or a decision names — a placement, a member cluster, a staged run, an
//! approval request — and how runs relate to placements and requests to runs, which decisions
//! alone do not say.

use std::collections::BTreeMap;

use flotilla_core::model::{ObjectKey, PLACEMENT_GROUP};
use flotilla_core::query::staged::{self, Scope};
use flotilla_core::{Decision, Input, State};
pub(crate) use flotilla_eventstore::fold::about::About;
use flotilla_eventstore::fold::about::manifest_key;
use serde_json::Value;

use super::inputs::LoggedInput;

/// Which run rolls out which placement, and which run each approval request belongs to: from
/// the state where the span starts, then learned from the inputs read.
#[derive(Debug, Clone, Default)]
pub(crate) struct Relations {
    runs: BTreeMap<ObjectKey, ObjectKey>,
    requests: BTreeMap<ObjectKey, ObjectKey>,
}

impl Relations {
    pub(crate) fn of(state: &State) -> Self {
        let mut relations = Relations::default();
        for (key, run) in state.update_runs() {
            let scope = Scope::of(key);
            let placement = scope.placement_key(&run.spec.placement_name);
            relations.runs.insert(key.clone(), placement);
        }
        for (key, request) in state.approvals() {
            let scope = Scope {
                namespace: key.namespace.clone(),
                run_name: request.run.as_str().into(),
            };
            relations.requests.insert(key.clone(), scope.run_key());
        }
        relations
    }

    /// Learns from an applied run (its placement) and from requests its decisions created.
    pub(crate) fn learn(&mut self, input: &LoggedInput) {
        if let Some(Input::Apply { manifest }) = input.envelope.as_ref().map(|e| &e.payload)
            && let Some(key) = manifest_key(manifest).filter(|k| k.group == PLACEMENT_GROUP)
            && staged::is_run(&key)
            && let Ok(value) = serde_json::from_str::<Value>(manifest)
            && let Some(placement) = value.pointer("/spec/placementName").and_then(Value::as_str)
        {
            let placement = Scope::of(&key).placement_key(placement);
            self.runs.insert(key, placement);
        }
        for decision in &input.decisions {
            if let Decision::ApprovalRequested { run, request } = decision {
                self.requests.insert(request.clone(), run.clone());
            }
        }
    }

    /// The placement a run rolls out.
    pub(crate) fn placement_of_run(&self, run: &ObjectKey) -> Option<&ObjectKey> {
        self.runs.get(run)
    }

    /// The run a request belongs to: as created, or by its name (`<run>-before-<stage>`,
    /// `<run>-after-<stage>`) for an approval of a request that does not exist (yet).
    pub(crate) fn run_of_request(&self, request: &ObjectKey) -> Option<ObjectKey> {
        if let Some(run) = self.requests.get(request) {
            return Some(run.clone());
        }
        self.runs
            .keys()
            .filter(|run| run.namespace == request.namespace)
            .find(|run| {
                ["before", "after"]
                    .iter()
                    .any(|at| request.name.starts_with(&format!("{}-{at}-", run.name)))
            })
            .cloned()
    }
}
