//! flotilla-adapters: the edges of flotilla — the runtime loop that wires log → core →
//! projections, the HTTP API, the `flotilla` command line, the scenario runner and the demo.
//!
//! No two top-level modules import each other, directly or around a circle: what two sides
//! share sits below both (`nats_names` for the hub and its member agents, `json_event` for the
//! ingest and the client, `output` for the CLI's verbs, `api_error` and `signals` for the HTTP
//! side, `hub_metrics` for the runtime and the scrape above it), so the crate can be split along
//! those lines.

pub mod agent;
pub mod api_doc;
mod api_error;
pub mod api_server;
pub mod auth;
pub mod cli;
pub mod client;
pub mod commands;
pub mod connections;
pub mod demo;
pub mod demo_agents;
pub mod drain;
pub mod entry;
pub mod http;
mod http_replay;
pub mod hub_metrics;
pub mod ingest;
pub mod json_event;
pub mod kube;
pub mod kube_commands;
pub mod loadgen;
pub mod manifests;
pub mod metrics_scrape;
pub mod nats_auth;
pub mod nats_ingress;
pub mod nats_names;
pub mod nats_rejections;
pub mod nats_works;
pub mod output;
pub mod progress;
pub mod replay_cmd;
pub mod runtime;
pub mod scenario;
pub mod schema;
pub mod serve;
pub mod signals;
pub mod standby;
pub mod store;
pub mod tls;
pub mod web;
