// Readable names for evidence ids: "CO-500 · Symptoms" for a knowledge doc (its code and the
// section the citation points into), "log line 4", "stack line 7", "message", "5xx ratio" for
// a collected metric, "app.log line 12" for a collected log line. The id stays in the tooltip.

/** The collected-evidence item with this id, or null. */
export function collectedItem(id, d) {
  return ((d && d.collected_evidence) || []).find((item) => item && item.id === id) || null;
}

/** Offsets of the line of `text` containing `at`. */
function lineAround(text, at) {
  const start = text.lastIndexOf("\n", Math.max(0, at - 1)) + 1;
  const end = text.indexOf("\n", at);
  return [start, end < 0 ? text.length : end];
}

/**
 * The section of a doc an offset falls in: a "Label:" line prefix (the error-doc format) or the
 * nearest Markdown heading above it.
 */
export function docSection(content, at) {
  const text = String(content || "");
  if (!text || at < 0 || at > text.length) return null;
  const [start, end] = lineAround(text, at);
  const line = text.slice(start, end);
  const prefix = /^\s*([A-Z][A-Za-z /-]{1,30}):\s/.exec(line);
  // The first line is the doc's title ("Error: CO-500 …"), not a section.
  if (start === 0 && !/^#/.test(line)) return null;
  if (prefix) return prefix[1].trim();
  for (const candidate of text.slice(0, end).split("\n").reverse()) {
    const heading = /^#{1,6}\s+(.+?)\s*#*$/.exec(candidate);
    if (heading) return heading[1];
  }
  return null;
}

function citedOffset(doc, citation) {
  // The model's quote says which part it relied on; the check's sentence when there is none.
  const content = String(doc.content || "");
  const quote = citation && citation.quote;
  if (quote) {
    const at = content.indexOf(quote.slice(0, 60));
    if (at >= 0) return at;
  }
  const span = citation && citation.span;
  return Array.isArray(span) && Number.isInteger(span[0]) ? span[0] : -1;
}

function metricName(item) {
  const named = item.label || item.title || item.name;
  if (named) return String(named);
  const summary = String(item.summary || "");
  const head = /^(.+?)\s+(?:of|for|on|in|rose|fell|was|is|stayed|went)\s/.exec(summary);
  const text = head ? head[1] : summary || String(item.kind || "metric");
  return text.length > 28 ? `${text.slice(0, 27)}…` : text;
}

function basename(path) {
  const parts = String(path || "").split(/[\\/]/);
  return parts[parts.length - 1] || String(path || "");
}

/**
 * The chip text for an evidence id.
 * @param {string} id
 * @param {object} d the incident (its docs and collected evidence name the ids)
 * @param {object} [citation] the citation, whose span or quote picks the doc section
 */
export function evidenceLabel(id, d, citation = null) {
  const value = String(id);
  if (value === "incident:message") return "message";
  const field = /^incident:([a-z_]+)$/.exec(value);
  if (field) return `${field[1].replace(/_/g, " ")} field`;
  let match = /^incident:stack:(\d+)$/.exec(value);
  if (match) return `stack line ${match[1]}`;
  match = /^incident:log:(\d+)$/.exec(value);
  if (match) return `log line ${match[1]}`;
  const doc = ((d && d.similar_error_docs) || []).find((item) => item.id === value);
  if (doc) {
    const meta = doc.metadata || {};
    const name = meta.error_code || meta.title || meta.source || "knowledge doc";
    const section = docSection(doc.content, citedOffset(doc, citation));
    return section ? `${name} · ${section}` : String(name);
  }
  const item = collectedItem(value, d);
  if (item) {
    if (Array.isArray(item.lines) || String(item.kind || "").startsWith("log")) {
      const line = /:(\d+)$/.exec(value);
      const source = basename(item.file || item.path || item.source || "log");
      return line ? `${source} line ${line[1]}` : source;
    }
    return metricName(item);
  }
  match = /^log:(.+):(\d+)$/.exec(value);
  if (match) return `${basename(match[1])} line ${match[2]}`;
  return value.startsWith("error-doc-") ? `${value.slice(0, 18)}…` : value;
}
