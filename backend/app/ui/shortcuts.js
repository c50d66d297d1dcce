// The keyboard shortcuts: one list, shown on the home view and in the `?` dialog.

import { h } from "./dom.js";

export const SHORTCUTS = [
  ["j / k", "next / previous incident in the inbox"],
  ["a", "approve (opens the form)"],
  ["A", "approve and open the next incident awaiting review"],
  ["r", "reject with a reason"],
  ["e", "edit and approve"],
  ["n", "send back for re-analysis"],
  ["c", "claim the incident, or release your claim"],
  ["/", "search the inbox"],
  ["Esc", "close the open form, evidence or dialog"],
  ["?", "this list"],
];

export function shortcutList() {
  return h(
    "dl",
    { class: "keys" },
    SHORTCUTS.map(([keys, what]) => [
      h("dt", {}, keys.split(" / ").flatMap((k, i) => (i ? [" / ", h("kbd", {}, k)] : [h("kbd", {}, k)]))),
      h("dd", {}, what),
    ]),
  );
}

/** Open the shortcut dialog, or close it when open; true (the key was handled). */
export function toggleShortcuts() {
  const open = document.getElementById("shortcuts-dialog");
  if (open) {
    open.close();
    return true;
  }
  const close = h("button", { type: "button", class: "secondary", autofocus: true }, "Close");
  const dialog = h(
    "dialog",
    { id: "shortcuts-dialog", "aria-labelledby": "shortcuts-title" },
    h("h2", { id: "shortcuts-title" }, "Keyboard shortcuts"),
    shortcutList(),
    h("div", { class: "actions" }, close),
  );
  close.addEventListener("click", () => dialog.close());
  dialog.addEventListener("close", () => dialog.remove());
  document.body.append(dialog);
  dialog.showModal();
  return true;
}
