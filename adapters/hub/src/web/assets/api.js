// The page's client of the hub's JSON API: every read and action goes through here, so the
// bearer token and the time slider's point (`at`) are applied in one place.

const TOKEN_KEY = "flotilla.token";

/** The bearer token kept in this browser, or "". */
export function token() {
  return localStorage.getItem(TOKEN_KEY) || "";
}

/** Keeps (or with "" forgets) the bearer token. */
export function setToken(value) {
  if (value) localStorage.setItem(TOKEN_KEY, value);
  else localStorage.removeItem(TOKEN_KEY);
}

/** Request headers: `Authorization: Bearer` when a token is set. */
export function headers(extra) {
  const all = Object.assign({}, extra || {});
  const bearer = token();
  if (bearer) all.Authorization = `Bearer ${bearer}`;
  return all;
}

function url(path, query) {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query || {})) {
    if (value !== undefined && value !== null && value !== "") params.set(key, String(value));
  }
  const text = params.toString();
  return text ? `${path}?${text}` : path;
}

/** The error a failed answer carries: the hub's `{"error": …}` or Kubernetes `Status` text. */
async function failure(response) {
  const text = await response.text();
  try {
    const body = JSON.parse(text);
    return new Error(`${response.status}: ${body.error || body.message || text}`);
  } catch {
    return new Error(`${response.status}: ${text}`);
  }
}

/** GETs JSON from the hub. */
export async function getJson(path, query) {
  const response = await fetch(url(path, query), { headers: headers() });
  if (!response.ok) throw await failure(response);
  return response.json();
}

/** The objects of a kind, at the point `at` (undefined: now). */
export function objects(kind, at) {
  return getJson(`/v1/objects/${encodeURIComponent(kind)}`, { at });
}

/** Appends events and waits for their decisions; throws on a rejection, with its message. */
export async function submit(events) {
  const response = await fetch("/v1/events?wait=true", {
    method: "POST",
    headers: headers({ "Content-Type": "application/json" }),
    body: JSON.stringify(events),
  });
  if (!response.ok) throw await failure(response);
  const results = await response.json();
  for (const result of results) {
    const rejected = ((result.decisions || [])[0] || {}).Rejected;
    if (rejected) throw new Error(`${rejected.code}: ${rejected.message}`);
  }
  return results;
}

/** An event as the CLI sends it, from this page. */
export function event(body) {
  return Object.assign({ source: "web", time: new Date().toISOString() }, body);
}

/** `flotilla approve NAME [-n NAMESPACE]`. */
export function approve(name, namespace) {
  return submit([event({ type: "approve", name, namespace: namespace || undefined })]);
}

/**
 * `flotilla run start|stop NAME`: re-applies the run with `spec.state` changed (`Run` starts
 * or resumes, `Stop` stops), reading the run as the hub has it now.
 */
export async function setRunState(kind, name, namespace, state) {
  const run = await getJson(`/v1/objects/${kind}`, { name, namespace });
  const metadata = { name };
  if (namespace) metadata.namespace = namespace;
  const spec = Object.assign({}, run.spec, { state });
  const manifest = { apiVersion: run.apiVersion, kind, metadata, spec };
  return submit([event({ type: "apply", manifest })]);
}
