//! What a `kube` agent's heartbeats say about its cluster, measured as KubeFleet's member agent
//! measures it: `kubernetes-fleet.io/node-count` (every node); CPU and memory `capacity` and
//! `allocatable` summed over the nodes; and `available` = allocatable less the requests of the
//! containers of every pod bound to a node and not finished (`Succeeded`/`Failed`), never below
//! zero. A background task measures again every [`REFRESH_EVERY`]; each heartbeat sends the
//! latest measurement.

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::Value;

use super::calls::{CallError, Calls};
use crate::report::{LiveProperties, Measured};

/// How often the cluster is measured again.
pub const REFRESH_EVERY: Duration = Duration::from_secs(30);
/// Objects per list page.
pub const LIST_PAGE_LIMIT: u32 = 500;
/// Most objects read from one collection in one measurement (a large cluster's pods are
/// counted up to this many, and the output says so).
pub const LISTED_OBJECTS_MAX: usize = 100_000;

/// A quantity (`"250m"`, `"1.5Gi"`, `"2e3"`) in thousandths of its unit; `None` when malformed.
#[must_use]
pub fn parse_milli(text: &str) -> Option<i128> {
    let text = text.trim();
    let suffixes: [(&str, i128, i128); 14] = [
        ("Ki", 1 << 10, 1),
        ("Mi", 1 << 20, 1),
        ("Gi", 1 << 30, 1),
        ("Ti", 1 << 40, 1),
        ("Pi", 1 << 50, 1),
        ("Ei", 1 << 60, 1),
        ("n", 1, 1_000_000_000),
        ("u", 1, 1_000_000),
        ("m", 1, 1_000),
        ("k", 1_000, 1),
        ("M", 1_000_000, 1),
        ("G", 1_000_000_000, 1),
        ("T", 1_000_000_000_000, 1),
        ("P", 1_000_000_000_000_000, 1),
    ];
    let (number, multiplier, divisor) = suffixes
        .iter()
        .find_map(|(suffix, multiplier, divisor)| {
            text.strip_suffix(suffix)
                .map(|number| (number, *multiplier, *divisor))
        })
        .or_else(|| {
            text.strip_suffix('E')
                .map(|number| (number, 1_000_000_000_000_000_000, 1))
        })
        .unwrap_or((text, 1, 1));
    let (mantissa, exponent) = match number.split_once(['e', 'E']) {
        Some((mantissa, exponent)) => (mantissa, exponent.parse::<i32>().ok()?),
        None => (number, 0),
    };
    let (whole, fraction) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    if whole.is_empty() && fraction.is_empty() {
        return None;
    }
    let digits: i128 = format!("{whole}{fraction}").parse().ok()?;
    let scale = i32::try_from(fraction.len()).ok()?;
    // value = digits × 10^(exponent − scale) × multiplier / divisor, in thousandths.
    let power = exponent - scale + 3;
    let scaled = if power >= 0 {
        digits.checked_mul(10_i128.checked_pow(u32::try_from(power).ok()?)?)?
    } else {
        digits / 10_i128.checked_pow(u32::try_from(-power).ok()?)?
    };
    scaled.checked_mul(multiplier)?.checked_div(divisor)
}

/// CPU in thousandths of a core, as Kubernetes writes it (`"11"`, `"10500m"`).
#[must_use]
pub fn format_cpu(milli: i128) -> String {
    if milli % 1000 == 0 {
        (milli / 1000).to_string()
    } else {
        format!("{milli}m")
    }
}

/// Memory in thousandths of a byte, as Kubernetes writes it (`"44Gi"`, `"3948464Ki"`).
#[must_use]
pub fn format_memory(milli: i128) -> String {
    let bytes = milli / 1000;
    for (suffix, unit) in [("Gi", 1_i128 << 30), ("Mi", 1 << 20), ("Ki", 1 << 10)] {
        if bytes != 0 && bytes % unit == 0 {
            return format!("{}{suffix}", bytes / unit);
        }
    }
    bytes.to_string()
}

/// CPU and memory, in thousandths.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Amount {
    cpu: i128,
    memory: i128,
}

impl Amount {
    fn of(resources: &Value) -> Self {
        let read = |name: &str| resources[name].as_str().and_then(parse_milli).unwrap_or(0);
        Self {
            cpu: read("cpu"),
            memory: read("memory"),
        }
    }

    fn add(&mut self, other: Self) {
        self.cpu = self.cpu.saturating_add(other.cpu);
        self.memory = self.memory.saturating_add(other.memory);
    }

    fn less(self, other: Self) -> Self {
        Self {
            cpu: (self.cpu - other.cpu).max(0),
            memory: (self.memory - other.memory).max(0),
        }
    }

    fn texts(self) -> BTreeMap<String, String> {
        BTreeMap::from([
            ("cpu".to_owned(), format_cpu(self.cpu)),
            ("memory".to_owned(), format_memory(self.memory)),
        ])
    }
}

/// The properties of a cluster with these nodes and pods (list items as served).
#[must_use]
pub fn summarize(nodes: &[Value], pods: &[Value]) -> Measured {
    let mut capacity = Amount::default();
    let mut allocatable = Amount::default();
    for node in nodes {
        capacity.add(Amount::of(&node["status"]["capacity"]));
        allocatable.add(Amount::of(&node["status"]["allocatable"]));
    }
    let mut requested = Amount::default();
    for pod in pods {
        let bound = pod["spec"]["nodeName"]
            .as_str()
            .is_some_and(|n| !n.is_empty());
        let finished = matches!(
            pod["status"]["phase"].as_str(),
            Some("Succeeded" | "Failed")
        );
        if !bound || finished {
            continue;
        }
        for container in pod["spec"]["containers"].as_array().into_iter().flatten() {
            requested.add(Amount::of(&container["resources"]["requests"]));
        }
    }
    Measured {
        properties: BTreeMap::from([(
            "kubernetes-fleet.io/node-count".to_owned(),
            nodes.len().to_string(),
        )]),
        usage: BTreeMap::from([
            ("capacity".to_owned(), capacity.texts()),
            ("allocatable".to_owned(), allocatable.texts()),
            ("available".to_owned(), allocatable.less(requested).texts()),
        ]),
    }
}

/// Every item of a collection, page by page, up to [`LISTED_OBJECTS_MAX`].
async fn list_all(calls: &Calls, path: &str) -> Result<Vec<Value>, CallError> {
    let mut items = Vec::new();
    let mut token: Option<String> = None;
    loop {
        let page = calls
            .list_page(path, LIST_PAGE_LIMIT, token.as_deref())
            .await?;
        items.extend(page["items"].as_array().into_iter().flatten().cloned());
        token = page["metadata"]["continue"]
            .as_str()
            .filter(|t| !t.is_empty())
            .map(str::to_owned);
        if token.is_none() || items.len() >= LISTED_OBJECTS_MAX {
            return Ok(items);
        }
    }
}

/// Measures the cluster now.
///
/// # Errors
/// When nodes or pods cannot be listed.
pub async fn measure(calls: &Calls) -> Result<Measured, CallError> {
    let nodes = list_all(calls, "/api/v1/nodes").await?;
    let pods = list_all(calls, "/api/v1/pods").await?;
    Ok(summarize(&nodes, &pods))
}

/// Measures every [`REFRESH_EVERY`] into `live`, printing failures under `label`; ends when the
/// runtime does.
pub async fn refresh(calls: Calls, live: LiveProperties, label: String) {
    loop {
        tokio::time::sleep(REFRESH_EVERY).await;
        match measure(&calls).await {
            Ok(measured) => live.set(measured),
            Err(error) => println!("{label} measuring the cluster failed: {error}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantities_parse_in_thousandths() {
        assert_eq!(parse_milli("250m"), Some(250));
        assert_eq!(parse_milli("2"), Some(2_000));
        assert_eq!(parse_milli("1.5"), Some(1_500));
        assert_eq!(parse_milli("1Ki"), Some(1_024_000));
        assert_eq!(parse_milli("3948464Ki"), Some(3_948_464 * 1_024_000));
        assert_eq!(parse_milli("1e3"), Some(1_000_000));
        assert_eq!(parse_milli("128974848"), Some(128_974_848_000));
        assert_eq!(parse_milli("100M"), Some(100_000_000_000));
        assert_eq!(parse_milli("x"), None);
        assert_eq!(format_cpu(10_500), "10500m");
        assert_eq!(format_cpu(11_000), "11");
        assert_eq!(format_memory(44 * (1 << 30) * 1000), "44Gi");
        assert_eq!(format_memory(1_000), "1");
    }
}
