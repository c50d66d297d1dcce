// The incident page: the incident, the RCA draft with clickable citations, the evidence the
// model saw, earlier drafts, the audit trail and the decision forms.

import { api, getApiKey } from "./api.js";
import { renderDiff, rcaToLines } from "./diff.js";
import { age, bandBadge, h, replace, score, statusBadge, statusLabel, time } from "./dom.js";
import { lineRanges, locateCitation, renderHighlighted, resolveEvidence } from "./evidence.js";

const DECIDED = new Set(["approved", "rejected"]);
const MOVING = new Set(["analyzing", "deciding"]);

const WHY_LABELS = [
  ["dense_rank", "Dense rank"],
  ["dense_score", "Dense score"],
  ["bm25_rank", "BM25 rank"],
  ["bm25_score", "BM25 score"],
  ["fused_score", "Fused score"],
  ["code_match", "Error-code match"],
  ["rerank_score", "Rerank score"],
];

const SUPPORT_LABELS = {
  supported: "supported",
  weak: "weakly supported",
  unsupported: "not supported",
};

function section(id, title, ...children) {
  return h(
    "section",
    { id, class: "panel", "aria-labelledby": `${id}-title` },
    h("h3", { id: `${id}-title` }, title),
    ...children,
  );
}

function bulletList(items, className = "") {
  return h("ul", { class: className }, (items || []).map((item) => h("li", {}, String(item))));
}

function linesOf(text) {
  return String(text || "")
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter(Boolean);
}

function numberedPre(text, idPrefix, cited, className) {
  const content = String(text || "");
  const pre = h("pre", { class: `numbered ${className}` });
  lineRanges(content).forEach(([start, end], index) => {
    const id = `${idPrefix}:${index + 1}`;
    pre.append(
      h(
        "span",
        {
          class: `line${cited.has(id) ? " is-cited" : ""}`,
          dataset: { evidenceId: id, line: index + 1 },
          title: id,
        },
        content.slice(start, end),
      ),
      "\n",
    );
  });
  return pre;
}

function grow(area) {
  // Let a textarea fit its text (up to a limit) so edits are visible without inner scrolling.
  if (!(area instanceof HTMLTextAreaElement)) return;
  area.style.height = "auto";
  area.style.height = `${Math.min(area.scrollHeight + 2, 400)}px`;
}

/** Who a decision will be recorded under. */
export function decidingAs(reviewer) {
  if (getApiKey()) return "Decisions are recorded under the identity of your API key.";
  return reviewer
    ? `Deciding as ${reviewer}.`
    : "Deciding as anonymous: set your name in the Reviewer box at the top.";
}

function shortId(id) {
  return id.startsWith("error-doc-") ? `${id.slice(0, 18)}…` : id;
}

export class IncidentView {
  /**
   * @param {HTMLElement} root the <main> element
   * @param {{reviewer: () => string, onChanged: () => void}} hooks
   */
  constructor(root, hooks) {
    this.root = root;
    this.hooks = hooks;
    this.id = null;
    this.data = null;
    this.audit = null;
    this.flash = null;
    this.openForm = null;
    this.busy = false;
    this.staleNotice = null;
  }

  async load(id, { keepFlash = false } = {}) {
    const changed = id !== this.id;
    this.id = id;
    if (!keepFlash) this.flash = null;
    if (changed) {
      this.openForm = null;
      replace(this.root, h("p", { class: "muted loading" }, "Loading incident…"));
    }
    try {
      const [data, audit] = await Promise.all([api.getIncident(id), api.getAudit(id)]);
      if (this.id !== id) return;
      this.data = data;
      this.audit = audit;
      this.render();
    } catch (err) {
      if (this.id !== id) return;
      this.data = null;
      replace(
        this.root,
        h(
          "div",
          { class: "panel error-panel", role: "alert" },
          h("h2", {}, err.status === 404 ? "Incident not found" : "Could not load the incident"),
          h("p", {}, err.message),
          h("p", {}, h("a", { href: "#/" }, "Back to the inbox")),
        ),
      );
    }
    if (changed) this.root.focus({ preventScroll: true });
  }

  /** Called after each inbox poll with this incident's row. */
  noticeUpdate(row) {
    if (!row || !this.data || this.busy || row.id !== this.id) return;
    if (row.status === this.data.status && row.updated_at === this.data.updated_at) return;
    if (MOVING.has(this.data.status) || !this.openForm) {
      // Nothing typed that a re-render could lose: show the new state.
      this.load(this.id, { keepFlash: true });
      return;
    }
    const who = row.decided_by ? ` by ${row.decided_by}` : "";
    this.showStale(`This incident changed while you were reading: now ${statusLabel(row.status)}${who}.`);
  }

  showStale(text) {
    const holder = this.root.querySelector("#stale-notice");
    if (!holder) return;
    replace(
      holder,
      h(
        "div",
        { class: "notice warning", role: "status" },
        text,
        " ",
        h("button", { type: "button", class: "small", on: { click: () => this.load(this.id) } }, "Reload"),
      ),
    );
  }

  // ----- rendering ---------------------------------------------------------------------------

  render() {
    const d = this.data;
    const incident = d.incident || {};
    const titleCode = incident.error_code || "Incident";
    document.title = `${titleCode} · ${statusLabel(d.status)} · Incident RCA review`;
    this.cited = this.citedIds(d.rca);
    this.evidencePane = h(
      "aside",
      { id: "evidence", class: "evidence-pane", "aria-labelledby": "evidence-title", tabindex: "-1" },
      h("h3", { id: "evidence-title" }, "Evidence"),
      h("p", { class: "muted" }, "Select a citation to see the cited text with the quoted words highlighted."),
    );
    const main = h(
      "div",
      { class: "incident-main" },
      this.renderHeader(d, incident),
      h("div", { id: "stale-notice" }),
      this.renderFlash(),
      this.renderOutcome(d),
      this.renderIncident(incident),
      this.renderRca(d),
      d.status === "awaiting_review" ? this.renderDecide(d) : null,
      this.renderDocs(d),
      this.renderPastIncidents(d),
      this.renderDrafts(d),
      this.renderAudit(),
    );
    replace(this.root, h("div", { class: "incident-layout", dataset: { id: d.id, status: d.status } }, main, this.evidencePane));
    if (this.openForm) this.showForm(this.openForm, { focus: false });
  }

  citedIds(rca) {
    const ids = new Set();
    for (const hyp of (rca && rca.hypotheses) || []) {
      for (const claim of hyp.claims || []) for (const c of claim.evidence || []) ids.add(c.id);
    }
    return ids;
  }

  renderHeader(d, incident) {
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

  renderFlash() {
    if (!this.flash) return null;
    return h(
      "div",
      {
        id: "flash",
        class: `notice ${this.flash.kind}`,
        role: this.flash.kind === "error" ? "alert" : "status",
        tabindex: "-1",
      },
      this.flash.text,
    );
  }

  renderOutcome(d) {
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

  renderIncident(incident) {
    const cited = this.cited;
    return section(
      "incident",
      "Incident",
      h("h4", {}, "Message"),
      h("pre", { class: `message${cited.has("incident:message") ? " is-cited" : ""}`, id: "incident-message" }, incident.message || ""),
      incident.stack_trace
        ? [h("h4", {}, "Stack trace"), numberedPre(incident.stack_trace, "incident:stack", cited, "stack")]
        : h("p", { class: "muted" }, "No stack trace."),
      incident.logs && incident.logs.length
        ? [
            h("h4", {}, `Logs (${incident.logs.length})`),
            (() => {
              const pre = h("pre", { class: "numbered logs" });
              incident.logs.forEach((line, index) => {
                const id = `incident:log:${index + 1}`;
                pre.append(
                  h("span", { class: `line${cited.has(id) ? " is-cited" : ""}`, dataset: { evidenceId: id, line: index + 1 }, title: id }, String(line)),
                  "\n",
                );
              });
              return pre;
            })(),
          ]
        : h("p", { class: "muted" }, "No logs."),
      incident.reviewer_notes && incident.reviewer_notes.length
        ? [h("h4", {}, "Reviewer notes"), bulletList(incident.reviewer_notes, "notes")]
        : null,
    );
  }

  renderRca(d) {
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
      this.renderRemovedCitations(d),
      h("h4", {}, "Summary"),
      h("p", { class: "summary", id: "rca-summary" }, rca.summary || ""),
      h("h4", {}, "Hypotheses"),
      rca.hypotheses && rca.hypotheses.length
        ? h("ol", { class: "hypotheses" }, rca.hypotheses.map((hyp, i) => this.renderHypothesis(hyp, i)))
        : h("p", { class: "muted" }, "No hypothesis."),
      this.rcaList("Ruled out", rca.ruled_out),
      this.rcaList("Missing evidence", rca.missing_evidence),
      this.rcaList("Next checks", rca.next_checks, "next-checks"),
      this.rcaList("Remediation", rca.remediation, "remediation"),
    );
  }

  renderRemovedCitations(d) {
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
                on: { click: (event) => this.openEvidence(item, "a claim; removed by the citation check", event.currentTarget) },
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

  rcaList(title, items, className = "") {
    if (!items || !items.length) return null;
    return [h("h4", {}, title), bulletList(items, className)];
  }

  renderHypothesis(hyp, index) {
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
                        on: { click: (event) => this.openEvidence(citation, `claim ${label}`, event.currentTarget) },
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

  openEvidence(citation, claimLabel, button) {
    const d = this.data;
    const resolved = resolveEvidence(citation.id, d.incident, d.similar_error_docs);
    const back = h(
      "button",
      { type: "button", class: "secondary small", on: { click: () => button && button.focus() } },
      "Back to the claim",
    );
    const close = h(
      "button",
      {
        type: "button",
        class: "secondary small",
        on: {
          click: () => {
            this.closeEvidence();
            if (button) button.focus();
          },
        },
      },
      "Close",
    );
    const quote = citation.quote ? h("blockquote", { class: "quote" }, citation.quote) : h("p", { class: "muted" }, "The citation has no quote.");
    let body;
    if (!resolved) {
      body = h("p", { class: "notice flag" }, "This id is not among the evidence the model was given (or the cited line does not exist).");
    } else {
      const located = locateCitation(resolved, citation);
      const legend = [];
      if (located.span) legend.push(h("mark", { class: "cited-span" }, "sentence the citation check found supporting the claim"));
      if (located.quote) {
        legend.push(h("mark", { class: "cited-quote" }, located.quote.exact ? "the model's quote" : "the model's quote (matched ignoring case and spacing)"));
      }
      body = [
        legend.length ? h("p", { class: "match muted" }, "Highlighted: ", legend.flatMap((m, i) => (i ? [" and ", m] : [m])), ".") : null,
        citation.quote && !located.quote
          ? h("p", { class: "notice flag" }, "The quoted words were not found in this text: check the claim against it by hand.")
          : null,
        !located.span && !located.quote ? h("p", { class: "muted" }, "Nothing to highlight: read the whole text.") : null,
        resolved.doc ? this.docScores(resolved.doc) : null,
        renderHighlighted(resolved, located),
      ];
    }
    replace(
      this.evidencePane,
      h("h3", { id: "evidence-title" }, "Evidence"),
      h(
        "div",
        { class: "evidence-head" },
        h("p", {}, h("code", { class: "evidence-id" }, citation.id), ` cited by ${claimLabel}`),
        resolved ? h("p", { class: "muted" }, resolved.title === citation.id ? "Knowledge doc as the model saw it" : resolved.title) : null,
        citation.support
          ? h(
              "p",
              { class: `verdict support-${citation.support}` },
              `Citation check: ${SUPPORT_LABELS[citation.support] || citation.support}`,
              citation.score !== undefined && citation.score !== null ? ` (score ${score(citation.score)})` : "",
            )
          : null,
        h("div", { class: "actions" }, back, close),
      ),
      h("h4", {}, "Quote"),
      quote,
      h("h4", {}, "Source"),
      body,
    );
    this.evidencePane.classList.add("open");
    this.evidencePane.dataset.evidenceId = citation.id;
    for (const b of this.root.querySelectorAll("button.cite[aria-pressed]")) b.removeAttribute("aria-pressed");
    if (button) button.setAttribute("aria-pressed", "true");
    this.evidencePane.focus({ preventScroll: true });
    // Scroll the pane (only the pane, not the page the reviewer is reading) to the highlight.
    const mark = this.evidencePane.querySelector("mark");
    if (mark) {
      const pane = this.evidencePane.getBoundingClientRect();
      const at = mark.getBoundingClientRect();
      this.evidencePane.scrollTop += at.top - pane.top - pane.height / 3;
    }
  }

  closeEvidence() {
    if (!this.evidencePane) return;
    this.evidencePane.classList.remove("open");
    delete this.evidencePane.dataset.evidenceId;
    replace(
      this.evidencePane,
      h("h3", { id: "evidence-title" }, "Evidence"),
      h("p", { class: "muted" }, "Select a citation to see the cited text with the quoted words highlighted."),
    );
    for (const b of this.root.querySelectorAll("button.cite[aria-pressed]")) b.removeAttribute("aria-pressed");
  }

  docScores(doc) {
    const why = doc.why || {};
    return h(
      "p",
      { class: "muted scores" },
      `similarity ${score(doc.similarity)}`,
      why.fused_score !== undefined ? ` · fused ${score(why.fused_score)}` : "",
      why.dense_rank ? ` · dense #${why.dense_rank}` : "",
      why.bm25_rank ? ` · BM25 #${why.bm25_rank}` : "",
      why.code_match ? " · error-code match" : "",
    );
  }

  renderWhy(why) {
    const keys = WHY_LABELS.filter(([key]) => key in (why || {}));
    const extra = Object.keys(why || {}).filter((key) => !WHY_LABELS.some(([k]) => k === key));
    const rows = [
      ...keys.map(([key, label]) => [label, why[key]]),
      ...extra.map((key) => [key, why[key]]),
    ];
    if (!rows.length) return h("p", { class: "muted" }, "No ranking explanation recorded.");
    const fmt = (v) => (typeof v === "boolean" ? (v ? "yes" : "no") : typeof v === "object" && v !== null ? JSON.stringify(v) : score(v, 4));
    return h(
      "table",
      { class: "why" },
      h("caption", {}, "Why it ranked"),
      h("tbody", {}, rows.map(([label, value]) => h("tr", {}, h("th", { scope: "row" }, label), h("td", {}, fmt(value))))),
    );
  }

  renderDocs(d) {
    const docs = d.similar_error_docs || [];
    const citedBy = new Map();
    (d.rca?.hypotheses || []).forEach((hyp, i) =>
      (hyp.claims || []).forEach((claim, c) =>
        (claim.evidence || []).forEach((e) => {
          if (!citedBy.has(e.id)) citedBy.set(e.id, []);
          citedBy.get(e.id).push(`${i + 1}.${c + 1}`);
        }),
      ),
    );
    return section(
      "docs",
      `What the model saw: ${docs.length} knowledge doc(s)`,
      docs.length
        ? h(
            "ol",
            { class: "docs" },
            docs.map((doc, index) => {
              const meta = doc.metadata || {};
              const claims = citedBy.get(doc.id) || [];
              return h(
                "li",
                { class: "doc", id: `doc-${doc.id}`, dataset: { docId: doc.id } },
                h(
                  "div",
                  { class: "doc-head" },
                  h("span", { class: "rank" }, `#${index + 1}`),
                  h("code", {}, doc.id),
                  meta.error_code ? h("span", { class: "code" }, [meta.error_code, meta.error_name].filter(Boolean).join(" ")) : null,
                  h("span", { class: "similarity" }, `similarity ${score(doc.similarity)}`),
                ),
                h("p", { class: "muted" }, claims.length ? `Cited by claim(s) ${claims.join(", ")}` : "Not cited by the draft."),
                this.renderWhy(doc.why),
                h("pre", { class: "doc-content" }, String(doc.content || "")),
                Object.keys(meta).length
                  ? h(
                      "details",
                      { class: "metadata" },
                      h("summary", {}, "Metadata"),
                      h(
                        "dl",
                        {},
                        Object.entries(meta).map(([k, v]) => [h("dt", {}, k), h("dd", {}, typeof v === "object" ? JSON.stringify(v) : String(v))]),
                      ),
                    )
                  : null,
              );
            }),
          )
        : h("p", { class: "muted" }, "No knowledge doc was retrieved."),
    );
  }

  renderPastIncidents(d) {
    const past = d.similar_past_incidents;
    if (!Array.isArray(past) || !past.length) return null;
    return section(
      "past",
      `Similar past incidents (${past.length})`,
      h(
        "ul",
        { class: "past" },
        past.map((item) => {
          if (typeof item !== "object" || item === null) return h("li", {}, String(item));
          const shown = new Set(["id", "incident_id", "error_code", "status", "summary", "similarity", "score", "decided_at"]);
          const id = item.id || item.incident_id;
          const rest = Object.entries(item).filter(([k, v]) => !shown.has(k) && v !== null && typeof v !== "object");
          return h(
            "li",
            { class: "past-item" },
            h(
              "div",
              { class: "doc-head" },
              id ? h("a", { href: `#/incidents/${encodeURIComponent(id)}` }, item.error_code || id) : h("span", { class: "code" }, item.error_code || "incident"),
              item.status ? statusBadge(item.status) : null,
              item.similarity !== undefined || item.score !== undefined
                ? h("span", { class: "similarity" }, `similarity ${score(item.similarity ?? item.score)}`)
                : null,
            ),
            item.summary ? h("p", {}, String(item.summary)) : null,
            item.decided_at ? h("p", { class: "muted" }, "Approved ", time(item.decided_at)) : null,
            rest.length ? h("dl", { class: "meta" }, rest.map(([k, v]) => [h("dt", {}, k), h("dd", {}, String(v))])) : null,
          );
        }),
      ),
    );
  }

  renderDrafts(d) {
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

  renderAudit() {
    const events = (this.audit && this.audit.events) || [];
    return section(
      "audit",
      `Audit trail (${events.length})`,
      events.length
        ? h(
            "ol",
            { class: "timeline" },
            events.map((event) => {
              const title =
                event.type === "decision"
                  ? `Decision: ${event.action}${event.actor ? ` by ${event.actor}` : ""}`
                  : event.type === "draft"
                    ? `Draft written${event.actor ? ` by ${event.actor}` : ""}`
                    : event.type === "created"
                      ? "Incident created"
                      : `${event.type}${event.actor ? ` by ${event.actor}` : ""}`;
              const dropped = event.dropped_evidence_ids || [];
              // The readable field-by-field diff when both versions are there; the server's
              // unified JSON diff otherwise.
              let diff = null;
              if (event.edited_rca && event.original_rca) {
                diff = renderDiff(rcaToLines(event.original_rca), rcaToLines(event.edited_rca), {
                  caption: "Edit against the original draft",
                  beforeLabel: "original",
                  afterLabel: "edited",
                });
              } else if (event.diff) {
                diff = h("pre", { class: "diff" }, String(event.diff));
              }
              return h(
                "li",
                { class: `event event-${event.type}`, dataset: { type: event.type, action: event.action || "" } },
                h("div", { class: "event-head" }, h("strong", {}, title), " ", time(event.at)),
                event.comment ? h("blockquote", { class: "comment" }, event.comment) : null,
                event.type === "draft" && event.rca
                  ? h("p", { class: "muted" }, `${event.rca.confidence || "—"} confidence: ${event.rca.summary || ""}`)
                  : null,
                dropped.length ? h("p", { class: "flag-text" }, `${dropped.length} citation(s) dropped: ${dropped.join(", ")}`) : null,
                diff ? h("details", { open: event.action === "edit" }, h("summary", {}, "Show the edit"), diff) : null,
              );
            }),
          )
        : h("p", { class: "muted" }, "No events."),
    );
  }

  // ----- deciding ----------------------------------------------------------------------------

  renderDecide(d) {
    const reviewer = this.hooks.reviewer();
    const tabs = [
      ["approve", "Approve", "a"],
      ["reject", "Reject", "r"],
      ["edit", "Edit & approve", "e"],
      ["reanalyze", "Request re-analysis", "n"],
    ];
    this.forms = {
      approve: this.approveForm(),
      reject: this.rejectForm(),
      edit: this.editForm(d.rca),
      reanalyze: this.reanalyzeForm(),
    };
    return h(
      "section",
      { id: "decide", class: "panel decide", "aria-labelledby": "decide-title" },
      h("h3", { id: "decide-title" }, "Decision"),
      h(
        "p",
        { class: "muted", id: "deciding-as" },
        decidingAs(reviewer),
      ),
      h(
        "div",
        { class: "decide-actions", role: "group", "aria-label": "Decision actions" },
        tabs.map(([name, label, key]) =>
          h(
            "button",
            {
              type: "button",
              class: `decide-${name}`,
              id: `decide-${name}`,
              "aria-expanded": "false",
              "aria-controls": `form-${name}`,
              "aria-keyshortcuts": key,
              on: { click: () => this.showForm(name) },
            },
            label,
            " ",
            h("kbd", {}, key),
          ),
        ),
      ),
      Object.values(this.forms),
      h("div", { id: "decide-message", class: "decide-message", role: "alert" }),
    );
  }

  showForm(name, { focus = true } = {}) {
    if (!this.forms || !this.forms[name]) return false;
    this.openForm = name;
    for (const [key, form] of Object.entries(this.forms)) {
      form.hidden = key !== name;
      const tab = this.root.querySelector(`#decide-${key}`);
      if (tab) tab.setAttribute("aria-expanded", String(key === name));
    }
    this.clearMessage();
    for (const area of this.forms[name].querySelectorAll("textarea")) grow(area);
    if (focus) {
      const first = this.forms[name].querySelector("textarea, input, button[type=submit]");
      if (first) {
        first.focus();
        this.forms[name].scrollIntoView({ block: "nearest" });
      }
    }
    return true;
  }

  hideForms() {
    if (!this.forms) return;
    this.openForm = null;
    for (const [key, form] of Object.entries(this.forms)) {
      form.hidden = true;
      const tab = this.root.querySelector(`#decide-${key}`);
      if (tab) tab.setAttribute("aria-expanded", "false");
    }
  }

  field(id, label, control, hint) {
    control.id = id;
    return h("div", { class: "field" }, h("label", { for: id }, label), hint ? h("p", { class: "hint", id: `${id}-hint` }, hint) : null, control);
  }

  formShell(name, title, submitLabel, children, onSubmit) {
    const submit = h("button", { type: "submit", class: `primary submit-${name}` }, submitLabel);
    const cancel = h("button", { type: "button", class: "secondary", on: { click: () => this.hideForms() } }, "Cancel");
    const form = h(
      "form",
      { id: `form-${name}`, class: "decide-form", novalidate: true, hidden: true, "aria-label": title },
      h("h4", {}, title),
      children,
      h("div", { class: "actions" }, submit, cancel),
    );
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      if (!this.busy) onSubmit(form, submit);
    });
    form.addEventListener("keydown", (event) => {
      if (event.key === "Escape") {
        this.hideForms();
        const tab = this.root.querySelector(`#decide-${name}`);
        if (tab) tab.focus();
      }
    });
    return form;
  }

  approveForm() {
    const comment = h("textarea", { name: "comment", rows: "2", maxlength: "4000" });
    return this.formShell(
      "approve",
      "Approve the draft as it is",
      "Approve",
      [this.field("approve-comment", "Comment (optional)", comment)],
      (form, submit) => this.submit({ action: "approve", comment: comment.value.trim() || undefined }, submit, "Approved."),
    );
  }

  rejectForm() {
    const reason = h("textarea", { name: "comment", rows: "3", maxlength: "4000", "aria-required": "true", "aria-describedby": "reject-reason-hint" });
    return this.formShell(
      "reject",
      "Reject the draft",
      "Reject",
      [this.field("reject-reason", "Reason (required)", reason, "Say what is wrong, so the next reviewer and the knowledge base can learn from it.")],
      (form, submit) => {
        const text = reason.value.trim();
        if (!text) {
          reason.setAttribute("aria-invalid", "true");
          this.showMessage("error", "A reason is required to reject a draft.");
          reason.focus();
          return;
        }
        reason.removeAttribute("aria-invalid");
        this.submit({ action: "reject", comment: text }, submit, "Rejected.");
      },
    );
  }

  editForm(rca) {
    rca = rca || { summary: "", hypotheses: [] };
    const summary = h("textarea", { name: "summary", rows: "4" });
    summary.value = rca.summary || "";
    const statements = (rca.hypotheses || []).map((hyp, i) => {
      const area = h("textarea", { name: `statement-${i}`, rows: "3", class: "statement-input" });
      area.value = hyp.statement || "";
      return area;
    });
    const remediation = h("textarea", { name: "remediation", rows: "3" });
    remediation.value = (rca.remediation || []).join("\n");
    const nextChecks = h("textarea", { name: "next_checks", rows: "3" });
    nextChecks.value = (rca.next_checks || []).join("\n");
    const comment = h("textarea", { name: "comment", rows: "2" });
    const preview = h("div", { class: "edit-preview", "aria-live": "polite" });

    const edited = () => {
      const copy = structuredClone(rca);
      copy.summary = summary.value.trim();
      statements.forEach((area, i) => {
        copy.hypotheses[i].statement = area.value.trim();
      });
      copy.remediation = linesOf(remediation.value);
      copy.next_checks = linesOf(nextChecks.value);
      return copy;
    };
    const update = () => replace(preview, renderDiff(rcaToLines(rca), rcaToLines(edited()), { caption: "Your edit against the draft", afterLabel: "your edit" }));

    const form = this.formShell(
      "edit",
      "Edit the draft, then approve it",
      "Approve with edits",
      [
        this.field("edit-summary", "Summary", summary),
        statements.map((area, i) => this.field(`edit-statement-${i}`, `Hypothesis ${i + 1} statement`, area)),
        this.field("edit-remediation", "Remediation (one per line)", remediation),
        this.field("edit-next-checks", "Next checks (one per line)", nextChecks),
        this.field("edit-comment", "Comment (optional)", comment),
        preview,
      ],
      (f, submit) => {
        const next = edited();
        if (!next.summary) {
          summary.setAttribute("aria-invalid", "true");
          this.showMessage("error", "The summary must not be empty.");
          summary.focus();
          return;
        }
        const blank = statements.findIndex((area) => !area.value.trim());
        if (blank >= 0) {
          this.showMessage("error", `Hypothesis ${blank + 1} needs a statement.`);
          statements[blank].focus();
          return;
        }
        if (JSON.stringify(next) === JSON.stringify(rca)) {
          this.showMessage("error", "Nothing was changed: use Approve to accept the draft as it is.");
          summary.focus();
          return;
        }
        this.submit({ action: "edit", rca: next, comment: comment.value.trim() || undefined }, submit, "Approved with your edits.");
      },
    );
    form.addEventListener("input", (event) => {
      grow(event.target);
      update();
    });
    update();
    return form;
  }

  reanalyzeForm() {
    const comment = h("textarea", { name: "comment", rows: "2", "aria-required": "true" });
    const logs = h("textarea", { name: "logs", rows: "4", class: "mono", spellcheck: "false" });
    const stack = h("textarea", { name: "stack_trace", rows: "4", class: "mono", spellcheck: "false" });
    const note = h("textarea", { name: "note", rows: "2" });
    return this.formShell(
      "reanalyze",
      "Send back for re-analysis with more evidence",
      "Request re-analysis",
      [
        this.field("reanalyze-comment", "Why (required)", comment),
        this.field("reanalyze-logs", "Added log lines (one per line)", logs),
        this.field("reanalyze-stack", "Replacement stack trace (optional)", stack),
        this.field("reanalyze-note", "Note for the analysis (optional)", note),
      ],
      (form, submit) => {
        const why = comment.value.trim();
        if (!why) {
          comment.setAttribute("aria-invalid", "true");
          this.showMessage("error", "Say why the draft needs re-analysis.");
          comment.focus();
          return;
        }
        const added = {};
        const lines = logs.value.split(/\r?\n/).filter((line) => line.trim());
        if (lines.length) added.logs = lines;
        if (stack.value.trim()) added.stack_trace = stack.value;
        if (note.value.trim()) added.note = note.value.trim();
        const body = { action: "reanalyze", comment: why };
        if (Object.keys(added).length) body.added_evidence = added;
        this.submit(body, submit, "Sent back for re-analysis: a new draft awaits review.");
      },
    );
  }

  clearMessage() {
    const box = this.root.querySelector("#decide-message");
    if (box) replace(box);
  }

  showMessage(kind, text, extra = null) {
    const box = this.root.querySelector("#decide-message");
    if (!box) return;
    replace(box, h("div", { class: `notice ${kind}` }, text, extra ? [" ", extra] : null));
  }

  async submit(body, button, successText) {
    const reviewer = this.hooks.reviewer();
    if (reviewer) body.reviewer = reviewer;
    const id = this.id;
    const label = button.textContent;
    this.busy = true;
    button.disabled = true;
    button.textContent = "Sending…";
    this.root.setAttribute("aria-busy", "true");
    this.clearMessage();
    try {
      const data = await api.decide(id, body);
      this.data = data;
      this.openForm = null;
      this.flash = { kind: "success", text: successText };
      try {
        this.audit = await api.getAudit(id);
      } catch {
        // the decision stands; the audit trail will show on the next load
      }
      this.render();
      const flash = this.root.querySelector("#flash");
      if (flash) flash.focus();
      this.hooks.onChanged();
    } catch (err) {
      button.disabled = false;
      button.textContent = label;
      const reload = err.status === 409 ? h("button", { type: "button", class: "small", on: { click: () => this.load(id) } }, "Reload") : null;
      this.showMessage("error", err.status ? `${err.message}` : err.message, reload);
      const box = this.root.querySelector("#decide-message .notice");
      if (box) box.dataset.status = String(err.status || 0);
    } finally {
      this.busy = false;
      this.root.removeAttribute("aria-busy");
    }
  }

  /** Keyboard shortcut: open a decision form; true when handled. */
  shortcut(key) {
    const map = { a: "approve", r: "reject", e: "edit", n: "reanalyze" };
    if (!this.data || this.data.status !== "awaiting_review" || !map[key]) return false;
    return this.showForm(map[key]);
  }

  escape() {
    if (this.evidencePane && this.evidencePane.classList.contains("open")) {
      this.closeEvidence();
      return true;
    }
    if (this.openForm) {
      this.hideForms();
      return true;
    }
    return false;
  }
}
