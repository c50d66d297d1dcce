// A small line diff (longest common subsequence) and a stable text form of an RCA, used to
// show a reviewer's edit against the original draft and one draft against the next.

import { h } from "./dom.js";

/**
 * Diff two arrays of lines.
 * @returns {{op: "same"|"del"|"add", text: string}[]}
 */
export function diffLines(before, after) {
  const n = before.length;
  const m = after.length;
  // lcs[i][j] = length of the LCS of before[i:] and after[j:]
  const lcs = Array.from({ length: n + 1 }, () => new Array(m + 1).fill(0));
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      lcs[i][j] = before[i] === after[j] ? lcs[i + 1][j + 1] + 1 : Math.max(lcs[i + 1][j], lcs[i][j + 1]);
    }
  }
  const out = [];
  let i = 0;
  let j = 0;
  while (i < n && j < m) {
    if (before[i] === after[j]) {
      out.push({ op: "same", text: before[i] });
      i++;
      j++;
    } else if (lcs[i + 1][j] >= lcs[i][j + 1]) {
      out.push({ op: "del", text: before[i++] });
    } else {
      out.push({ op: "add", text: after[j++] });
    }
  }
  while (i < n) out.push({ op: "del", text: before[i++] });
  while (j < m) out.push({ op: "add", text: after[j++] });
  return out;
}

function listLines(title, items) {
  if (!items || !items.length) return [];
  return [`${title}:`, ...items.map((item) => `  - ${item}`)];
}

/** The reviewable content of an RCA as lines, in a fixed order. */
export function rcaToLines(rca) {
  if (!rca) return [];
  const lines = [`Summary: ${rca.summary || ""}`];
  lines.push(`Outcome: ${rca.outcome || "analysis"} · confidence: ${rca.confidence || "—"}`);
  (rca.hypotheses || []).forEach((hyp, index) => {
    const code = hyp.error_code ? ` [${hyp.error_code}]` : "";
    lines.push(`Hypothesis ${index + 1}${code} (${hyp.confidence || "—"}): ${hyp.statement || ""}`);
    (hyp.claims || []).forEach((claim, c) => {
      const flag = claim.supported === false ? " (unsupported)" : "";
      const ids = (claim.evidence || []).map((e) => e.id).join(", ");
      lines.push(`  Claim ${index + 1}.${c + 1}${flag}: ${claim.text || ""}${ids ? ` [${ids}]` : ""}`);
    });
  });
  lines.push(...listLines("Ruled out", rca.ruled_out));
  lines.push(...listLines("Missing evidence", rca.missing_evidence));
  lines.push(...listLines("Next checks", rca.next_checks));
  lines.push(...listLines("Remediation", rca.remediation));
  return lines;
}

/** Render a diff as a preformatted block of -/+ lines; counts in the caption. */
export function renderDiff(before, after, { caption = "", beforeLabel = "original", afterLabel = "edited" } = {}) {
  const ops = diffLines(before, after);
  const added = ops.filter((o) => o.op === "add").length;
  const removed = ops.filter((o) => o.op === "del").length;
  const marks = { same: "  ", del: "− ", add: "+ " };
  const body = h(
    "pre",
    // Focusable: a long diff scrolls, and keyboard users must be able to scroll it.
    { class: "diff", "aria-label": caption || "diff", tabindex: "0" },
    ops.map((o) =>
      h(o.op === "same" ? "span" : o.op === "add" ? "ins" : "del", { class: `diff-line diff-${o.op}` }, marks[o.op] + o.text),
    ),
  );
  const legend = h(
    "p",
    { class: "diff-legend" },
    h("span", { class: "legend legend-del" }, `− ${beforeLabel}`),
    " ",
    h("span", { class: "legend legend-add" }, `+ ${afterLabel}`),
    ` · ${removed} line(s) removed, ${added} added`,
  );
  return h("figure", { class: "diff-figure" }, caption ? h("figcaption", {}, caption) : null, legend, body);
}
