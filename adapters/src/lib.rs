//! flotilla-adapters: the edges of flotilla — the runtime loop that wires log → core →
//! projections, the HTTP API, the `flotilla` command line, the scenario runner and the demo.

pub mod agent;
pub mod api_doc;
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
pub mod manifests;
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
pub mod serve;
pub mod simulate;
pub mod standby;
pub mod store;
pub mod tls;
pub mod web;
