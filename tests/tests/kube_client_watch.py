"""The official Python `kubernetes` client's watch against a flotilla hub, as informers use it:
list, then watch from the list's resourceVersion; and, given a resourceVersion older than the
hub's watch window, the client's 410 handling and a relist.

And paging: a list in pages of two, following `continue` as the client's callers do.

Usage: kube_client_watch.py KUBECONFIG changes|expired|pages [RESOURCE_VERSION]. Prints one JSON
line.
"""

import json
import sys

from kubernetes import client, config, watch

GROUP, VERSION, PLURAL = "placement.kubernetes-fleet.io", "v1", "clusterresourceplacements"


def placement(name):
    return {
        "apiVersion": f"{GROUP}/{VERSION}",
        "kind": "ClusterResourcePlacement",
        "metadata": {"name": name},
        "spec": {
            "resourceSelectors": [{"group": "", "version": "v1", "kind": "Namespace", "name": "app"}],
            "policy": {"placementType": "PickAll"},
        },
    }


def events_from(api, resource_version):
    """Every event of a 2-second watch from `resource_version`: [type, name]."""
    stream = watch.Watch().stream(
        api.list_cluster_custom_object, GROUP, VERSION, PLURAL,
        resource_version=resource_version, timeout_seconds=2,
    )
    return [[event["type"], event["object"]["metadata"]["name"]] for event in stream]


def changes(api):
    """Lists, changes (a delete and a create), then watches from the list's version."""
    for name in ("crp-a", "crp-b"):
        api.create_cluster_custom_object(GROUP, VERSION, PLURAL, placement(name))
    listed = api.list_cluster_custom_object(GROUP, VERSION, PLURAL)
    version = listed["metadata"]["resourceVersion"]
    api.delete_cluster_custom_object(GROUP, VERSION, PLURAL, "crp-a")
    api.create_cluster_custom_object(GROUP, VERSION, PLURAL, placement("crp-c"))
    return {"resourceVersion": version, "watched": events_from(api, version)}


def expired(api, version):
    """Watches from a version the hub no longer holds, then relists and watches on."""
    try:
        watched = events_from(api, version)
        gone = None
    except client.ApiException as error:
        watched, gone = None, [error.status, str(error.reason)]
    listed = api.list_cluster_custom_object(GROUP, VERSION, PLURAL)
    names = sorted(item["metadata"]["name"] for item in listed["items"])
    fresh = listed["metadata"]["resourceVersion"]
    api.create_cluster_custom_object(GROUP, VERSION, PLURAL, placement("crp-d"))
    return {"watched": watched, "gone": gone, "relisted": names, "after": events_from(api, fresh)}


def pages(api):
    """Every placement, two per page; each page's names and remainingItemCount."""
    seen, token = [], None
    for _ in range(20):
        page = api.list_cluster_custom_object(GROUP, VERSION, PLURAL, limit=2, _continue=token)
        names = [item["metadata"]["name"] for item in page["items"]]
        seen.append([names, page["metadata"].get("remainingItemCount")])
        token = page["metadata"].get("continue")
        if not token:
            break
    return {"pages": seen}


def main(kubeconfig, phase, version=None):
    config.load_kube_config(config_file=kubeconfig)
    api = client.CustomObjectsApi()
    if phase == "changes":
        found = changes(api)
    elif phase == "expired":
        found = expired(api, version)
    else:
        found = pages(api)
    print(json.dumps(found))


if __name__ == "__main__":
    main(*sys.argv[1:])
