//! What the walk-through tests share: files a user writes, the seeds' YAML, and reading
//! objects and their conditions back with the machine's `kubectl`.

use std::path::Path;

use serde_json::Value;

use crate::kubectl::Kubectl;

/// Writes `text` to `dir/name`, as a user saves a manifest; the path, for `-f`.
///
/// # Errors
/// When the file cannot be written.
pub fn write(dir: &Path, name: &str, text: &str) -> Result<String, String> {
    let path = dir.join(name);
    std::fs::write(&path, text).map_err(|e| e.to_string())?;
    Ok(path.display().to_string())
}

/// The path of a seed's YAML example (`fixtures/seed-yaml/NAME`).
#[must_use]
pub fn seed_yaml(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/seed-yaml")
        .join(name)
        .display()
        .to_string()
}

/// `kubectl ARGS -o json`, parsed.
///
/// # Errors
/// When kubectl fails or prints no JSON.
pub fn kube_json(kubectl: &Kubectl, args: &[&str]) -> Result<Value, String> {
    let mut all = args.to_vec();
    all.extend(["-o", "json"]);
    let text = kubectl.ok(&all)?;
    serde_json::from_str(&text).map_err(|e| format!("{e}: {text}"))
}

/// The condition of type `kind` among `object`'s `status.conditions`.
#[must_use]
pub fn condition<'a>(object: &'a Value, kind: &str) -> Option<&'a Value> {
    (object["status"]["conditions"].as_array())?
        .iter()
        .find(|c| c["type"] == kind)
}

/// Whether `object`'s condition `kind` is `True`.
#[must_use]
pub fn is_true(object: &Value, kind: &str) -> bool {
    condition(object, kind).is_some_and(|c| c["status"] == "True")
}

/// Whether the ClusterResourcePlacement `name` is Available.
///
/// # Errors
/// When kubectl cannot read it.
pub fn crp_available(kubectl: &Kubectl, name: &str) -> Result<bool, String> {
    let crp = kube_json(kubectl, &["get", "crp", name])?;
    Ok(is_true(&crp, "ClusterResourcePlacementAvailable"))
}
