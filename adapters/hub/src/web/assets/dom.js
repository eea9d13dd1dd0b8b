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

/**
 * An RFC 3339 time as its UTC clock time, labelled: the page shows one time zone, the log's.
 * "" when absent.
 */
export function clock(time) {
  const text = utc(time);
  return text ? `${text.slice(11)}` : "";
}

/** An RFC 3339 time as `YYYY-MM-DD HH:MM:SS UTC`, or "" when absent. */
export function utc(time) {
  if (!time) return "";
  const parsed = new Date(time);
  if (Number.isNaN(parsed.getTime())) return String(time);
  return `${parsed.toISOString().slice(0, 19).replace("T", " ")} UTC`;
}
