// The staged update runs: each run as a timeline of its stages, left to right. A stage shows
// its clusters, its tasks (approvals and timed waits) before and after it, and when it started
// and ended; a pending approval has an `approve` button, and the run `start`, `stop` or
// `resume` buttons as its state allows. Below, the run's own events (`/v1/timeline?run=`).
// Buttons are drawn only when the page is live (`act` is null in the past). The hub sends a
// stage's first clusters only (`/v1/runs`); the rest are counted.

import { badges, clock, condition, empty, fill, h, objectName, tag } from "./dom.js";

/** Most of a run's events listed under it, newest last. */
const RUN_EVENTS_MAX = 12;

/**
 * Renders the runs into `#runs`; `act(label, action)` performs a button's action. `timelines`
 * maps a run's name to its events, read only for the runs whose events are open;
 * `onHistory(name, open)` tells the controller that a run's events were opened or closed.
 */
export function renderRuns(runs, approvals, timelines, act, onHistory) {
  if (runs.length === 0) {
    fill("runs", empty("No staged update runs."));
    return;
  }
  fill("runs", runs.map((run) => card(run, approvals, timelines.get(objectName(run)), act, onHistory)));
}

function card(run, approvals, timeline, act, onHistory) {
  const spec = run.spec || {};
  const status = run.status || {};
  return h(
    "article",
    { class: "card run", "data-run": objectName(run), "data-state": runState(run) },
    h(
      "header",
      {},
      h("h3", {}, objectName(run)),
      h("span", { class: "muted" }, `placement ${spec.placementName} · strategy ${spec.stagedRolloutStrategyName}`),
      tag(runState(run), toneOf(runState(run))),
      controls(run, act),
    ),
    badges(status.conditions),
    failure(status),
    h("ol", { class: "stages" }, stagesOf(run).map((stage) => stageBox(run, stage, approvals, act))),
    history(objectName(run), timeline, onHistory),
  );
}

/** Why a failed run failed, in its `Succeeded` condition's words (the cluster and message). */
function failure(status) {
  const succeeded = condition(status.conditions, "Succeeded");
  if (!succeeded || succeeded.status !== "False" || !succeeded.message) return null;
  return h("p", { class: "bad-text small", "data-run-failure": "" }, succeeded.message);
}

/**
 * `Succeeded`, `Failed`, `Stopped`, `Not started`, `Waiting for approval`, `Waiting` or
 * `Progressing`: the first that holds.
 */
function runState(run) {
  const status = run.status || {};
  const succeeded = condition(status.conditions, "Succeeded");
  if (succeeded && succeeded.status === "True") return "Succeeded";
  if (succeeded && succeeded.status === "False") return "Failed";
  if ((run.spec || {}).state === "Stop") return "Stopped";
  if ((run.spec || {}).state !== "Run") return "Not started";
  if (awaitingApproval(run)) return "Waiting for approval";
  const progressing = condition(status.conditions, "Progressing");
  return progressing && progressing.status === "False" ? "Waiting" : "Progressing";
}

/** Whether an approval of the run is requested and not yet given. */
function awaitingApproval(run) {
  const stages = (run.status || {}).stagesStatus || [];
  const tasks = stages.flatMap((s) => (s.beforeStageTaskStatus || []).concat(s.afterStageTaskStatus || []));
  return tasks.some((task) => {
    const created = condition(task.conditions, "ApprovalRequestCreated");
    const approved = condition(task.conditions, "ApprovalRequestApproved");
    return created && created.status === "True" && !(approved && approved.status === "True");
  });
}

function toneOf(state) {
  const tones = { Succeeded: "ok", Failed: "bad", Progressing: "wait", Waiting: "wait" };
  return tones[state] || (state.startsWith("Waiting") ? "wait" : "unknown");
}

/** Start (from Initialize), stop (while running) or resume (when stopped). */
function controls(run, act) {
  if (!act || runState(run) === "Succeeded" || runState(run) === "Failed") return null;
  const meta = run.metadata;
  const state = (run.spec || {}).state;
  const button = (label, target) =>
    h(
      "button",
      {
        class: "action",
        "data-run-action": label,
        onclick: () =>
          act(`${label} ${meta.name}`, (api) => api.setRunState(run.kind, meta.name, meta.namespace, target)),
      },
      label,
    );
  if (state === "Run") return button("stop", "Stop");
  if (state === "Stop") return button("resume", "Run");
  return button("start", "Run");
}

/** The stages as the status has them, or as the strategy snapshot plans them before that. */
function stagesOf(run) {
  const status = run.status || {};
  if (status.stagesStatus && status.stagesStatus.length) {
    const stages = status.stagesStatus.slice();
    if (status.deletionStageStatus) stages.push(status.deletionStageStatus);
    return stages;
  }
  const planned = ((status.stagedUpdateStrategySnapshot || {}).stages || []);
  return planned.map((stage) => ({ stageName: stage.name, clusters: [], planned: stage }));
}

function stageBox(run, stage, approvals, act) {
  const succeeded = condition(stage.conditions, "Succeeded");
  const progressing = condition(stage.conditions, "Progressing");
  const state = succeeded && succeeded.status === "True"
    ? "done"
    : progressing && progressing.status === "True"
      ? "active"
      : succeeded && succeeded.status === "False" ? "failed" : "pending";
  return h(
    "li",
    { class: `stage ${state}`, "data-stage": stage.stageName, "data-stage-state": state },
    tasks(stage.beforeStageTaskStatus, "before", run, approvals, act),
    h("div", { class: "stage-name" }, stage.stageName),
    h("div", { class: "muted small" }, times(stage)),
    h("ul", { class: "clusters" }, (stage.clusters || []).map(clusterLine),
      stage.clustersOmitted ? h("li", { class: "muted small" }, `… and ${stage.clustersOmitted} more`) : null),
    tasks(stage.afterStageTaskStatus || plannedTasks(stage), "after", run, approvals, act),
  );
}

function times(stage) {
  if (stage.endTime) return `${clock(stage.startTime)} → ${clock(stage.endTime)}`;
  if (stage.startTime) return `started ${clock(stage.startTime)}`;
  return "not started";
}

function clusterLine(cluster) {
  const succeeded = condition(cluster.conditions, "Succeeded");
  const started = condition(cluster.conditions, "Started");
  const tone = succeeded ? (succeeded.status === "True" ? "ok" : "bad") : started ? "wait" : "unknown";
  const word = succeeded ? (succeeded.status === "True" ? "updated" : "failed") : started ? "updating" : "waiting";
  return h("li", { "data-cluster": cluster.clusterName }, tag(word, tone), " ", cluster.clusterName);
}

/** A stage's tasks before its status lists any: the strategy's, none done. */
function plannedTasks(stage) {
  return ((stage.planned || {}).afterStageTasks || []).map((task) => ({ type: task.type, planned: task }));
}

function tasks(list, when, run, approvals, act) {
  if (!list || list.length === 0) return null;
  return h("div", { class: `tasks ${when}` }, list.map((task) => taskLine(task, run, approvals, act)));
}

/** An Analysis gate: its measurements so far, passed, or failed with why. */
function analysisLine(task) {
  const decided = condition(task.conditions, "AnalysisSucceeded");
  const counts = task.analysis || {};
  const tally = `${counts.successful || 0} ok, ${counts.failed || 0} failed, ${counts.error || 0} errors`;
  if (decided && decided.status === "True") return h("div", { class: "task" }, tag("analysis passed", "ok"), " ", tally);
  if (decided) {
    return h("div", { class: "task", "data-analysis": "failed" }, tag("analysis failed", "bad"), " ", decided.message || tally);
  }
  const started = condition(task.conditions, "AnalysisStarted");
  const last = counts.lastValue !== undefined ? `, last ${counts.lastValue}` : "";
  return h("div", { class: "task" }, tag(started ? "analysing" : "analysis", started ? "wait" : "unknown"), " ", `${tally}${last}`);
}

function taskLine(task, run, approvals, act) {
  if (task.type === "Analysis") return analysisLine(task);
  if (task.type === "TimedWait") {
    const elapsed = condition(task.conditions, "WaitTimeElapsed");
    const wait = (task.planned || {}).waitTime;
    return h("div", { class: "task" }, elapsed ? tag("wait elapsed", "ok") : tag(`timed wait${wait ? ` ${wait}` : ""}`, "wait"));
  }
  const approved = condition(task.conditions, "ApprovalRequestApproved");
  const created = condition(task.conditions, "ApprovalRequestCreated");
  if (approved && approved.status === "True") return h("div", { class: "task" }, tag("approved", "ok"));
  if (!created || !task.approvalRequestName) {
    return h("div", { class: "task" }, tag("approval", "unknown"));
  }
  const request = approvals.find((a) => a.metadata.name === task.approvalRequestName
    && (a.metadata.namespace || "") === (run.metadata.namespace || ""));
  return h(
    "div",
    { class: "task" },
    tag("waiting for approval", "wait"),
    " ",
    approveButton(task.approvalRequestName, run.metadata.namespace, request, act),
  );
}

function approveButton(name, namespace, request, act) {
  const approved = request && condition((request.status || {}).conditions, "Approved");
  if (approved && approved.status === "True") return tag("approved, not yet seen", "wait");
  if (!act) return h("span", { class: "muted small" }, name);
  return h(
    "button",
    {
      class: "action approve",
      "data-approve": name,
      title: `approve ${name}`,
      onclick: () => act(`approve ${name}`, (api) => api.approve(name, namespace)),
    },
    "approve",
  );
}

/**
 * The run's latest events with their decisions, as `flotilla replay timeline --run` lists them:
 * read when opened, since a run's timeline is found by reading the log.
 */
function history(name, timeline, onHistory) {
  const open = timeline !== undefined;
  const entries = ((timeline || {}).entries || []).slice(-RUN_EVENTS_MAX);
  const body = !open
    ? null
    : timeline.error
      ? h("p", { class: "error-text" }, `timeline: ${timeline.error}`)
      : h("pre", {}, entries.map((e) => [e.line, ...e.decisions.map((d) => `    ${d.line}`)].join("\n")).join("\n"));
  return h(
    "details",
    { class: "history", open, ontoggle: (e) => onHistory(name, e.target.open) },
    h("summary", {}, open ? `events of this run (last ${entries.length})` : "events of this run"),
    body,
  );
}
