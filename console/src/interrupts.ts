// An interrupt as a card in the conversation, by kind: a permission offers
// "Allow once", "Always allow" (when the server offers allow_always) and
// "Deny"; a cloud resource selection and a deployment confirmation are forms
// (resource-selection-form.ts, deployment-confirmation-form.ts); a pipeline
// pause and any other question offer their options as buttons and, when the
// responseSchema has a freeText branch, a text box. The answer is the resume
// entry's status and payload.
import type { Interrupt } from "@ag-ui/client";
import { deploymentConfirmationForm } from "./deployment-confirmation-form.js";
import { h } from "./dom.js";
import { i18nLabel, t, tr, type MessageKey } from "./i18n.js";
import { obj, str } from "./json.js";
import { resourceSelectionForm } from "./resource-selection-form.js";

export type Answer =
  | { status: "resolved"; payload: Record<string, unknown> }
  | { status: "cancelled"; payload?: Record<string, unknown> };

/** Records an answer (once) with the text to show as the user's reply. */
export type Respond = (answer: Answer, shown: string) => void;

type CardKind = "permission" | "selector" | "confirmation" | "pause" | "question";

const HEADING: Record<CardKind, MessageKey> = {
  permission: "permission",
  selector: "resourceSelection",
  confirmation: "deploymentConfirmation",
  pause: "paused",
  question: "question",
};

function cardKind(interrupt: Interrupt): CardKind {
  const kind = obj(interrupt.metadata).kind;
  if (kind === "permission" || interrupt.reason === "tool_call") return "permission";
  if (kind === "cloud_resource_selection") return "selector";
  if (kind === "deployment_confirmation") return "confirmation";
  if (kind === "pipeline_pause_confirmation") return "pause";
  return "question";
}

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

export interface InterruptCard {
  el: HTMLElement;
  /** Answers (from the card's controls, or from elsewhere: the pipeline's Choose buttons); once. */
  answer: Respond;
}

/** The card; `onAnswer` gets the answer and the text to record as the user's reply. */
export function interruptCard(interrupt: Interrupt, onAnswer: Respond): InterruptCard {
  const meta = obj(interrupt.metadata);
  const kind = cardKind(interrupt);
  const card = h("section", {
    class: `interrupt ${kind === "pause" ? "question pause" : kind}`,
    "data-interrupt-id": interrupt.id,
    role: "group",
    ...i18nLabel(HEADING[kind]),
  });
  const actions = h("div", { class: "actions" });
  const answer: Respond = (a, shown) => {
    if (card.dataset.answered) return;
    for (const el of card.querySelectorAll<HTMLButtonElement | HTMLInputElement>("button, input"))
      el.disabled = true;
    card.dataset.answered = "true";
    actions.after(tr("p", "answered", { answer: shown }, { class: "answered" }));
    onAnswer(a, shown);
  };
  const prompt = str(meta.prompt) || interrupt.message || "";
  card.append(tr("h3", HEADING[kind]), h("p", { class: "prompt" }, prompt));
  if (kind === "permission") permissionControls(interrupt, card, actions, answer);
  else if (kind === "selector") actions.append(resourceSelectionForm(interrupt, answer));
  else if (kind === "confirmation") actions.append(deploymentConfirmationForm(interrupt, answer));
  else questionControls(interrupt, actions, answer);
  card.append(actions);
  return { el: card, answer };
}

function permissionControls(
  interrupt: Interrupt,
  card: HTMLElement,
  actions: HTMLElement,
  answer: Respond,
): void {
  const meta = obj(interrupt.metadata);
  const details = [str(meta.purpose), str(meta.target) && `→ ${str(meta.target)}`].filter(Boolean).join(" ");
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
}

function questionControls(interrupt: Interrupt, actions: HTMLElement, answer: Respond): void {
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
