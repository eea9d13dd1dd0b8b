//! The demo's member agents: real `flotilla agent --applier sim` child processes of this same
//! binary, one per member, each with its own state under the demo's data directory. They are
//! stopped by process id (one at a time), never by name.

use std::path::Path;
use std::process::{Child, Command, Stdio};

use anyhow::Context;

/// The running agents, by member name.
pub struct DemoAgents {
    children: Vec<(String, Child)>,
}

impl DemoAgents {
    /// Starts one `sim` agent per member against `hub`; member `i` has `3 + i` nodes (8 CPUs
    /// and 32Gi each), so the member table shows different properties.
    ///
    /// # Errors
    /// When this binary cannot be found or an agent cannot be started.
    pub fn start(
        hub: &str,
        state_root: &Path,
        members: &[&str],
        seconds: u64,
    ) -> anyhow::Result<Self> {
        let binary = std::env::current_exe().context("finding the flotilla binary")?;
        let mut children = Vec::with_capacity(members.len());
        for (index, member) in members.iter().enumerate() {
            let nodes = 3 + index;
            let quantity = |per_node: usize, unit: &str| format!("{}{unit}", nodes * per_node);
            let child = Command::new(&binary)
                .args([
                    "agent",
                    "--cluster",
                    member,
                    "--hub",
                    hub,
                    "--applier",
                    "sim",
                ])
                .arg("--state")
                .arg(state_root.join(member))
                .args(["--seed", &index.to_string()])
                .args(["--max-seconds", &(seconds + 10).to_string()])
                .args(["--sim-nodes", &nodes.to_string()])
                .args(["--sim-cpu-capacity", &quantity(8, "")])
                .args(["--sim-cpu-allocatable", &quantity(7, "")])
                .args(["--sim-cpu-available", &quantity(3, "")])
                .args(["--sim-memory-capacity", &quantity(32, "Gi")])
                .args(["--sim-memory-allocatable", &quantity(28, "Gi")])
                .args(["--sim-memory-available", &quantity(12, "Gi")])
                .stdin(Stdio::null())
                .spawn()
                .with_context(|| format!("starting the agent of {member}"))?;
            children.push(((*member).to_owned(), child));
        }
        Ok(Self { children })
    }

    /// Kills one member's agent (by its process id), so that its heartbeats stop.
    pub fn silence(&mut self, member: &str) {
        if let Some(index) = self.children.iter().position(|(name, _)| name == member) {
            let (_, mut child) = self.children.remove(index);
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Drop for DemoAgents {
    fn drop(&mut self) {
        for (_, child) in &mut self.children {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}
