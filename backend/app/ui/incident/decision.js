// The decision panel: approve (or approve and open the next incident), reject, edit & approve,
// or send back for re-analysis. One form is open at a time; deciding an incident someone else
// claimed asks first; a submit sends the decision and reports a refusal (a 409 offers a reload,
// an edit with unsupported claims can be confirmed and sent again).

import { api, getApiKey } from "../api.js";
import { h, replace } from "../dom.js";
import { confirmDialog } from "./confirm.js";
import { EditForm, field, grow } from "./edit.js";

/** Who a decision will be recorded under. */
export function decidingAs(reviewer, identity = null) {
  if (identity && identity.auth) return `Decisions are recorded as ${identity.name}, the name of your API key.`;
  if (getApiKey() && !identity) return "Decisions are recorded under the identity of your API key.";
  return reviewer
    ? `Deciding as ${reviewer}.`
    : "Deciding as anonymous: set your name in the Reviewer box at the top.";
}

const SHORTCUTS = { a: "approve", r: "reject", e: "edit", n: "reanalyze" };
const UNSUPPORTED_CODE = "unsupported_claims";

export class DecisionPanel {
  /**
   * @param {HTMLElement} root the <main> element (the panel's parts are looked up in it)
   * @param {{
   *   id: () => string,
   *   reviewer: () => string,
   *   me: () => string,
   *   identity: () => object|null,
   *   next: (id: string) => string|null,
   *   open: (id: string|null) => void,
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
    this.data = null;
  }

  render(d) {
    this.data = d;
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
      edit: this.editForm(d),
      reanalyze: this.reanalyzeForm(),
    };
    return h(
      "section",
      { id: "decide", class: "panel decide", "aria-labelledby": "decide-title" },
      h("h3", { id: "decide-title" }, "Decision"),
      h(
        "p",
        { class: "muted", id: "deciding-as" },
        decidingAs(reviewer, this.hooks.identity()),
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
        h(
          "button",
          {
            type: "button",
            class: "decide-approve-next",
            id: "decide-approve-next",
            "aria-keyshortcuts": "Shift+A",
            on: { click: (event) => this.approveAndNext(event.currentTarget) },
          },
          "Approve & next ",
          h("kbd", {}, "A"),
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

  /** Keyboard shortcut: open the form of `key` ("A": approve and next); true when handled. */
  shortcut(key) {
    if (key === "A") {
      const button = this.root.querySelector("#decide-approve-next");
      if (button && !this.busy) this.approveAndNext(button);
      return Boolean(button);
    }
    return Boolean(SHORTCUTS[key]) && this.showForm(SHORTCUTS[key]);
  }

  /** Approve the draft as it is, then open the next incident awaiting review (or the inbox). */
  async approveAndNext(button) {
    const id = this.hooks.id();
    const next = this.hooks.next(id);
    const done = await this.submit({ action: "approve" }, button, "Approved.");
    if (done && this.hooks.id() === id) this.hooks.open(next);
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

  editForm(d) {
    const editor = new EditForm(d);
    const comment = h("textarea", { name: "comment", rows: "2" });
    const confirm = h("input", { type: "checkbox", id: "edit-confirm-unsupported" });
    const confirmBox = h(
      "div",
      { class: "field confirm-unsupported", id: "edit-confirm-box", hidden: true },
      h("label", { for: "edit-confirm-unsupported" }, confirm, " Approve anyway: I confirm these claims although their citations do not support them"),
    );
    const form = this.formShell(
      "edit",
      "Edit the draft, then approve it",
      "Approve with edits",
      [...editor.fields(), field("edit-comment", "Comment (optional)", comment), editor.preview, confirmBox],
      async (f, submit) => {
        const problem = editor.problem(f);
        if (problem) {
          const [text, control] = problem;
          if (control) control.setAttribute("aria-invalid", "true");
          this.showMessage("error", text);
          if (control) control.focus();
          return;
        }
        for (const marked of f.querySelectorAll("[aria-invalid]")) marked.removeAttribute("aria-invalid");
        const body = { action: "edit", rca: editor.value(), comment: comment.value.trim() || undefined };
        if (confirm.checked) body.confirm_unsupported = true;
        const done = await this.submit(body, submit, "Approved with your edits.");
        if (!done && this.lastError && this.lastError.code === UNSUPPORTED_CODE) {
          confirmBox.hidden = false;
          confirm.focus();
        }
      },
    );
    form.addEventListener("input", (event) => grow(event.target));
    // Changing the draft again clears a confirmation given for the previous version.
    form.addEventListener("change", (event) => {
      if (event.target !== confirm) confirm.checked = false;
    });
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

  /** Whether to go on when someone else claimed the incident (asks); true when unclaimed. */
  async mayDecide() {
    const holder = this.data && this.data.assignee;
    const me = this.hooks.me();
    if (!holder || holder === me) return true;
    return confirmDialog(`${holder} has claimed this incident. Decide it anyway?`, "Decide anyway");
  }

  /** Send the decision; true when it was recorded. */
  async submit(body, button, successText) {
    this.lastError = null;
    if (!(await this.mayDecide())) return false;
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
      return true;
    } catch (err) {
      this.lastError = err;
      button.disabled = false;
      button.textContent = label;
      const reload = err.status === 409 ? h("button", { type: "button", class: "small", on: { click: () => this.hooks.reload(id) } }, "Reload") : null;
      this.showMessage("error", err.status ? `${err.message}` : err.message, reload);
      const box = this.root.querySelector("#decide-message .notice");
      if (box) box.dataset.status = String(err.status || 0);
      return false;
    } finally {
      this.busy = false;
      this.root.removeAttribute("aria-busy");
    }
  }
}
