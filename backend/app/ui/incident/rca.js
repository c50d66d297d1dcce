// The RCA panels: the current draft with its hypotheses, claims and clickable citations, and the
// earlier drafts a re-analysis replaced, each diffed against the next.

import { renderDiff, rcaToLines } from "../diff.js";
import { bandBadge, h, score } from "../dom.js";
import { MOVING, bulletList, section } from "./panel.js";

function shortId(id) {
  return id.startsWith("error-doc-") ? `${id.slice(0, 18)}…` : id;
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
  const rca = d.rca;
  if (!rca) {
    return section("rca", "RCA draft", h("p", { class: "muted" }, MOVING.has(d.status) ? "The analysis is running…" : "No draft."));
  }
  const prov = rca.provenance || {};
  const provParts = [
    `generator ${prov.generator || "unknown"}`,
    prov.prompt_version ? `prompt ${prov.prompt_version}` : null,
    prov.knowledge_version ? `knowledge ${prov.knowledge_version}` : null,
    prov.edited_by ? `edited by ${prov.edited_by}` : null,
  ].filter(Boolean);
  const dropped = d.dropped_evidence_ids || [];
  const unsupported = (rca.hypotheses || []).flatMap((hyp) => (hyp.claims || []).filter((c) => c.supported === false)).length;
  return section(
    "rca",
    d.drafts && d.drafts.length ? `RCA draft ${d.drafts.length + 1}` : "RCA draft",
    h(
      "div",
      { class: "badges" },
      bandBadge(rca.confidence),
      h("span", { class: `badge outcome-badge outcome-${rca.outcome}` }, rca.outcome === "insufficient_evidence" ? "insufficient evidence" : "analysis"),
      unsupported ? h("span", { class: "badge flag" }, `${unsupported} unsupported claim(s)`) : null,
    ),
    h("p", { class: "provenance muted" }, provParts.join(" · ")),
    prov.fallback_reason ? h("p", { class: "notice warning" }, `Fell back to the extractive generator: ${prov.fallback_reason}`) : null,
    rca.outcome === "insufficient_evidence"
      ? h("p", { class: "notice warning" }, "The agent abstained: the evidence is insufficient to name a probable cause.")
      : null,
    d.low_confidence ? h("p", { class: "notice warning" }, "Retrieval flagged low confidence: the closest knowledge docs are weak matches.") : null,
    dropped.length
      ? h(
          "div",
          { class: "notice flag", id: "dropped-citations", role: "note" },
          h("strong", {}, `${dropped.length} citation(s) dropped`),
          " — the draft cited evidence it was not given; the whitelist removed it:",
          h("ul", { class: "dropped" }, dropped.map((id) => h("li", {}, h("code", {}, id)))),
        )
      : null,
    renderRemovedCitations(d, openEvidence),
    h("h4", {}, "Summary"),
    h("p", { class: "summary", id: "rca-summary" }, rca.summary || ""),
    h("h4", {}, "Hypotheses"),
    rca.hypotheses && rca.hypotheses.length
      ? h("ol", { class: "hypotheses" }, rca.hypotheses.map((hyp, i) => renderHypothesis(hyp, i, openEvidence)))
      : h("p", { class: "muted" }, "No hypothesis."),
    rcaList("Ruled out", rca.ruled_out),
    rcaList("Missing evidence", rca.missing_evidence),
    rcaList("Next checks", rca.next_checks, "next-checks"),
    rcaList("Remediation", rca.remediation, "remediation"),
  );
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
              "aria-label": `Open evidence ${item.id} (removed citation)`,
              on: { click: (event) => openEvidence(item, "a claim; removed by the citation check", event.currentTarget) },
            },
            shortId(String(item.id)),
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

function renderHypothesis(hyp, index, openEvidence) {
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
                      title: citation.quote ? `“${citation.quote}”` : citation.id,
                      "aria-label": `Open evidence ${citation.id} for claim ${label}`,
                      on: { click: (event) => openEvidence(citation, `claim ${label}`, event.currentTarget) },
                    },
                    shortId(citation.id),
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
