// The audit trail panel: every event of the incident (created, drafts, decisions) with the
// reviewer's comment and, for an edit, the diff against the original draft.

import { renderDiff, rcaToLines } from "../diff.js";
import { h, time } from "../dom.js";
import { section } from "./panel.js";

function eventTitle(event) {
  return event.type === "decision"
    ? `Decision: ${event.action}${event.actor ? ` by ${event.actor}` : ""}`
    : event.type === "draft"
      ? `Draft written${event.actor ? ` by ${event.actor}` : ""}`
      : event.type === "created"
        ? "Incident created"
        : `${event.type}${event.actor ? ` by ${event.actor}` : ""}`;
}

function eventDiff(event) {
  // The readable field-by-field diff when both versions are there; the server's unified JSON
  // diff otherwise.
  if (event.edited_rca && event.original_rca) {
    return renderDiff(rcaToLines(event.original_rca), rcaToLines(event.edited_rca), {
      caption: "Edit against the original draft",
      beforeLabel: "original",
      afterLabel: "edited",
    });
  }
  return event.diff ? h("pre", { class: "diff" }, String(event.diff)) : null;
}

function renderEvent(event) {
  const dropped = event.dropped_evidence_ids || [];
  const diff = eventDiff(event);
  return h(
    "li",
    { class: `event event-${event.type}`, dataset: { type: event.type, action: event.action || "" } },
    h("div", { class: "event-head" }, h("strong", {}, eventTitle(event)), " ", time(event.at)),
    event.comment ? h("blockquote", { class: "comment" }, event.comment) : null,
    event.type === "draft" && event.rca
      ? h("p", { class: "muted" }, `${event.rca.confidence || "—"} confidence: ${event.rca.summary || ""}`)
      : null,
    dropped.length ? h("p", { class: "flag-text" }, `${dropped.length} citation(s) dropped: ${dropped.join(", ")}`) : null,
    diff ? h("details", { open: event.action === "edit" }, h("summary", {}, "Show the edit"), diff) : null,
  );
}

/** @param {{events?: object[]} | null} audit the incident's audit trail */
export function renderAudit(audit) {
  const events = (audit && audit.events) || [];
  return section(
    "audit",
    `Audit trail (${events.length})`,
    events.length ? h("ol", { class: "timeline" }, events.map(renderEvent)) : h("p", { class: "muted" }, "No events."),
  );
}
