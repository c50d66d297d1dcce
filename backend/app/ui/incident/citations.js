// Citations: resolve an evidence id to the text the model saw, find the cited words in it
// (a character span when the citation has one, else the quote) and render it with a <mark>.

import { h } from "../dom.js";

/** [start, end) offsets of each line of `text` (split on \r\n, \r or \n). */
export function lineRanges(text) {
  const ranges = [];
  const re = /\r\n|\r|\n/g;
  let start = 0;
  let match;
  while ((match = re.exec(text)) !== null) {
    ranges.push([start, match.index]);
    start = match.index + match[0].length;
  }
  if (start < text.length) ranges.push([start, text.length]);
  return ranges;
}

/**
 * Where the evidence `id` lives: the full text to show and the range of the cited item in it.
 * @returns {{kind: string, title: string, content: string, item: [number, number], doc?: object} | null}
 */
export function resolveEvidence(id, incident, docs, collected = []) {
  incident = incident || {};
  const doc = (docs || []).find((d) => d.id === id);
  if (doc) {
    const content = String(doc.content || "");
    return { kind: "doc", title: id, content, item: [0, content.length], doc };
  }
  const gathered = (collected || []).find((c) => c && c.id === id);
  if (gathered) {
    // The text the citation check read (app.rca.evidence.collected_text): summary, then lines.
    const lines = Array.isArray(gathered.lines) ? gathered.lines.map((l) => (l && typeof l === "object" ? String(l.text ?? "") : String(l))) : [];
    const content = [String(gathered.summary || ""), ...lines.filter(Boolean)].join("\n").trim();
    const title = `Collected from ${gathered.source || "a source"}${gathered.file || gathered.path ? ` (${gathered.file || gathered.path})` : ""}`;
    return { kind: "collected", title, content, item: [0, content.length], collected: gathered };
  }
  if (id === "incident:message") {
    // The cited text is the message without surrounding white space (as the API cites it).
    const content = String(incident.message || "");
    const start = content.length - content.trimStart().length;
    const item = [start, start + content.trim().length];
    return { kind: "message", title: "Incident message", content, item };
  }
  const field = /^incident:([a-z_]+)$/.exec(id);
  if (field && typeof incident[field[1]] === "string") {
    // A structured field (error_code, service, event): the diagnosis cites it.
    const content = String(incident[field[1]]);
    return { kind: "field", title: `The incident's ${field[1]} field`, content, item: [0, content.length] };
  }
  let match = /^incident:stack:(\d+)$/.exec(id);
  if (match) {
    const content = String(incident.stack_trace || "");
    const line = Number(match[1]);
    const range = lineRanges(content)[line - 1];
    if (!range) return null;
    return { kind: "stack", title: `Stack trace, line ${line}`, content, item: range };
  }
  match = /^incident:log:(\d+)$/.exec(id);
  if (match) {
    const logs = (incident.logs || []).map(String);
    const entry = Number(match[1]);
    if (entry < 1 || entry > logs.length) return null;
    let start = 0;
    for (let i = 0; i < entry - 1; i++) start += logs[i].length + 1;
    return {
      kind: "log",
      title: `Log entry ${entry}`,
      content: logs.join("\n"),
      item: [start, start + logs[entry - 1].length],
    };
  }
  return null;
}

function normalise(text) {
  // Collapse white space and lower-case, remembering where each kept character came from.
  let out = "";
  const map = [];
  let space = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (/\s/.test(ch)) {
      if (!space && out.length) {
        out += " ";
        map.push(i);
      }
      space = true;
    } else {
      out += ch.toLowerCase();
      map.push(i);
      space = false;
    }
  }
  return { out, map };
}

/**
 * Find `quote` in `text`: exactly, then ignoring case and runs of white space, then without
 * surrounding quotes and trailing punctuation. Returns {start, end, exact} or null.
 */
export function findQuote(text, quote) {
  if (!quote || !text) return null;
  const exact = text.indexOf(quote);
  if (exact >= 0) return { start: exact, end: exact + quote.length, exact: true };
  const hay = normalise(text);
  const candidates = [quote, quote.trim().replace(/^["'“”]+|["'“”.,;:]+$/g, "")];
  for (const candidate of candidates) {
    const needle = normalise(candidate).out.trim();
    if (!needle) continue;
    const at = hay.out.indexOf(needle);
    if (at >= 0) {
      const start = hay.map[at];
      const end = hay.map[at + needle.length - 1] + 1;
      return { start, end, exact: false };
    }
  }
  return null;
}

/** A citation's span, if it has a valid one for a text of `length` characters. */
export function validSpan(citation, length) {
  const span = citation && citation.span;
  if (!Array.isArray(span) || span.length !== 2) return null;
  const [start, end] = span;
  if (!Number.isInteger(start) || !Number.isInteger(end)) return null;
  if (start < 0 || end <= start || end > length) return null;
  return { start, end };
}

/**
 * Locate the cited words inside the resolved evidence. Offsets are into `resolved.content`.
 * `span` (from the citation check: the sentence that best supports the claim) is relative to
 * the cited item (the doc, or the incident line/entry); the model's `quote` is searched inside
 * the item first, then anywhere in the content.
 * @returns {{span: {start, end}|null, quote: {start, end, exact}|null}}
 */
export function locateCitation(resolved, citation) {
  const [itemStart, itemEnd] = resolved.item;
  const itemText = resolved.content.slice(itemStart, itemEnd);
  const valid = validSpan(citation, itemText.length);
  const span = valid ? { start: itemStart + valid.start, end: itemStart + valid.end } : null;
  const quoteText = (citation && citation.quote) || "";
  let quote = findQuote(itemText, quoteText);
  if (quote) quote = { start: itemStart + quote.start, end: itemStart + quote.end, exact: quote.exact };
  else quote = findQuote(resolved.content, quoteText);
  return { span, quote };
}

/**
 * The content as a <pre>: the cited incident line/entry outlined, the citation check's
 * sentence in <mark class="cited-span"> and the model's quote in <mark class="cited-quote">
 * (one <mark> with both classes where they overlap). Built from text nodes only.
 */
export function renderHighlighted(resolved, located) {
  const { content } = resolved;
  const [itemStart, itemEnd] = resolved.item;
  const ranges = [];
  if (located && located.span) ranges.push({ ...located.span, cls: "cited-span" });
  if (located && located.quote) ranges.push({ ...located.quote, cls: "cited-quote" });
  const outlined = !(itemStart === 0 && itemEnd === content.length);
  const cuts = new Set([0, content.length]);
  for (const r of ranges) {
    cuts.add(r.start);
    cuts.add(r.end);
  }
  if (outlined) {
    cuts.add(itemStart);
    cuts.add(itemEnd);
  }
  const points = [...cuts].sort((a, b) => a - b);
  const pre = h("pre", { class: `evidence-text evidence-${resolved.kind}` });
  let item = null;
  for (let i = 0; i < points.length - 1; i++) {
    const [from, to] = [points[i], points[i + 1]];
    if (from === to) continue;
    const text = content.slice(from, to);
    const classes = ranges.filter((r) => r.start <= from && to <= r.end).map((r) => r.cls);
    const node = classes.length ? h("mark", { class: classes.join(" ") }, text) : document.createTextNode(text);
    const inItem = outlined && from >= itemStart && to <= itemEnd;
    if (inItem) {
      if (!item) {
        item = h("span", { class: "cited-item" });
        pre.append(item);
      }
      item.append(node);
    } else {
      pre.append(node);
    }
  }
  return pre;
}
