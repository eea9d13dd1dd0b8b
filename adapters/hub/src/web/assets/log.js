// The event log view: the inputs up to the point shown, newest first, each with the decisions
// the hub made on it — the lines `flotilla events` prints.

import { clock, empty, fill, h } from "./dom.js";

/** Renders a `/v1/timeline` span into `#log`; `seq` is the point shown. */
export function renderLog(timeline, seq) {
  const entries = (timeline.entries || []).slice().reverse();
  if (entries.length === 0) {
    fill("log", empty(`No events up to seq ${seq}.`));
    return;
  }
  fill("log", h("ol", { class: "log" }, entries.map(entry)));
}

function entry(item) {
  return h(
    "li",
    { "data-seq": item.seq, class: `input ${item.input}${item.decisions.length ? "" : " quiet"}` },
    h(
      "div",
      { class: "event" },
      h("span", { class: "seq" }, `#${item.seq}`),
      h("span", { class: "muted small" }, `${clock(item.time)} · ${item.source}`),
      h("code", {}, stripSeq(item.line, item.seq)),
    ),
    item.decisions.length
      ? h("ul", { class: "decisions" }, item.decisions.map((d) => h("li", {}, h("code", {}, stripSeq(d.line, item.seq)))))
      : null,
  );
}

/**
 * An event's line without what the view shows apart: `#SEQ TIME SOURCE ` (events) or
 * `#SEQ -> ` (decisions).
 */
function stripSeq(line, seq) {
  const prefix = `#${seq} `;
  if (!line.startsWith(prefix)) return line;
  const rest = line.slice(prefix.length);
  if (rest.startsWith("-> ")) return rest.slice(3);
  return rest.replace(/^\S+ \S+ /, "");
}
