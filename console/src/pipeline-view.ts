// The pipeline panel: how the run ended (pipeline-outcome.ts), the steps
// timeline (from pipeline_started and the STEP_STARTED / STEP_FINISHED events;
// a failed step with its reason, steps a rollback went back over), notices
// (pipeline-notices.ts), the candidates side by side with their steps, cost,
// diagram and detail (a failed candidate with its reason; a "Choose" button
// per candidate while the candidate_selection interrupt waits), the
// deployment (deployment-view.ts) and the cleanup (cleanup-view.ts). Before
// any run: the demo scenarios to try (demo-tags.ts).
import type { Interrupt } from "@ag-ui/client";
import { detailBlock, diagramBlock } from "./candidate-presentation.js";
import { CleanupView } from "./cleanup-view.js";
import { demoTagList } from "./demo-tags.js";
import { DeploymentView } from "./deployment-view.js";
import { h } from "./dom.js";
import { i18nLabel, tr, type MessageKey } from "./i18n.js";
import { num, obj, str, type Json } from "./json.js";
import { NoticesView } from "./pipeline-notices.js";
import { OutcomeView } from "./pipeline-outcome.js";
import type { WireEvent } from "./transcript.js";

type StepState = "pending" | "running" | "waiting" | "done" | "failed" | "rolledBack";
const STEP_LABEL: Record<StepState, MessageKey> = {
  pending: "stepPending",
  running: "stepRunning",
  waiting: "stepWaiting",
  done: "stepDone",
  failed: "stepFailed",
  rolledBack: "stepRolledBack",
};

interface CandidateCard {
  id: string;
  index: number;
  name: string;
  el: HTMLElement;
  steps: HTMLOListElement;
  status: HTMLElement;
  cost: HTMLElement;
  presentation: HTMLElement;
  actions: HTMLElement;
}

/** What the panel asks of its thread. */
export interface PipelineHooks {
  /** Sends a cleanupOnly request (the "Clean up" button). */
  cleanUp(): void;
  /** Puts a demo request in the message box. */
  tryDemo(text: string): void;
}

/** Why a step or candidate failed: the short summary, else the error. */
const failureReason = (data: Json): string => str(data.errorSummary) || str(data.error);

export class PipelineView {
  readonly root: HTMLElement;
  private readonly empty: HTMLElement;
  private readonly timeline: HTMLOListElement;
  private readonly candidatesBox: HTMLElement;
  private readonly outcome: OutcomeView;
  private readonly notices = new NoticesView();
  private readonly deployment = new DeploymentView();
  private readonly cleanup = new CleanupView();
  private readonly steps = new Map<string, HTMLLIElement>();
  private readonly candidates = new Map<string, CandidateCard>();
  /** Steps finished since the last other event: a run that ends on an interrupt closes them only for now. */
  private justFinished: HTMLLIElement[] = [];

  constructor(hooks: PipelineHooks) {
    this.empty = h(
      "div",
      { class: "empty" },
      tr("p", "noPipeline"),
      demoTagList((text) => hooks.tryDemo(text)),
    );
    this.outcome = new OutcomeView(() => hooks.cleanUp());
    this.timeline = h("ol", { class: "timeline", ...i18nLabel("steps") });
    this.candidatesBox = h("div", { class: "candidates" });
    this.root = h(
      "section",
      { class: "pipeline" },
      this.empty,
      this.outcome.root,
      this.timeline,
      this.notices.root,
      h("div", { class: "candidates-wrap", hidden: true }, tr("h3", "candidates"), this.candidatesBox),
      this.deployment.root,
      this.cleanup.root,
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

  /** A line under a step: why it failed, or where a rollback took the run. */
  private stepNote(li: HTMLLIElement, note: Node): void {
    li.querySelector(".step-note")?.remove();
    li.append(h("p", { class: "step-note" }, note));
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
        if (li) {
          this.setState(li, "running");
          li.querySelector(".step-note")?.remove();
        }
        break;
      }
      case "STEP_FINISHED": {
        const li = this.stepOf(str(ev.stepName));
        // A failure or a rollback says more than the step's end.
        if (li && li.dataset.state !== "failed" && li.dataset.state !== "rolledBack") {
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
    const eventType = str(value.eventType);
    const step = str(obj(value.candidateStep).id) || str(obj(value.step).id);
    if (this.cleanup.apply(eventType, data)) return;
    switch (eventType) {
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
        const failed = eventType === "candidate_failed" || data.failed === true;
        card.el.dataset.state = failed ? "failed" : "done";
        if (failed) {
          const at = str(data.failedStepId);
          const reason = failureReason(data);
          // The failed step already says why: the card only says where.
          const said = [...card.steps.querySelectorAll(".step-note")].some((n) => n.textContent === reason);
          this.candidateStatus(
            card,
            at ? "candidateFailedAt" : "candidateFailed",
            said ? "" : reason,
            at ? { step: at } : undefined,
          );
        }
        break;
      }
      case "candidate_restart_requested": {
        const card = this.card(candidate);
        card.el.dataset.state = "running";
        this.candidateStatus(card, "candidateRestart", str(data.reason), {
          step: str(data.targetCandidateStepId),
          attempt: str(data.nextCandidateAttempt),
        });
        break;
      }
      case "step_failed":
      case "candidate_step_failed": {
        const cid = str(candidate.id) || str(candidate.subPipelineId);
        const stepId = step || str(data.stepId);
        const li = cid ? this.stepOf(`candidate:${cid}:${stepId}`) : this.stepOf(stepId);
        if (li) {
          this.setState(li, "failed");
          const reason = failureReason(data);
          if (reason) this.stepNote(li, h("span", { class: "reason" }, reason));
        }
        break;
      }
      case "rollback_completed":
        this.rollback(data, candidate, step);
        break;
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
      case "diagram_shown":
      case "candidate_detail_shown": {
        const block = eventType === "diagram_shown" ? diagramBlock(data) : detailBlock(data);
        const index = num(data.candidateIndex) ?? num(obj(data.detail).candidateIndex);
        const card = [...this.candidates.values()].find((c) => c.index === index);
        // One of each per candidate, detail first: shown again (a second selection), it replaces the first.
        if (card) card.presentation.querySelector(`.slot-${eventType}`)!.replaceChildren(block);
        else this.notices.root.before(block);
        break;
      }
      case "context_compaction_started":
      case "context_compacted":
      case "context_compaction_failed":
        this.notices.compaction(eventType, data, step);
        break;
      case "pipeline_warning":
        this.notices.warning(data, step);
        break;
      case "stack_progress":
      case "stack_current_changed":
        this.deployment.stack(data);
        break;
      case "stack_instances_progress":
        this.deployment.instances(data);
        break;
      case "pipeline_completed":
        this.empty.hidden = true;
        this.outcome.completed(data, this.cleanup.unfinished());
        break;
    }
  }

  /** rollback_completed: the run's (a notice, the steps gone back over) or a candidate's (on its card). */
  private rollback(data: Json, candidate: Json, step: string): void {
    const from = str(data.fromStep) || step;
    const to = str(data.toStep) || str(data.toStepId);
    const cid = str(candidate.id) || str(candidate.subPipelineId);
    if (cid || data.rollbackScope === "candidate") {
      const card = this.card(candidate);
      this.candidateStatus(card, "candidateRolledBack", str(data.reason), { from, to });
      return;
    }
    this.notices.rollback(data, from);
    // Steps after the target up to the one that asked are to be run again.
    const names = [...this.steps.keys()];
    const first = names.indexOf(to);
    const last = names.indexOf(from);
    if (first >= 0 && last > first) {
      for (const name of names.slice(first + 1, last + 1)) this.setState(this.steps.get(name)!, "rolledBack");
      this.stepNote(this.steps.get(from)!, tr("span", "rolledBackTo", { to }));
    }
    // The selection is undone: the user chooses again.
    for (const card of this.candidates.values()) {
      card.el.classList.remove("selected");
      card.el.querySelector(".badge")?.remove();
    }
  }

  /** The line on a candidate's card saying what happened to it (and why). */
  private candidateStatus(
    card: CandidateCard,
    key: MessageKey,
    reason: string,
    vars?: Record<string, string>,
  ) {
    card.status.replaceChildren(
      tr("strong", key, vars),
      reason ? h("span", { class: "reason" }, reason) : "",
    );
    card.status.hidden = false;
  }

  private card(candidate: Json): CandidateCard {
    const id = str(candidate.id) || str(candidate.subPipelineId);
    let card = this.candidates.get(id);
    if (card) return card;
    const name = str(candidate.name) || id;
    const steps = h("ol", { class: "candidate-steps" });
    const status = h("p", { class: "candidate-status", hidden: true });
    const cost = h("p", { class: "cost" });
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
      steps,
      status,
      cost,
      presentation,
      actions,
    );
    card = { id, index: Number(candidate.index), name, el, steps, status, cost, presentation, actions };
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
    for (const card of this.candidates.values()) card.actions.replaceChildren();
  }

  /** A cleanupOnly run ended (the "Clean up" button is offered again if a deletion failed). */
  cleanupEnded(): void {
    this.outcome.cleanupEnded(this.cleanup.failed());
  }
}
