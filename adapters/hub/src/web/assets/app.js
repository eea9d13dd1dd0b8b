// The page's controller: which point of the log it shows (live, or a sequence the time slider
// picked), loading everything for that point, and handing it to the views. Reads at a past
// point pass `at=SEQ`, so the whole page shows the state after that input; actions are only
// offered live.

import * as api from "./api.js";
import { follow } from "./live.js";
import { renderFleet } from "./fleet.js";
import { renderPlacements } from "./placements.js";
import { renderRuns } from "./runs.js";
import { renderLog } from "./log.js";

/** The kinds the page lists; a kind the hub does not serve lists as empty. */
const KINDS = {
  members: "MemberCluster",
  clusterPlacements: "ClusterResourcePlacement",
  placements: "ResourcePlacement",
  clusterBindings: "ClusterResourceBinding",
  bindings: "ResourceBinding",
  clusterRuns: "ClusterStagedUpdateRun",
  runs: "StagedUpdateRun",
  clusterApprovals: "ClusterApprovalRequest",
  approvals: "ApprovalRequest",
};
/** Events the log view shows, ending at the point shown. */
const LOG_WINDOW = 200;

const view = {
  head: 0, // the hub's folded sequence
  at: null, // null: live; otherwise the sequence the page shows
  loading: false,
  again: false,
};

const $ = (id) => document.getElementById(id);

/** A kind's objects at `at`, or [] when the hub does not serve the kind. */
async function list(kind, at) {
  try {
    return await api.objects(kind, at);
  } catch (error) {
    if (error.message.startsWith("404")) return [];
    throw error;
  }
}

/** Everything the views show, at `at` (null: now). */
async function load(at) {
  const point = at === null ? undefined : at;
  const names = Object.keys(KINDS);
  const lists = await Promise.all(names.map((name) => list(KINDS[name], point)));
  const data = Object.fromEntries(names.map((name, i) => [name, lists[i]]));
  const placements = data.clusterPlacements.concat(data.placements);
  const runs = data.clusterRuns.concat(data.runs);
  const [explains, timelines, log] = await Promise.all([
    Promise.all(placements.map((p) => explain(p, point))),
    Promise.all(runs.map((r) => timeline(r, point))),
    logUpTo(at === null ? view.head : at),
  ]);
  return { data, placements, runs, explains, timelines, log };
}

/** Why a placement waits at `at` (`/v1/explain`); an error is shown in its place. */
function explain(placement, at) {
  const meta = placement.metadata || {};
  return api
    .getJson("/v1/explain", { placement: meta.name, namespace: meta.namespace, at })
    .catch((error) => ({ error: error.message }));
}

/** A run's events and decisions up to `at` (`/v1/timeline`). */
function timeline(run, at) {
  const meta = run.metadata || {};
  return api
    .getJson("/v1/timeline", { run: meta.name, namespace: meta.namespace, until: at })
    .catch((error) => ({ error: error.message }));
}

/**
 * The last LOG_WINDOW inputs up to `seq` with their decisions, as `flotilla events` prints
 * them: `/v1/timeline` without a subject lists every input of its span with its lines.
 */
function logUpTo(seq) {
  if (seq < 1) return Promise.resolve({ entries: [] });
  return api.getJson("/v1/timeline", { after: Math.max(0, seq - LOG_WINDOW), until: seq });
}

function render(loaded) {
  const live = view.at === null;
  renderFleet(loaded.data.members, loaded.data.clusterBindings.concat(loaded.data.bindings));
  renderPlacements(loaded.placements, loaded.explains);
  const approvals = loaded.data.clusterApprovals.concat(loaded.data.approvals);
  renderRuns(loaded.runs, approvals, loaded.timelines, live ? act : null);
  renderLog(loaded.log, view.at === null ? view.head : view.at);
}

/** Loads and renders the point shown; a refresh asked for meanwhile runs once after it. */
async function refresh() {
  if (view.loading) {
    view.again = true;
    return;
  }
  view.loading = true;
  try {
    const status = await api.getJson("/v1/status");
    setHead(status.seq);
    const shown = view.at;
    const loaded = await load(shown);
    // Live lists are read after the head was: they show exactly that seq only if the head did
    // not move meanwhile. Otherwise the page names no seq until a later refresh (the log's
    // stream brings one with its next event).
    const settled = shown !== null || (await api.getJson("/v1/status")).seq === status.seq;
    // The slider may have moved while this loaded: only the latest point is drawn.
    if (shown === view.at) render(loaded);
    showError("");
    document.body.dataset.shownSeq = settled ? String(shown === null ? status.seq : shown) : "";
  } catch (error) {
    showError(error.message);
  } finally {
    view.loading = false;
  }
  if (view.again) {
    view.again = false;
    refresh();
  }
}

/** An action from a view (approve, start, stop, resume): done, then shown. */
async function act(label, action) {
  showError("");
  $("action").textContent = `${label}…`;
  try {
    await action(api);
    $("action").textContent = `${label}: done`;
  } catch (error) {
    $("action").textContent = "";
    showError(`${label}: ${error.message}`);
  }
  refresh();
}

function setHead(seq) {
  view.head = seq;
  const slider = $("slider");
  slider.max = String(Math.max(1, seq));
  if (view.at === null) slider.value = slider.max;
  showPoint();
}

function showPoint() {
  const live = view.at === null;
  const shown = live ? view.head : view.at;
  $("point").textContent = live
    ? `live · seq ${shown}`
    : `seq ${shown} of ${view.head} (past: read only)`;
  $("live").disabled = live;
  document.body.classList.toggle("past", !live);
}

function showError(text) {
  $("error").textContent = text;
  $("error").hidden = !text;
}

/** The slider: dragging shows where it points; letting go shows the page there. */
function wireSlider() {
  const slider = $("slider");
  slider.addEventListener("input", () => {
    $("point").textContent = `seq ${slider.value} of ${view.head}`;
  });
  slider.addEventListener("change", () => {
    const seq = Number(slider.value);
    view.at = seq >= view.head ? null : seq;
    showPoint();
    refresh();
  });
  $("live").addEventListener("click", () => {
    view.at = null;
    showPoint();
    refresh();
  });
}

function wireToken() {
  const field = $("token");
  field.value = api.token();
  $("token-form").addEventListener("submit", (submitted) => {
    submitted.preventDefault();
    api.setToken(field.value.trim());
    refresh();
  });
}

function start() {
  wireSlider();
  wireToken();
  $("heartbeats").addEventListener("change", (changed) => {
    $("log").classList.toggle("hide-heartbeats", !changed.target.checked);
  });
  follow(
    (seq) => {
      setHead(seq);
      if (view.at === null) refresh();
    },
    (state) => {
      $("connection").textContent = state;
    },
  );
  refresh();
}

start();
