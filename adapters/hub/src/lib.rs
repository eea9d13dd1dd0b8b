//! flotilla-hub: the live path. The single writer (`runtime`) folds the log through
//! `flotilla_core::step` (by way of `flotilla_eventstore::fold`), ingest appends what publishers
//! send (HTTP `ingest`, NATS `nats_ingress`), `standby` follows a leader, and the hub answers the
//! HTTP API (`http`), the Kubernetes API (`kube`), the web page (`web`) and `/metrics`.
//! `serve` starts all of it.
//!
//! No two top-level modules import each other, directly or around a circle: what two sides
//! share sits below both (`hub_metrics` for the runtime and the scrape above it).

pub mod api_doc;
pub mod api_server;
pub mod auth;
pub mod http;
mod http_marks;
pub mod http_metrics;
mod http_replay;
mod http_summary;
pub mod hub_metrics;
pub mod ingest;
pub mod kube;
pub mod metrics_scrape;
pub mod nats_ingress;
pub mod nats_rejections;
pub mod nats_works;
pub mod runtime;
pub mod serve;
pub mod standby;
pub mod web;
