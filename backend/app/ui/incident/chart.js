// A small time-series chart drawn as SVG (no library): the series as a line, its min and max,
// the time range, and the incident's time marked. Built with createElementNS, so nothing is
// parsed from strings.

import { svg } from "../dom.js";

const WIDTH = 360;
const HEIGHT = 110;
const PAD = { left: 44, right: 8, top: 8, bottom: 20 };

/** A point as [epoch ms, number], from [t, v] or {t|time|ts|x, v|value|y}; null if unusable. */
export function toPoint(point) {
  let t;
  let v;
  if (Array.isArray(point)) [t, v] = point;
  else if (point && typeof point === "object") {
    t = point.t ?? point.time ?? point.ts ?? point.timestamp ?? point.x;
    v = point.v ?? point.value ?? point.y;
  } else return null;
  const ms = typeof t === "number" ? (t < 1e12 ? t * 1000 : t) : Date.parse(t);
  const value = typeof v === "number" ? v : Number.parseFloat(v);
  if (!Number.isFinite(ms) || !Number.isFinite(value)) return null;
  return [ms, value];
}

const CLOCK = new Intl.DateTimeFormat(undefined, { hour: "2-digit", minute: "2-digit", timeZoneName: "short" });
const clock = (ms) => CLOCK.format(new Date(ms));

function formatValue(value) {
  const abs = Math.abs(value);
  if (abs !== 0 && (abs < 0.01 || abs >= 1e5)) return value.toExponential(1);
  return Number.isInteger(value) ? String(value) : value.toFixed(abs < 1 ? 3 : 1);
}

/**
 * The chart for a series.
 * @param {Array} points the item's points (see toPoint)
 * @param {{title: string, marker?: string}} options `marker`: ISO time to mark (the incident)
 * @returns {SVGElement|null} null when fewer than two usable points
 */
export function seriesChart(points, { title, marker } = {}) {
  const series = (points || []).map(toPoint).filter(Boolean).sort((a, b) => a[0] - b[0]);
  if (series.length < 2) return null;
  const t0 = series[0][0];
  const t1 = series[series.length - 1][0];
  let lo = Math.min(...series.map((p) => p[1]));
  let hi = Math.max(...series.map((p) => p[1]));
  if (hi === lo) {
    hi += Math.abs(hi) * 0.1 || 1;
    lo -= Math.abs(lo) * 0.1 || 0;
  }
  const x = (t) => PAD.left + ((t - t0) / Math.max(1, t1 - t0)) * (WIDTH - PAD.left - PAD.right);
  const y = (v) => PAD.top + (1 - (v - lo) / (hi - lo)) * (HEIGHT - PAD.top - PAD.bottom);
  const path = series.map(([t, v], i) => `${i ? "L" : "M"}${x(t).toFixed(1)},${y(v).toFixed(1)}`).join(" ");
  const mark = Date.parse(marker);
  const marked = Number.isFinite(mark) && mark >= t0 && mark <= t1;
  return svg(
    "svg",
    {
      class: "chart",
      viewBox: `0 0 ${WIDTH} ${HEIGHT}`,
      role: "img",
      "aria-label": `${title}: from ${formatValue(series[0][1])} to ${formatValue(series[series.length - 1][1])}, range ${formatValue(lo)}–${formatValue(hi)}`,
    },
    svg("title", {}, title),
    svg("line", { class: "chart-axis", x1: PAD.left, y1: HEIGHT - PAD.bottom, x2: WIDTH - PAD.right, y2: HEIGHT - PAD.bottom }),
    svg("line", { class: "chart-axis", x1: PAD.left, y1: PAD.top, x2: PAD.left, y2: HEIGHT - PAD.bottom }),
    svg("text", { class: "chart-label", x: PAD.left - 4, y: PAD.top + 8, "text-anchor": "end" }, formatValue(hi)),
    svg("text", { class: "chart-label", x: PAD.left - 4, y: HEIGHT - PAD.bottom, "text-anchor": "end" }, formatValue(lo)),
    svg("text", { class: "chart-label", x: PAD.left, y: HEIGHT - 4 }, clock(t0)),
    svg("text", { class: "chart-label", x: WIDTH - PAD.right, y: HEIGHT - 4, "text-anchor": "end" }, clock(t1)),
    marked
      ? svg(
          "g",
          { class: "chart-marker" },
          svg("line", { x1: x(mark), y1: PAD.top, x2: x(mark), y2: HEIGHT - PAD.bottom }),
          svg("text", { class: "chart-label", x: x(mark) + 3, y: PAD.top + 8 }, "incident"),
        )
      : null,
    svg("path", { class: "chart-line", d: path }),
  );
}
