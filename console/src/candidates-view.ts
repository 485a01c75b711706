// The pipeline panel's candidates, side by side: each one's steps, what
// happened to it (failed at a step, restarted, rolled back), its cost (from
// its cost estimate), its detail and diagram, and a "Choose" button while the
// candidate_selection interrupt waits; the chosen one is marked.
import type { Interrupt } from "@ag-ui/client";
import { detailBlock, diagramBlock } from "./candidate-presentation.js";
import { h } from "./dom.js";
import { i18nLabel, tr, type MessageKey } from "./i18n.js";
import { num, obj, str, type Json } from "./json.js";
import { StepList } from "./step-list.js";

interface CandidateCard {
  id: string;
  index: number;
  name: string;
  el: HTMLElement;
  steps: StepList;
  status: HTMLElement;
  cost: HTMLElement;
  presentation: HTMLElement;
  actions: HTMLElement;
}

export class CandidatesView {
  readonly root: HTMLElement;
  private readonly box: HTMLElement;
  private readonly cards = new Map<string, CandidateCard>();

  constructor() {
    this.box = h("div", { class: "candidates" });
    this.root = h("div", { class: "candidates-wrap", hidden: true }, tr("h3", "candidates"), this.box);
  }

  /** The card of an envelope's candidate coordinates, made the first time. */
  card(candidate: Json): CandidateCard {
    const id = str(candidate.id) || str(candidate.subPipelineId);
    let card = this.cards.get(id);
    if (card) return card;
    const name = str(candidate.name) || id;
    const steps = new StepList(h("ol", { class: "candidate-steps" }));
    const status = h("p", { class: "candidate-status", hidden: true });
    const cost = h("p", { class: "cost" });
    // One detail and one diagram each: shown again (a second selection), they replace the first.
    const presentation = h(
      "div",
      { class: "presentation" },
      h("div", { class: "slot-candidate_detail_shown" }),
      h("div", { class: "slot-diagram_shown" }),
    );
    const actions = h("div", { class: "actions" });
    const el = h(
      "article",
      { class: "candidate", "data-candidate": id, "aria-label": name },
      h("h4", {}, name),
      steps.el,
      status,
      cost,
      presentation,
      actions,
    );
    card = { id, index: Number(candidate.index), name, el, steps, status, cost, presentation, actions };
    this.cards.set(id, card);
    for (const step of Array.isArray(candidate.steps) ? candidate.steps : [])
      if (typeof step === "string") steps.item(step);
    this.box.appendChild(el);
    this.root.hidden = false;
    return card;
  }

  /** The item of a candidate's step (AG-UI stepName candidate:<id>:<step>), if the candidate is known. */
  stepOf(candidateId: string, step: string): HTMLLIElement | undefined {
    return this.cards.get(candidateId)?.steps.item(step);
  }

  private byIndex(index: number | undefined): CandidateCard | undefined {
    return [...this.cards.values()].find((c) => c.index === index);
  }

  /** The line on a candidate's card saying what happened to it (and why). */
  status(candidate: Json, key: MessageKey, reason: string, vars?: Record<string, string>): CandidateCard {
    const card = this.card(candidate);
    card.status.replaceChildren(
      tr("strong", key, vars),
      reason ? h("span", { class: "reason" }, reason) : "",
    );
    card.status.hidden = false;
    return card;
  }

  /** candidate_completed / candidate_failed (its failed step already says why: the card says where). */
  ended(candidate: Json, failed: boolean, at: string, reason: string): void {
    const card = this.card(candidate);
    card.el.dataset.state = failed ? "failed" : "done";
    if (!failed) return;
    const said = [...card.steps.el.querySelectorAll(".step-note")].some((n) => n.textContent === reason);
    this.status(
      candidate,
      at ? "candidateFailedAt" : "candidateFailed",
      said ? "" : reason,
      at ? { step: at } : undefined,
    );
  }

  /** candidate_restart_requested: it runs again. */
  restarted(candidate: Json, data: Json): void {
    this.status(candidate, "candidateRestart", str(data.reason), {
      step: str(data.targetCandidateStepId),
      attempt: str(data.nextCandidateAttempt),
    }).el.dataset.state = "running";
  }

  /** candidate_selected: the chosen card is marked; nothing is offered any more. */
  selected(index: number): void {
    for (const card of this.cards.values()) {
      const chosen = card.index === index;
      card.el.classList.toggle("selected", chosen);
      card.el.querySelector(".badge")?.remove();
      if (chosen)
        card.el.querySelector("h4")?.append(" ", tr("span", "selected", undefined, { class: "badge" }));
      card.actions.replaceChildren();
    }
  }

  /** The selection was undone (a rollback): no card is chosen. */
  unselect(): void {
    for (const card of this.cards.values()) {
      card.el.classList.remove("selected");
      card.el.querySelector(".badge")?.remove();
    }
  }

  /** diagram_shown / candidate_detail_shown on its candidate's card; the block when no card is its. */
  present(eventType: "diagram_shown" | "candidate_detail_shown", data: Json): HTMLElement | undefined {
    const block = eventType === "diagram_shown" ? diagramBlock(data) : detailBlock(data);
    const card = this.byIndex(num(data.candidateIndex) ?? num(obj(data.detail).candidateIndex));
    if (!card) return block;
    card.presentation.querySelector(`.slot-${eventType}`)!.replaceChildren(block);
    return undefined;
  }

  /** A cost estimate's result (ros_estimate_template_cost): the total per currency, on its candidate's card. */
  toolResult(toolCallId: string, name: string, content: string): void {
    if (name !== "ros_estimate_template_cost") return;
    // The pipeline names tool calls <run>.<candidate id>.<step>…: the only link from a tool call to its candidate.
    const card = [...this.cards.values()].find((c) => toolCallId.split(".").includes(c.id));
    if (!card) return;
    let parsed: Json;
    try {
      parsed = obj(JSON.parse(content));
    } catch {
      return;
    }
    const totals = new Map<string, number>();
    for (const resource of Object.values(obj(parsed.resources))) {
      const order = obj(obj(obj(resource).Result).Order);
      if (typeof order.TradeAmount === "number") {
        const currency = str(order.Currency) || "";
        totals.set(currency, (totals.get(currency) ?? 0) + order.TradeAmount);
      }
    }
    if (totals.size === 0) return;
    card.cost.replaceChildren(
      tr("span", "cost"),
      ": ",
      h("strong", {}, [...totals].map(([cur, sum]) => `${sum} ${cur}`.trim()).join(" + ")),
    );
  }

  /** A candidate_selection interrupt: each candidate it offers gets a button answering with its option. */
  offerSelection(interrupt: Interrupt, choose: (selectedId: string, title: string) => void): boolean {
    const meta = obj(interrupt.metadata);
    if (meta.kind !== "candidate_selection") return false;
    const standard = Array.isArray(meta.standardOptions) ? meta.standardOptions.map(obj) : [];
    const raw = Array.isArray(meta.options) ? meta.options.map(obj) : [];
    let offered = false;
    standard.forEach((option, i) => {
      const card = this.byIndex(Number(raw[i]?.candidateIndex ?? raw[i]?.candidate_index ?? option.id));
      if (!card) return;
      const description = str(raw[i]?.description);
      card.el.querySelector(".description.offered")?.remove();
      if (description) card.cost.before(h("p", { class: "description offered" }, description));
      const title = str(option.title) || card.name;
      const button = tr("button", "choose", undefined, { type: "button", class: "primary" });
      for (const [k, v] of Object.entries(i18nLabel("chooseNamed", { name: card.name })))
        button.setAttribute(k, v);
      button.addEventListener("click", () => choose(str(option.id), title));
      card.actions.replaceChildren(button);
      offered = true;
    });
    return offered;
  }

  /** Removes the Choose buttons (the selection was answered or cancelled). */
  clearSelection(): void {
    for (const card of this.cards.values()) card.actions.replaceChildren();
  }
}
