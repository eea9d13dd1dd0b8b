//! A what-if as text: per placement, how each side's rollout ended, then each cluster's course
//! side by side, one step a row, clusters without a recorded fact for what the fork gave them
//! marked `*`. (JSON is the serde form of [`WhatIf`].)

use std::fmt::{self, Write as _};

use chrono::SecondsFormat;

use super::course::{Course, Moment, Outcome, Step, look_text};
use super::{ClusterComparison, PlacementComparison, WhatIf};

const RECORDED: &str = "recorded";
const WHAT_IF: &str = "what-if";
/// Spaces between columns.
const GAP: usize = 3;

fn moment_text(at: Moment) -> String {
    format!(
        "#{} {}",
        at.seq,
        at.time.to_rfc3339_opts(SecondsFormat::AutoSi, true)
    )
}

fn step_text(step: &Step) -> String {
    format!("{} {}", moment_text(step.at), look_text(step.look))
}

fn outcome_text(outcome: &Outcome) -> String {
    match outcome {
        Outcome::Finished { at, resource_index } => {
            format!(
                "finished at index {resource_index} since {}",
                moment_text(*at)
            )
        }
        Outcome::Stalled {
            since,
            resource_index,
            behind,
        } => {
            let index = resource_index.map_or_else(|| "-".to_owned(), |i| i.to_string());
            let behind = if behind.is_empty() {
                String::new()
            } else {
                format!("; behind: {}", behind.join(", "))
            };
            format!(
                "stalled at index {index} since {}{behind}",
                moment_text(*since)
            )
        }
        Outcome::Deleted => "placement deleted".to_owned(),
    }
}

/// A course's rows: its steps, then how many were not kept.
fn rows(course: &Course) -> Vec<String> {
    let mut rows: Vec<String> = course.steps.iter().map(step_text).collect();
    if course.steps_dropped > 0 {
        rows.push(format!("… {} more steps", course.steps_dropped));
    }
    rows
}

fn cluster_label(cluster: &ClusterComparison) -> String {
    if cluster.unrecorded.is_empty() {
        cluster.cluster.clone()
    } else {
        format!("{} *", cluster.cluster)
    }
}

fn placement_text(out: &mut String, placement: &PlacementComparison) -> fmt::Result {
    writeln!(out, "{}", placement.placement)?;
    writeln!(out, "  {RECORDED}: {}", outcome_text(&placement.recorded))?;
    writeln!(out, "  {WHAT_IF}:  {}", outcome_text(&placement.what_if))?;
    let label_width = placement
        .clusters
        .iter()
        .map(|c| cluster_label(c).chars().count())
        .chain(["cluster".len()])
        .max()
        .unwrap_or_default();
    let recorded_width = placement
        .clusters
        .iter()
        .flat_map(|c| rows(&c.recorded))
        .map(|row| row.chars().count())
        .chain([RECORDED.len()])
        .max()
        .unwrap_or_default();
    let line = |out: &mut String, label: &str, left: &str, right: &str| {
        let text = format!(
            "  {label:<label_width$}{:GAP$}{left:<recorded_width$}{:GAP$}{right}",
            "", ""
        );
        writeln!(out, "{}", text.trim_end())
    };
    line(out, "cluster", RECORDED, WHAT_IF)?;
    for cluster in &placement.clusters {
        let (left, right) = (rows(&cluster.recorded), rows(&cluster.what_if));
        let label = cluster_label(cluster);
        for row in 0..left.len().max(right.len()) {
            let name = if row == 0 { label.as_str() } else { "" };
            let cell = |rows: &[String]| rows.get(row).cloned().unwrap_or_default();
            line(out, name, &cell(&left), &cell(&right))?;
        }
    }
    for cluster in placement
        .clusters
        .iter()
        .filter(|c| !c.unrecorded.is_empty())
    {
        let indexes: Vec<String> = cluster.unrecorded.iter().map(u64::to_string).collect();
        writeln!(
            out,
            "  * {}: the what-if gave it index {}, on which the recording holds no report",
            cluster.cluster,
            indexes.join(", ")
        )?;
    }
    Ok(())
}

impl fmt::Display for WhatIf {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut out = String::new();
        writeln!(
            out,
            "what-if from {}, changed: {}",
            moment_text(self.from),
            self.changed.join(", ")
        )?;
        let refed = &self.refed;
        writeln!(
            out,
            "re-fed {} of {} recorded inputs up to #{} ({} refused by the what-if); dropped {} \
             applies or deletes of the changed objects, {} work reports on work the what-if did \
             not give; skipped {} rejected records",
            refed.kept,
            refed.recorded,
            self.until_seq,
            refed.refused,
            refed.dropped_changes,
            refed.dropped_reports,
            refed.skipped_records
        )?;
        for placement in &self.placements {
            writeln!(out)?;
            placement_text(&mut out, placement)?;
        }
        f.write_str(&out)
    }
}
