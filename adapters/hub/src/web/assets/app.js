// The page's controller: which point of the log it shows (live, or a sequence the time slider
// or the location's `#at=SEQ` picked), loading what the views show for that point, and handing
// it to them. What it loads is bounded by what a person reads, not by the fleet: the summary,
// one page of the fleet table, the runs with their stages cut short, the details of the
// placements asked for, and (while its section is open) a window of the log. Reads at a past point pass `at=SEQ`; actions are only offered live.

import * as api from "./api.js";
import { follow } from "./live.js";
import { renderSummary, pointTime } from "./summary.js";
import { objectName, setTimeZone, timeZone } from "./dom.js";
import { renderFleet } from "./fleet.js";
import { placementName, renderPlacements } from "./placements.js";
import { renderRuns } from "./runs.js";
import { renderLog } from "./log.js";
import { loadMarks, placeMarks } from "./marks.js";

/** Approval kinds the page lists; a kind the hub does not serve lists as empty. */
const APPROVAL_KINDS = ["ClusterApprovalRequest", "ApprovalRequest"];
/** Events the log view shows, ending at the point shown. */
const LOG_WINDOW = 200;
/** Rows of the fleet table. */
const PAGE_ROWS = 100;
/** Folds closer together than this re-read the page once. */
const LIVE_DEBOUNCE_MS = 300;

const view = {
  head: 0, // the hub's folded sequence
  at: null, // null: live; otherwise the sequence the page shows
  time: "", // the log time of the point shown
  loading: false,
  loadingAt: null, // the point the load in flight reads
  generation: 0, // counts loads started: only the latest one settles the page
  again: false,
  pending: null, // the debounce timer of a live refresh
  loadedHead: -1, // the head the last refresh read
  filter: { health: "", q: "", offset: 0, limit: PAGE_ROWS },
  asked: new Map(), // placements whose details the user asked for, by name
  histories: new Set(), // runs whose events the user opened, by name
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

async function lists(kinds, at) {
  return (await Promise.all(kinds.map((kind) => list(kind, at)))).flat();
}

/** What the views show, at `at` (null: now). */
async function load(at) {
  const point = at === null ? undefined : at;
  const [summary, page, runs, approvals, log] = await Promise.all([
    api.getJson("/v1/summary", { at: point }).then((summary) => drawSummary(summary, at)),
    api.getJson("/v1/members", Object.assign({ at: point }, view.filter)),
    api.getJson("/v1/runs", { at: point }),
    lists(APPROVAL_KINDS, point),
    $("log-section").open ? logUpTo(at === null ? view.head : at) : null,
  ]);
  const placements = summary.placements || [];
  const wanted = placements.filter((p) => view.asked.has(placementName(p)));
  const opened = (runs.items || []).filter((r) => view.histories.has(objectName(r)));
  const [details, events] = await Promise.all([
    Promise.all(wanted.map((p) => detail(p, point))),
    Promise.all(opened.map((r) => timeline(r, point))),
  ]);
  const byName = new Map(wanted.map((p, i) => [placementName(p), details[i]]));
  const timelines = new Map(opened.map((r, i) => [objectName(r), events[i]]));
  // Every live answer names the sequence it was read at: they show one point only if they agree.
  const settled = summary.seq === page.seq && summary.seq === runs.seq;
  return { summary, page, runs: runs.items || [], approvals, log, details: byName, timelines, settled };
}

/** A placement's object and why it waits at `at`; an error is shown in their place. */
async function detail(placement, at) {
  const namespace = placement.namespace || undefined;
  const query = { placement: placement.name, namespace, at };
  const [object, explanation] = await Promise.all([
    api.getJson(`/v1/objects/${placement.kind}`, { name: placement.name, namespace, at }).catch(() => null),
    api.getJson("/v1/explain", query).catch((error) => ({ error: error.message })),
  ]);
  return { object, explanation };
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

/** Draws the summary as soon as it is read (the rest of the page follows), if still wanted. */
function drawSummary(summary, at) {
  if (at !== view.at) return summary;
  view.time = pointTime(summary);
  renderSummary(summary, (health) => setFilter({ health, offset: 0 }));
  showPoint();
  if (performance.getEntriesByName("flotilla-summary").length === 0) performance.mark("flotilla-summary");
  return summary;
}

function render(loaded) {
  const live = view.at === null;
  renderFleet(loaded.page, view.filter, setFilter);
  renderPlacements(loaded.summary, loaded.details, askDetails);
  renderRuns(loaded.runs, loaded.approvals, loaded.timelines, live ? act : null, showHistory);
  if (loaded.log) renderLog(loaded.log, live ? view.head : view.at);
  showPoint();
}

/**
 * Loads and renders the point shown. A refresh of the point already loading runs once after
 * it; one of another point (the slider moved) starts at once, and the load in flight, whose
 * point is no longer shown, is drawn nowhere.
 */
async function refresh() {
  if (view.loading && view.loadingAt === view.at) {
    view.again = true;
    return;
  }
  const generation = ++view.generation;
  view.loading = true;
  view.loadingAt = view.at;
  try {
    const shown = view.at;
    // The head comes with the live answers (and then from the stream); a page opened on a past
    // point asks for it beside that point's reads rather than before them.
    const head = shown === null || view.loadedHead >= 0 ? null : api.getJson("/v1/status");
    const loaded = await load(shown);
    const seq = shown === null ? loaded.summary.seq : (await head)?.seq;
    if (seq !== undefined) {
      view.loadedHead = seq;
      setHead(Math.max(seq, view.head));
    }
    // The slider may have moved while this loaded: only the latest point is drawn.
    if (shown === view.at && generation === view.generation) {
      render(loaded);
      const shownSeq = String(shown === null ? loaded.summary.seq : shown);
      document.body.dataset.shownSeq = loaded.settled || shown !== null ? shownSeq : "";
      markShown(shownSeq);
    }
    if (generation === view.generation) showError("");
  } catch (error) {
    if (generation === view.generation) showError(error.message);
  } finally {
    if (generation === view.generation) view.loading = false;
  }
  if (generation === view.generation && view.again) {
    view.again = false;
    refresh();
  }
}

/**
 * The performance mark a measurement reads when the page first shows point SEQ:
 * `flotilla-shown-SEQ` (`flotilla-summary` marks the summary's first draw).
 */
function markShown(seq) {
  const name = `flotilla-shown-${seq}`;
  if (performance.getEntriesByName(name).length === 0) performance.mark(name);
}

/** A live refresh, at most once per LIVE_DEBOUNCE_MS however fast the hub folds. */
function refreshSoon() {
  if (view.pending !== null) return;
  view.pending = setTimeout(() => {
    view.pending = null;
    // The stream's first event names the head the first load already read.
    if (view.head !== view.loadedHead || view.loading) refresh();
  }, LIVE_DEBOUNCE_MS);
}

function setFilter(change) {
  Object.assign(view.filter, change);
  refresh();
}

function showHistory(name, open) {
  if (open === view.histories.has(name)) return;
  if (open) view.histories.add(name);
  else view.histories.delete(name);
  refresh();
}

function askDetails(placement) {
  view.asked.set(placementName(placement), true);
  refresh();
}

/** An action from a view (approve, start, stop, resume): done, then shown. */
async function act(label, action) {
  showError("");
  $("action").textContent = `${label}…`;
  try {
    await action(api);
    $("action").textContent = `${label}: done`;
    loadMarks(goTo);
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
  slider.value = String(view.at === null ? slider.max : view.at);
  placeMarks();
  showPoint();
}

function showPoint() {
  const live = view.at === null;
  const shown = live ? view.head : view.at;
  $("point").textContent = live ? `live · seq ${shown}` : `seq ${shown} of ${view.head} (past: read only)`;
  $("point-time").textContent = view.time;
  $("live").disabled = live;
  document.body.classList.toggle("past", !live);
}

function showError(text) {
  $("error").textContent = text;
  $("error").hidden = !text;
}

/** Shows `seq` (null: live), names it in the location (`#at=SEQ`) and loads it. */
function goTo(seq) {
  view.at = seq === null || seq >= view.head ? null : seq;
  const hash = view.at === null ? "" : `#at=${view.at}`;
  if (location.hash !== hash) history.replaceState(null, "", `${location.pathname}${location.search}${hash}`);
  view.time = "";
  showPoint();
  refresh();
}

/** The point `#at=SEQ` names, or null. */
function hashPoint() {
  const match = /^#at=(\d+)$/.exec(location.hash);
  return match ? Number(match[1]) : null;
}

/** The slider: dragging shows where it points; letting go shows the page there. */
function wireSlider() {
  const slider = $("slider");
  slider.addEventListener("input", () => {
    $("point").textContent = `seq ${slider.value} of ${view.head}`;
  });
  slider.addEventListener("change", () => goTo(Number(slider.value)));
  $("live").addEventListener("click", () => goTo(null));
  window.addEventListener("hashchange", () => {
    const seq = hashPoint();
    if (seq !== view.at) goTo(seq);
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

/** The time zone button: UTC (the log's) or this browser's local time, every time redrawn. */
function wireZone() {
  const button = $("zone");
  const label = () => {
    button.textContent = timeZone() === "local" ? "local time" : "UTC";
  };
  label();
  button.addEventListener("click", () => {
    setTimeZone(timeZone() === "local" ? "utc" : "local");
    label();
    view.time = "";
    refresh();
    loadMarks(goTo);
  });
}

function start() {
  view.at = hashPoint();
  wireSlider();
  wireToken();
  wireZone();
  // The log is read only while its section is open: one apply over the whole fleet decides a
  // line per cluster, so its window can weigh more than the rest of the page.
  $("log-section").addEventListener("toggle", () => {
    if ($("log-section").open) refresh();
  });
  $("heartbeats").addEventListener("change", (changed) => {
    $("log").classList.toggle("hide-heartbeats", !changed.target.checked);
  });
  follow(
    (seq) => {
      setHead(seq);
      if (view.at === null) refreshSoon();
    },
    (state) => {
      $("connection").textContent = state;
    },
  );
  refresh();
  loadMarks(goTo);
}

start();
