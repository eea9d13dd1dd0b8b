//! flotilla-cli: the `flotilla` command (`entry`, `cli`) and what only it runs — the verbs that
//! talk to a hub (`commands`, `kube_commands`), `replay` over a data directory, `drain`, the
//! demo, the load generator (`loadgen`, the `simulate` verb), progress views and the scenario
//! runner. The hub and the agent it starts are the `flotilla-hub` and `flotilla-agent` crates.

pub mod cli;
pub mod commands;
pub mod demo;
pub mod demo_agents;
pub mod drain;
pub mod entry;
pub mod kube_commands;
pub mod loadgen;
pub mod progress;
pub mod replay_cmd;
pub mod scenario;
