//! How the simulated cluster's controllers would leave an object: the `status` a ready object
//! shows, so that `availability::judge` (KubeFleet's availability rules, the same as every applier
//! uses) decides availability; and the seeded draws behind the simulated delays and failures.

use serde_json::{Value, json};

/// A draw in `[0, 1)` from the seed and a text, the same on every run and restart.
#[must_use]
pub fn draw(seed: u64, text: &str) -> f64 {
    // FNV-1a over the text, then splitmix64's finaliser: enough spread for delays and rolls.
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325 ^ seed;
    for byte in text.bytes() {
        hash = (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3);
    }
    hash = (hash ^ (hash >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    hash = (hash ^ (hash >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    hash ^= hash >> 31;
    #[allow(clippy::cast_precision_loss)]
    let fraction = (hash >> 11) as f64 / (1_u64 << 53) as f64;
    fraction
}

/// A delay in `[0, max_ms]` drawn from the seed and a text.
#[must_use]
pub fn delay_ms(seed: u64, text: &str, max_ms: u64) -> u64 {
    #[allow(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        clippy::cast_precision_loss
    )]
    let delay = (draw(seed, text) * (max_ms as f64 + 1.0)) as u64;
    delay.min(max_ms)
}

/// Whether a Deployment runs an image containing `marker` (the bad-image rule).
#[must_use]
pub fn has_bad_image(manifest: &Value, marker: &str) -> bool {
    if marker.is_empty() || manifest["kind"] != "Deployment" {
        return false;
    }
    manifest["spec"]["template"]["spec"]["containers"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|container| container["image"].as_str())
        .any(|image| image.contains(marker))
}

/// The object as the simulated cluster shows it: the manifest with `metadata.generation` and,
/// once `ready`, the status its controller would report; before that, an empty status.
#[must_use]
pub fn observed(manifest: &Value, ready: bool, nodes: u32) -> Value {
    let mut object = manifest.clone();
    if !object["metadata"].is_object() {
        return object;
    }
    object["metadata"]["generation"] = json!(1);
    let replicas = manifest["spec"]["replicas"].as_i64().unwrap_or(1);
    let kind = manifest["kind"].as_str().unwrap_or_default();
    let status = match (kind, ready) {
        ("Service", _) if manifest["spec"]["type"] == "LoadBalancer" && ready => {
            json!({"loadBalancer": {"ingress": [{"ip": "192.0.2.10"}]}})
        }
        ("Service", true) if object["spec"]["clusterIP"].is_null() => {
            object["spec"]["clusterIP"] = json!("10.96.0.10");
            return object;
        }
        ("Deployment", true) => json!({"observedGeneration": 1, "replicas": replicas,
            "updatedReplicas": replicas, "readyReplicas": replicas, "availableReplicas": replicas}),
        ("DaemonSet", true) => json!({"observedGeneration": 1, "desiredNumberScheduled": nodes,
            "updatedNumberScheduled": nodes, "numberAvailable": nodes}),
        ("StatefulSet", true) => json!({"observedGeneration": 1, "readyReplicas": replicas,
            "currentReplicas": replicas, "currentRevision": "sim-1", "updateRevision": "sim-1"}),
        ("Job", true) => json!({"succeeded": 1}),
        _ => return object,
    };
    object["status"] = status;
    object
}

#[cfg(test)]
mod tests {
    use super::*;
    use flotilla_core::query::availability::{Availability, judge};

    fn deployment(image: &str) -> Value {
        json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "d", "namespace": "n"},
            "spec": {"replicas": 2, "template": {"spec": {"containers": [{"image": image}]}}}})
    }

    #[test]
    fn a_ready_deployment_is_available_and_a_fresh_one_is_not() {
        let manifest = deployment("nginx:1");
        assert_eq!(
            judge(&observed(&manifest, true, 3)),
            Availability::Available
        );
        assert_eq!(
            judge(&observed(&manifest, false, 3)),
            Availability::NotYetAvailable
        );
        assert!(has_bad_image(&deployment("nginx:bad"), ":bad"));
        assert!(!has_bad_image(&manifest, ":bad"));
    }

    #[test]
    fn draws_are_seeded_and_bounded() {
        assert!((draw(7, "a") - draw(7, "a")).abs() < f64::EPSILON);
        assert!((draw(7, "a") - draw(8, "a")).abs() > f64::EPSILON);
        assert!((0..100).all(|i| delay_ms(1, &i.to_string(), 200) <= 200));
        assert_eq!(delay_ms(1, "x", 0), 0);
    }
}
