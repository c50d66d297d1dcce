// The RCA panels: the RCA that stands (the approved one after a decision, with the original
// draft one click away after an edit; the draft before), its hypotheses, claims and clickable
// citations, and the earlier drafts a re-analysis replaced, each diffed against the next.

import { renderDiff, rcaToLines } from "../diff.js";
import { bandBadge, h, score } from "../dom.js";
import { evidenceLabel } from "./labels.js";
import { MOVING, bulletList, section } from "./panel.js";

/** Whether the reviewer approved an edited RCA. */
export function approvedWithEdits(d) {
  return d.status === "approved" && Boolean(d.final_rca) && (d.decision || {}).action === "edit";
}

/** What the RCA panel shows: the approved RCA once there is one, else the draft. */
function shown(d) {
  if (d.status === "approved" && d.final_rca) {
    return { rca: d.final_rca, title: approvedWithEdits(d) ? "Approved RCA (edited)" : "Approved RCA" };
  }
  const title = d.status === "rejected" ? "Rejected draft" : d.drafts && d.drafts.length ? `RCA draft ${d.drafts.length + 1}` : "RCA draft";
  return { rca: d.rca, title };
}

/** Why the analysis abstained or is unsure, in one notice (null when it is neither). */
function confidenceNotice(d, rca) {
  const docs = d.similar_error_docs || [];
  const abstained = rca.outcome === "insufficient_evidence";
  const retrieval = !docs.length
    ? "No knowledge doc was retrieved: nothing in the knowledge base resembles this incident."
    : d.low_confidence
      ? "The closest knowledge docs are weak matches."
      : "";
  if (!abstained && !retrieval) return null;
  const text = abstained ? `The agent abstained: the evidence is insufficient to name a probable cause.${retrieval ? ` ${retrieval}` : ""}` : `Low confidence: ${retrieval}`;
  return h("p", { class: "notice warning", id: "confidence-notice" }, text);
}

/** The evidence ids the draft's claims cite. */
export function citedIds(rca) {
  const ids = new Set();
  for (const hyp of (rca && rca.hypotheses) || []) {
    for (const claim of hyp.claims || []) for (const c of claim.evidence || []) ids.add(c.id);
  }
  return ids;
}

/**
 * The draft panel.
 * @param {object} d the incident
 * @param {(citation: object, claimLabel: string, button: HTMLElement) => void} openEvidence
 */
export function renderRca(d, openEvidence) {
  const { rca, title } = shown(d);
  if (!rca) {
    return section("rca", "RCA draft", h("p", { class: "muted" }, MOVING.has(d.status) ? "The analysis is running…" : "No draft."));
  }
  return section(
    "rca",
    title,
    rcaBody(d, rca, openEvidence, { current: true }),
    approvedWithEdits(d) ? originalDraft(d, openEvidence) : null,
  );
}

/** The original draft behind an edited approval, folded, with the reviewer's edit as a diff. */
function originalDraft(d, openEvidence) {
  return h(
    "details",
    { class: "original-draft", id: "original-draft" },
    h("summary", {}, "Show the original draft and the reviewer's edit"),
    renderDiff(rcaToLines(d.rca), rcaToLines(d.final_rca), {
      caption: "The reviewer's edit against the original draft",
      beforeLabel: "original draft",
      afterLabel: "approved edit",
    }),
    h("div", { class: "original-body" }, rcaBody(d, d.rca, openEvidence, { current: false })),
  );
}

function rcaBody(d, rca, openEvidence, { current }) {
  const prov = rca.provenance || {};
  const provParts = [
    `generator ${prov.generator || "unknown"}`,
    prov.prompt_version ? `prompt ${prov.prompt_version}` : null,
    prov.knowledge_version ? `knowledge ${prov.knowledge_version}` : null,
    prov.edited_by ? `edited by ${prov.edited_by}` : null,
  ].filter(Boolean);
  const dropped = d.dropped_evidence_ids || [];
  const unsupported = (rca.hypotheses || []).flatMap((hyp) => (hyp.claims || []).filter((c) => c.supported === false)).length;
  return [
    unsupported ? h("div", { class: "badges" }, h("span", { class: "badge flag" }, `${unsupported} unsupported claim(s)`)) : null,
    h("p", { class: "provenance muted" }, provParts.join(" · ")),
    prov.fallback_reason ? h("p", { class: "notice warning" }, `Fell back to the extractive generator: ${prov.fallback_reason}`) : null,
    current ? confidenceNotice(d, rca) : null,
    current && dropped.length
      ? h(
          "div",
          { class: "notice flag", id: "dropped-citations", role: "note" },
          h("strong", {}, `${dropped.length} citation(s) dropped`),
          " — the draft cited evidence it was not given; the whitelist removed it:",
          h("ul", { class: "dropped" }, dropped.map((id) => h("li", {}, h("code", {}, id)))),
        )
      : null,
    current ? renderRemovedCitations(d, openEvidence) : null,
    h("h4", {}, "Summary"),
    h("p", { class: "summary", id: current ? "rca-summary" : null }, rca.summary || ""),
    h("h4", {}, "Hypotheses"),
    rca.hypotheses && rca.hypotheses.length
      ? h("ol", { class: "hypotheses" }, rca.hypotheses.map((hyp, i) => renderHypothesis(d, hyp, i, openEvidence)))
      : h("p", { class: "muted" }, "No hypothesis."),
    rcaList("Ruled out", rca.ruled_out),
    rcaList("Missing evidence", rca.missing_evidence),
    rcaList("Next checks", rca.next_checks, "next-checks"),
    rcaList("Remediation", rca.remediation, "remediation"),
  ];
}

function renderRemovedCitations(d, openEvidence) {
  const removed = d.unsupported_citations || [];
  if (!removed.length) return null;
  return h(
    "div",
    { class: "notice flag", id: "removed-citations", role: "note" },
    h("strong", {}, `${removed.length} citation(s) removed by the citation check`),
    " — the cited text does not support the claim:",
    h(
      "ul",
      { class: "removed" },
      removed.map((item) =>
        h(
          "li",
          {},
          h(
            "button",
            {
              type: "button",
              class: "cite support-unsupported",
              dataset: { evidenceId: item.id },
              "aria-label": `${evidenceLabel(item.id, d, item)}: open evidence ${item.id} (removed citation)`,
              on: { click: (event) => openEvidence(item, "a claim; removed by the citation check", event.currentTarget) },
            },
            evidenceLabel(item.id, d, item),
          ),
          item.score !== undefined && item.score !== null ? ` score ${score(item.score)}` : "",
          item.claim ? h("span", { class: "removed-claim" }, ` for: “${item.claim}”`) : null,
        ),
      ),
    ),
  );
}

function rcaList(title, items, className = "") {
  if (!items || !items.length) return null;
  return [h("h4", {}, title), bulletList(items, className)];
}

/** The flags on a hypothesis (strings or {message|text|reason}), e.g. "contradicted by the diagnosis". */
function flagsOf(hyp) {
  return (Array.isArray(hyp.flags) ? hyp.flags : [])
    .map((f) => (f && typeof f === "object" ? f.message || f.text || f.reason || f.code || "" : String(f)))
    .filter(Boolean);
}

function renderHypothesis(d, hyp, index, openEvidence) {
  return h(
    "li",
    { class: "hypothesis" },
    h(
      "div",
      { class: "hypothesis-head" },
      h("span", { class: "h-index" }, `H${index + 1}`),
      hyp.error_code ? h("span", { class: "code" }, hyp.error_code) : null,
      bandBadge(hyp.confidence),
    ),
    h("p", { class: "statement" }, hyp.statement || ""),
    flagsOf(hyp).length ? h("ul", { class: "hypothesis-flags" }, flagsOf(hyp).map((text) => h("li", { class: "badge flag" }, text))) : null,
    h(
      "ul",
      { class: "claims" },
      (hyp.claims || []).map((claim, c) => {
        const label = `${index + 1}.${c + 1}`;
        const unsupported = claim.supported === false;
        return h(
          "li",
          { class: `claim${unsupported ? " unsupported" : ""}`, dataset: { claim: label } },
          h("span", { class: "claim-label" }, label),
          unsupported ? h("span", { class: "badge flag" }, "unsupported") : null,
          !unsupported && claim.support === "weak" ? h("span", { class: "badge warn-weak" }, "weakly supported") : null,
          h("span", { class: "claim-text" }, claim.text || ""),
          unsupported && !(claim.evidence || []).length
            ? h("span", { class: "claim-note" }, "No citation survived the whitelist: treat this claim as unverified.")
            : null,
          (claim.evidence || []).length
            ? h(
                "span",
                { class: "citations" },
                claim.evidence.map((citation) =>
                  h(
                    "button",
                    {
                      type: "button",
                      class: `cite${citation.support ? ` support-${citation.support}` : ""}`,
                      dataset: { evidenceId: citation.id },
                      title: citation.quote ? `${citation.id}: “${citation.quote}”` : citation.id,
                      "aria-label": `${evidenceLabel(citation.id, d, citation)}: open evidence ${citation.id} for claim ${label}`,
                      on: { click: (event) => openEvidence(citation, `claim ${label}`, event.currentTarget) },
                    },
                    evidenceLabel(citation.id, d, citation),
                  ),
                ),
              )
            : null,
        );
      }),
    ),
  );
}

/** The drafts a re-analysis replaced, each diffed against the one after it; null when none. */
export function renderDrafts(d) {
  const drafts = d.drafts || [];
  if (!drafts.length) return null;
  const chain = [...drafts, d.rca];
  return section(
    "drafts",
    `Earlier drafts (${drafts.length})`,
    h("p", { class: "muted" }, "A reviewer asked for re-analysis; each earlier draft is kept. Diffs compare a draft with the one after it."),
    h(
      "ol",
      { class: "drafts" },
      drafts.map((draft, index) =>
        h(
          "li",
          { class: "draft" },
          h(
            "details",
            {},
            h("summary", {}, `Draft ${index + 1} · `, bandBadge(draft && draft.confidence), ` · ${(draft && draft.summary) || ""}`),
            renderDiff(rcaToLines(draft), rcaToLines(chain[index + 1]), {
              caption: `Draft ${index + 1} → ${index + 1 === drafts.length ? "current draft" : `draft ${index + 2}`}`,
              beforeLabel: `draft ${index + 1}`,
              afterLabel: index + 1 === drafts.length ? "current draft" : `draft ${index + 2}`,
            }),
          ),
        ),
      ),
    ),
  );
}
