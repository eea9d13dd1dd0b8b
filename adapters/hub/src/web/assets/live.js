// Following the hub: `GET /v1/stream` sends a `folded` event with the folded sequence after
// each fold. It is read with fetch rather than EventSource, because EventSource cannot send
// the `Authorization` header a hub with tokens wants. A dropped stream is reopened after a
// pause that grows to RETRY_MAX_MS.

import { headers } from "./api.js";

const RETRY_MIN_MS = 500;
const RETRY_MAX_MS = 10000;

/** Calls `onSeq(seq)` for every fold and `onState(text)` when the connection changes; forever. */
export async function follow(onSeq, onState) {
  let pause = RETRY_MIN_MS;
  for (;;) {
    try {
      const response = await fetch("/v1/stream", { headers: headers() });
      if (!response.ok || !response.body) throw new Error(`stream: ${response.status}`);
      onState("following the hub");
      pause = RETRY_MIN_MS;
      await read(response.body, onSeq);
      onState("disconnected");
    } catch (error) {
      onState(`disconnected (${error.message})`);
    }
    await new Promise((resolve) => setTimeout(resolve, pause));
    pause = Math.min(pause * 2, RETRY_MAX_MS);
  }
}

/** Reads server-sent events until the stream ends, passing on each `data:` line's number. */
async function read(body, onSeq) {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += value;
    let end;
    // Events are separated by a blank line; a partial event stays in the buffer.
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const data = block.split("\n").find((line) => line.startsWith("data:"));
      const seq = data ? Number(data.slice(5).trim()) : NaN;
      if (Number.isFinite(seq)) onSeq(seq);
    }
  }
}
