// Evidence collected before the analysis (Prometheus series, log-file lines): each metric as a
// small chart with the incident's time marked and a link to the Prometheus graph page, each log
// item with its file and lines; the sources that could not be read are named first.

import { h, localTime, time } from "../dom.js";
import { seriesChart } from "./chart.js";
import { evidenceLabel } from "./labels.js";
import { section } from "./panel.js";

/** [start, end] ISO strings of an item's range (`{start, end}`, `[start, end]` or a string). */
export function itemRange(item) {
  const range = item && item.range;
  if (Array.isArray(range)) return [range[0], range[1]];
  if (range && typeof range === "object") return [range.start ?? range.from, range.end ?? range.to];
  return [null, null];
}

function toIso(value) {
  if (value === null || value === undefined || value === "") return null;
  const ms = typeof value === "number" ? (value < 1e12 ? value * 1000 : value) : Date.parse(value);
  return Number.isFinite(ms) ? new Date(ms).toISOString() : null;
}

/** A link to the item's Prometheus graph page, when the item carries one. */
function graphLink(item) {
  const url = item.url || item.graph_url || item.link;
  if (!url || !/^https?:\/\//i.test(String(url))) return null;
  return h("a", { href: String(url), target: "_blank", rel: "noopener noreferrer", class: "graph-link" }, "Open in Prometheus");
}

/** The log lines of an item as text (`lines` may be strings or {line|number, text} objects). */
export function itemLines(item) {
  return (item.lines || []).map((line) => {
    if (line && typeof line === "object") {
      const number = line.line ?? line.number ?? line.n;
      const text = line.text ?? line.message ?? "";
      return number !== undefined ? `${number}: ${text}` : String(text);
    }
    return String(line);
  });
}

function renderItem(item, d, cited) {
  const [start, end] = itemRange(item).map(toIso);
  // The incident time the collection used (an alert's startsAt), else when it was reported.
  const marker = (item.range && item.range.at) || d.created_at;
  const chart = Array.isArray(item.points) ? seriesChart(item.points, { title: evidenceLabel(item.id, d), marker }) : null;
  const lines = Array.isArray(item.lines) ? itemLines(item) : [];
  return h(
    "li",
    { class: `collected-item${cited.has(item.id) ? " is-cited" : ""}`, dataset: { evidenceId: item.id, kind: item.kind || "" } },
    h(
      "div",
      { class: "doc-head" },
      h("strong", {}, evidenceLabel(item.id, d)),
      h("span", { class: "badge" }, String(item.source || item.kind || "collected")),
      h("code", { class: "muted" }, item.id),
    ),
    item.summary ? h("p", { class: "collected-summary" }, String(item.summary)) : null,
    chart,
    Array.isArray(item.points) && !chart ? h("p", { class: "muted" }, "Too few points to draw.") : null,
    lines.length ? h("pre", { class: "numbered collected-lines" }, lines.map((line) => [h("span", { class: "line" }, line), "\n"])) : null,
    h(
      "p",
      { class: "muted collected-meta" },
      item.query ? [h("code", { class: "query" }, String(item.query)), " "] : null,
      start && end ? ["from ", time(start, { relative: false }), " to ", h("time", { datetime: end, title: end }, localTime(end))] : null,
      item.file || item.path ? [" · ", h("code", {}, String(item.file || item.path))] : null,
    ),
    graphLink(item),
  );
}

/** The panel, or null when nothing was collected and no source failed. */
export function renderCollected(d, cited) {
  const items = (d.collected_evidence || []).filter((item) => item && item.id);
  const unavailable = d.sources_unavailable || [];
  if (!items.length && !unavailable.length) return null;
  return section(
    "collected",
    `Collected evidence (${items.length})`,
    unavailable.length
      ? h(
          "div",
          { class: "notice warning", id: "sources-unavailable", role: "note" },
          h("strong", {}, "Not read: "),
          unavailable.map((entry, i) => [
            i ? "; " : "",
            h("code", {}, String((entry && entry.source) || entry)),
            entry && entry.reason ? ` — ${entry.reason}` : "",
          ]),
          ". The analysis did not see these sources.",
        )
      : null,
    items.length ? h("ul", { class: "collected" }, items.map((item) => renderItem(item, d, cited))) : null,
  );
}
