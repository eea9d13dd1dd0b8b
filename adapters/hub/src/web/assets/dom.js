// Small DOM helpers shared by the page's views: element building and the look of a condition.
// Views build fresh elements on every refresh; text always goes in as text, never as HTML, so
// names and messages from the fleet cannot inject markup.

/** An element: `h("div", {class: "x", onclick: f}, child, "text", [more])`. */
export function h(tag, attributes, ...children) {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith("on")) element.addEventListener(name.slice(2), value);
    else element.setAttribute(name, value === true ? "" : String(value));
  }
  append(element, children);
  return element;
}

function append(element, children) {
  for (const child of children) {
    if (child === undefined || child === null || child === false) continue;
    if (Array.isArray(child)) append(element, child);
    else if (child instanceof Node) element.appendChild(child);
    else element.appendChild(document.createTextNode(String(child)));
  }
}

/** Replaces the children of the element with id `id`. */
export function fill(id, ...children) {
  const element = document.getElementById(id);
  if (!element) return;
  element.replaceChildren();
  append(element, children);
}

/** The condition of `type` in a list of Kubernetes conditions, if there. */
export function condition(conditions, type) {
  return (conditions || []).find((c) => c.type === type);
}

/** A badge for a condition: green `True`, red `False`, grey `Unknown`; the message as tooltip. */
export function badge(c) {
  if (!c) return null;
  const tone = c.status === "True" ? "ok" : c.status === "False" ? "bad" : "unknown";
  const tip = [c.reason, c.message].filter(Boolean).join(": ");
  return h("span", { class: `badge ${tone}`, title: tip }, `${c.type}`);
}

/** The badges of every condition in a list. */
export function badges(conditions) {
  return h("span", { class: "badges" }, (conditions || []).map(badge));
}

/** A badge of free text in one of the tones `ok`, `bad`, `wait`, `unknown`. */
export function tag(text, tone) {
  return h("span", { class: `badge ${tone || "unknown"}` }, text);
}

/** `key=value` chips for a map of labels or properties. */
export function chips(map) {
  const entries = Object.entries(map || {});
  if (entries.length === 0) return h("span", { class: "muted" }, "none");
  return h(
    "span",
    { class: "chips" },
    entries.map(([key, value]) => h("span", { class: "chip" }, `${key}=${value}`)),
  );
}

/** An object's `namespace/name`, or its name when cluster-scoped. */
export function objectName(object) {
  const meta = object.metadata || {};
  return meta.namespace ? `${meta.namespace}/${meta.name}` : meta.name;
}

/** A placeholder line for an empty section. */
export function empty(text) {
  return h("p", { class: "muted" }, text);
}

/** The time zone the page shows times in: "utc" (the log's, the default) or "local". */
let zone = readZone();

function readZone() {
  try {
    return localStorage.getItem("flotilla.zone") === "local" ? "local" : "utc";
  } catch {
    return "utc";
  }
}

/** The zone times are shown in: "utc" or "local". */
export function timeZone() {
  return zone;
}

/** Shows times in `next` ("utc" or "local") from now on, remembered in this browser. */
export function setTimeZone(next) {
  zone = next === "local" ? "local" : "utc";
  try {
    localStorage.setItem("flotilla.zone", zone);
  } catch {
    // A browser that keeps nothing still switches for this page.
  }
}

/**
 * An RFC 3339 time as its clock time in the zone shown, labelled. "" when absent.
 */
export function clock(time) {
  const text = utc(time);
  return text ? `${text.slice(11)}` : "";
}

/**
 * An RFC 3339 time as `YYYY-MM-DD HH:MM:SS UTC`, or in local time labelled with its offset
 * (`YYYY-MM-DD HH:MM:SS UTC+01:00`) when the user picked local; "" when absent.
 */
export function utc(time) {
  if (!time) return "";
  const parsed = new Date(time);
  if (Number.isNaN(parsed.getTime())) return String(time);
  if (zone !== "local") return `${parsed.toISOString().slice(0, 19).replace("T", " ")} UTC`;
  const offset = -parsed.getTimezoneOffset();
  const shifted = new Date(parsed.getTime() + offset * 60000);
  const sign = offset < 0 ? "-" : "+";
  const hours = String(Math.floor(Math.abs(offset) / 60)).padStart(2, "0");
  const minutes = String(Math.abs(offset) % 60).padStart(2, "0");
  return `${shifted.toISOString().slice(0, 19).replace("T", " ")} UTC${sign}${hours}:${minutes}`;
}
