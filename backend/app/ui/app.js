// Entry point: hash routing (#/ and #/incidents/<id>), the reviewer name, polling and
// keyboard shortcuts. Views live in inbox.js and incident.js.

import { promptForKey, resetKeyPrompt } from "./api.js";
import { h, replace } from "./dom.js";
import { Inbox } from "./inbox.js";
import { IncidentView } from "./incident.js";
import { decidingAs } from "./incident/decision.js";

const POLL_MS = 4000;
const REVIEWER_STORAGE = "rca.reviewer";

const $ = (id) => document.getElementById(id);
const main = $("main");
const reviewerInput = $("reviewer-name");
const pollState = $("poll-state");

function reviewer() {
  return reviewerInput.value.trim();
}

reviewerInput.value = localStorage.getItem(REVIEWER_STORAGE) || "";
reviewerInput.addEventListener("input", () => {
  const name = reviewer();
  if (name) localStorage.setItem(REVIEWER_STORAGE, name);
  else localStorage.removeItem(REVIEWER_STORAGE);
  const hint = $("deciding-as");
  if (hint) hint.textContent = decidingAs(name);
});

$("api-key-button").addEventListener("click", async () => {
  resetKeyPrompt();
  const key = await promptForKey("Enter the API key to send with every request (stored in this browser).");
  if (key) refresh();
});

const inbox = new Inbox({
  list: $("inbox-list"),
  count: $("inbox-count"),
  error: $("inbox-error"),
  status: $("inbox-status"),
  filter: $("inbox-filter"),
});

const incidentView = new IncidentView(main, {
  reviewer,
  onChanged: () => refresh(),
});

let route = { name: "home" };

function parseRoute(hash) {
  const match = /^#\/incidents\/([^/?#]+)$/.exec(hash);
  if (match) return { name: "incident", id: decodeURIComponent(match[1]) };
  return { name: "home" };
}

function renderHome() {
  document.title = "Inbox · Incident RCA review";
  const items = inbox.items;
  const counts = {};
  for (const item of items) counts[item.status] = (counts[item.status] || 0) + 1;
  const awaiting = counts.awaiting_review || 0;
  const next = items
    .filter((item) => item.status === "awaiting_review")
    .sort((a, b) => String(a.created_at).localeCompare(String(b.created_at)))[0];
  replace(
    main,
    h(
      "div",
      { class: "home" },
      h("h2", {}, "Review queue"),
      h(
        "p",
        { class: "lead" },
        inbox.loaded
          ? awaiting
            ? `${awaiting} incident(s) await your review.`
            : "Nothing awaits review right now."
          : "Loading incidents…",
      ),
      next ? h("p", {}, h("a", { class: "button primary", href: `#/incidents/${encodeURIComponent(next.id)}` }, "Open the oldest waiting incident")) : null,
      h(
        "dl",
        { class: "stats" },
        [
          ["Awaiting review", awaiting, "awaiting_review"],
          ["Analyzing", counts.analyzing || 0, "analyzing"],
          ["Approved", counts.approved || 0, "approved"],
          ["Rejected", counts.rejected || 0, "rejected"],
          ["Failed", counts.failed || 0, "failed"],
        ].map(([label, value, status]) => h("div", { class: `stat status-${status}` }, h("dt", {}, label), h("dd", {}, String(value)))),
      ),
      h("h3", {}, "How to review"),
      h(
        "ol",
        { class: "howto" },
        h("li", {}, "Open an incident from the inbox. Read the incident, then the draft's hypotheses and claims."),
        h("li", {}, "Click a citation to see the cited doc or incident line with the quoted words highlighted."),
        h("li", {}, "Approve, reject with a reason, edit and approve, or send it back for re-analysis with more evidence."),
      ),
      h("h3", {}, "Keyboard"),
      h(
        "ul",
        { class: "keys" },
        h("li", {}, h("kbd", {}, "a"), " approve · ", h("kbd", {}, "r"), " reject · ", h("kbd", {}, "e"), " edit · ", h("kbd", {}, "n"), " re-analysis (on an incident awaiting review)"),
        h("li", {}, h("kbd", {}, "/"), " filter the inbox · ", h("kbd", {}, "Esc"), " close the open form or evidence"),
      ),
    ),
  );
}

function navigate() {
  route = parseRoute(location.hash);
  if (route.name === "incident") {
    inbox.setCurrent(route.id);
    incidentView.load(route.id);
  } else {
    inbox.setCurrent(null);
    incidentView.id = null;
    renderHome();
  }
}

// ----- polling: every few seconds while the tab is visible ------------------------------------

let timer = null;
let inFlight = false;

async function refresh() {
  if (inFlight) return;
  inFlight = true;
  try {
    await inbox.refresh();
    pollState.textContent = `Live · updated ${new Date().toLocaleTimeString()}`;
    pollState.dataset.state = "live";
    if (route.name === "home") renderHome();
    else if (route.name === "incident") incidentView.noticeUpdate(inbox.find(route.id));
  } catch (err) {
    pollState.textContent = "Not updating: see the error below";
    pollState.dataset.state = "error";
  } finally {
    inFlight = false;
  }
}

function schedule() {
  clearInterval(timer);
  timer = null;
  if (document.hidden) {
    pollState.textContent = "Paused while the tab is hidden";
    pollState.dataset.state = "paused";
    return;
  }
  timer = setInterval(() => {
    if (!document.hidden) refresh();
  }, POLL_MS);
}

document.addEventListener("visibilitychange", () => {
  schedule();
  if (!document.hidden) refresh();
});

// ----- keyboard -------------------------------------------------------------------------------

document.addEventListener("keydown", (event) => {
  if (event.defaultPrevented || event.altKey || event.ctrlKey || event.metaKey) return;
  const target = event.target;
  const typing =
    target instanceof HTMLElement &&
    (target.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(target.tagName));
  if (event.key === "Escape") {
    if (route.name === "incident" && incidentView.escape()) event.preventDefault();
    return;
  }
  if (typing || document.querySelector("dialog[open]")) return;
  if (event.key === "/") {
    event.preventDefault();
    $("inbox-filter").focus();
    return;
  }
  if (route.name === "incident" && incidentView.shortcut(event.key)) event.preventDefault();
});

window.addEventListener("hashchange", navigate);
navigate();
schedule();
refresh();
