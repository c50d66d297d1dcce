// The one way the UI talks to the API: JSON in, JSON out, errors as ApiError carrying the
// API's own message. Sends `X-API-Key` when a key is stored; on a 401 it asks for the key once
// (one shared prompt for all requests in flight) and retries the request once. A key entered
// there that the API accepts is announced with a "rca:key-changed" window event, so every view
// can reload what it showed.

import { h } from "./dom.js";

const KEY_STORAGE = "rca.apiKey";

export class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.name = "ApiError";
    this.status = status;
    this.code = code;
  }
}

export function getApiKey() {
  return localStorage.getItem(KEY_STORAGE) || "";
}

export function setApiKey(key) {
  if (key) localStorage.setItem(KEY_STORAGE, key);
  else localStorage.removeItem(KEY_STORAGE);
}

/** Where API keys come from, for the key form and the "key refused" notices. */
export function keyHelp() {
  return h(
    "p",
    { class: "hint key-help" },
    "Keys are set by whoever runs the service: ",
    h("code", {}, "rca setup-local"),
    " (run by ",
    h("code", {}, "make run"),
    ") writes generated keys to ",
    h("code", {}, ".env"),
    " and prints the reviewer key; otherwise ask for a key listed in ",
    h("code", {}, "RCA_API_KEYS"),
    ".",
  );
}

let pendingPrompt = null;
let promptDeclined = false;
// The prompt whose key was announced: requests sharing one prompt announce it once.
let announcedPrompt = null;

/** Tell the views that a key the API accepts is now stored. */
export function announceKey() {
  window.dispatchEvent(new CustomEvent("rca:key-changed"));
}

/** Ask for an API key in a small modal form; resolves to the key, or "" if cancelled. */
export function promptForKey(reason = "The API needs a key.") {
  if (pendingPrompt) return pendingPrompt;
  pendingPrompt = new Promise((resolve) => {
    const input = h("input", {
      id: "api-key-input",
      type: "password",
      name: "apiKey",
      autocomplete: "off",
      required: true,
    });
    const cancel = h("button", { type: "button", class: "secondary" }, "Cancel");
    const form = h(
      "form",
      { method: "dialog", class: "key-form" },
      h("h2", { id: "api-key-title" }, "API key required"),
      h("p", {}, reason),
      keyHelp(),
      h("label", { for: "api-key-input" }, "API key"),
      input,
      h("div", { class: "actions" }, h("button", { type: "submit" }, "Save key"), cancel),
    );
    const dialog = h("dialog", { id: "api-key-dialog", "aria-labelledby": "api-key-title" }, form);
    const finish = (key) => {
      dialog.close();
      dialog.remove();
      pendingPrompt = null;
      promptDeclined = !key;
      if (key) setApiKey(key);
      resolve(key);
    };
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      finish(input.value.trim());
    });
    cancel.addEventListener("click", () => finish(""));
    dialog.addEventListener("cancel", (event) => {
      event.preventDefault();
      finish("");
    });
    document.body.append(dialog);
    dialog.showModal();
    input.focus();
  });
  return pendingPrompt;
}

/** Allow the 401 prompt again (e.g. after the user clicks "Enter API key"). */
export function resetKeyPrompt() {
  promptDeclined = false;
}

async function send(method, path, body) {
  const headers = { Accept: "application/json" };
  const key = getApiKey();
  if (key) headers["X-API-Key"] = key;
  if (body !== undefined) headers["Content-Type"] = "application/json";
  try {
    return await fetch(path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch (err) {
    throw new ApiError(0, "network_error", "Cannot reach the API: is the server running?");
  }
}

async function parse(response, asText = false) {
  const text = await response.text();
  if (response.ok && asText) return text;
  let data = null;
  try {
    data = text ? JSON.parse(text) : null;
  } catch {
    data = null;
  }
  if (response.ok) return data;
  const error = (data && data.error) || {};
  const message =
    error.message ||
    (data && typeof data.detail === "string" ? data.detail : "") ||
    `${response.status} ${response.statusText || "error"}`;
  const hint =
    response.status === 401
      ? " Use the API key button at the top to enter a key (rca setup-local writes the keys to .env and prints the reviewer key)."
      : "";
  throw new ApiError(response.status, error.code || "http_error", message + hint);
}

/** Call the API; on 401 ask for a key once and retry once. `asText`: the body as text. */
export async function request(method, path, body, { asText = false } = {}) {
  let response = await send(method, path, body);
  if (response.status === 401 && !promptDeclined) {
    let reason = "The API answered 401 Unauthorized.";
    try {
      const data = await response.clone().json();
      if (data && data.error && data.error.message) reason = data.error.message;
    } catch {
      // keep the generic reason
    }
    const prompt = promptForKey(reason);
    const key = await prompt;
    if (key) {
      response = await send(method, path, body);
      if (response.status !== 401 && announcedPrompt !== prompt) {
        announcedPrompt = prompt;
        announceKey();
      }
    }
    // A key that is refused again is not asked for on every poll: the API key button asks anew.
    if (response.status === 401) promptDeclined = true;
  }
  return parse(response, asText);
}

const incidentPath = (id, suffix = "") => `/api/incidents/${encodeURIComponent(id)}${suffix}`;

export const api = {
  /** One page of `GET /api/incidents`; `params` are its query parameters (empty ones dropped). */
  listIncidents: (params = {}) => {
    const query = new URLSearchParams();
    for (const [k, v] of Object.entries(params)) {
      if (v !== undefined && v !== null && v !== "" && v !== false) query.set(k, String(v));
    }
    const suffix = query.toString() ? `?${query}` : "";
    return request("GET", `/api/incidents${suffix}`);
  },
  getIncident: (id) => request("GET", incidentPath(id)),
  getAudit: (id) => request("GET", incidentPath(id, "/audit")),
  /** The postmortem of a decided incident, as Markdown text. */
  getPostmortem: (id) => request("GET", incidentPath(id, "/postmortem"), undefined, { asText: true }),
  decide: (id, decision) => request("POST", incidentPath(id, "/decision"), decision),
  /** Decide several incidents at once: `{ids, action, comment}` → per-id results. */
  decideMany: (body) => request("POST", "/api/incidents/decisions", body),
  assign: (id, assignee) => request("POST", incidentPath(id, "/assign"), { assignee }),
  /** Who the API takes this browser for: `{name, role, auth}`. */
  whoAmI: () => request("GET", "/api/me"),
};
