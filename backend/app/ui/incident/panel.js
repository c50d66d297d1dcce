// What the panels of the incident page share: the panel frame, a bullet list, the moving states.

import { h } from "../dom.js";

/** Statuses during which the incident changes on its own (no form to protect). */
export const MOVING = new Set(["analyzing", "deciding"]);

/** A titled <section class="panel"> whose heading labels it. */
export function section(id, title, ...children) {
  return h(
    "section",
    { id, class: "panel", "aria-labelledby": `${id}-title` },
    h("h3", { id: `${id}-title` }, title),
    ...children,
  );
}

export function bulletList(items, className = "") {
  return h("ul", { class: className }, (items || []).map((item) => h("li", {}, String(item))));
}
