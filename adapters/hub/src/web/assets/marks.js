// Marks on the time slider's track (`GET /v1/marks`): runs started, succeeded or failed and
// approvals asked and given, each at its sequence; a click shows the page there. The hub
// answers at most a few hundred, so the track stays cheap whatever the log's length.

import * as api from "./api.js";
import { h, utc } from "./dom.js";

let marks = [];
let jump = () => {};

/** Reads the marks and draws them; `goTo(seq)` is what a click on one does. */
export async function loadMarks(goTo) {
  jump = goTo;
  try {
    marks = (await api.getJson("/v1/marks")).marks || [];
  } catch {
    marks = [];
  }
  placeMarks();
}

/** Draws the marks over the slider's range (its `max` is the hub's head). */
export function placeMarks() {
  const track = document.getElementById("marks");
  const slider = document.getElementById("slider");
  if (!track || !slider) return;
  const max = Math.max(2, Number(slider.max));
  track.replaceChildren(
    ...marks.map((mark) =>
      h("button", {
        type: "button",
        class: `mark ${mark.kind}`,
        "data-mark-seq": String(mark.seq),
        title: `${mark.label} · seq ${mark.seq} · ${utc(mark.time)}`,
        "aria-label": `${mark.label} at seq ${mark.seq}`,
        style: `left: ${(100 * (Math.min(mark.seq, max) - 1)) / (max - 1)}%`,
        onclick: () => jump(mark.seq),
      }),
    ),
  );
}
