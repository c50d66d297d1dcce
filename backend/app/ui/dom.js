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

/** "3 min ago" style age of an ISO timestamp. */
export function age(iso, now = Date.now()) {
  const then = Date.parse(iso);
  if (Number.isNaN(then)) return "";
  const seconds = Math.max(0, Math.round((now - then) / 1000));
  if (seconds < 60) return `${seconds}s ago`;
  const minutes = Math.round(seconds / 60);
  if (minutes < 60) return `${minutes} min ago`;
  const hours = Math.round(minutes / 60);
  if (hours < 48) return `${hours} h ago`;
  return `${Math.round(hours / 24)} d ago`;
}

/** A local, readable timestamp with the ISO value as tooltip. */
export function time(iso) {
  const date = new Date(iso);
  const label = Number.isNaN(date.getTime()) ? String(iso || "") : date.toLocaleString();
  return h("time", { datetime: iso || "", title: iso || "" }, label);
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

export function statusBadge(status) {
  return h("span", { class: `badge status-${status}`, dataset: { status } }, statusLabel(status));
}

export function bandBadge(band) {
  const value = band || "none";
  return h(
    "span",
    { class: `badge band band-${value}`, title: "Confidence band", dataset: { band: value } },
    band ? `${band} confidence` : "no band",
  );
}
