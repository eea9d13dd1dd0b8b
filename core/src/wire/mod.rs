//! Frozen copies of older wire schemas, decoded by [`crate::codec`] and upcast to the current
//! types in [`crate::event`]. A module here never changes once its version has shipped
//! (`docs/schema-evolution.md`).

pub mod decision_v1;
pub mod v1;
