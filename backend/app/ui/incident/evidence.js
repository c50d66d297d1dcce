// The evidence panels: the incident's own text (message, stack trace, logs) with cited lines
// marked, the knowledge docs and past incidents the model saw, and the side pane that shows the
// text one citation points at.

import { h, replace, score, statusBadge, time } from "../dom.js";
import { seriesChart } from "./chart.js";
import { lineRanges, locateCitation, renderHighlighted, resolveEvidence } from "./citations.js";
import { evidenceLabel } from "./labels.js";
import { bulletList, section } from "./panel.js";

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

function numberedPre(text, idPrefix, cited, className) {
  const content = String(text || "");
  const pre = h("pre", { class: `numbered ${className}`, tabindex: "0" });
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

/**
 * The incident panel: its message, stack trace, logs and reviewer notes.
 * @param {object} incident the incident's fields
 * @param {Set<string>} cited the evidence ids the draft cites (their lines are marked)
 */
export function renderIncident(incident, cited) {
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
            const pre = h("pre", { class: "numbered logs", tabindex: "0" });
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

function docScores(doc) {
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

function renderWhy(why) {
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

/** The knowledge docs the model saw, each with its scores and the claims citing it. */
export function renderDocs(d) {
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
              renderWhy(doc.why),
              h("pre", { class: "doc-content", tabindex: "0" }, String(doc.content || "")),
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

/** The approved past incidents retrieval found similar; null when none. */
export function renderPastIncidents(d) {
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

function emptyPane() {
  return [
    h("h3", { id: "evidence-title" }, "Evidence"),
    h("p", { class: "muted" }, "Select a citation to see the cited text with the quoted words highlighted."),
  ];
}

/** The side pane that shows the text a citation points at, with the cited words marked. */
export class EvidencePane {
  /** @param {HTMLElement} root the <main> element (its citation buttons get aria-pressed) */
  constructor(root) {
    this.root = root;
    this.element = null;
    this.incident = null;
  }

  /** A fresh, empty pane for the incident `d` (the page re-renders it with every render). */
  render(d) {
    this.incident = d;
    this.element = h(
      "aside",
      { id: "evidence", class: "evidence-pane", "aria-labelledby": "evidence-title", tabindex: "-1" },
      ...emptyPane(),
    );
    return this.element;
  }

  isOpen() {
    return Boolean(this.element && this.element.classList.contains("open"));
  }

  open(citation, claimLabel, button) {
    const d = this.incident;
    const pane = this.element;
    const resolved = resolveEvidence(citation.id, d.incident, d.similar_error_docs, d.collected_evidence);
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
            this.close();
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
        resolved.doc ? docScores(resolved.doc) : null,
        resolved.collected && Array.isArray(resolved.collected.points)
          ? seriesChart(resolved.collected.points, { title: evidenceLabel(citation.id, d), marker: d.created_at })
          : null,
        renderHighlighted(resolved, located),
      ];
    }
    replace(
      pane,
      h("h3", { id: "evidence-title" }, "Evidence"),
      h(
        "div",
        { class: "evidence-head" },
        h("p", {}, h("strong", {}, evidenceLabel(citation.id, d, citation)), " ", h("code", { class: "evidence-id" }, citation.id), ` cited by ${claimLabel}`),
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
    pane.classList.add("open");
    pane.dataset.evidenceId = citation.id;
    this.unpress();
    if (button) button.setAttribute("aria-pressed", "true");
    pane.focus({ preventScroll: true });
    // Scroll the pane (only the pane, not the page the reviewer is reading) to the highlight.
    const mark = pane.querySelector("mark");
    if (mark) {
      const box = pane.getBoundingClientRect();
      const at = mark.getBoundingClientRect();
      pane.scrollTop += at.top - box.top - box.height / 3;
    }
  }

  close() {
    if (!this.element) return;
    this.element.classList.remove("open");
    delete this.element.dataset.evidenceId;
    replace(this.element, ...emptyPane());
    this.unpress();
  }

  unpress() {
    for (const b of this.root.querySelectorAll("button.cite[aria-pressed]")) b.removeAttribute("aria-pressed");
  }
}
