// The fleet view: one page of member clusters (`GET /v1/members`) with their health, labels,
// taints and properties; the filter (health, text in the name) and the page are the
// controller's, so a refresh re-reads only the page shown.

import { badges, chips, condition, empty, fill, h, clock, tag } from "./dom.js";

/** Health values the filter offers ("" is any). */
const HEALTHS = ["", "Healthy", "Unhealthy", "Unknown", "Leaving"];

/**
 * Renders one page (`{total, offset, items}`) into `#fleet`; `filter` is `{health, q, offset,
 * limit}` and `onFilter(change)` asks the controller for another page or filter.
 */
export function renderFleet(page, filter, onFilter) {
  const items = page.items || [];
  const last = Math.min(page.total, filter.offset + items.length);
  const pager = h(
    "div",
    { class: "pager" },
    controls(filter, onFilter),
    h("span", { id: "fleet-range", class: "muted" },
      page.total ? `${filter.offset + 1}–${last} of ${page.total}` : "none match"),
    h("button", { type: "button", disabled: filter.offset === 0,
      onclick: () => onFilter({ offset: Math.max(0, filter.offset - filter.limit) }) }, "previous"),
    h("button", { type: "button", disabled: last >= page.total,
      onclick: () => onFilter({ offset: filter.offset + filter.limit }) }, "next"),
  );
  if (items.length === 0) {
    fill("fleet", pager, empty(page.total === 0 && !filter.health && !filter.q ? "No member clusters." : "No member clusters match."));
    return;
  }
  const titles = ["cluster", "health", "conditions", "labels", "taints", "properties"];
  fill(
    "fleet",
    pager,
    h(
      "table",
      {},
      h("thead", {}, h("tr", {}, titles.map((title) => h("th", {}, title)))),
      h("tbody", {}, items.filter((item) => item.object).map((item) => row(item.object))),
    ),
  );
}

/** The health select and the name filter, applied when changed. */
function controls(filter, onFilter) {
  const select = h(
    "select",
    { id: "fleet-health", "aria-label": "health", onchange: (e) => onFilter({ health: e.target.value, offset: 0 }) },
    HEALTHS.map((health) => h("option", { value: health, selected: health === filter.health }, health || "any health")),
  );
  const text = h("input", {
    id: "fleet-q", type: "search", placeholder: "name contains", value: filter.q,
    onchange: (e) => onFilter({ q: e.target.value.trim(), offset: 0 }),
  });
  return [select, text];
}

function row(member) {
  const name = member.metadata.name;
  const status = member.status || {};
  return h(
    "tr",
    { "data-cluster": name },
    h("td", { class: "name" }, name, leaving(member)),
    h("td", {}, health(status)),
    h("td", {}, badges(status.conditions)),
    h("td", {}, chips(member.metadata.labels)),
    h("td", {}, taints((member.spec || {}).taints)),
    h("td", {}, chips(properties(status.properties))),
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
