// An interrupt as a card in the conversation. A permission offers "Allow once",
// "Always allow" (when the server offers allow_always) and "Deny"; any other
// kind offers its options as buttons and, when its responseSchema has a
// freeText branch, a text box. The answer is the resume entry's payload.
import type { Interrupt } from "@ag-ui/client";
import { h } from "./dom.js";
import { i18nLabel, t, tr, type MessageKey } from "./i18n.js";

export type Answer =
  { status: "resolved"; payload: Record<string, unknown> } | { status: "cancelled"; payload?: undefined };

type Json = Record<string, unknown>;
const obj = (v: unknown): Json => (v && typeof v === "object" && !Array.isArray(v) ? (v as Json) : {});
const str = (v: unknown): string => (typeof v === "string" ? v : "");

/** The decisions a permission's schema allows. */
function decisions(interrupt: Interrupt): string[] {
  const decision = obj(obj(obj(interrupt.responseSchema).properties).decision);
  return Array.isArray(decision.enum) ? decision.enum.map(String) : ["allow_once", "deny"];
}

/** The options of a question: one per selectedId branch of its schema. */
function options(interrupt: Interrupt): Array<{ id: string; title: string }> {
  const branches = obj(interrupt.responseSchema).oneOf;
  if (!Array.isArray(branches)) return [];
  return branches
    .map((b) => obj(obj(obj(b).properties).selectedId))
    .filter((s) => typeof s.const === "string")
    .map((s) => ({ id: s.const as string, title: str(s.title) || (s.const as string) }));
}

function allowsFreeText(interrupt: Interrupt): boolean {
  const branches = obj(interrupt.responseSchema).oneOf;
  return Array.isArray(branches) && branches.some((b) => "freeText" in obj(obj(b).properties));
}

export function isPermission(interrupt: Interrupt): boolean {
  return obj(interrupt.metadata).kind === "permission" || interrupt.reason === "tool_call";
}

export interface InterruptCard {
  el: HTMLElement;
  /** Answers (from the card's buttons, or from elsewhere: the pipeline's Choose buttons); once. */
  answer(answer: Answer, shown: string): void;
}

/** The card; `onAnswer` gets the answer and the text to record as the user's reply. */
export function interruptCard(
  interrupt: Interrupt,
  onAnswer: (answer: Answer, shown: string) => void,
): InterruptCard {
  const meta = obj(interrupt.metadata);
  const permission = isPermission(interrupt);
  const card = h("section", {
    class: `interrupt ${permission ? "permission" : "question"}`,
    "data-interrupt-id": interrupt.id,
    role: "group",
    ...i18nLabel(permission ? "permission" : "question"),
  });
  const actions = h("div", { class: "actions" });
  const answer = (a: Answer, shown: string) => {
    if (card.dataset.answered) return;
    for (const el of card.querySelectorAll<HTMLButtonElement | HTMLInputElement>("button, input"))
      el.disabled = true;
    card.dataset.answered = "true";
    actions.after(tr("p", "answered", { answer: shown }, { class: "answered" }));
    onAnswer(a, shown);
  };
  const prompt = permission ? str(meta.prompt) || interrupt.message : str(meta.prompt) || interrupt.message;
  card.append(tr("h3", permission ? "permission" : "question"), h("p", { class: "prompt" }, prompt ?? ""));
  if (permission) {
    const details = [str(meta.purpose), str(meta.target) && `→ ${str(meta.target)}`]
      .filter(Boolean)
      .join(" ");
    if (details) card.append(h("p", { class: "details" }, details));
    const allowed = decisions(interrupt);
    const button = (key: MessageKey, decision: string, cls: string) => {
      const b = tr("button", key, undefined, { type: "button", class: cls });
      b.disabled = !allowed.includes(decision);
      b.addEventListener("click", () => answer({ status: "resolved", payload: { decision } }, t(key)));
      return b;
    };
    actions.append(
      button("allowOnce", "allow_once", "primary"),
      button("alwaysAllow", "allow_always", ""),
      button("deny", "deny", "danger"),
    );
  } else {
    for (const option of options(interrupt)) {
      const b = h("button", { type: "button" }, option.title);
      b.addEventListener("click", () =>
        answer({ status: "resolved", payload: { selectedId: option.id } }, option.title),
      );
      actions.append(b);
    }
    if (allowsFreeText(interrupt)) {
      const input = h("input", { type: "text", ...i18nLabel("yourAnswer") });
      const send = tr("button", "answer", undefined, { type: "submit", class: "primary" });
      const form = h("form", { class: "free-text" }, input, send);
      form.addEventListener("submit", (e) => {
        e.preventDefault();
        const text = input.value.trim();
        if (text) answer({ status: "resolved", payload: { freeText: text } }, text);
      });
      actions.append(form);
    }
  }
  card.append(actions);
  return { el: card, answer };
}
