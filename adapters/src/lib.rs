//! flotilla-adapters: what every edge of flotilla shares — opening the log's stores (`store`),
//! the API client (`client`, `json_event`), the vendored KubeFleet schemas (`schema`), manifests
//! read from YAML, TLS, NATS subject and bucket names and credentials, and the CLI's output.
//!
//! The edges themselves are crates of their own beside this one: `flotilla-hub` (the writer and
//! the APIs, `adapters/hub`), `flotilla-agent` (a member cluster's agent, `adapters/agent`) and
//! `flotilla-cli` (the `flotilla` command, `adapters/cli`); `docs/architecture.md` draws them.

pub mod api_error;
pub mod client;
pub mod connections;
pub mod json_event;
pub mod log_export;
pub mod manifests;
pub mod nats_auth;
pub mod nats_names;
pub mod output;
pub mod schema;
pub mod signals;
pub mod store;
pub mod tls;
