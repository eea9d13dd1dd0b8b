// A partitioned placement's rollout (Rancher Fleet's Bundle-shaped status beside KubeFleet's):
// the whole summary, why it is paused, and one row per partition with its budget.

import { h, tag } from "./dom.js";

/** A card for one partitioned placement. */
export function partitionsOf(placement) {
  const status = placement.status || {};
  const display = status.display || {};
  const meta = placement.metadata || {};
  const name = meta.namespace ? `${meta.namespace}/${meta.name}` : meta.name;
  return h(
    "article",
    { class: "card", "data-partitioned": name },
    h(
      "header",
      {},
      h("h3", {}, name),
      h("span", { class: "muted" }, `ready ${display.readyClusters || "?"}`),
      display.state ? tag(display.state, "wait") : tag("Ready", "ok"),
    ),
    display.message ? h("p", { class: "why wait-text" }, display.message) : null,
    h(
      "p",
      { class: "muted small" },
      `maxUnavailable ${status.maxUnavailable ?? "?"} · unavailable partitions ` +
        `${status.unavailablePartitions ?? 0} of at most ${status.maxUnavailablePartitions ?? "?"}`,
    ),
    table(status.partitions || []),
  );
}

function table(partitions) {
  const titles = ["partition", "clusters", "ready", "unavailable", "maxUnavailable", "not ready"];
  return h(
    "table",
    { class: "compact" },
    h("thead", {}, h("tr", {}, titles.map((t) => h("th", {}, t)))),
    h("tbody", {}, partitions.map(row)),
  );
}

function row(partition) {
  const summary = partition.summary || {};
  const over = (partition.unavailable || 0) > (partition.maxUnavailable || 0);
  const notReady = (summary.nonReadyResources || []).map((r) => `${r.name} ${r.bundleState}`);
  return h(
    "tr",
    {},
    h("td", { class: "name" }, partition.name),
    h("td", { class: "number" }, partition.count),
    h("td", { class: "number" }, `${summary.ready ?? 0}/${summary.desiredReady ?? 0}`),
    h("td", { class: `number ${over ? "bad-text" : ""}` }, partition.unavailable ?? 0),
    h("td", { class: "number" }, partition.maxUnavailable ?? ""),
    h("td", { class: "small" }, notReady.join(", ")),
  );
}
