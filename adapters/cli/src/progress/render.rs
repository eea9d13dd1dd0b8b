//! Showing a [`View`] as it changes: live bars (indicatif) on a terminal, or plain lines — the
//! headline and each bar once per change — when stdout is not one (a pipe, a file, CI).

use std::collections::BTreeMap;
use std::io::IsTerminal;
use std::time::Duration;

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};

use super::model::{Bar, View};

/// How often the headline's spinner turns.
const SPIN_EVERY: Duration = Duration::from_millis(120);
/// The bars' template: `stage staging     [=====>    ] 1/2 clusters updating member-3`.
const BAR_TEMPLATE: &str = "{prefix:<24!} [{bar:24}] {pos}/{len} {msg}";

/// Shows views as they change.
pub enum Renderer {
    /// indicatif bars on a terminal.
    Bars(Bars),
    /// One plain line per change.
    Lines(Lines),
}

impl Renderer {
    /// Bars when stdout is a terminal, else lines.
    #[must_use]
    pub fn for_stdout() -> Self {
        if std::io::stdout().is_terminal() {
            Renderer::Bars(Bars::new())
        } else {
            Renderer::Lines(Lines::default())
        }
    }

    /// Shows `view`: what changed since the last one.
    pub fn show(&mut self, view: &View) {
        match self {
            Renderer::Bars(bars) => bars.show(view),
            Renderer::Lines(lines) => lines.show(view),
        }
    }

    /// Leaves the last view on screen; what is printed next comes below it.
    pub fn finish(&mut self) {
        if let Renderer::Bars(bars) = self {
            bars.finish();
        }
    }
}

/// Plain lines: the headline and each bar, printed when they differ from the last printed.
#[derive(Debug, Default)]
pub struct Lines {
    headline: String,
    bars: BTreeMap<String, String>,
}

impl Lines {
    /// Prints the lines `view` changes.
    pub fn show(&mut self, view: &View) {
        for line in self.changes(view) {
            println!("{line}");
        }
    }

    fn changes(&mut self, view: &View) -> Vec<String> {
        let mut changed = Vec::new();
        let headline = view.headline();
        if headline != self.headline {
            changed.push(headline.clone());
            self.headline = headline;
        }
        for bar in &view.bars {
            let key = format!("{} {}", bar.kind.word(), bar.name);
            let line = bar.line();
            if self.bars.get(&key) != Some(&line) {
                changed.push(format!("  {line}"));
                self.bars.insert(key, line);
            }
        }
        changed
    }
}

/// indicatif bars: a spinner with the headline, then one bar per stage, partition or cluster.
pub struct Bars {
    multi: MultiProgress,
    headline: ProgressBar,
    /// The bars by name, in the view's order; rebuilt when the names change.
    bars: Vec<(String, ProgressBar)>,
}

impl Bars {
    fn new() -> Self {
        let multi = MultiProgress::with_draw_target(ProgressDrawTarget::stdout());
        let headline = multi.add(ProgressBar::new_spinner());
        headline.set_style(
            ProgressStyle::with_template("{spinner} {msg}")
                .unwrap_or_else(|_| ProgressStyle::default_spinner()),
        );
        headline.enable_steady_tick(SPIN_EVERY);
        Self {
            multi,
            headline,
            bars: Vec::new(),
        }
    }

    fn style() -> ProgressStyle {
        // The template is a constant; the default bar is the fallback should it ever not parse.
        ProgressStyle::with_template(BAR_TEMPLATE)
            .map(|style| style.progress_chars("=> "))
            .unwrap_or_else(|_| ProgressStyle::default_bar())
    }

    fn show(&mut self, view: &View) {
        self.headline.set_message(view.headline());
        let names: Vec<String> = view.bars.iter().map(bar_key).collect();
        let same = names.len() == self.bars.len()
            && names
                .iter()
                .zip(&self.bars)
                .all(|(name, (had, _))| name == had);
        if !same {
            for (_, bar) in self.bars.drain(..) {
                bar.finish_and_clear();
                self.multi.remove(&bar);
            }
            for (name, shown) in names.into_iter().zip(&view.bars) {
                // Set up hidden, so that the first frame already shows the counts.
                let bar =
                    ProgressBar::with_draw_target(Some(shown.total), ProgressDrawTarget::hidden());
                bar.set_style(Self::style());
                bar.set_prefix(name.clone());
                update(&bar, shown);
                self.bars.push((name, self.multi.add(bar)));
            }
        }
        for ((_, bar), shown) in self.bars.iter().zip(&view.bars) {
            update(bar, shown);
        }
    }

    fn finish(&mut self) {
        self.headline.finish();
        // `abandon`, not `finish`: finishing would fill the bar, and a waiting stage is not done.
        for (_, bar) in &self.bars {
            bar.abandon();
        }
    }
}

fn update(bar: &ProgressBar, shown: &Bar) {
    bar.set_message(format!("{} {}", shown.kind.unit(), shown.note));
    bar.set_length(shown.total);
    bar.set_position(shown.done);
}

fn bar_key(bar: &Bar) -> String {
    format!("{} {}", bar.kind.word(), bar.name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::progress::model::{BarKind, Outcome};

    fn view(note: &str, done: u64) -> View {
        View {
            title: "csur/r".to_owned(),
            state: "UpdateRunStarted".to_owned(),
            bars: vec![Bar {
                kind: BarKind::Stage,
                name: "staging".to_owned(),
                done,
                total: 1,
                note: note.to_owned(),
            }],
            outcome: Outcome::Progressing,
        }
    }

    #[test]
    fn lines_print_only_what_changed() {
        let mut lines = Lines::default();
        assert_eq!(
            lines.changes(&view("updating member-1", 0)),
            [
                "csur/r: UpdateRunStarted",
                "  stage staging: 0/1 clusters, updating member-1"
            ]
        );
        assert!(lines.changes(&view("updating member-1", 0)).is_empty());
        assert_eq!(
            lines.changes(&view("succeeded", 1)),
            ["  stage staging: 1/1 clusters, succeeded"]
        );
    }
}
