//! flotilla-tests: end-to-end, scenario, fault and crash tests (in `tests/`), and the helpers
//! they share (in [`support`]).

pub mod support;
