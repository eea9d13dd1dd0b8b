// The placements view: each ClusterResourcePlacement and ResourcePlacement with its
// conditions, its status per cluster, and why its rollout waits (`/v1/explain`'s sentences).
// A partitioned placement's partitions are drawn by partitions.js.

import { badges, empty, fill, h, objectName, tag } from "./dom.js";
import { partitionsOf } from "./partitions.js";

/** Renders placements into `#placements` and the partitioned ones into `#partitioned`. */
export function renderPlacements(placements, explains) {
  if (placements.length === 0) {
    fill("placements", empty("No placements."));
  } else {
    fill("placements", placements.map((p, i) => card(p, explains[i] || {})));
  }
  const partitioned = placements.filter((p) => (p.status || {}).partitions);
  if (partitioned.length === 0) {
    fill("partitioned", empty("No partitioned rollouts."));
  } else {
    fill("partitioned", partitioned.map(partitionsOf));
  }
}

function card(placement, explanation) {
  const spec = placement.spec || {};
  const status = placement.status || {};
  const strategy = (spec.strategy || {}).type || "RollingUpdate";
  const policy = (spec.policy || {}).placementType || "PickAll";
  return h(
    "article",
    { class: "card", "data-placement": objectName(placement) },
    h(
      "header",
      {},
      h("h3", {}, objectName(placement)),
      h("span", { class: "muted" }, `${placement.kind} · ${policy} · ${strategy}`),
      status.observedResourceIndex !== undefined
        ? h("span", { class: "muted" }, ` · resources #${status.observedResourceIndex}`)
        : null,
    ),
    badges(status.conditions),
    waits(explanation),
    perCluster(status.placementStatuses || [], explanation.clusters || []),
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
  const where = new Map(notDone.map((line) => [line.cluster, line.text]));
  return h(
    "table",
    { class: "compact" },
    h("thead", {}, h("tr", {}, h("th", {}, "cluster"), h("th", {}, "conditions"), h("th", {}, "where it is"))),
    h(
      "tbody",
      {},
      statuses.map((s) =>
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
