"""Publishes raw records onto the flotilla input stream the way an external system would: a
plain JetStream publish with nats-py, no flotilla client, no headers.

Usage: python3 publish_raw.py <nats url> < records.json
where records.json is a JSON array of {"subject": ..., "payload_hex": ...}. Prints one line per
record: the stream sequence JetStream acknowledged it at.
"""

import asyncio
import json
import sys

import nats


async def main() -> None:
    url = sys.argv[1]
    records = json.load(sys.stdin)
    client = await nats.connect(url, connect_timeout=5)
    try:
        stream = client.jetstream(timeout=5)
        for record in records:
            ack = await stream.publish(record["subject"], bytes.fromhex(record["payload_hex"]))
            print(ack.seq, flush=True)
    finally:
        await client.close()


asyncio.run(main())
