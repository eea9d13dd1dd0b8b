"""Publishes one record onto the flotilla input stream as an external system would (nats-py, a
plain JetStream publish, no flotilla client) and prints the rejection notice the writer
announces for it, if one comes.

Usage: python3 adversary_publish.py <nats url> <subject> <payload> <wait seconds>
Prints one JSON line: {"published": seq, "rejected": notice or null}.
"""

import asyncio
import json
import sys

import nats


async def main() -> None:
    url, subject, payload, wait = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
    client = await nats.connect(url, connect_timeout=5)
    try:
        notices = await client.subscribe("flotilla.rejected.>")
        ack = await client.jetstream(timeout=5).publish(subject, payload.encode())
        rejected = None
        deadline = asyncio.get_running_loop().time() + wait
        while rejected is None:
            left = deadline - asyncio.get_running_loop().time()
            if left <= 0:
                break
            try:
                message = await notices.next_msg(timeout=left)
            except (asyncio.TimeoutError, nats.errors.TimeoutError):
                break
            notice = json.loads(message.data)
            if notice.get("seq") == ack.seq:
                rejected = notice
        print(json.dumps({"published": ack.seq, "rejected": rejected}), flush=True)
    finally:
        await client.close()


asyncio.run(main())
