// The placements view: each ClusterResourcePlacement and ResourcePlacement as the summary has
// it (scheduled condition, bindings by state, and for the placement of a run in flight why it
// waits); its conditions, status per cluster and full explanation (`/v1/explain`) once its
// details are loaded, on a click of `details`.
// A partitioned placement's partitions are drawn by partitions.js.

import { badge, badges, empty, fill, h, tag } from "./dom.js";
import { partitionsOf } from "./partitions.js";

/** Rows of a placement's per-cluster table; the fleet table pages through every cluster. */
const CLUSTER_ROWS_MAX = 100;

/** `namespace/name`, or the name of a cluster-scoped placement. */
export function placementName(p) {
  return p.namespace ? `${p.namespace}/${p.name}` : p.name;
}

/**
 * Renders the summary's placements into `#placements` (with the summary's waits of its runs in
 * flight) and the partitioned ones among the loaded details into `#partitioned`. `details` maps a placement's name to `{object,
 * explanation}`; `onDetails(placement)` loads one (null in the past: only what is loaded).
 */
export function renderPlacements(summary, details, onDetails) {
  const placements = summary.placements || [];
  const waitsOf = new Map();
  for (const run of summary.runs || []) {
    const name = run.namespace ? `${run.namespace}/${run.placement}` : run.placement;
    if (run.waits && !waitsOf.has(name)) waitsOf.set(name, { waits: run.waits });
  }
  if (placements.length === 0) {
    fill("placements", empty("No placements."));
  } else {
    fill("placements", placements.map((p) => card(p, details.get(placementName(p)), waitsOf.get(placementName(p)), onDetails)));
  }
  const partitioned = [...details.values()]
    .map((d) => d.object)
    .filter((o) => o && (o.status || {}).partitions);
  if (partitioned.length === 0) {
    fill("partitioned", empty("No partitioned rollouts (among the placements shown in detail)."));
  } else {
    fill("partitioned", partitioned.map(partitionsOf));
  }
}

function card(placement, detail, summaryWaits, onDetails) {
  const counts = Object.entries(placement.bindings || {}).map(([state, n]) => `${n} ${state.toLowerCase()}`);
  const object = (detail || {}).object || {};
  const spec = object.spec || {};
  const status = object.status || {};
  return h(
    "article",
    { class: "card", "data-placement": placementName(placement) },
    h(
      "header",
      {},
      h("h3", {}, placementName(placement)),
      h("span", { class: "muted" }, `${placement.kind} · bindings: ${counts.join(", ") || "none"}`),
      spec.policy ? h("span", { class: "muted" }, ` · ${spec.policy.placementType || "PickAll"}`) : null,
      status.observedResourceIndex !== undefined
        ? h("span", { class: "muted" }, ` · resources #${status.observedResourceIndex}`)
        : null,
      detail || !onDetails
        ? null
        : h("button", { type: "button", "data-details": placementName(placement), onclick: () => onDetails(placement) }, "details"),
    ),
    detail ? badges(status.conditions) : badge(placement.scheduled),
    placement.selectionError ? h("p", { class: "error-text" }, placement.selectionError) : null,
    detail ? waits(detail.explanation || {}) : summaryWaits ? waits(summaryWaits) : null,
    detail ? perCluster(status.placementStatuses || [], (detail.explanation || {}).clusters || []) : null,
  );
}

/** Why the rollout waits, in the explanation's words. */
function waits(explanation) {
  if (explanation.error) {
    return h("p", { class: "error-text" }, `explain: ${explanation.error}`);
  }
  const list = explanation.waits || [];
  if (list.length === 0) {
    return h("p", { class: "why done" }, tag("not waiting", "ok"));
  }
  return h(
    "div",
    { class: "why" },
    h("strong", {}, "Why it waits"),
    h("ul", {}, list.map((wait) => h("li", { class: "wait-text" }, wait.text))),
  );
}

/** Each cluster's conditions and, when it is not done, where it is (the explanation's words). */
function perCluster(statuses, notDone) {
  if (statuses.length === 0) return empty("No clusters placed yet.");
  const shown = statuses.slice(0, CLUSTER_ROWS_MAX);
  const where = new Map(notDone.map((line) => [line.cluster, line.text]));
  return h(
    "table",
    { class: "compact" },
    h("thead", {}, h("tr", {}, h("th", {}, "cluster"), h("th", {}, "conditions"), h("th", {}, "where it is"))),
    h(
      "tbody",
      {},
      shown.map((s) =>
        h(
          "tr",
          {},
          h("td", { class: "name" }, s.clusterName || "(unscheduled)"),
          h("td", {}, badges(s.conditions)),
          h("td", { class: "small" }, where.get(s.clusterName) || (s.clusterName ? "done" : "")),
        ),
      ),
    ),
  );
}
