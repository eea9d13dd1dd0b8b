//! flotilla-tests: end-to-end, scenario, fault and crash tests (in `tests/`), and the helpers
//! they share (in [`support`] and [`scenario_files`]).

pub mod adversary;
pub mod agents;
pub mod browser;
pub mod kubectl;
pub mod pty;
pub mod refusal;
pub mod scenario_files;
pub mod scrape;
pub mod simulation;
pub mod support;
pub mod walkthrough;
