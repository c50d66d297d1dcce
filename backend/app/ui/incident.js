// The incident page: loads an incident and its audit trail and composes the panels of
// incident/ — header (with the claim), evidence (the incident, collected evidence, what the
// model saw, the citation pane), RCA, diagnosis, decision and audit — re-rendering them
// whenever the incident changes.

import { api } from "./api.js";
import { h, replace, statusLabel } from "./dom.js";
import { renderAudit } from "./incident/audit.js";
import { renderCollected } from "./incident/collected.js";
import { DecisionPanel } from "./incident/decision.js";
import { renderDiagnosis } from "./incident/diagnosis.js";
import { EvidencePane, renderDocs, renderIncident, renderPastIncidents } from "./incident/evidence.js";
import { renderFlash, renderHeader, renderOutcome } from "./incident/header.js";
import { MOVING } from "./incident/panel.js";
import { renderPostmortem } from "./incident/postmortem.js";
import { citedIds, renderDrafts, renderRca } from "./incident/rca.js";

export class IncidentView {
  /**
   * @param {HTMLElement} root the <main> element
   * @param {{reviewer: () => string, me: () => string, identity: () => object|null,
   *   onChanged: () => void, next: (id: string) => string|null, open: (id: string|null) => void}} hooks
   */
  constructor(root, hooks) {
    this.root = root;
    this.hooks = hooks;
    this.id = null;
    this.data = null;
    this.audit = null;
    this.flash = null;
    this.evidence = new EvidencePane(root);
    this.decision = new DecisionPanel(root, {
      id: () => this.id,
      reviewer: () => this.hooks.reviewer(),
      me: () => this.hooks.me(),
      identity: () => this.hooks.identity(),
      next: (id) => this.hooks.next(id),
      open: (id) => this.hooks.open(id),
      decided: (id, data, successText) => this.decided(id, data, successText),
      reload: (id) => this.load(id),
    });
  }

  async load(id, { keepFlash = false } = {}) {
    const changed = id !== this.id;
    this.id = id;
    if (!keepFlash) this.flash = null;
    if (changed) {
      this.decision.openForm = null;
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

  /** Scroll to a panel of the loaded incident (`#/incidents/<id>/postmortem` links here). */
  reveal(panelId) {
    const panel = this.root.querySelector(`#${CSS.escape(panelId)}`);
    if (!panel) return;
    panel.scrollIntoView({ block: "start" });
    const first = panel.querySelector("button");
    if (first) first.focus({ preventScroll: true });
  }

  /** Called after each inbox poll with this incident's row. */
  noticeUpdate(row) {
    if (!row || !this.data || this.decision.busy || row.id !== this.id) return;
    const same = row.status === this.data.status && row.updated_at === this.data.updated_at;
    if (same && (row.assignee || null) === (this.data.assignee || null)) return;
    if (MOVING.has(this.data.status) || !this.decision.openForm) {
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

  render() {
    const d = this.data;
    const incident = d.incident || {};
    const titleCode = incident.error_code || "Incident";
    document.title = `${titleCode} · ${statusLabel(d.status)} · Incident RCA review`;
    const openEvidence = (citation, claimLabel, button) => this.evidence.open(citation, claimLabel, button);
    const pane = this.evidence.render(d);
    const cited = citedIds(d.status === "approved" && d.final_rca ? d.final_rca : d.rca);
    const claim = { me: this.hooks.me(), claim: (assignee) => this.claim(assignee) };
    const main = h(
      "div",
      { class: "incident-main" },
      renderHeader(d, incident, claim),
      h("div", { id: "stale-notice" }),
      renderFlash(this.flash),
      renderOutcome(d),
      renderPostmortem(d),
      renderIncident(incident, cited),
      renderCollected(d, cited),
      renderRca(d, openEvidence),
      renderDiagnosis(d, openEvidence),
      d.status === "awaiting_review" ? this.decision.render(d) : null,
      renderDocs(d),
      renderPastIncidents(d),
      renderDrafts(d),
      renderAudit(this.audit),
    );
    replace(this.root, h("div", { class: "incident-layout", dataset: { id: d.id, status: d.status } }, main, pane));
    if (this.decision.openForm) this.decision.showForm(this.decision.openForm, { focus: false });
  }

  /** The decision was recorded: show the new state, announce it, and tell the inbox. */
  async decided(id, data, successText) {
    this.data = data;
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
  }

  /** Claim the incident for `assignee` (null releases it); the page shows the new holder. */
  async claim(assignee) {
    const id = this.id;
    if (assignee === "" || assignee === undefined) {
      this.flash = { kind: "error", text: "Set your name in the Reviewer box at the top to claim incidents." };
      this.render();
      return;
    }
    try {
      await api.assign(id, assignee);
      this.flash = { kind: "success", text: assignee ? `Claimed by ${assignee}.` : "Released: nobody holds this incident now." };
    } catch (err) {
      this.flash = { kind: "error", text: err.message };
    }
    if (this.id !== id) return;
    await this.load(id, { keepFlash: true });
    this.hooks.onChanged();
  }

  /** Keyboard shortcut: claim (c) or open a decision form; true when handled. */
  shortcut(key) {
    if (!this.data) return false;
    if (key === "c" && !["approved", "rejected"].includes(this.data.status)) {
      const me = this.hooks.me();
      this.claim(this.data.assignee && this.data.assignee === me ? null : me);
      return true;
    }
    if (this.data.status !== "awaiting_review") return false;
    return this.decision.shortcut(key);
  }

  escape() {
    if (this.evidence.isOpen()) {
      this.evidence.close();
      return true;
    }
    if (this.decision.openForm) {
      this.decision.hideForms();
      return true;
    }
    return false;
  }
}
