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

/** A line without the sequence it starts with (the view shows it apart). */
function stripSeq(line, seq) {
  const trimmed = line.trimStart();
  return trimmed.startsWith(String(seq)) ? trimmed.slice(String(seq).length).trimStart() : trimmed;
}
