// The inbox: every incident, awaiting review first, grouped by status, filterable.

import { api } from "./api.js";
import { age, bandBadge, h, replace, statusBadge, statusLabel } from "./dom.js";

// Lower comes first: what needs a reviewer, then what is still moving, then what is done.
const STATUS_ORDER = {
  awaiting_review: 0,
  deciding: 1,
  analyzing: 2,
  failed: 3,
  approved: 4,
  rejected: 5,
};

const GROUPS = [
  { title: "Awaiting review", statuses: ["awaiting_review", "deciding"] },
  { title: "In analysis", statuses: ["analyzing"] },
  { title: "Failed", statuses: ["failed"] },
  { title: "Decided", statuses: ["approved", "rejected"] },
];

export function sortIncidents(items) {
  return [...items].sort((a, b) => {
    const byStatus = (STATUS_ORDER[a.status] ?? 9) - (STATUS_ORDER[b.status] ?? 9);
    if (byStatus) return byStatus;
    return String(b.created_at).localeCompare(String(a.created_at));
  });
}

export class Inbox {
  constructor({ list, count, error, status, filter }) {
    this.list = list;
    this.count = count;
    this.error = error;
    this.status = status;
    this.filter = filter;
    this.items = [];
    this.total = 0;
    this.currentId = null;
    this.loaded = false;
    status.addEventListener("change", () => this.render());
    filter.addEventListener("input", () => this.render());
  }

  /** Fetch the list; returns the items or throws the ApiError. */
  async refresh() {
    try {
      const page = await api.listIncidents({ limit: 200 });
      this.items = page.items || [];
      this.total = page.total ?? this.items.length;
      this.loaded = true;
      this.error.hidden = true;
      this.render();
      return this.items;
    } catch (err) {
      this.error.textContent = `Could not load incidents: ${err.message}`;
      this.error.hidden = false;
      throw err;
    }
  }

  find(id) {
    return this.items.find((item) => item.id === id) || null;
  }

  setCurrent(id) {
    this.currentId = id;
    for (const link of this.list.querySelectorAll("a.inbox-item")) {
      if (link.dataset.id === id) link.setAttribute("aria-current", "page");
      else link.removeAttribute("aria-current");
    }
  }

  visibleItems() {
    const status = this.status.value;
    const needle = this.filter.value.trim().toLowerCase();
    return sortIncidents(this.items).filter((item) => {
      if (status && item.status !== status) return false;
      if (!needle) return true;
      return [item.error_code, item.service, item.summary, item.id, item.decided_by]
        .filter(Boolean)
        .some((value) => String(value).toLowerCase().includes(needle));
    });
  }

  render() {
    const awaiting = this.items.filter((i) => i.status === "awaiting_review").length;
    this.count.textContent = this.loaded ? `${awaiting} awaiting · ${this.total} total` : "";
    const visible = this.visibleItems();
    if (!this.loaded) return;
    if (!visible.length) {
      replace(
        this.list,
        h("p", { class: "muted empty" }, this.items.length ? "No incident matches the filter." : "No incidents yet. POST one to /api/incidents."),
      );
      return;
    }
    const groups = GROUPS.map((group) => ({
      ...group,
      items: visible.filter((item) => group.statuses.includes(item.status)),
    })).filter((group) => group.items.length);
    const known = new Set(GROUPS.flatMap((g) => g.statuses));
    const other = visible.filter((item) => !known.has(item.status));
    if (other.length) groups.push({ title: "Other", items: other });
    replace(
      this.list,
      groups.map((group) =>
        h(
          "section",
          { class: "inbox-group", "aria-label": group.title },
          h("h3", {}, `${group.title} (${group.items.length})`),
          h("ul", {}, group.items.map((item) => h("li", {}, this.renderItem(item)))),
        ),
      ),
    );
  }

  renderItem(item) {
    const link = h(
      "a",
      {
        class: `inbox-item status-${item.status}`,
        href: `#/incidents/${encodeURIComponent(item.id)}`,
        dataset: { id: item.id, status: item.status },
        "aria-current": item.id === this.currentId ? "page" : null,
      },
      h(
        "span",
        { class: "inbox-item-head" },
        h("span", { class: "code" }, item.error_code || "no code"),
        statusBadge(item.status),
      ),
      h("span", { class: "inbox-item-summary" }, item.summary || "(no summary yet)"),
      h(
        "span",
        { class: "inbox-item-meta" },
        h("span", { class: "service" }, item.service || "unknown service"),
        h("span", { title: item.created_at }, age(item.created_at)),
        item.confidence ? bandBadge(item.confidence) : null,
      ),
      item.decided_by
        ? h("span", { class: "inbox-item-decided" }, `${statusLabel(item.status)} by ${item.decided_by}`)
        : null,
    );
    return link;
  }
}
