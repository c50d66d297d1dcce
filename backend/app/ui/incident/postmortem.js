// The postmortem panel of a decided incident: copy the Markdown postmortem the API builds
// (GET /api/incidents/<id>/postmortem) to the clipboard, or download it as a .md file.
// The text is fetched on click, so it always reflects the audit trail as it is now.

import { api } from "../api.js";
import { h } from "../dom.js";
import { section } from "./panel.js";

const DECIDED = new Set(["approved", "rejected"]);

/** Put `text` on the clipboard; the hidden-textarea fallback serves pages without the API. */
async function copyText(text) {
  if (navigator.clipboard && window.isSecureContext) {
    await navigator.clipboard.writeText(text);
    return;
  }
  const area = h("textarea", { class: "visually-hidden", readonly: true, "aria-hidden": "true" });
  area.value = text;
  document.body.append(area);
  area.select();
  const copied = document.execCommand("copy");
  area.remove();
  if (!copied) throw new Error("the browser refused to copy; use Download instead");
}

/** Offer `text` as a file download named `name`. */
function downloadText(name, text) {
  const url = URL.createObjectURL(new Blob([text], { type: "text/markdown;charset=utf-8" }));
  const link = h("a", { href: url, download: name, hidden: true });
  document.body.append(link);
  link.click();
  link.remove();
  // Revoked on the next turn: the click has started the download by then.
  setTimeout(() => URL.revokeObjectURL(url), 0);
}

/**
 * The panel, or null while the incident is undecided (a postmortem needs a decision).
 * @param {object} d the incident
 */
export function renderPostmortem(d) {
  if (!DECIDED.has(d.status)) return null;
  const fileName = `postmortem-${d.id}.md`;
  const status = h("p", { class: "hint", id: "postmortem-status", role: "status", "aria-live": "polite" });
  const act = async (button, action) => {
    button.disabled = true;
    status.textContent = "Building the postmortem…";
    try {
      status.textContent = await action(await api.getPostmortem(d.id));
    } catch (err) {
      status.textContent = `Could not get the postmortem: ${err.message}`;
    } finally {
      button.disabled = false;
    }
  };
  const copy = h(
    "button",
    {
      type: "button",
      id: "postmortem-copy",
      on: {
        click: (event) =>
          act(event.currentTarget, async (text) => {
            await copyText(text);
            return "Copied the postmortem (Markdown) to the clipboard.";
          }),
      },
    },
    "Copy postmortem",
  );
  const download = h(
    "button",
    {
      type: "button",
      class: "secondary",
      id: "postmortem-download",
      on: {
        click: (event) =>
          act(event.currentTarget, async (text) => {
            downloadText(fileName, text);
            return `Downloaded ${fileName}.`;
          }),
      },
    },
    "Download postmortem",
  );
  return section(
    "postmortem",
    "Postmortem",
    h(
      "p",
      { class: "hint" },
      "A Markdown draft for the team: summary, impact, timeline, root cause with its evidence as footnotes, what was ruled out, remediation, validation and action items.",
    ),
    h("div", { class: "actions" }, copy, download),
    status,
  );
}
