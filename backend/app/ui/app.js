// Entry point: hash routing (#/, #/incidents/<id>, #/incidents/<id>/postmortem, #/groups/<key>),
// who is signed in, polling and keyboard shortcuts. Views live in inbox.js, incident.js,
// group.js and home.js.

import { announceKey, api, keyHelp, promptForKey, resetKeyPrompt } from "./api.js";
import { GroupView } from "./group.js";
import { renderHome } from "./home.js";
import { Inbox } from "./inbox.js";
import { IncidentView } from "./incident.js";
import { decidingAs } from "./incident/decision.js";
import { toggleShortcuts } from "./shortcuts.js";

const POLL_MS = 4000;
const REVIEWER_STORAGE = "rca.reviewer";
const PHONE = window.matchMedia("(max-width: 800px)");

const $ = (id) => document.getElementById(id);
const main = $("main");
const reviewerInput = $("reviewer-name");
const pollState = $("poll-state");

// Who the API takes us for; with authentication on, decisions are recorded under this name.
let identity = null;

/** The name decisions and claims are recorded under. */
function me() {
  if (identity && identity.auth) return identity.name;
  return reviewerInput.value.trim();
}

reviewerInput.value = localStorage.getItem(REVIEWER_STORAGE) || "";
reviewerInput.addEventListener("input", () => {
  const name = reviewerInput.value.trim();
  if (name) localStorage.setItem(REVIEWER_STORAGE, name);
  else localStorage.removeItem(REVIEWER_STORAGE);
  const hint = $("deciding-as");
  if (hint) hint.textContent = decidingAs(name, identity);
});

async function loadIdentity() {
  try {
    identity = await api.whoAmI();
  } catch {
    identity = null;
  }
  const signedIn = $("signed-in");
  const named = Boolean(identity && identity.auth);
  signedIn.hidden = !named;
  signedIn.textContent = named ? `Signed in as ${identity.name} (${identity.role})` : "";
  // The key's name is what the API records: a typed name would be ignored, so none is asked.
  $("reviewer-box").hidden = named;
}

$("api-key-button").addEventListener("click", async () => {
  resetKeyPrompt();
  const key = await promptForKey("Enter the API key to send with every request (stored in this browser).");
  if (key) announceKey();
});

// A corrected key: everything on screen was loaded (or refused) with the old one.
window.addEventListener("rca:key-changed", async () => {
  await loadIdentity();
  await refresh();
  navigate();
});

const inbox = new Inbox({
  list: $("inbox-list"),
  count: $("inbox-count"),
  error: $("inbox-error"),
  status: $("inbox-status"),
  filter: $("inbox-filter"),
  sort: $("inbox-sort"),
  grouped: $("inbox-grouped"),
  scroller: $("inbox"),
});

const hooks = {
  reviewer: () => reviewerInput.value.trim(),
  me,
  identity: () => identity,
  onChanged: () => refresh(),
  next: (id) => inbox.nextAwaiting(id),
  open: (id) => {
    location.hash = id ? `#/incidents/${encodeURIComponent(id)}` : "#/";
  },
};
const incidentView = new IncidentView(main, hooks);
const groupView = new GroupView(main, hooks);

let route = { name: "home" };
let lastError = null;
let oldestWaiting = null;

function parseRoute(hash) {
  let match = /^#\/incidents\/([^/?#]+)(?:\/(postmortem))?$/.exec(hash);
  if (match) return { name: "incident", id: decodeURIComponent(match[1]), panel: match[2] || null };
  match = /^#\/groups\/([^/?#]+)$/.exec(hash);
  if (match) return { name: "group", key: decodeURIComponent(match[1]) };
  return { name: "home" };
}

function showHome() {
  document.title = "Inbox · Incident RCA review";
  renderHome(main, { inbox, oldestWaiting, error: lastError, keyHelp, enterKey: () => $("api-key-button").click() });
}

// ----- phone layout: the inbox folds away while an incident is open ------------------------------

function setInboxOpen(open) {
  document.body.classList.toggle("inbox-collapsed", !open);
  $("inbox-toggle").setAttribute("aria-expanded", String(open));
}

$("inbox-toggle").addEventListener("click", () => {
  setInboxOpen(document.body.classList.contains("inbox-collapsed"));
});

// Choosing an incident on a phone folds the inbox so the incident gets the screen.
$("inbox-list").addEventListener("click", (event) => {
  if (PHONE.matches && event.target instanceof Element && event.target.closest("a.inbox-item")) setInboxOpen(false);
});

function navigate() {
  route = parseRoute(location.hash);
  if (PHONE.matches) setInboxOpen(route.name === "home");
  if (route.name === "incident") {
    inbox.setCurrent(route.id);
    groupView.key = null;
    const { id, panel } = route;
    incidentView.load(id).then(() => {
      if (panel && incidentView.id === id) incidentView.reveal(panel);
    });
  } else if (route.name === "group") {
    inbox.setCurrent(null);
    incidentView.id = null;
    groupView.load(route.key);
  } else {
    inbox.setCurrent(null);
    incidentView.id = null;
    groupView.key = null;
    showHome();
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
    lastError = null;
    pollState.textContent = `Live · updated ${new Date().toLocaleTimeString()}`;
    pollState.dataset.state = "live";
    if (route.name === "home") {
      const oldest = await api.listIncidents({ status: "awaiting_review", sort: "oldest", limit: 1 });
      oldestWaiting = (oldest.items || [])[0] || null;
      if (route.name === "home") showHome();
    } else if (route.name === "incident") incidentView.noticeUpdate(inbox.find(route.id));
    else if (route.name === "group") groupView.noticeUpdate();
  } catch (err) {
    lastError = err;
    pollState.textContent = "Not updating: see the error below";
    pollState.dataset.state = "error";
    if (route.name === "home") showHome();
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

async function step(direction) {
  // Read the hash, not `route`: a key pressed right after the last step can arrive before
  // that step's hashchange has updated `route`, and would then step from the stale row.
  const shown = parseRoute(location.hash);
  const current = shown.name === "incident" ? shown.id : null;
  let id = inbox.neighbour(current, direction);
  if (!id && direction > 0 && inbox.nextCursor) {
    await inbox.loadMore();
    id = inbox.neighbour(current, direction);
  }
  if (!id) return;
  const item = inbox.find(id);
  location.hash = item && item.group_size > 1 ? `#/groups/${encodeURIComponent(item.group_key)}` : `#/incidents/${encodeURIComponent(id)}`;
  const link = $("inbox-list").querySelector(`a.inbox-item[data-id="${CSS.escape(id)}"]`);
  if (link) link.scrollIntoView({ block: "nearest" });
}

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
  const handled = (() => {
    if (event.key === "/") {
      if (PHONE.matches) setInboxOpen(true);
      $("inbox-filter").focus();
      return true;
    }
    if (event.key === "?") return toggleShortcuts();
    if (event.key === "j" || event.key === "k") {
      step(event.key === "j" ? 1 : -1);
      return true;
    }
    return route.name === "incident" && incidentView.shortcut(event.key);
  })();
  if (handled) event.preventDefault();
});

$("shortcuts-button").addEventListener("click", () => toggleShortcuts());

window.addEventListener("hashchange", navigate);
inbox.onChange = () => {
  if (route.name === "incident") inbox.setCurrent(route.id);
};
loadIdentity().then(() => {
  const hint = $("deciding-as");
  if (hint) hint.textContent = decidingAs(reviewerInput.value.trim(), identity);
});
navigate();
schedule();
refresh();
