// The group page: incidents the API grouped as similar (same alert fingerprint, or same family
// and service within a window), their counts per status, and one decision for all of those
// awaiting review — sent as POST /api/incidents/decisions, answered per incident.

import { api } from "./api.js";
import { ageTime, bandBadge, decisionLabel, h, replace, statusBadge } from "./dom.js";
import { confirmDialog } from "./incident/confirm.js";

const PAGE_SIZE = 200;

async function allMembers(key) {
  const items = [];
  let cursor = null;
  let counts = {};
  do {
    const page = await api.listIncidents({ group: key, sort: "oldest", limit: PAGE_SIZE, cursor });
    items.push(...(page.items || []));
    counts = page.counts || counts;
    cursor = page.next_cursor ?? null;
  } while (cursor);
  return { items, counts };
}

export class GroupView {
  /**
   * @param {HTMLElement} root the <main> element
   * @param {{me: () => string, onChanged: () => void}} hooks
   */
  constructor(root, hooks) {
    this.root = root;
    this.hooks = hooks;
    this.key = null;
    this.members = [];
    this.counts = {};
    this.result = null;
    this.busy = false;
  }

  async load(key) {
    if (key !== this.key) {
      this.result = null;
      replace(this.root, h("p", { class: "muted loading" }, "Loading group…"));
    }
    this.key = key;
    try {
      const { items, counts } = await allMembers(key);
      if (this.key !== key) return;
      this.members = items;
      this.counts = counts;
      this.render();
    } catch (err) {
      if (this.key !== key) return;
      replace(this.root, h("div", { class: "panel error-panel", role: "alert" }, h("h2", {}, "Could not load the group"), h("p", {}, err.message)));
    }
  }

  noticeUpdate() {
    if (this.key && !this.busy && !this.root.querySelector("#group-comment:focus")) this.load(this.key);
  }

  waiting() {
    return this.members.filter((item) => item.status === "awaiting_review");
  }

  render() {
    const first = this.members[0] || {};
    const title = [first.error_code || first.event, first.service].filter(Boolean).join(" · ") || "Similar incidents";
    document.title = `Group ${title} · Incident RCA review`;
    const waiting = this.waiting();
    const comment = h("textarea", { id: "group-comment", rows: "2", maxlength: "4000" });
    const action = h(
      "select",
      { id: "group-action" },
      h("option", { value: "approve" }, "Approve"),
      h("option", { value: "reject" }, "Reject"),
    );
    const submit = h("button", { type: "submit", class: "primary", id: "group-submit" }, `Decide ${waiting.length} awaiting review`);
    const form = h(
      "form",
      { class: "panel decide", id: "group-decide", "aria-labelledby": "group-decide-title", novalidate: true },
      h("h3", { id: "group-decide-title" }, "One decision for the group"),
      h("p", { class: "muted" }, "Each incident awaiting review gets its own decision and audit event; incidents decided meanwhile are reported, not decided twice."),
      h("div", { class: "field" }, h("label", { for: "group-action" }, "Decision"), action),
      h("div", { class: "field" }, h("label", { for: "group-comment" }, "Comment (required to reject)"), comment),
      h("div", { class: "actions" }, submit),
      h("div", { id: "group-message", role: "alert" }),
    );
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      if (!this.busy) this.decide(action.value, comment.value.trim(), submit);
    });
    replace(
      this.root,
      h(
        "div",
        { class: "group-page", dataset: { groupKey: this.key } },
        h("h2", { id: "group-heading" }, `Group: ${title}`),
        h(
          "p",
          { class: "lead", id: "group-count" },
          `${this.members.length} similar incident(s), ${waiting.length} awaiting review.`,
        ),
        h(
          "p",
          { class: "badges" },
          Object.entries(this.counts)
            .filter(([, n]) => n)
            .map(([status, n]) => statusBadge(status, `${n} ${decisionLabel(status)}`)),
        ),
        this.result ? this.renderResult(this.result) : null,
        waiting.length ? form : null,
        h(
          "section",
          { class: "panel", "aria-labelledby": "group-members-title" },
          h("h3", { id: "group-members-title" }, "Members (oldest first)"),
          h(
            "table",
            { class: "members" },
            h("thead", {}, h("tr", {}, ["Incident", "Status", "Band", "Claimed by", "Created"].map((t) => h("th", { scope: "col" }, t)))),
            h(
              "tbody",
              {},
              this.members.map((item) =>
                h(
                  "tr",
                  { dataset: { id: item.id, status: item.status } },
                  h("td", {}, h("a", { href: `#/incidents/${encodeURIComponent(item.id)}` }, item.message || item.summary || item.id)),
                  h("td", {}, statusBadge(item.status, decisionLabel(item.status, item.decision_action))),
                  h("td", {}, item.confidence ? bandBadge(item.confidence) : "—"),
                  h("td", {}, item.assignee || "—"),
                  h("td", {}, ageTime(item.created_at)),
                ),
              ),
            ),
          ),
        ),
      ),
    );
  }

  renderResult(result) {
    const done = result.results.filter((r) => r.ok);
    const failed = result.results.filter((r) => !r.ok);
    return h(
      "div",
      { class: `notice ${failed.length ? "warning" : "success"}`, id: "group-result", role: "status" },
      `${done.length} decided (${result.action})`,
      failed.length ? `, ${failed.length} not decided:` : ".",
      failed.length
        ? h("ul", {}, failed.map((r) => h("li", {}, h("code", {}, r.id), ` — ${(r.error && r.error.message) || "failed"}`)))
        : null,
    );
  }

  async decide(action, comment, button) {
    const box = this.root.querySelector("#group-message");
    if (action === "reject" && !comment) {
      replace(box, h("div", { class: "notice error" }, "A reason is required to reject."));
      this.root.querySelector("#group-comment").focus();
      return;
    }
    const waiting = this.waiting();
    const me = this.hooks.me();
    const held = waiting.filter((item) => item.assignee && item.assignee !== me);
    if (held.length) {
      const holders = [...new Set(held.map((item) => item.assignee))].join(", ");
      const go = await confirmDialog(
        `${held.length} of these incidents are claimed by ${holders}. Decide them anyway?`,
        "Decide anyway",
      );
      if (!go) return;
    }
    this.busy = true;
    button.disabled = true;
    try {
      const body = { ids: waiting.map((item) => item.id), action };
      if (comment) body.comment = comment;
      const answer = await api.decideMany(body);
      this.result = { action, results: answer.results || [] };
      this.hooks.onChanged();
      await this.load(this.key);
    } catch (err) {
      replace(box, h("div", { class: "notice error" }, err.message));
    } finally {
      this.busy = false;
      button.disabled = false;
    }
  }
}
