// The top of the incident page: the heading with one badge for where the incident stands and
// one for the analysis, its facts (times with their zone and age), who claimed it, the notice
// of the last action, and the outcome once a reviewer decided; a warning badge when the
// incident's text holds instructions aimed at the model (injection_flags).

import { bandBadge, decisionLabel, h, statusBadge, time } from "../dom.js";

const DECIDED = new Set(["approved", "rejected"]);

/** One badge for the analysis: "abstained" when it abstained, else its confidence band. */
function analysisBadge(rca) {
  if (!rca) return null;
  if (rca.outcome === "insufficient_evidence") {
    return h("span", { class: "badge band band-insufficient", dataset: { band: "abstained" }, title: "The agent named no probable cause" }, "abstained");
  }
  return bandBadge(rca.confidence);
}

/** A warning when the incident's text holds instruction-like phrases aimed at the model. */
function injectionBadge(flags) {
  if (!flags || !flags.length) return null;
  const title = flags.map((f) => `${f.evidence_id}: "${f.phrase}"`).join("\n");
  return h("span", { class: "badge band band-insufficient", id: "injection-badge", role: "note", title }, "instructions in incident text");
}

/**
 * Who holds the incident, and the button to claim or release it.
 * @param {object} d the incident
 * @param {{me: string, claim: (assignee: string|null) => void}} claim
 */
function renderClaim(d, { me, claim }) {
  const holder = d.assignee || null;
  const mine = holder && holder === me;
  const button = (label, assignee, id) =>
    h("button", { type: "button", class: "secondary small", id, "aria-keyshortcuts": "c", on: { click: () => claim(assignee) } }, label);
  return h(
    "p",
    { class: "claim-line", id: "claim-line", dataset: { assignee: holder || "" } },
    holder ? [h("span", { class: "assignee" }, mine ? "Claimed by you" : `Claimed by ${holder}`), " "] : h("span", { class: "muted" }, "Nobody has claimed this incident. "),
    mine
      ? button("Release", null, "release-button")
      : button(holder ? `Take over from ${holder}` : "Claim", me || null, "claim-button"),
  );
}

export function renderHeader(d, incident, claim) {
  const title = [incident.error_code, incident.event].filter(Boolean).join(" · ") || "Incident";
  const rca = d.status === "approved" && d.final_rca ? d.final_rca : d.rca;
  return h(
    "header",
    { class: "incident-header" },
    h("h2", { id: "incident-heading" }, title),
    h(
      "div",
      { class: "badges" },
      statusBadge(d.status, decisionLabel(d.status, (d.decision || {}).action)),
      analysisBadge(rca),
      injectionBadge(d.injection_flags),
    ),
    h(
      "dl",
      { class: "meta" },
      h("dt", {}, "Service"),
      h("dd", {}, incident.service || "—"),
      h("dt", {}, "Created"),
      h("dd", {}, time(d.created_at)),
      h("dt", {}, "Updated"),
      h("dd", {}, time(d.updated_at)),
      h("dt", {}, "Id"),
      h("dd", {}, h("code", {}, d.id)),
    ),
    claim && !DECIDED.has(d.status) ? renderClaim(d, claim) : null,
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
    edited ? h("p", { class: "muted" }, "The approved RCA below is the edited one; the original draft is one click away under it.") : null,
  );
}
