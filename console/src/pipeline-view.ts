// The pipeline panel: the steps timeline (from pipeline_started and the
// STEP_STARTED / STEP_FINISHED events), the candidates side by side with their
// steps and cost, the selection (a "Choose" button per candidate while the
// candidate_selection interrupt waits), and the stacks being deployed with a
// progress bar each (stack_progress, stack_current_changed).
import type { Interrupt } from "@ag-ui/client";
import { h } from "./dom.js";
import { i18nLabel, tr, type MessageKey } from "./i18n.js";
import type { WireEvent } from "./transcript.js";

type StepState = "pending" | "running" | "waiting" | "done" | "failed";
const STEP_LABEL: Record<StepState, MessageKey> = {
  pending: "stepPending",
  running: "stepRunning",
  waiting: "stepWaiting",
  done: "stepDone",
  failed: "stepFailed",
};

type Json = Record<string, unknown>;
const obj = (v: unknown): Json => (v && typeof v === "object" && !Array.isArray(v) ? (v as Json) : {});
const str = (v: unknown): string => (typeof v === "string" ? v : typeof v === "number" ? String(v) : "");

interface CandidateCard {
  id: string;
  index: number;
  name: string;
  el: HTMLElement;
  steps: HTMLOListElement;
  cost: HTMLElement;
  actions: HTMLElement;
}

interface StackView {
  progress: HTMLProgressElement;
  status: HTMLElement;
  resources: HTMLUListElement;
}

export class PipelineView {
  readonly root: HTMLElement;
  private readonly empty: HTMLElement;
  private readonly timeline: HTMLOListElement;
  private readonly candidatesBox: HTMLElement;
  private readonly stacksBox: HTMLElement;
  private readonly steps = new Map<string, HTMLLIElement>();
  private readonly candidates = new Map<string, CandidateCard>();
  private readonly stacks = new Map<string, StackView>();
  /** Steps finished since the last other event: a run that ends on an interrupt closes them only for now. */
  private justFinished: HTMLLIElement[] = [];

  constructor() {
    this.empty = tr("p", "noPipeline", undefined, { class: "empty" });
    this.timeline = h("ol", { class: "timeline" });
    this.candidatesBox = h("div", { class: "candidates" });
    this.stacksBox = h("div", { class: "stacks" });
    this.root = h(
      "section",
      { class: "pipeline" },
      this.empty,
      this.timeline,
      h("div", { class: "candidates-wrap", hidden: true }, tr("h3", "candidates"), this.candidatesBox),
      h("div", { class: "stacks-wrap", hidden: true }, tr("h3", "deployment"), this.stacksBox),
    );
  }

  private stepItem(list: HTMLOListElement, map: Map<string, HTMLLIElement>, key: string, name: string) {
    let li = map.get(key);
    if (!li) {
      const state = tr("span", "stepPending", undefined, { class: "step-state" });
      li = h(
        "li",
        { class: "step", "data-step": name, "data-state": "pending" },
        h("span", { class: "step-name" }, name),
        " ",
        state,
      );
      list.appendChild(li);
      map.set(key, li);
    }
    return li;
  }

  private setState(li: HTMLLIElement, state: StepState): void {
    li.dataset.state = state;
    li.querySelector(".step-state")?.replaceWith(
      tr("span", STEP_LABEL[state], undefined, { class: "step-state" }),
    );
  }

  /** The timeline item or candidate step item of an AG-UI stepName. */
  private stepOf(stepName: string): HTMLLIElement | undefined {
    const m = /^candidate:([^:]+):(.+)$/.exec(stepName);
    if (!m) {
      this.empty.hidden = true;
      return this.stepItem(this.timeline, this.steps, stepName, stepName);
    }
    const card = this.candidates.get(m[1]);
    if (!card) return undefined;
    return this.stepItem(card.steps, this.stepsOfCard(card), m[2], m[2]);
  }

  private readonly cardSteps = new Map<string, Map<string, HTMLLIElement>>();
  private stepsOfCard(card: CandidateCard): Map<string, HTMLLIElement> {
    let map = this.cardSteps.get(card.id);
    if (!map) this.cardSteps.set(card.id, (map = new Map<string, HTMLLIElement>()));
    return map;
  }

  apply(ev: WireEvent): void {
    if (ev.type !== "STEP_FINISHED") {
      if (ev.type === "RUN_FINISHED" && obj(ev.outcome).type === "interrupt") {
        for (const li of this.justFinished) this.setState(li, "waiting");
      }
      this.justFinished = [];
    }
    switch (ev.type) {
      case "STEP_STARTED": {
        const li = this.stepOf(str(ev.stepName));
        if (li) this.setState(li, "running");
        break;
      }
      case "STEP_FINISHED": {
        const li = this.stepOf(str(ev.stepName));
        if (li && li.dataset.state !== "failed") {
          this.setState(li, "done");
          this.justFinished.push(li);
        }
        break;
      }
      case "CUSTOM":
        if (ev.name === "iac-code.pipeline.v1") this.pipelineEvent(obj(ev.value));
        break;
    }
  }

  private pipelineEvent(value: Json): void {
    const data = obj(value.data);
    const candidate = obj(value.candidate);
    switch (value.eventType) {
      case "pipeline_started":
        this.empty.hidden = true;
        for (const name of Array.isArray(data.stepNames) ? data.stepNames : [])
          if (typeof name === "string") this.stepItem(this.timeline, this.steps, name, name);
        break;
      case "candidate_started":
        this.card(candidate);
        break;
      case "candidate_completed":
      case "candidate_failed": {
        const card = this.card(candidate);
        card.el.dataset.state =
          value.eventType === "candidate_failed" || data.failed === true ? "failed" : "done";
        break;
      }
      case "step_failed":
      case "candidate_step_failed": {
        const step = str(obj(value.candidateStep).id) || str(obj(value.step).id);
        const cid = str(candidate.id);
        const li = cid ? this.stepOf(`candidate:${cid}:${step}`) : this.stepOf(step);
        if (li) this.setState(li, "failed");
        break;
      }
      case "candidate_selected":
        for (const card of this.candidates.values()) {
          const chosen = card.index === Number(data.candidateIndex);
          card.el.classList.toggle("selected", chosen);
          card.el.querySelector(".badge")?.remove();
          if (chosen)
            card.el.querySelector("h4")?.append(" ", tr("span", "selected", undefined, { class: "badge" }));
          card.actions.replaceChildren();
        }
        break;
      case "stack_progress":
      case "stack_current_changed":
        this.stack(data);
        break;
    }
  }

  private card(candidate: Json): CandidateCard {
    const id = str(candidate.id) || str(candidate.subPipelineId);
    let card = this.candidates.get(id);
    if (card) return card;
    const name = str(candidate.name) || id;
    const steps = h("ol", { class: "candidate-steps" });
    const cost = h("p", { class: "cost" });
    const actions = h("div", { class: "actions" });
    const el = h(
      "article",
      { class: "candidate", "data-candidate": id },
      h("h4", {}, name),
      steps,
      cost,
      actions,
    );
    card = { id, index: Number(candidate.index), name, el, steps, cost, actions };
    this.candidates.set(id, card);
    for (const step of Array.isArray(candidate.steps) ? candidate.steps : [])
      if (typeof step === "string") this.stepItem(steps, this.stepsOfCard(card), step, step);
    this.candidatesBox.appendChild(el);
    this.candidatesBox.parentElement!.hidden = false;
    this.empty.hidden = true;
    return card;
  }

  /** A cost estimate's result (ros_estimate_template_cost): the total per currency, on its candidate's card. */
  toolResult(toolCallId: string, name: string, content: string): void {
    if (name !== "ros_estimate_template_cost") return;
    // The pipeline names tool calls <run>.<candidate id>.<step>…: the only link from a tool call to its candidate.
    const card = [...this.candidates.values()].find((c) => toolCallId.split(".").includes(c.id));
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
      const index = Number(raw[i]?.candidateIndex ?? raw[i]?.candidate_index ?? option.id);
      const card = [...this.candidates.values()].find((c) => c.index === index);
      if (!card) return;
      const description = str(raw[i]?.description);
      if (description) card.cost.before(h("p", { class: "description" }, description));
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
    for (const card of this.candidates.values()) card.actions.replaceChildren();
  }

  private stack(data: Json): void {
    const name = str(data.stackName) || str(data.stackId);
    if (!name) return;
    let view = this.stacks.get(name);
    if (!view) {
      const progress = h("progress", { max: 100, value: 0, "aria-label": name });
      const status = h("span", { class: "stack-status" });
      const resources = h("ul", { class: "resources" });
      this.stacksBox.appendChild(
        h("div", { class: "stack", "data-stack": name }, h("h4", {}, name), progress, " ", status, resources),
      );
      this.stacksBox.parentElement!.hidden = false;
      this.stacks.set(name, (view = { progress, status, resources }));
    }
    const stackStatus = str(data.status) || str(data.stackStatus);
    if (typeof data.progressPercentage === "number") view.progress.value = data.progressPercentage;
    else if (/_COMPLETE$/.test(stackStatus)) view.progress.value = 100;
    if (stackStatus) view.status.textContent = `${stackStatus} (${view.progress.value}%)`;
    if (Array.isArray(data.resources)) {
      view.resources.replaceChildren(
        ...data.resources
          .map(obj)
          .map((r) =>
            h(
              "li",
              {},
              h("code", {}, str(r.logicalId)),
              ` ${str(r.type)} `,
              h("span", { class: "res-status" }, str(r.status)),
            ),
          ),
      );
    }
  }
}
