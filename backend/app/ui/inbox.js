// The inbox: a window onto GET /api/incidents. Search, filters and the counts per status are
// the server's; pages are fetched as the list scrolls (the API's `next_cursor`), so every
// incident can be reached. "Group similar" asks for one row per group of similar incidents.

import { api } from "./api.js";
import { age, ageTime, bandBadge, decisionLabel, h, replace, statusBadge } from "./dom.js";

const PAGE_SIZE = 50;
// A poll re-reads the loaded rows in one request, up to the API's page limit.
const MAX_REFRESH = 200;
const SEARCH_DELAY_MS = 250;

export const STATUSES = [
  ["awaiting_review", "Awaiting review"],
  ["analyzing", "Analyzing"],
  ["deciding", "Deciding"],
  ["approved", "Approved"],
  ["rejected", "Rejected"],
  ["failed", "Failed"],
];

function groupHref(key) {
  return `#/groups/${encodeURIComponent(key)}`;
}

export class Inbox {
  /**
   * @param {{list: HTMLElement, count: HTMLElement, error: HTMLElement, status: HTMLSelectElement,
   *   filter: HTMLInputElement, sort: HTMLSelectElement, grouped: HTMLInputElement,
   *   scroller: HTMLElement}} parts
   */
  constructor(parts) {
    Object.assign(this, parts);
    this.items = [];
    this.counts = {};
    this.total = 0;
    this.nextCursor = null;
    this.currentId = null;
    this.loaded = false;
    this.loading = false;
    this.generation = 0;
    this.onChange = () => {};
    let timer = null;
    this.status.addEventListener("change", () => this.reset());
    this.sort.addEventListener("change", () => this.reset());
    this.grouped.addEventListener("change", () => this.reset());
    this.filter.addEventListener("input", () => {
      clearTimeout(timer);
      timer = setTimeout(() => this.reset(), SEARCH_DELAY_MS);
    });
    this.sentinel = h("div", { class: "inbox-sentinel", "aria-hidden": "true" });
    this.observer = new IntersectionObserver(
      (entries) => {
        if (entries.some((e) => e.isIntersecting)) this.loadMore();
      },
      { root: this.scroller, rootMargin: "300px" },
    );
  }

  /** The query of the current filters (without paging). */
  params() {
    return {
      status: this.status.value,
      q: this.filter.value.trim(),
      sort: this.sort.value,
      grouped: this.grouped.checked ? "true" : "",
    };
  }

  /** Filters changed: start again from the first page. */
  async reset() {
    this.generation += 1;
    this.items = [];
    this.nextCursor = null;
    this.loaded = false;
    this.scroller.scrollTop = 0;
    try {
      await this.refresh();
    } catch {
      // shown in the inbox's error line
    }
  }

  /** Re-read the loaded rows (the first page on the first call); throws the ApiError. */
  async refresh() {
    const generation = this.generation;
    const limit = Math.min(Math.max(this.items.length, PAGE_SIZE), MAX_REFRESH);
    try {
      const page = await api.listIncidents({ ...this.params(), limit });
      if (generation !== this.generation) return this.items;
      const fresh = page.items || [];
      if (this.items.length > MAX_REFRESH) {
        // Scrolled past one request's worth: refresh the top, keep the rest as loaded.
        const seen = new Set(fresh.map((item) => item.id));
        this.items = [...fresh, ...this.items.slice(MAX_REFRESH).filter((item) => !seen.has(item.id))];
      } else {
        this.items = fresh;
        this.nextCursor = page.next_cursor ?? null;
      }
      this.take(page);
      return this.items;
    } catch (err) {
      this.showError(err);
      throw err;
    }
  }

  /** Append the next page, if there is one. */
  async loadMore() {
    if (!this.nextCursor || this.loading) return;
    const generation = this.generation;
    this.loading = true;
    try {
      const page = await api.listIncidents({ ...this.params(), limit: PAGE_SIZE, cursor: this.nextCursor });
      if (generation !== this.generation) return;
      const seen = new Set(this.items.map((item) => item.id));
      this.items.push(...(page.items || []).filter((item) => !seen.has(item.id)));
      this.nextCursor = page.next_cursor ?? null;
      this.take(page);
    } catch (err) {
      this.showError(err);
    } finally {
      this.loading = false;
    }
  }

  take(page) {
    this.counts = page.counts || {};
    this.total = page.total ?? this.items.length;
    this.loaded = true;
    this.error.hidden = true;
    this.render();
    this.onChange();
  }

  showError(err) {
    this.error.textContent = `Could not load incidents: ${err.message}`;
    this.error.hidden = false;
  }

  find(id) {
    return this.items.find((item) => item.id === id) || null;
  }

  /** The incident `step` rows after (or before, when negative) `id` in the list; null at an end. */
  neighbour(id, step) {
    const ids = this.items.map((item) => item.id);
    if (!ids.length) return null;
    const at = ids.indexOf(id);
    if (at < 0) return step > 0 ? ids[0] : ids[ids.length - 1];
    return ids[at + step] ?? null;
  }

  /** The next incident awaiting review after `id` in list order (wrapping), other than `id`. */
  nextAwaiting(id) {
    const at = Math.max(0, this.items.findIndex((item) => item.id === id));
    const order = [...this.items.slice(at + 1), ...this.items.slice(0, at)];
    const next = order.find((item) => item.status === "awaiting_review" && item.id !== id && !item.group_size);
    return next ? next.id : null;
  }

  setCurrent(id) {
    this.currentId = id;
    for (const link of this.list.querySelectorAll("a.inbox-item")) {
      if (link.dataset.id === id) link.setAttribute("aria-current", "page");
      else link.removeAttribute("aria-current");
    }
  }

  render() {
    const awaiting = this.counts.awaiting_review || 0;
    const all = Object.values(this.counts).reduce((sum, n) => sum + n, 0);
    this.count.textContent = this.loaded ? `${awaiting} awaiting · ${all} total` : "";
    for (const option of this.status.options) {
      const label = option.dataset.label || option.textContent;
      option.dataset.label = label;
      const n = option.value ? this.counts[option.value] : all;
      option.textContent = this.loaded && n !== undefined ? `${label} (${n})` : label;
    }
    if (!this.loaded) return;
    // A poll that brings nothing new keeps the rows as they are (only their ages move): a row
    // rebuilt under the pointer between press and release loses the reviewer's click.
    const signature = JSON.stringify([this.items, this.total, this.nextCursor, this.grouped.checked, this.params()]);
    if (signature === this.renderedSignature) {
      for (const time of this.list.querySelectorAll("time[datetime]")) time.textContent = age(time.getAttribute("datetime"));
      return;
    }
    this.renderedSignature = signature;
    this.observer.disconnect();
    if (!this.items.length) {
      const filtered = this.params().q || this.status.value;
      replace(
        this.list,
        h("p", { class: "muted empty" }, filtered ? "No incident matches the filters." : "No incidents yet. POST one to /api/incidents."),
      );
      return;
    }
    const unit = this.grouped.checked ? "row(s)" : "incident(s)";
    replace(
      this.list,
      h("p", { class: "inbox-shown muted", id: "inbox-shown" }, `Showing ${this.items.length} of ${this.total} ${unit}`),
      h("ul", { class: "inbox-rows" }, this.items.map((item) => h("li", {}, this.renderItem(item)))),
      this.nextCursor
        ? h(
            "button",
            { type: "button", class: "secondary small load-more", on: { click: () => this.loadMore() } },
            `Load more (${this.total - this.items.length} more)`,
          )
        : h("p", { class: "muted inbox-end" }, "End of the list."),
      this.sentinel,
    );
    if (this.nextCursor) this.observer.observe(this.sentinel);
  }

  renderItem(item) {
    const groupSize = item.group_size || 1;
    const grouped = groupSize > 1;
    const label = decisionLabel(item.status, item.decision_action);
    return h(
      "a",
      {
        class: `inbox-item status-${item.status}${grouped ? " is-group" : ""}`,
        href: grouped ? groupHref(item.group_key) : `#/incidents/${encodeURIComponent(item.id)}`,
        dataset: { id: item.id, status: item.status, groupSize: String(groupSize) },
        "aria-current": item.id === this.currentId ? "page" : null,
      },
      h(
        "span",
        { class: "inbox-item-head" },
        h("span", { class: "code" }, item.error_code || item.event || "no code"),
        grouped ? h("span", { class: "badge group-size", title: "Similar incidents in this group" }, `×${groupSize}`) : null,
        statusBadge(item.status, label),
      ),
      h("span", { class: "inbox-item-summary" }, item.summary || item.message || "(no summary yet)"),
      h(
        "span",
        { class: "inbox-item-meta" },
        h("span", { class: "service" }, item.service || "unknown service"),
        ageTime(item.created_at),
        item.confidence ? bandBadge(item.confidence) : null,
        item.assignee ? h("span", { class: "assignee", title: "Claimed by" }, `claimed by ${item.assignee}`) : null,
      ),
      item.decided_by ? h("span", { class: "inbox-item-decided" }, `${label} by ${item.decided_by}`) : null,
    );
  }
}
