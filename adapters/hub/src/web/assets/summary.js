// The summary the page opens on (`GET /v1/summary`): member health counts, the runs not done
// with their progress and why they wait or failed, pending approvals, and recent failures.
// Its size follows the number of runs and approvals, not the number of clusters.

import { empty, fill, h, tag, utc } from "./dom.js";

const TONES = { Healthy: "ok", Unhealthy: "bad", Unknown: "unknown", Leaving: "wait" };

/** Renders the summary into `#summary`; `onHealth(health)` filters the fleet table. */
export function renderSummary(summary, onHealth) {
  const members = summary.members || { total: 0, health: {} };
  const runs = summary.runs || [];
  const failed = runs.filter((run) => (run.succeeded || {}).status === "False");
  const open = runs.filter((run) => (run.succeeded || {}).status !== "False");
  fill(
    "summary",
    h(
      "div",
      { class: "counts", "data-members": String(members.total) },
      h("span", { class: "count" }, h("strong", {}, String(members.total)), " member clusters"),
      Object.entries(members.health || {}).map(([health, count]) =>
        h(
          "button",
          { type: "button", class: "count", "data-health": health, onclick: () => onHealth(health) },
          tag(`${count} ${health.toLowerCase()}`, TONES[health]),
        ),
      ),
    ),
    h("h3", {}, `Rollouts in flight (${open.length}${more(summary.runsTotal, runs.length)})`),
    open.length ? h("ul", { class: "flights" }, open.map(flight)) : empty("None."),
    h("h3", {}, `Failed rollouts (${failed.length})`),
    failed.length ? h("ul", { class: "flights" }, failed.map(flight)) : empty("None."),
    h("h3", {}, `Pending approvals (${(summary.approvals || []).length}${more(summary.approvalsTotal, (summary.approvals || []).length)})`),
    approvals(summary.approvals || []),
  );
}

function more(total, shown) {
  return total > shown ? ` of ${total}` : "";
}

/** One run: name, stage, clusters done of total, and why it waits or failed. */
function flight(run) {
  const name = run.namespace ? `${run.namespace}/${run.name}` : run.name;
  const failed = (run.succeeded || {}).status === "False";
  const reason = failed ? run.succeeded : run.progressing;
  const why = (run.waits || []).map((wait) => h("li", { class: "small" }, wait.text));
  return h(
    "li",
    { "data-flight": name },
    h("strong", {}, name),
    ` · placement ${run.placement} · ${run.state}`,
    run.stage ? ` · stage ${run.stage}` : "",
    " · ",
    h("progress", { max: String(Math.max(1, run.clustersTotal)), value: String(run.clustersDone) }),
    ` ${run.clustersDone}/${run.clustersTotal} clusters`,
    reason && reason.message ? h("div", { class: failed ? "bad-text small" : "muted small" }, reason.message) : null,
    why.length ? h("ul", {}, why) : null,
  );
}

function approvals(list) {
  if (list.length === 0) return empty("None.");
  return h(
    "ul",
    {},
    list.map((a) =>
      h("li", { "data-approval": a.name }, `${a.name} · run ${a.run} · stage ${a.stage}`),
    ),
  );
}

/** The point's time line: `seq N · YYYY-MM-DD HH:MM:SS UTC`. */
export function pointTime(summary) {
  return summary.time ? utc(summary.time) : "no time yet";
}
