//! One server of the test cluster: its name, its three loopback ports, its process, and the
//! configuration file that names them.

use std::net::{Ipv4Addr, TcpListener};
use std::path::Path;
use std::process::Child;

use super::error::{TestClusterError, io};
use super::{CLUSTER_NAME, CLUSTER_SIZE};
use crate::nats_test_server::quoted;

/// One server of the cluster.
#[derive(Debug)]
pub(crate) struct Node {
    /// `n1`, `n2`, `n3`: the `server_name`, as the monitoring endpoints name it.
    pub(crate) name: String,
    pub(crate) client_port: u16,
    pub(crate) route_port: u16,
    pub(crate) monitoring_port: u16,
    /// The running process, if any.
    pub(crate) child: Option<Child>,
}

impl Node {
    /// The node's configuration: its own ports and store, routes to every node (itself
    /// included: the server ignores a route to itself, and every node's file reads the same).
    pub(crate) fn config(&self, nodes: &[Node], store_dir: &Path) -> String {
        let routes = nodes
            .iter()
            .map(|other| format!("nats-route://127.0.0.1:{}", other.route_port))
            .collect::<Vec<_>>()
            .join(", ");
        // sync_interval: always makes every ack wait for fsync (see nats_test_server).
        format!(
            "server_name: {name}\nlisten: 127.0.0.1:{client}\nhttp: 127.0.0.1:{monitoring}\n\
             jetstream {{\n  store_dir: {store_dir}\n  sync_interval: always\n}}\n\
             cluster {{\n  name: {CLUSTER_NAME}\n  listen: 127.0.0.1:{route}\n  \
             routes: [{routes}]\n}}\n",
            name = self.name,
            client = self.client_port,
            monitoring = self.monitoring_port,
            route = self.route_port,
            store_dir = quoted(store_dir),
        )
    }
}

/// Three nodes on nine distinct free loopback ports: every listener is held at once so the
/// ports differ, then released for the servers to bind.
pub(crate) fn fresh_nodes() -> Result<Vec<Node>, TestClusterError> {
    let listeners = (0..CLUSTER_SIZE * 3)
        .map(|_| TcpListener::bind((Ipv4Addr::LOCALHOST, 0)))
        .collect::<Result<Vec<_>, _>>()
        .map_err(io("probe a free port"))?;
    let ports = listeners
        .iter()
        .map(|listener| listener.local_addr().map(|addr| addr.port()))
        .collect::<Result<Vec<_>, _>>()
        .map_err(io("probe a free port"))?;
    Ok(ports
        .chunks(3)
        .enumerate()
        .map(|(index, ports)| Node {
            name: format!("n{}", index + 1),
            client_port: ports[0],
            route_port: ports[1],
            monitoring_port: ports[2],
            child: None,
        })
        .collect())
}
