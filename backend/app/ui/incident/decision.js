// The decision panel: approve, reject, edit & approve, or send back for re-analysis. One form
// is open at a time; a submit sends the decision and reports a refusal (a 409 offers a reload).

import { api, getApiKey } from "../api.js";
import { renderDiff, rcaToLines } from "../diff.js";
import { h, replace } from "../dom.js";

function linesOf(text) {
  return String(text || "")
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter(Boolean);
}

function grow(area) {
  // Let a textarea fit its text (up to a limit) so edits are visible without inner scrolling.
  if (!(area instanceof HTMLTextAreaElement)) return;
  area.style.height = "auto";
  area.style.height = `${Math.min(area.scrollHeight + 2, 400)}px`;
}

function field(id, label, control, hint) {
  control.id = id;
  return h("div", { class: "field" }, h("label", { for: id }, label), hint ? h("p", { class: "hint", id: `${id}-hint` }, hint) : null, control);
}

/** Who a decision will be recorded under. */
export function decidingAs(reviewer) {
  if (getApiKey()) return "Decisions are recorded under the identity of your API key.";
  return reviewer
    ? `Deciding as ${reviewer}.`
    : "Deciding as anonymous: set your name in the Reviewer box at the top.";
}

const SHORTCUTS = { a: "approve", r: "reject", e: "edit", n: "reanalyze" };

export class DecisionPanel {
  /**
   * @param {HTMLElement} root the <main> element (the panel's parts are looked up in it)
   * @param {{
   *   id: () => string,
   *   reviewer: () => string,
   *   decided: (id: string, data: object, successText: string) => Promise<void>,
   *   reload: (id: string) => void,
   * }} hooks
   */
  constructor(root, hooks) {
    this.root = root;
    this.hooks = hooks;
    this.forms = null;
    this.openForm = null;
    this.busy = false;
  }

  render(d) {
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

  /** Keyboard shortcut: open the form of `key`; true when handled. */
  shortcut(key) {
    return Boolean(SHORTCUTS[key]) && this.showForm(SHORTCUTS[key]);
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
      [field("approve-comment", "Comment (optional)", comment)],
      (form, submit) => this.submit({ action: "approve", comment: comment.value.trim() || undefined }, submit, "Approved."),
    );
  }

  rejectForm() {
    const reason = h("textarea", { name: "comment", rows: "3", maxlength: "4000", "aria-required": "true", "aria-describedby": "reject-reason-hint" });
    return this.formShell(
      "reject",
      "Reject the draft",
      "Reject",
      [field("reject-reason", "Reason (required)", reason, "Say what is wrong, so the next reviewer and the knowledge base can learn from it.")],
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
        field("edit-summary", "Summary", summary),
        statements.map((area, i) => field(`edit-statement-${i}`, `Hypothesis ${i + 1} statement`, area)),
        field("edit-remediation", "Remediation (one per line)", remediation),
        field("edit-next-checks", "Next checks (one per line)", nextChecks),
        field("edit-comment", "Comment (optional)", comment),
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
        field("reanalyze-comment", "Why (required)", comment),
        field("reanalyze-logs", "Added log lines (one per line)", logs),
        field("reanalyze-stack", "Replacement stack trace (optional)", stack),
        field("reanalyze-note", "Note for the analysis (optional)", note),
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
    const id = this.hooks.id();
    const label = button.textContent;
    this.busy = true;
    button.disabled = true;
    button.textContent = "Sending…";
    this.root.setAttribute("aria-busy", "true");
    this.clearMessage();
    try {
      const data = await api.decide(id, body);
      this.openForm = null;
      await this.hooks.decided(id, data, successText);
    } catch (err) {
      button.disabled = false;
      button.textContent = label;
      const reload = err.status === 409 ? h("button", { type: "button", class: "small", on: { click: () => this.hooks.reload(id) } }, "Reload") : null;
      this.showMessage("error", err.status ? `${err.message}` : err.message, reload);
      const box = this.root.querySelector("#decide-message .notice");
      if (box) box.dataset.status = String(err.status || 0);
    } finally {
      this.busy = false;
      this.root.removeAttribute("aria-busy");
    }
  }
}
