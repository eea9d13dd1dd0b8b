//! KubeFleet's CRDs, vendored under `adapters/crds/kubefleet/` (commit and licence in its
//! README), embedded in the binary and parsed once, on first use.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use serde_json::Value;

/// Embeds one vendored CRD by file name.
macro_rules! crd {
    ($file:literal) => {
        ($file, include_str!(concat!("../../crds/kubefleet/", $file)))
    };
}

/// Every vendored CRD: `(file name, YAML)`.
pub const VENDORED: &[(&str, &str)] = &[
    crd!("cluster.kubernetes-fleet.io_memberclusters.yaml"),
    crd!("placement.kubernetes-fleet.io_approvalrequests.yaml"),
    crd!("placement.kubernetes-fleet.io_clusterapprovalrequests.yaml"),
    crd!("placement.kubernetes-fleet.io_clusterresourcebindings.yaml"),
    crd!("placement.kubernetes-fleet.io_clusterresourceenvelopes.yaml"),
    crd!("placement.kubernetes-fleet.io_clusterresourceoverrides.yaml"),
    crd!("placement.kubernetes-fleet.io_clusterresourceoverridesnapshots.yaml"),
    crd!("placement.kubernetes-fleet.io_clusterresourceplacementdisruptionbudgets.yaml"),
    crd!("placement.kubernetes-fleet.io_clusterresourceplacementevictions.yaml"),
    crd!("placement.kubernetes-fleet.io_clusterresourceplacements.yaml"),
    crd!("placement.kubernetes-fleet.io_clusterresourceplacementstatuses.yaml"),
    crd!("placement.kubernetes-fleet.io_clusterresourcesnapshots.yaml"),
    crd!("placement.kubernetes-fleet.io_clusterschedulingpolicysnapshots.yaml"),
    crd!("placement.kubernetes-fleet.io_clusterstagedupdateruns.yaml"),
    crd!("placement.kubernetes-fleet.io_clusterstagedupdatestrategies.yaml"),
    crd!("placement.kubernetes-fleet.io_resourcebindings.yaml"),
    crd!("placement.kubernetes-fleet.io_resourceenvelopes.yaml"),
    crd!("placement.kubernetes-fleet.io_resourceoverrides.yaml"),
    crd!("placement.kubernetes-fleet.io_resourceoverridesnapshots.yaml"),
    crd!("placement.kubernetes-fleet.io_resourceplacements.yaml"),
    crd!("placement.kubernetes-fleet.io_resourcesnapshots.yaml"),
    crd!("placement.kubernetes-fleet.io_schedulingpolicysnapshots.yaml"),
    crd!("placement.kubernetes-fleet.io_stagedupdateruns.yaml"),
    crd!("placement.kubernetes-fleet.io_stagedupdatestrategies.yaml"),
    crd!("placement.kubernetes-fleet.io_works.yaml"),
];

/// The versions KubeFleet publishes for a kind, in the CRD's order, by version name.
#[derive(Debug)]
pub struct Crd {
    /// `version → openAPIV3Schema`.
    pub schemas: Vec<(String, Value)>,
}

/// `(group, kind) → CRD`.
type Registry = BTreeMap<(String, String), Crd>;

fn registry() -> &'static Registry {
    static REGISTRY: OnceLock<Registry> = OnceLock::new();
    REGISTRY.get_or_init(|| {
        VENDORED
            .iter()
            .map(|(file, text)| {
                let crd: Value = serde_saphyr::from_str(text)
                    .unwrap_or_else(|e| panic!("vendored CRD {file} is not YAML: {e}"));
                parse(&crd).unwrap_or_else(|| panic!("vendored CRD {file} is not a CRD"))
            })
            .collect()
    })
}

fn parse(crd: &Value) -> Option<((String, String), Crd)> {
    let spec = crd.get("spec")?;
    let group = spec.get("group")?.as_str()?.to_owned();
    let kind = spec.get("names")?.get("kind")?.as_str()?.to_owned();
    let schemas = spec
        .get("versions")?
        .as_array()?
        .iter()
        .filter_map(|version| {
            let name = version.get("name")?.as_str()?.to_owned();
            let mut schema = version.get("schema")?.get("openAPIV3Schema")?.clone();
            super::extensions::extend(&group, &kind, &mut schema);
            Some((name, schema))
        })
        .collect();
    Some(((group, kind), Crd { schemas }))
}

/// The `openAPIV3Schema` for `version` of a kind, and the version it was published for.
///
/// flotilla serves every placement kind in `v1beta1`, `v1` and `v1alpha1`, while KubeFleet
/// publishes some kinds in fewer versions (`ClusterResourcePlacement` has no `v1alpha1` any
/// more). A version KubeFleet does not publish is held to the kind's `v1beta1` schema, else its
/// `v1`, else its first: the same fields, and the strictest reading that exists.
#[must_use]
pub fn schema(group: &str, kind: &str, version: &str) -> Option<(&'static str, &'static Value)> {
    let crd = registry().get(&(group.to_owned(), kind.to_owned()))?;
    let exact = crd.schemas.iter().find(|(v, _)| v == version);
    let fallback = || {
        ["v1beta1", "v1"]
            .iter()
            .find_map(|wanted| crd.schemas.iter().find(|(v, _)| v == wanted))
            .or_else(|| crd.schemas.first())
    };
    exact
        .or_else(fallback)
        .map(|(version, schema)| (version.as_str(), schema))
}

/// Whether the vendored CRDs define the kind (in any version).
#[must_use]
pub fn defines(group: &str, kind: &str) -> bool {
    registry().contains_key(&(group.to_owned(), kind.to_owned()))
}

/// Every vendored `(group, kind, version)`, for tests that hold served objects to them.
pub fn all() -> impl Iterator<Item = (&'static str, &'static str, &'static str)> {
    registry().iter().flat_map(|((group, kind), crd)| {
        crd.schemas
            .iter()
            .map(move |(version, _)| (group.as_str(), kind.as_str(), version.as_str()))
    })
}
