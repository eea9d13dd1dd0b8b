//! Manifests read from YAML or JSON. What other crates read of `manifest`: the fold's own types and rules,
//! so an explanation never re-derives them.

pub use crate::manifest::{DERIVED_KINDS, Manifest, parse_manifest, parse_manifest_text};
