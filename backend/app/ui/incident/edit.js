// The edit form's body: a working copy of the draft the reviewer can reshape — reorder or
// delete hypotheses, change bands and codes, edit, add or delete claims and their citations,
// and the summary and lists — with a live diff against the draft. The API checks the edited
// RCA (whitelist, citation check) before it is stored.

import { renderDiff, rcaToLines } from "../diff.js";
import { h, replace } from "../dom.js";
import { evidenceLabel } from "./labels.js";

export const BANDS = ["high", "medium", "low", "insufficient"];

function linesOf(text) {
  return String(text || "")
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter(Boolean);
}

/** Let a textarea fit its text (up to a limit) so edits are visible without inner scrolling. */
export function grow(area) {
  if (!(area instanceof HTMLTextAreaElement)) return;
  area.style.height = "auto";
  area.style.height = `${Math.min(area.scrollHeight + 2, 400)}px`;
}

export function field(id, label, control, hint) {
  control.id = id;
  return h(
    "div",
    { class: "field" },
    h("label", { for: id }, label),
    hint ? h("p", { class: "hint", id: `${id}-hint` }, hint) : null,
    control,
  );
}

function textarea(value, rows, attrs = {}) {
  const area = h("textarea", { rows: String(rows), ...attrs });
  area.value = value || "";
  return area;
}

function bandSelect(value) {
  const select = h("select", {}, BANDS.map((band) => h("option", { value: band }, band)));
  select.value = BANDS.includes(value) ? value : "low";
  return select;
}

/** Every id a citation may name: the docs the model saw, the incident's lines, collected items. */
export function citableIds(d) {
  const ids = (d.similar_error_docs || []).map((doc) => doc.id);
  const incident = d.incident || {};
  if (String(incident.message || "").trim()) ids.push("incident:message");
  String(incident.stack_trace || "")
    .split(/\r?\n/)
    .forEach((line, i) => line.trim() && ids.push(`incident:stack:${i + 1}`));
  (incident.logs || []).forEach((line, i) => String(line).trim() && ids.push(`incident:log:${i + 1}`));
  for (const item of d.collected_evidence || []) if (item && item.id) ids.push(item.id);
  return ids;
}

/** A claim whose words or citations changed loses the old verdicts: the API checks it again. */
function unverified(claim) {
  const { supported, support, ...rest } = claim;
  return { ...rest, evidence: (claim.evidence || []).map(({ id, quote }) => ({ id, quote: quote || "" })) };
}

export class EditForm {
  /**
   * @param {object} d the incident whose draft is edited
   * @param {() => void} changed called after every change (the preview is already updated)
   */
  constructor(d, changed = () => {}) {
    this.d = d;
    this.original = d.rca || { summary: "", hypotheses: [] };
    this.draft = structuredClone(this.original);
    this.draft.hypotheses = this.draft.hypotheses || [];
    this.changed = changed;
    this.citable = citableIds(d);
    this.hypothesesList = h("ol", { class: "edit-hypotheses", id: "edit-hypotheses" });
    this.preview = h("div", { class: "edit-preview", "aria-live": "polite" });
    this.summary = textarea(this.draft.summary, 4, { name: "summary" });
    this.band = bandSelect(this.draft.confidence);
    this.lists = {
      missing_evidence: textarea((this.draft.missing_evidence || []).join("\n"), 3),
      ruled_out: textarea((this.draft.ruled_out || []).join("\n"), 2),
      remediation: textarea((this.draft.remediation || []).join("\n"), 3, { name: "remediation" }),
      next_checks: textarea((this.draft.next_checks || []).join("\n"), 3, { name: "next_checks" }),
    };
    this.summary.addEventListener("input", () => this.set(() => (this.draft.summary = this.summary.value.trim())));
    this.band.addEventListener("change", () => this.set(() => (this.draft.confidence = this.band.value)));
    for (const [key, area] of Object.entries(this.lists)) {
      area.addEventListener("input", () => this.set(() => (this.draft[key] = linesOf(area.value))));
    }
  }

  /** The form's controls, in order. */
  fields() {
    this.renderHypotheses();
    this.update();
    return [
      field("edit-summary", "Summary", this.summary),
      field("edit-band", "Overall confidence band", this.band),
      h(
        "fieldset",
        { class: "edit-hypotheses-set" },
        h("legend", {}, "Hypotheses (most probable first)"),
        this.hypothesesList,
        h("button", { type: "button", class: "secondary small", id: "edit-add-hypothesis", on: { click: () => this.addHypothesis() } }, "Add a hypothesis"),
      ),
      field("edit-missing", "Missing evidence (one per line)", this.lists.missing_evidence),
      field("edit-ruled-out", "Ruled out (one per line)", this.lists.ruled_out),
      field("edit-remediation", "Remediation (one per line)", this.lists.remediation),
      field("edit-next-checks", "Next checks (one per line)", this.lists.next_checks),
    ];
  }

  /** Apply a change to the working copy, then refresh the preview. */
  set(change, { structure = false } = {}) {
    change();
    if (structure) this.renderHypotheses();
    this.update();
    this.changed();
  }

  update() {
    replace(this.preview, renderDiff(rcaToLines(this.original), rcaToLines(this.draft), { caption: "Your edit against the draft", afterLabel: "your edit" }));
  }

  /** The edited RCA. */
  value() {
    return structuredClone(this.draft);
  }

  isUnchanged() {
    return JSON.stringify(this.draft) === JSON.stringify(this.original);
  }

  /** The first problem that stops a submit, as [message, control to focus], or null. */
  problem(form) {
    if (!this.draft.summary) return ["The summary must not be empty.", this.summary];
    for (const [i, hyp] of this.draft.hypotheses.entries()) {
      if (!String(hyp.statement || "").trim()) return [`Hypothesis ${i + 1} needs a statement.`, form.querySelector(`#edit-statement-${i}`)];
      for (const [c, claim] of (hyp.claims || []).entries()) {
        if (!String(claim.text || "").trim()) return [`Claim ${i + 1}.${c + 1} needs its text (or delete it).`, form.querySelector(`#edit-claim-${i}-${c}`)];
      }
    }
    if (this.isUnchanged()) return ["Nothing was changed: use Approve to accept the draft as it is.", this.summary];
    return null;
  }

  // ----- hypotheses and claims ---------------------------------------------------------------

  addHypothesis() {
    this.set(() => this.draft.hypotheses.push({ statement: "", error_code: null, confidence: "low", claims: [] }), { structure: true });
    this.focus(`#edit-statement-${this.draft.hypotheses.length - 1}`);
  }

  move(index, by) {
    const list = this.draft.hypotheses;
    const to = index + by;
    if (to < 0 || to >= list.length) return;
    this.set(() => list.splice(to, 0, ...list.splice(index, 1)), { structure: true });
    this.focus(`#edit-${by < 0 ? "up" : "down"}-${to}`, `#edit-statement-${to}`);
  }

  removeHypothesis(index) {
    this.set(() => this.draft.hypotheses.splice(index, 1), { structure: true });
    this.focus(`#edit-delete-${Math.min(index, this.draft.hypotheses.length - 1)}`, "#edit-add-hypothesis");
  }

  focus(...selectors) {
    for (const selector of selectors) {
      const target = this.hypothesesList.closest("form")?.querySelector(selector) || this.hypothesesList.parentElement?.querySelector(selector);
      if (target && !target.disabled) {
        target.focus();
        return;
      }
    }
  }

  renderHypotheses() {
    const count = this.draft.hypotheses.length;
    replace(
      this.hypothesesList,
      count ? this.draft.hypotheses.map((hyp, i) => this.renderHypothesis(hyp, i, count)) : h("li", { class: "muted" }, "No hypothesis: the RCA names no cause."),
    );
    for (const area of this.hypothesesList.querySelectorAll("textarea")) grow(area);
  }

  renderHypothesis(hyp, i, count) {
    const statement = textarea(hyp.statement, 3, { class: "statement-input" });
    statement.addEventListener("input", () => this.set(() => (hyp.statement = statement.value.trim())));
    const code = h("input", { type: "text", maxlength: "64", spellcheck: "false" });
    code.value = hyp.error_code || "";
    code.addEventListener("input", () => this.set(() => (hyp.error_code = code.value.trim() || null)));
    const band = bandSelect(hyp.confidence);
    band.addEventListener("change", () => this.set(() => (hyp.confidence = band.value)));
    const n = i + 1;
    return h(
      "li",
      { class: "edit-hypothesis", dataset: { index: String(i) } },
      h(
        "fieldset",
        {},
        h("legend", {}, `Hypothesis ${n}`),
        field(`edit-statement-${i}`, `Hypothesis ${n} statement`, statement),
        h(
          "div",
          { class: "edit-row" },
          field(`edit-code-${i}`, "Error code", code),
          field(`edit-band-${i}`, "Band", band),
        ),
        h(
          "div",
          { class: "actions edit-hypothesis-actions" },
          h("button", { type: "button", class: "secondary small", id: `edit-up-${i}`, disabled: i === 0, "aria-label": `Move up hypothesis ${n}`, on: { click: () => this.move(i, -1) } }, "Move up"),
          h("button", { type: "button", class: "secondary small", id: `edit-down-${i}`, disabled: i === count - 1, "aria-label": `Move down hypothesis ${n}`, on: { click: () => this.move(i, 1) } }, "Move down"),
          h("button", { type: "button", class: "secondary small danger", id: `edit-delete-${i}`, "aria-label": `Delete hypothesis ${n}`, on: { click: () => this.removeHypothesis(i) } }, "Delete"),
        ),
        h("ol", { class: "edit-claims" }, (hyp.claims || []).map((claim, c) => this.renderClaim(hyp, i, claim, c))),
        h(
          "button",
          {
            type: "button",
            class: "secondary small",
            id: `edit-add-claim-${i}`,
            on: {
              click: () => {
                this.set(() => (hyp.claims = [...(hyp.claims || []), { text: "", evidence: [] }]), { structure: true });
                this.focus(`#edit-claim-${i}-${hyp.claims.length - 1}`);
              },
            },
          },
          `Add a claim to hypothesis ${n}`,
        ),
      ),
    );
  }

  renderClaim(hyp, i, claim, c) {
    const label = `${i + 1}.${c + 1}`;
    const replaceClaim = (next) => (hyp.claims[c] = unverified(next));
    const text = textarea(claim.text, 2);
    text.addEventListener("input", () => this.set(() => replaceClaim({ ...hyp.claims[c], text: text.value.trim() })));
    const cited = new Set((claim.evidence || []).map((e) => e.id));
    const add = h(
      "select",
      {},
      h("option", { value: "" }, "Choose evidence…"),
      this.citable.filter((id) => !cited.has(id)).map((id) => h("option", { value: id }, `${evidenceLabel(id, this.d)} (${id})`)),
    );
    const addButton = h(
      "button",
      {
        type: "button",
        class: "secondary small",
        id: `edit-add-cite-button-${i}-${c}`,
        on: {
          click: () => {
            if (!add.value) return;
            const id = add.value;
            this.set(() => replaceClaim({ ...hyp.claims[c], evidence: [...(hyp.claims[c].evidence || []), { id, quote: "" }] }), { structure: true });
            this.focus(`#edit-add-cite-${i}-${c}`);
          },
        },
      },
      "Cite",
    );
    return h(
      "li",
      { class: "edit-claim", dataset: { claim: label } },
      field(`edit-claim-${i}-${c}`, `Claim ${label}`, text),
      h(
        "ul",
        { class: "edit-citations", "aria-label": `Citations of claim ${label}` },
        (claim.evidence || []).map((citation, e) =>
          h(
            "li",
            {},
            h("span", { class: "cite-chip", title: citation.id }, evidenceLabel(citation.id, this.d, citation)),
            h(
              "button",
              {
                type: "button",
                class: "secondary small",
                "aria-label": `Remove citation ${citation.id} from claim ${label}`,
                dataset: { evidenceId: citation.id },
                on: {
                  click: () => {
                    this.set(() => replaceClaim({ ...hyp.claims[c], evidence: hyp.claims[c].evidence.filter((_, k) => k !== e) }), { structure: true });
                    this.focus(`#edit-add-cite-${i}-${c}`);
                  },
                },
              },
              "Remove",
            ),
          ),
        ),
      ),
      h(
        "div",
        { class: "edit-row" },
        field(`edit-add-cite-${i}-${c}`, `Add a citation to claim ${label}`, add),
        addButton,
        h(
          "button",
          {
            type: "button",
            class: "secondary small danger",
            id: `edit-delete-claim-${i}-${c}`,
            on: {
              click: () => {
                this.set(() => hyp.claims.splice(c, 1), { structure: true });
                this.focus(`#edit-add-claim-${i}`);
              },
            },
          },
          `Delete claim ${label}`,
        ),
      ),
    );
  }
}
