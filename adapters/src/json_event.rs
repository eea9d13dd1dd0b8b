//! The JSON form of input events, for external publishers. It lives in
//! [`flotilla_core::wire::json`], so that the HTTP and NATS ingestion and the log reader (a JSON
//! record published straight onto `flotilla.in.*`) share one parser; re-exported here.

pub use flotilla_core::wire::json::*;
