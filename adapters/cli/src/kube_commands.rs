//! CLI verbs that act through the hub's Kubernetes API: `flotilla patch` (merge, JSON and
//! strategic merge patches, optionally of the `status` subresource) and `flotilla delete KIND
//! NAME` (which, like `kubectl delete`, accepts deleting an object the hub derives).

use anyhow::{Context, bail};
use serde_json::Value;

use flotilla_adapters::client::Client;

/// Where one object lives in the Kubernetes API, and how kubectl names it.
struct Located {
    /// `/apis/{group}/{version}/[namespaces/{ns}/]{plural}/{name}`.
    path: String,
    /// `plural.group/name`… in kubectl's words: `kind.group/name`.
    label: String,
}

async fn locate(
    client: &Client,
    kind: &str,
    name: &str,
    namespace: Option<&str>,
) -> anyhow::Result<Located> {
    let info = client
        .get_json("/v1/kinds", &[("kind", kind.to_owned())])
        .await?;
    let text = |field: &str| info[field].as_str().map(str::to_owned);
    let (Some(kind), Some(group), Some(plural), Some(version)) =
        (text("kind"), text("group"), text("plural"), text("version"))
    else {
        bail!("the hub does not serve {kind:?} over its Kubernetes API");
    };
    let base = if group.is_empty() {
        format!("/api/{version}")
    } else {
        format!("/apis/{group}/{version}")
    };
    let scope = match (info["namespaced"].as_bool(), namespace) {
        (Some(true), namespace) => format!("/namespaces/{}", namespace.unwrap_or("default")),
        _ => String::new(),
    };
    let label = flotilla_adapters::output::object_name(&kind, &group, name);
    Ok(Located {
        path: format!("{base}{scope}/{plural}/{name}"),
        label,
    })
}

/// The content type of a `--type` (`merge`, `json`, `strategic`).
fn content_type(patch_type: &str) -> anyhow::Result<&'static str> {
    match patch_type {
        "merge" => Ok("application/merge-patch+json"),
        "json" => Ok("application/json-patch+json"),
        "strategic" => Ok("application/strategic-merge-patch+json"),
        other => bail!("--type must be merge, json or strategic, not {other:?}"),
    }
}

/// `flotilla patch KIND NAME --type T -p PATCH [--subresource status]`.
///
/// # Errors
/// A patch that is not JSON, an unknown kind, an unreachable hub, or the hub's refusal.
pub async fn patch(
    client: &Client,
    kind: &str,
    name: &str,
    namespace: Option<&str>,
    patch_type: &str,
    patch: &str,
    subresource: Option<&str>,
) -> anyhow::Result<()> {
    let content_type = content_type(patch_type)?;
    serde_json::from_str::<Value>(patch).context("the patch is not JSON")?;
    let located = locate(client, kind, name, namespace).await?;
    let path = match subresource {
        Some(sub) => format!("{}/{sub}", located.path),
        None => located.path,
    };
    client
        .kube(
            reqwest::Method::PATCH,
            &path,
            Some((content_type, patch.to_owned())),
        )
        .await?;
    println!("{} patched", located.label);
    Ok(())
}

/// `flotilla delete KIND NAME`.
///
/// # Errors
/// An unknown kind, an unreachable hub, or the hub's refusal (e.g. not found).
pub async fn delete(
    client: &Client,
    kind: &str,
    name: &str,
    namespace: Option<&str>,
) -> anyhow::Result<()> {
    let located = locate(client, kind, name, namespace).await?;
    client
        .kube(reqwest::Method::DELETE, &located.path, None)
        .await?;
    println!("{} deleted", located.label);
    Ok(())
}
