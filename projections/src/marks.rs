//! Marks for the web page's time slider, read from decisions: runs started, succeeded or
//! failed, approvals requested and given. Decisions are the log's own, so a run deleted since
//! keeps its marks; [`Marks`] holds the newest [`MARKS_MAX`] of them in the log's order.

use std::collections::VecDeque;

use flotilla_core::Decision;

/// Most marks kept (and answered).
pub const MARKS_MAX: usize = 200;

/// A point worth a mark: the input that decided it, what kind of point, and a label.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mark {
    /// The input whose decision it is.
    pub seq: u64,
    /// `run`, `failure` or `approval`.
    pub kind: &'static str,
    /// `NAME started`, `NAME failed`, `REQUEST approved`, …
    pub label: String,
}

/// The marks one input's decisions make, in their order.
pub fn marks_of(seq: u64, decisions: &[Decision]) -> impl Iterator<Item = Mark> + '_ {
    decisions.iter().filter_map(move |decision| {
        let (kind, label) = match decision {
            Decision::UpdateRunStateChanged { run, reason } if reason == "UpdateRunStarted" => {
                ("run", format!("{} started", run.name))
            }
            Decision::UpdateRunFinished {
                run,
                succeeded: true,
                ..
            } => ("run", format!("{} succeeded", run.name)),
            Decision::UpdateRunFinished { run, .. } => ("failure", format!("{} failed", run.name)),
            Decision::ApprovalRequested { request, .. } => {
                ("approval", format!("{} requested", request.name))
            }
            Decision::ApprovalGranted { request } => {
                ("approval", format!("{} approved", request.name))
            }
            _ => return None,
        };
        Some(Mark { seq, kind, label })
    })
}

/// The newest [`MARKS_MAX`] marks, oldest first.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Marks {
    kept: VecDeque<Mark>,
}

impl Marks {
    /// Adds the marks of `seq`'s decisions, after every mark kept (inputs come in order).
    pub fn note(&mut self, seq: u64, decisions: &[Decision]) {
        self.kept.extend(marks_of(seq, decisions));
        while self.kept.len() > MARKS_MAX {
            self.kept.pop_front();
        }
    }

    /// The marks, newest first.
    pub fn newest_first(&self) -> impl Iterator<Item = &Mark> {
        self.kept.iter().rev()
    }
}

#[cfg(test)]
mod tests {
    use flotilla_core::model::ObjectKey;

    use super::*;

    fn run(name: &str) -> ObjectKey {
        ObjectKey::cluster_scoped(
            "placement.kubernetes-fleet.io",
            "ClusterStagedUpdateRun",
            name,
        )
    }

    fn finished(name: &str, succeeded: bool) -> Decision {
        Decision::UpdateRunFinished {
            run: run(name),
            succeeded,
            message: String::new(),
        }
    }

    #[test]
    fn runs_and_approvals_make_marks_and_other_decisions_none() {
        let request = ObjectKey::cluster_scoped(
            "placement.kubernetes-fleet.io",
            "ClusterApprovalRequest",
            "r-after-canary",
        );
        let decisions = [
            Decision::UpdateRunStateChanged {
                run: run("r"),
                reason: "UpdateRunStarted".into(),
            },
            Decision::UpdateRunStateChanged {
                run: run("r"),
                reason: "UpdateRunStopped".into(),
            },
            Decision::ApprovalRequested {
                run: run("r"),
                request: request.clone(),
            },
            Decision::ApprovalGranted { request },
            finished("r", false),
            finished("s", true),
        ];
        let labels: Vec<(&str, String)> = marks_of(7, &decisions)
            .map(|mark| (mark.kind, mark.label))
            .collect();
        assert_eq!(
            labels,
            [
                ("run", "r started".to_owned()),
                ("approval", "r-after-canary requested".to_owned()),
                ("approval", "r-after-canary approved".to_owned()),
                ("failure", "r failed".to_owned()),
                ("run", "s succeeded".to_owned()),
            ]
        );
    }

    #[test]
    fn the_newest_are_kept() {
        let mut marks = Marks::default();
        for seq in 1000..1000 + MARKS_MAX as u64 + 5 {
            marks.note(seq, &[finished("r", true)]);
        }
        let seqs: Vec<u64> = marks.newest_first().map(|m| m.seq).collect();
        assert_eq!(seqs.len(), MARKS_MAX);
        assert_eq!(seqs.first(), Some(&(1000 + MARKS_MAX as u64 + 4)));
        assert_eq!(seqs.last(), Some(&1005), "the oldest five gave way");
    }
}
