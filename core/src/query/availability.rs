//! Whether a work report makes a cluster available. What other crates read of `availability`: the fold's own types and rules,
//! so an explanation never re-derives them.

pub use crate::availability::{Availability, judge};
