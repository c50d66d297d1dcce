// The home view: the review queue at a glance (counts per status from the API), the oldest
// waiting incident, and — when the API refuses this browser's key — where keys come from.

import { ageTime, h, replace } from "./dom.js";
import { STATUSES } from "./inbox.js";
import { shortcutList } from "./shortcuts.js";

function keyProblem(error, keyHelp, enterKey) {
  return h(
    "div",
    { class: "panel error-panel", id: "key-problem", role: "alert" },
    h("h3", {}, "The API refused this browser's key"),
    h("p", {}, error.message),
    keyHelp(),
    h("p", {}, h("button", { type: "button", class: "primary", on: { click: enterKey } }, "Enter API key")),
  );
}

function lead(inbox, error) {
  if (error && error.status !== 401) return `Could not load incidents: ${error.message}`;
  if (!inbox.loaded) return error ? "No incidents can be shown without a valid key." : "Loading incidents…";
  const awaiting = inbox.counts.awaiting_review || 0;
  return awaiting ? `${awaiting} incident(s) await review.` : "Nothing awaits review right now.";
}

/**
 * Render the home view into `root`.
 * @param {HTMLElement} root
 * @param {{inbox: object, oldestWaiting: object|null, error: Error|null,
 *   keyHelp: () => Node, enterKey: () => void}} state
 */
export function renderHome(root, { inbox, oldestWaiting, error, keyHelp, enterKey }) {
  const counts = inbox.counts || {};
  replace(
    root,
    h(
      "div",
      { class: "home" },
      h("h2", {}, "Review queue"),
      error && error.status === 401 ? keyProblem(error, keyHelp, enterKey) : null,
      h("p", { class: "lead", id: "home-lead" }, lead(inbox, error)),
      oldestWaiting
        ? h(
            "p",
            {},
            h("a", { class: "button primary", id: "open-oldest", href: `#/incidents/${encodeURIComponent(oldestWaiting.id)}` }, "Open the oldest waiting incident"),
            " ",
            h("span", { class: "muted" }, "waiting since ", ageTime(oldestWaiting.created_at)),
          )
        : null,
      inbox.loaded
        ? h(
            "dl",
            { class: "stats", id: "stats" },
            STATUSES.filter(([status]) => status !== "deciding").map(([status, label]) =>
              h("div", { class: `stat status-${status}`, dataset: { status } }, h("dt", {}, label), h("dd", {}, String(counts[status] || 0))),
            ),
          )
        : null,
      h("h3", {}, "How to review"),
      h(
        "ol",
        { class: "howto" },
        h("li", {}, "Open an incident from the inbox (search covers message, event, service, code and summary). Claim it so others know you are on it."),
        h("li", {}, "Read the incident and the diagnosis, then the draft's hypotheses; click a citation to see the cited text with the words highlighted."),
        h("li", {}, "Approve, reject with a reason, edit and approve, or send it back for re-analysis with more evidence. Similar incidents can be decided together from their group."),
      ),
      h("h3", {}, "Keyboard"),
      shortcutList(),
    ),
  );
}
