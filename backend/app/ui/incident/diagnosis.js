// The diagnosis as a table: for each candidate family, the signals this incident's evidence
// confirms (with the evidence that confirms them, clickable), contradicts, and the expected
// signals that were not observed.

import { h, score } from "../dom.js";
import { evidenceLabel } from "./labels.js";
import { section } from "./panel.js";

/** The candidates of a diagnosis (`[...]` or `{candidates: [...]}`). */
export function candidates(diagnosis) {
  if (Array.isArray(diagnosis)) return diagnosis;
  if (diagnosis && Array.isArray(diagnosis.candidates)) return diagnosis.candidates;
  return [];
}

function candidateName(c) {
  return String(c.error_code || c.family || c.code || c.doc_id || c.id || "candidate");
}

function signalText(signal) {
  if (signal === null || signal === undefined) return "";
  if (typeof signal !== "object") return String(signal);
  const kind = signal.kind ? `${signal.kind}: ` : "";
  const value = signal.signal ?? signal.value ?? signal.name ?? signal.text ?? signal.label ?? "";
  const observed = signal.observed !== undefined && signal.observed !== value ? ` (seen: ${signal.observed})` : "";
  return `${kind}${value}${observed}${signal.weak ? " (weak)" : ""}`;
}

function signalEvidence(signal) {
  if (!signal || typeof signal !== "object") return [];
  const ids = signal.evidence_ids ?? signal.evidence ?? signal.ids ?? [];
  return (Array.isArray(ids) ? ids : [ids]).map((e) => (e && typeof e === "object" ? e.id : e)).filter(Boolean);
}

function signalList(signals, d, openEvidence, kind) {
  const list = Array.isArray(signals) ? signals : [];
  if (!list.length) return h("span", { class: "muted" }, "—");
  return h(
    "ul",
    { class: `signals signals-${kind}` },
    list.map((signal) =>
      h(
        "li",
        { title: signal && typeof signal === "object" && signal.why ? String(signal.why) : null },
        signalText(signal),
        signalEvidence(signal).map((id) => [
          " ",
          h(
            "button",
            {
              type: "button",
              class: "cite",
              dataset: { evidenceId: id },
              title: id,
              "aria-label": `${evidenceLabel(id, d)}: open evidence ${id} (${kind} signal)`,
              on: { click: (event) => openEvidence({ id, quote: "" }, `the diagnosis (${kind})`, event.currentTarget) },
            },
            evidenceLabel(id, d),
          ),
        ]),
      ),
    ),
  );
}

/** The diagnosis panel, or null when the incident has none. */
export function renderDiagnosis(d, openEvidence) {
  const rows = candidates(d.diagnosis);
  if (!rows.length) return null;
  const summary = d.diagnosis && !Array.isArray(d.diagnosis) ? d.diagnosis : {};
  const leading = summary.leading || (d.rca && d.rca.hypotheses && d.rca.hypotheses[0] ? d.rca.hypotheses[0].error_code : null);
  const verdict = summary.verdict || summary.reason || null;
  return section(
    "diagnosis",
    "Diagnosis",
    h("p", { class: "muted" }, "Each candidate cause weighed against this incident's own evidence."),
    verdict
      ? h("p", { class: summary.abstained ? "notice warning" : "muted", id: "diagnosis-verdict" }, summary.abstained ? `Abstained: ${verdict}` : `Verdict: ${verdict}`)
      : null,
    h(
      "div",
      { class: "table-scroll" },
      h(
        "table",
        { class: "diagnosis" },
        h("caption", { class: "visually-hidden" }, "Signals per candidate: confirmed, contradicted, missing"),
        h(
          "thead",
          {},
          h("tr", {}, ["Candidate", "Confirmed", "Contradicted", "Missing"].map((t) => h("th", { scope: "col" }, t))),
        ),
        h(
          "tbody",
          {},
          rows.map((c) => {
            const name = candidateName(c);
            const offered = c.offered ?? c.probable ?? null;
            return h(
              "tr",
              { class: name === leading ? "is-leading" : "", dataset: { candidate: name } },
              h(
                "th",
                { scope: "row" },
                h("span", { class: "code" }, name),
                c.error_name || c.title ? h("span", { class: "muted candidate-title" }, ` ${c.error_name || c.title}`) : null,
                c.score !== undefined ? h("span", { class: "muted candidate-score" }, ` score ${score(c.score)}`) : null,
                offered === false ? h("span", { class: "badge warn" }, "not offered") : null,
              ),
              h("td", {}, signalList(c.confirmed, d, openEvidence, "confirmed")),
              h("td", {}, signalList(c.contradicted, d, openEvidence, "contradicted")),
              h("td", {}, signalList(c.missing ?? c.expected_not_observed ?? c.not_observed, d, openEvidence, "missing")),
            );
          }),
        ),
      ),
    ),
  );
}
