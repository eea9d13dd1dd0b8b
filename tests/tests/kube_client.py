"""The official Python `kubernetes` client against a flotilla hub: create, list and watch a
ClusterResourcePlacement. Usage: kube_client.py KUBECONFIG. Prints one JSON line of findings."""

import json
import sys

from kubernetes import client, config, watch

GROUP, VERSION, PLURAL = "placement.kubernetes-fleet.io", "v1beta1", "clusterresourceplacements"


def main(kubeconfig):
    config.load_kube_config(config_file=kubeconfig)
    api = client.CustomObjectsApi()
    body = {
        "apiVersion": f"{GROUP}/{VERSION}",
        "kind": "ClusterResourcePlacement",
        "metadata": {"name": "from-python", "labels": {"made-by": "python"}},
        "spec": {
            "resourceSelectors": [{"group": "", "version": "v1", "kind": "Namespace", "name": "app"}],
            "policy": {"placementType": "PickAll"},
        },
    }
    created = api.create_cluster_custom_object(GROUP, VERSION, PLURAL, body)
    listed = api.list_cluster_custom_object(GROUP, VERSION, PLURAL, label_selector="made-by=python")
    names = [item["metadata"]["name"] for item in listed["items"]]
    events = []
    stream = watch.Watch().stream(
        api.list_cluster_custom_object, GROUP, VERSION, PLURAL, timeout_seconds=2
    )
    for event in stream:
        events.append([event["type"], event["object"]["metadata"]["name"]])
    try:
        api.create_cluster_custom_object(GROUP, VERSION, PLURAL, body)
        conflict = None
    except client.ApiException as error:
        conflict = [error.status, json.loads(error.body)["reason"]]
    print(json.dumps({
        "uid": created["metadata"]["uid"],
        "listed": names,
        "resourceVersion": listed["metadata"]["resourceVersion"],
        "watched": events,
        "again": conflict,
    }))


if __name__ == "__main__":
    main(sys.argv[1])
