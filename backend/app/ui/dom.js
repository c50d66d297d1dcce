// DOM helpers. Every piece of text reaches the page through createTextNode/textContent;
// nothing here (or anywhere in the UI) parses HTML from strings, so incident data can never
// become markup or script.

/**
 * Create an element.
 * @param {string} tag
 * @param {Object<string, any>} [attrs] attributes; `class`, `text`, `dataset` and `on`
 *   ({event: handler}, attached with addEventListener) are handled specially.
 * @param {...(Node|string|number|null|undefined|false|Array)} children
 */
export function h(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key === "class") node.className = value;
    else if (key === "text") node.textContent = String(value);
    else if (key === "dataset") Object.assign(node.dataset, value);
    else if (key === "on") {
      for (const [event, handler] of Object.entries(value)) node.addEventListener(event, handler);
    } else if (key.startsWith("on")) {
      throw new Error(`use the 'on' map, not the ${key} attribute`);
    } else if (value === true) node.setAttribute(key, "");
    else node.setAttribute(key, String(value));
  }
  append(node, children);
  return node;
}

/** Append children (nodes, strings, nested arrays); falsy children are skipped. */
export function append(parent, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false || child === "") continue;
    parent.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return parent;
}

/** Replace all children of `parent`. */
export function replace(parent, ...children) {
  parent.replaceChildren();
  return append(parent, children);
}

/** "3 min ago" style age of an ISO timestamp ("in 2 min" for a clock running ahead). */
export function age(iso, now = Date.now()) {
  const then = Date.parse(iso);
  if (Number.isNaN(then)) return "";
  const ahead = then - now > 1000;
  const seconds = Math.round(Math.abs(now - then) / 1000);
  let text;
  if (seconds < 60) text = `${seconds}s`;
  else if (seconds < 3600) text = `${Math.round(seconds / 60)} min`;
  else if (seconds < 48 * 3600) text = `${Math.round(seconds / 3600)} h`;
  else text = `${Math.round(seconds / 86400)} d`;
  return ahead ? `in ${text}` : `${text} ago`;
}

const DATE_TIME = new Intl.DateTimeFormat(undefined, {
  year: "numeric",
  month: "short",
  day: "numeric",
  hour: "2-digit",
  minute: "2-digit",
  second: "2-digit",
  timeZoneName: "short",
});

/** A timestamp in the browser's time zone, with the zone named ("29 Nov 2026, 10:00:01 UTC"). */
export function localTime(iso) {
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? String(iso || "") : DATE_TIME.format(date);
}

/**
 * A <time> element: the local time with its zone and, unless `relative` is false, the age
 * ("… UTC · 3 min ago"); the tooltip is the UTC ISO value.
 */
export function time(iso, { relative = true } = {}) {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return h("time", {}, String(iso || ""));
  const label = relative ? `${localTime(iso)} · ${age(iso)}` : localTime(iso);
  return h("time", { datetime: date.toISOString(), title: date.toISOString() }, label);
}

/** Just the age ("3 min ago") with the full local time and zone as the tooltip. */
export function ageTime(iso) {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return h("time", {}, "");
  return h("time", { datetime: date.toISOString(), title: localTime(iso) }, age(iso));
}

/** Format a score; null/undefined become an em dash. */
export function score(value, digits = 3) {
  if (value === null || value === undefined || value === "") return "—";
  if (typeof value === "number") return Number.isInteger(value) ? String(value) : value.toFixed(digits);
  return String(value);
}

const STATUS_LABELS = {
  analyzing: "Analyzing",
  awaiting_review: "Awaiting review",
  deciding: "Deciding",
  approved: "Approved",
  rejected: "Rejected",
  failed: "Failed",
};

export function statusLabel(status) {
  return STATUS_LABELS[status] || String(status || "unknown");
}

export function statusBadge(status, label = statusLabel(status)) {
  return h("span", { class: `badge status-${status}`, dataset: { status } }, label);
}

/** "Approved with edits" for an approval that changed the draft, else the status label. */
export function decisionLabel(status, action) {
  return status === "approved" && action === "edit" ? "Approved with edits" : statusLabel(status);
}

export function bandBadge(band) {
  const value = band || "none";
  return h(
    "span",
    { class: `badge band band-${value}`, title: "Confidence band", dataset: { band: value } },
    band === "insufficient" ? "insufficient evidence" : band ? `${band} confidence` : "no band",
  );
}

const SVG_NS = "http://www.w3.org/2000/svg";

/** Create an SVG element (attributes set verbatim; children appended like `h`). */
export function svg(tag, attrs = {}, ...children) {
  const node = document.createElementNS(SVG_NS, tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key.startsWith("on")) throw new Error(`no ${key} attribute on SVG`);
    node.setAttribute(key, String(value));
  }
  return append(node, children);
}
