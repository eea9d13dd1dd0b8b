//! What the rollout benchmarks share: the sizes to time, the inputs that register and join a
//! fleet, and a member's report that its work is applied and available.

use flotilla_core::{Heartbeat, Input, WorkReport};

/// The fleet sizes to time: `--clusters N` alone, else `benchmarked` under `cargo bench`
/// (`--bench`) and `tested` under `cargo test`.
pub fn sizes(benchmarked: &[usize], tested: &[usize]) -> Vec<usize> {
    let args: Vec<String> = std::env::args().collect();
    let chosen = args
        .iter()
        .position(|a| a == "--clusters")
        .and_then(|at| args.get(at + 1))
        .and_then(|n| n.parse::<usize>().ok());
    match chosen {
        Some(size) => vec![size],
        None if args.iter().any(|a| a == "--bench") => benchmarked.to_vec(),
        None => tested.to_vec(),
    }
}

/// `MemberCluster` applies and first heartbeats for `member-000000` … `member-<size - 1>`, each
/// with the labels `labels(i)` gives (a JSON object's text, `{}` for none).
pub fn join_fleet(size: usize, labels: impl Fn(usize) -> String) -> impl Iterator<Item = Input> {
    (0..size).flat_map(move |i| {
        let name = format!("member-{i:06}");
        let manifest = format!(
            r#"{{"apiVersion":"cluster.kubernetes-fleet.io/v1beta1","kind":"MemberCluster","metadata":{{"name":"{name}","labels":{}}},"spec":{{}}}}"#,
            labels(i)
        );
        [
            Input::Apply { manifest },
            Input::Heartbeat(Heartbeat {
                cluster: name,
                ..Heartbeat::default()
            }),
        ]
    })
}

/// `cluster`'s report that its work of placement `everywhere` at `resource_index` is applied
/// and available.
pub fn available(cluster: String, resource_index: u64) -> Input {
    Input::WorkReport(WorkReport::available(cluster, "everywhere", resource_index))
}
