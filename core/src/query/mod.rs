//! Read-only questions about a folded state, answered by the fold's own rules. `replay`,
//! `projections` and the web page explain through these, so that no rule is written both in
//! the fold and in an explanation of it.

pub mod placement;
pub mod staged;
