// The top of the incident page: the heading with its badges and facts, the notice of the last
// action, and the outcome once a reviewer decided.

import { renderDiff, rcaToLines } from "../diff.js";
import { age, bandBadge, h, statusBadge, time } from "../dom.js";

const DECIDED = new Set(["approved", "rejected"]);

export function renderHeader(d, incident) {
  const title = [incident.error_code, incident.event].filter(Boolean).join(" · ") || "Incident";
  return h(
    "header",
    { class: "incident-header" },
    h("h2", { id: "incident-heading" }, title),
    h(
      "div",
      { class: "badges" },
      statusBadge(d.status),
      d.rca ? bandBadge(d.rca.confidence) : null,
      d.low_confidence ? h("span", { class: "badge warn" }, "low retrieval confidence") : null,
    ),
    h(
      "dl",
      { class: "meta" },
      h("dt", {}, "Service"),
      h("dd", {}, incident.service || "—"),
      h("dt", {}, "Created"),
      h("dd", {}, time(d.created_at), ` (${age(d.created_at)})`),
      h("dt", {}, "Updated"),
      h("dd", {}, time(d.updated_at)),
      h("dt", {}, "Id"),
      h("dd", {}, h("code", {}, d.id)),
    ),
  );
}

/** The notice of the last action (`{kind, text}`), or null. */
export function renderFlash(flash) {
  if (!flash) return null;
  return h(
    "div",
    {
      id: "flash",
      class: `notice ${flash.kind}`,
      role: flash.kind === "error" ? "alert" : "status",
      tabindex: "-1",
    },
    flash.text,
  );
}

export function renderOutcome(d) {
  const decision = d.decision || {};
  if (!DECIDED.has(d.status)) return null;
  const who = decision.reviewer || "a reviewer";
  const edited = decision.action === "edit";
  const headline =
    d.status === "rejected" ? `Rejected by ${who}` : edited ? `Approved with edits by ${who}` : `Approved by ${who}`;
  return h(
    "section",
    { id: "outcome", class: `panel outcome outcome-${d.status}`, "aria-labelledby": "outcome-title" },
    h("h3", { id: "outcome-title" }, headline),
    decision.decided_at ? h("p", { class: "muted" }, "Decided ", time(decision.decided_at)) : null,
    decision.comment ? h("blockquote", { class: "comment" }, decision.comment) : null,
    edited && d.final_rca
      ? renderDiff(rcaToLines(d.rca), rcaToLines(d.final_rca), {
          caption: "The reviewer's edit against the original draft",
          beforeLabel: "original draft",
          afterLabel: "approved edit",
        })
      : null,
  );
}
