#!/usr/bin/env python3
"""An external system publishing to flotilla over NATS, with nothing but nats-py.

It publishes a member cluster's heartbeat straight onto flotilla's input stream (a JetStream
publish of the JSON form of `flotilla schema` on `flotilla.in.heartbeat.<cluster>`, with the
event id as `Nats-Msg-Id` so a retry is stored once), then a malformed event, and watches the
rejection subject `flotilla.rejected.heartbeat.<cluster>` for what the hub says about it.

    python3 publish.py --nats nats://127.0.0.1:4222 --cluster member-1

Prints one JSON line per outcome: {"published": ...} with the stream sequence of each
event, and {"rejected": ...} with the hub's notice (code and reason) for the malformed one.
Exits 1 if no notice arrives within --wait seconds.
"""

import argparse
import asyncio
import json
import sys
import uuid

import nats


def heartbeat(cluster: str) -> dict:
    """A heartbeat in flotilla's JSON form (docs/events.md)."""
    return {
        "id": str(uuid.uuid4()),
        "schemaVersion": 3,
        "type": "heartbeat",
        "source": "example/python",
        "cluster": cluster,
        "properties": {"kubernetes-fleet.io/node-count": "4"},
        "resourceUsage": {
            "capacity": {"cpu": "16", "memory": "64Gi"},
            "allocatable": {"cpu": "15", "memory": "60Gi"},
            "available": {"cpu": "9", "memory": "31Gi"},
        },
    }


def cluster_token(name: str) -> str:
    """The subject token of a cluster name: bytes outside [A-Za-z0-9_-] as %XX (docs/events.md)."""
    out = []
    for byte in name.encode():
        char = chr(byte)
        out.append(char if char.isascii() and (char.isalnum() or char in "_-") else f"%{byte:02X}")
    return "".join(out) or "_"


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nats", default="nats://127.0.0.1:4222")
    parser.add_argument("--cluster", required=True)
    parser.add_argument("--wait", type=float, default=10.0)
    args = parser.parse_args()

    client = await nats.connect(args.nats)
    jetstream = client.jetstream()
    subject = f"flotilla.in.heartbeat.{cluster_token(args.cluster)}"
    notices: asyncio.Queue = asyncio.Queue()

    async def on_notice(message):
        await notices.put(json.loads(message.data))

    await client.subscribe(f"flotilla.rejected.heartbeat.{cluster_token(args.cluster)}", cb=on_notice)

    good = heartbeat(args.cluster)
    ack = await jetstream.publish(subject, json.dumps(good).encode(), headers={"Nats-Msg-Id": good["id"]})
    print(json.dumps({"published": {"id": good["id"], "seq": ack.seq}}), flush=True)

    # Malformed: properties must be a map of names to quantities. The stream stores the record
    # (it is open to any publisher); the hub records it as rejected and announces why.
    bad = heartbeat(args.cluster)
    bad["properties"] = "four nodes"
    ack = await jetstream.publish(subject, json.dumps(bad).encode(), headers={"Nats-Msg-Id": bad["id"]})
    print(json.dumps({"published": {"id": bad["id"], "seq": ack.seq}}), flush=True)

    try:
        while True:
            notice = await asyncio.wait_for(notices.get(), timeout=args.wait)
            if notice.get("seq") == ack.seq:
                print(json.dumps({"rejected": notice}), flush=True)
                break
    except asyncio.TimeoutError:
        print(json.dumps({"error": f"no rejection notice within {args.wait}s"}), flush=True)
        return 1
    finally:
        await client.close()
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
