//! One manifest through a Work's apply strategy, in KubeFleet's order: find the object; in
//! ReportDiff mode only compare; otherwise settle ownership (take an object this agent did not
//! place over, or refuse to), check for drift when `whenToApply` is `IfNotDrifted`, apply
//! (client-side or server-side), look for drifts after the apply under a full comparison, and
//! judge availability from what the API server returned.

use flotilla_core::query::availability::{Availability, judge};
use serde_json::{Value, json};

use super::KubeApplier;
use super::calls::{CallError, FIELD_MANAGER, PatchKind};
use super::diff;
use super::marks::{self, Ownership};
use super::merge;
use super::resources::Resource;
use crate::applier::{Applied, Findings, ManifestOutcome, ObservedDiffs, PatchDetail};
use crate::work::{ApplyType, Comparison, DesiredWork, ManifestId, WhenToApply, WhenToTakeOver};

/// KubeFleet's reasons for a manifest that was not applied.
pub mod reason {
    /// `IfNotDrifted` found the object drifted from what was applied.
    pub const FOUND_DRIFTS: &str = "FoundDrifts";
    /// `whenToTakeOver: Never` and the object was not placed by this agent.
    pub const NOT_TAKEN_OVER: &str = "NotTakenOver";
    /// The object may not be taken over (it differs, or others own it).
    pub const FAILED_TO_TAKE_OVER: &str = "FailedToTakeOver";
    /// Server-side apply met fields another manager owns, without `force`.
    pub const APPLY_CONFLICT: &str = "ApplyConflictWithOtherApplier";
    /// ReportDiff could not compare the object.
    pub const FAILED_TO_REPORT_DIFF: &str = "FailedToReportDiff";
}

/// Where one manifest goes and what is applied.
struct Target<'a> {
    id: &'a ManifestId,
    resource: Resource,
    /// The manifest without server-owned fields: what is compared.
    desired: Value,
}

fn refused(id: &ManifestId, reason: &str, message: String, findings: Findings) -> ManifestOutcome {
    ManifestOutcome {
        id: id.clone(),
        applied: Applied::Failed(message),
        availability: Availability::NotTrackable,
        findings: Findings {
            reason: Some(reason.to_owned()),
            ..findings
        },
    }
}

/// The differences found on `object` (`None`: it does not exist); an object without a
/// generation (a ConfigMap) is at generation 0, as Kubernetes' own readers take it.
fn observed(object: Option<&Value>, details: Vec<PatchDetail>) -> ObservedDiffs {
    ObservedDiffs {
        generation: object.map(|o| o["metadata"]["generation"].as_i64().unwrap_or(0)),
        details,
    }
}

/// Whether every field manager of `object` is this applier (or the API server's placeholder
/// for fields set before any apply): then a server-side apply forces, since a conflict could
/// only be with itself (an earlier client-side apply or takeover under the same name).
fn only_own_managers(object: &Value) -> bool {
    object["metadata"]["managedFields"]
        .as_array()
        .into_iter()
        .flatten()
        .all(|entry| {
            matches!(
                entry["manager"].as_str(),
                Some(FIELD_MANAGER | "before-first-apply")
            )
        })
}

/// `patch` with `metadata.resourceVersion` set, so the API server refuses it (409) if the
/// object changed since it was read.
fn locked(mut patch: Value, live: &Value) -> Value {
    if let Some(version) = live["metadata"]["resourceVersion"].as_str() {
        if !patch["metadata"].is_object() {
            patch["metadata"] = json!({});
        }
        patch["metadata"]["resourceVersion"] = json!(version);
    }
    patch
}

impl KubeApplier {
    /// Applies one manifest, trying again with backoff while its calls fail transiently.
    ///
    /// # Errors
    /// The last transient failure, when every attempt failed that way.
    pub(super) async fn apply_with_retries(
        &mut self,
        work: &DesiredWork,
        manifest: &Value,
    ) -> Result<ManifestOutcome, CallError> {
        let Some(id) = ManifestId::of(manifest) else {
            return Ok(ManifestOutcome::unnamed());
        };
        let mut failures = 0_u32;
        loop {
            let error = match self.process(work, manifest, &id).await {
                Ok(outcome) => return Ok(outcome),
                Err(error) => error,
            };
            failures += 1;
            if !error.is_transient() {
                return Ok(self.failure(work, &id, &error));
            }
            if failures >= self.retry.attempts_max {
                return Err(error);
            }
            tokio::time::sleep(self.retry.pause(failures)).await;
        }
    }

    /// A manifest whose call the API refused for good.
    fn failure(&self, work: &DesiredWork, id: &ManifestId, error: &CallError) -> ManifestOutcome {
        println!("{} {}: {}", self.label, id.display(), error.message);
        let report_diff = work.apply_strategy.apply_type == ApplyType::ReportDiff;
        let reason = match (report_diff, error.field_conflict) {
            (true, _) => Some(reason::FAILED_TO_REPORT_DIFF.to_owned()),
            (false, true) => Some(reason::APPLY_CONFLICT.to_owned()),
            (false, false) => None,
        };
        ManifestOutcome {
            id: id.clone(),
            applied: if report_diff {
                Applied::DiffFailed(error.message.clone())
            } else {
                Applied::Failed(error.message.clone())
            },
            availability: Availability::NotTrackable,
            findings: Findings {
                reason,
                ..Findings::default()
            },
        }
    }

    /// Resolves where the manifest goes.
    ///
    /// # Errors
    /// When discovery fails, a namespaced kind has no namespace, or a kind the member serves
    /// cluster-scoped names one (422-like refusals).
    async fn target<'a>(
        &mut self,
        manifest: &Value,
        id: &'a ManifestId,
    ) -> Result<Target<'a>, CallError> {
        let resource = self.resolver.resolve(&self.calls, id).await?;
        if resource.namespaced && id.namespace.is_empty() {
            return Err(CallError {
                code: Some(422),
                reason: "Invalid".to_owned(),
                message: format!("{} is namespaced but has no metadata.namespace", id.kind),
                field_conflict: false,
            });
        }
        // The hub decided this object is namespaced; a member serving the kind cluster-scoped
        // would drop `metadata.namespace` and create it cluster-wide, so it is not applied.
        if !resource.namespaced && !id.namespace.is_empty() {
            return Err(CallError {
                code: Some(422),
                reason: "Invalid".to_owned(),
                message: format!(
                    "{} is cluster-scoped on this member but the work names namespace {:?}; \
                     not applied",
                    id.kind, id.namespace
                ),
                field_conflict: false,
            });
        }
        Ok(Target {
            id,
            resource,
            desired: marks::sanitize(manifest),
        })
    }

    /// One attempt at one manifest.
    async fn process(
        &mut self,
        work: &DesiredWork,
        manifest: &Value,
        id: &ManifestId,
    ) -> Result<ManifestOutcome, CallError> {
        let target = self.target(manifest, id).await?;
        let live = self
            .calls
            .get(&target.resource, &id.namespace, &id.name)
            .await?;
        let strategy = work.apply_strategy;
        if strategy.apply_type == ApplyType::ReportDiff {
            return self.report_diff(work, &target, live.as_ref()).await;
        }
        let owner = self.owner(&work.target);
        let owned = match live.as_ref().map(|l| marks::ownership(l, &owner)) {
            None => false,
            Some(Ownership::Ours) => {
                if let Some(refusal) = self.drift_check(work, &target, live.as_ref()).await? {
                    return Ok(refusal);
                }
                true
            }
            Some(Ownership::OtherWork(other)) => {
                let message = format!("placed by this agent for work {other}");
                return Ok(refused(
                    id,
                    reason::FAILED_TO_TAKE_OVER,
                    message,
                    Findings::default(),
                ));
            }
            Some(Ownership::OtherMember(other)) => {
                let message = format!("placed by the agent of member cluster {other}");
                return Ok(refused(
                    id,
                    reason::FAILED_TO_TAKE_OVER,
                    message,
                    Findings::default(),
                ));
            }
            Some(Ownership::Unmarked) => {
                if let Some(refusal) = self.takeover_check(work, &target, live.as_ref()).await? {
                    return Ok(refusal);
                }
                false
            }
        };
        let applied = self.write(work, &target, live.as_ref(), owned).await?;
        let drifts = match strategy.comparison {
            Comparison::Full => {
                let details = diff::details(&target.desired, &applied);
                (!details.is_empty()).then(|| observed(Some(&applied), details))
            }
            Comparison::Partial => None,
        };
        Ok(ManifestOutcome {
            id: id.clone(),
            applied: Applied::Applied,
            availability: judge(&applied),
            findings: Findings {
                drifts,
                ..Findings::default()
            },
        })
    }

    /// The differences between the manifest and the object by the strategy's comparison: a
    /// full one directly; a partial one against a dry run of a forced server-side apply (what
    /// applying would leave), falling back to a full one when the API server refuses the dry
    /// run as invalid (KubeFleet's "degraded" comparison).
    async fn compare(
        &self,
        work: &DesiredWork,
        target: &Target<'_>,
        live: &Value,
    ) -> Result<Vec<PatchDetail>, CallError> {
        if work.apply_strategy.comparison == Comparison::Full {
            return Ok(diff::details(&target.desired, live));
        }
        let dry_run = self
            .calls
            .patch(
                &target.resource,
                &target.id.namespace,
                &target.id.name,
                PatchKind::Apply { force: true },
                &target.desired,
                true,
            )
            .await;
        match dry_run {
            Ok(result) => Ok(diff::details(&result, live)),
            Err(error) if error.is_invalid() => Ok(diff::details(&target.desired, live)),
            Err(error) => Err(error),
        }
    }

    /// ReportDiff: the comparison only; an absent object is one whole-object difference.
    async fn report_diff(
        &self,
        work: &DesiredWork,
        target: &Target<'_>,
        live: Option<&Value>,
    ) -> Result<ManifestOutcome, CallError> {
        let details = match live {
            None => diff::absent(),
            Some(live) => self.compare(work, target, live).await?,
        };
        Ok(ManifestOutcome {
            id: target.id.clone(),
            applied: Applied::DiffReported,
            availability: Availability::NotTrackable,
            findings: Findings {
                diffs: (!details.is_empty()).then(|| observed(live, details)),
                ..Findings::default()
            },
        })
    }

    /// `IfNotDrifted` over an object this agent applied the same manifest to (its hash matches):
    /// a refusal with the drifts when it no longer matches. A changed manifest is an intended
    /// change and applies, as in KubeFleet.
    async fn drift_check(
        &self,
        work: &DesiredWork,
        target: &Target<'_>,
        live: Option<&Value>,
    ) -> Result<Option<ManifestOutcome>, CallError> {
        let Some(live) = live else { return Ok(None) };
        if work.apply_strategy.when_to_apply != WhenToApply::IfNotDrifted
            || marks::applied_hash(live) != Some(marks::spec_hash(&target.desired).as_str())
        {
            return Ok(None);
        }
        let drifts = self.compare(work, target, live).await?;
        if drifts.is_empty() {
            return Ok(None);
        }
        let message = format!(
            "{} drifted from what was applied ({} differences); whenToApply is IfNotDrifted",
            target.id.display(),
            drifts.len()
        );
        let findings = Findings {
            drifts: Some(observed(Some(live), drifts)),
            ..Findings::default()
        };
        Ok(Some(refused(
            target.id,
            reason::FOUND_DRIFTS,
            message,
            findings,
        )))
    }

    /// An object this agent did not place: whether `whenToTakeOver` (and co-ownership) lets it
    /// take the object over; a refusal when not.
    async fn takeover_check(
        &self,
        work: &DesiredWork,
        target: &Target<'_>,
        live: Option<&Value>,
    ) -> Result<Option<ManifestOutcome>, CallError> {
        let Some(live) = live else { return Ok(None) };
        let strategy = work.apply_strategy;
        let id = target.id;
        if strategy.when_to_take_over == WhenToTakeOver::Never {
            let message = format!(
                "{} exists and was not placed by this agent; whenToTakeOver is Never",
                id.display()
            );
            return Ok(Some(refused(
                id,
                reason::NOT_TAKEN_OVER,
                message,
                Findings::default(),
            )));
        }
        let owners = live["metadata"]["ownerReferences"]
            .as_array()
            .map_or(0, Vec::len);
        if owners > 0 && !strategy.allow_co_ownership {
            let message = format!(
                "{} is owned by {owners} other objects and allowCoOwnership is false",
                id.display()
            );
            return Ok(Some(refused(
                id,
                reason::FAILED_TO_TAKE_OVER,
                message,
                Findings::default(),
            )));
        }
        if strategy.when_to_take_over == WhenToTakeOver::IfNoDiff {
            let diffs = self.compare(work, target, live).await?;
            if !diffs.is_empty() {
                let message = format!(
                    "{} differs from the manifest ({} differences); whenToTakeOver is IfNoDiff",
                    id.display(),
                    diffs.len()
                );
                let findings = Findings {
                    diffs: Some(observed(Some(live), diffs)),
                    ..Findings::default()
                };
                return Ok(Some(refused(
                    id,
                    reason::FAILED_TO_TAKE_OVER,
                    message,
                    findings,
                )));
            }
        }
        Ok(None)
    }

    /// Writes the manifest (with the agent's marks); returns the object as the API server
    /// left it (the live object itself when client-side apply had nothing to send).
    async fn write(
        &self,
        work: &DesiredWork,
        target: &Target<'_>,
        live: Option<&Value>,
        owned: bool,
    ) -> Result<Value, CallError> {
        let object = marks::marked(&target.desired, &self.owner(&work.target));
        let client_side = match work.apply_strategy.apply_type {
            ApplyType::ClientSideApply => marks::with_last_applied(&object),
            // KubeFleet falls back to server-side apply (without force) when the last-applied
            // configuration would not fit in the annotations.
            ApplyType::ServerSideApply | ApplyType::ReportDiff => None,
        };
        match (client_side, live) {
            (Some(full), None) => {
                let namespace = &target.id.namespace;
                self.calls.create(&target.resource, namespace, &full).await
            }
            (Some(full), Some(live)) => {
                self.client_side_patch(work, target, &full, live, owned)
                    .await
            }
            (None, live) => self.server_side_apply(work, target, object, live).await,
        }
    }

    /// Client-side apply over an existing object: the three-way patch, sent only when not
    /// empty.
    async fn client_side_patch(
        &self,
        work: &DesiredWork,
        target: &Target<'_>,
        full: &Value,
        live: &Value,
        owned: bool,
    ) -> Result<Value, CallError> {
        // The last-applied configuration of an object someone else placed is not this
        // applier's: taking it over removes nothing.
        let original = if owned {
            marks::last_applied(live)
        } else {
            None
        };
        let resource = &target.resource;
        let built_in = resource.is_built_in();
        let patch = merge::three_way(original.as_ref(), full, live, built_in, &target.id.kind);
        if patch.as_object().is_some_and(serde_json::Map::is_empty) {
            return Ok(live.clone());
        }
        let patch = if work.apply_strategy.when_to_apply == WhenToApply::IfNotDrifted {
            locked(patch, live)
        } else {
            patch
        };
        let kind = if built_in {
            PatchKind::Strategic
        } else {
            PatchKind::Merge
        };
        let (namespace, name) = (&target.id.namespace, &target.id.name);
        self.calls
            .patch(resource, namespace, name, kind, &patch, false)
            .await
    }

    /// Server-side apply with the agent's field manager: forced when the strategy says so, or
    /// when every manager of the object is this applier (KubeFleet's rule against conflicts
    /// with itself); with the object's resource version under `IfNotDrifted`.
    async fn server_side_apply(
        &self,
        work: &DesiredWork,
        target: &Target<'_>,
        object: Value,
        live: Option<&Value>,
    ) -> Result<Value, CallError> {
        let strategy = work.apply_strategy;
        let forced = strategy.apply_type == ApplyType::ServerSideApply && strategy.force_conflicts;
        let force = forced || live.is_some_and(only_own_managers);
        let body = match live {
            Some(live) if strategy.when_to_apply == WhenToApply::IfNotDrifted => {
                locked(object, live)
            }
            _ => object,
        };
        let (namespace, name) = (&target.id.namespace, &target.id.name);
        self.calls
            .patch(
                &target.resource,
                namespace,
                name,
                PatchKind::Apply { force },
                &body,
                false,
            )
            .await
    }

    /// A Work's manifest as it is now: available or not, and (under a full comparison) its
    /// drifts; a failed manifest when the object is gone or no longer this agent's.
    pub(super) async fn observe_one(
        &mut self,
        work: &DesiredWork,
        manifest: &Value,
    ) -> Result<ManifestOutcome, CallError> {
        let Some(id) = ManifestId::of(manifest) else {
            return Ok(ManifestOutcome::unnamed());
        };
        let target = self.target(manifest, &id).await?;
        let live = self
            .calls
            .get(&target.resource, &id.namespace, &id.name)
            .await?;
        if work.apply_strategy.apply_type == ApplyType::ReportDiff {
            return self.report_diff(work, &target, live.as_ref()).await;
        }
        let owner = self.owner(&work.target);
        let Some(live) = live.filter(|l| marks::ownership(l, &owner) == Ownership::Ours) else {
            return Ok(ManifestOutcome::failed(
                id,
                "the object is gone or no longer placed by this agent",
            ));
        };
        let drifts = match work.apply_strategy.comparison {
            Comparison::Full => {
                let details = diff::details(&target.desired, &live);
                (!details.is_empty()).then(|| observed(Some(&live), details))
            }
            Comparison::Partial => None,
        };
        Ok(ManifestOutcome {
            id,
            applied: Applied::Applied,
            availability: judge(&live),
            findings: Findings {
                drifts,
                ..Findings::default()
            },
        })
    }
}
