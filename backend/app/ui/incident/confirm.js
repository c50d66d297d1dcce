// A small modal question with two answers, for decisions that need a second thought (deciding an
// incident someone else claimed). Resolves true for the confirming answer, false otherwise.

import { h } from "../dom.js";

export function confirmDialog(question, confirmLabel = "Continue", cancelLabel = "Cancel") {
  return new Promise((resolve) => {
    const yes = h("button", { type: "button", class: "primary", id: "confirm-yes" }, confirmLabel);
    const no = h("button", { type: "button", class: "secondary", id: "confirm-no", autofocus: true }, cancelLabel);
    const dialog = h(
      "dialog",
      { id: "confirm-dialog", "aria-labelledby": "confirm-title", "aria-describedby": "confirm-text" },
      h("h2", { id: "confirm-title" }, "Are you sure?"),
      h("p", { id: "confirm-text" }, question),
      h("div", { class: "actions" }, yes, no),
    );
    let answer = false;
    yes.addEventListener("click", () => {
      answer = true;
      dialog.close();
    });
    no.addEventListener("click", () => dialog.close());
    dialog.addEventListener("close", () => {
      dialog.remove();
      resolve(answer);
    });
    document.body.append(dialog);
    dialog.showModal();
  });
}
