// The fleet view: one row per member cluster with its health, labels, taints, properties and
// how many placements have bound it.

import { badges, chips, condition, empty, fill, h, clock, tag } from "./dom.js";

/** Renders the member clusters into `#fleet`. */
export function renderFleet(members, bindings) {
  if (members.length === 0) {
    fill("fleet", empty("No member clusters."));
    return;
  }
  const rows = members.map((member) => row(member, bindings));
  fill(
    "fleet",
    h(
      "table",
      {},
      h(
        "thead",
        {},
        h("tr", {}, ["cluster", "health", "conditions", "labels", "taints", "properties", "bindings"]
          .map((title) => h("th", {}, title))),
      ),
      h("tbody", {}, rows),
    ),
  );
}

function row(member, bindings) {
  const name = member.metadata.name;
  const status = member.status || {};
  const bound = bindings.filter((b) => (b.spec || {}).targetCluster === name).length;
  return h(
    "tr",
    { "data-cluster": name },
    h("td", { class: "name" }, name, leaving(member)),
    h("td", {}, health(status)),
    h("td", {}, badges(status.conditions)),
    h("td", {}, chips(member.metadata.labels)),
    h("td", {}, taints((member.spec || {}).taints)),
    h("td", {}, chips(properties(status.properties))),
    h("td", { class: "number" }, String(bound)),
  );
}

/** Healthy, unhealthy or unknown, from the `Healthy` condition; the last heartbeat beside it. */
function health(status) {
  const healthy = condition(status.conditions, "Healthy");
  const agent = (status.agentStatus || [])[0] || {};
  const heartbeat = agent.lastReceivedHeartbeat
    ? h("div", { class: "muted small" }, `heartbeat ${clock(agent.lastReceivedHeartbeat)}`)
    : null;
  if (!healthy) return [tag("no heartbeat yet", "unknown"), heartbeat];
  const tone = healthy.status === "True" ? "ok" : healthy.status === "False" ? "bad" : "unknown";
  const text = healthy.status === "True" ? "healthy" : "unhealthy";
  const label = tag(text, tone);
  label.title = [healthy.reason, healthy.message].filter(Boolean).join(": ");
  return [label, heartbeat];
}

function leaving(member) {
  return member.metadata.deletionTimestamp ? tag("leaving", "wait") : null;
}

function taints(list) {
  if (!list || list.length === 0) return h("span", { class: "muted" }, "none");
  return h(
    "span",
    { class: "chips" },
    list.map((t) => h("span", { class: "chip taint" }, `${t.key}${t.value ? `=${t.value}` : ""}:${t.effect}`)),
  );
}

/** KubeFleet's `{name: {value, observationTime}}` properties as `name → value`. */
function properties(map) {
  const out = {};
  for (const [name, property] of Object.entries(map || {})) {
    out[name] = property && typeof property === "object" ? property.value : property;
  }
  return out;
}
