// A list of pipeline steps (the run's timeline, or a candidate's own steps):
// one item per step with its state (pending, running, waiting, done, failed,
// rolled back) and a note under it (why it failed, where a rollback went).
import { h } from "./dom.js";
import { tr, type MessageKey } from "./i18n.js";

export type StepState = "pending" | "running" | "waiting" | "done" | "failed" | "rolledBack";

const STEP_LABEL: Record<StepState, MessageKey> = {
  pending: "stepPending",
  running: "stepRunning",
  waiting: "stepWaiting",
  done: "stepDone",
  failed: "stepFailed",
  rolledBack: "stepRolledBack",
};

export class StepList {
  private readonly items = new Map<string, HTMLLIElement>();

  constructor(readonly el: HTMLOListElement) {}

  /** The step's item, added (pending) the first time. */
  item(name: string): HTMLLIElement {
    let li = this.items.get(name);
    if (!li) {
      li = h(
        "li",
        { class: "step", "data-step": name, "data-state": "pending" },
        h("span", { class: "step-name" }, name),
        " ",
        tr("span", "stepPending", undefined, { class: "step-state" }),
      );
      this.el.appendChild(li);
      this.items.set(name, li);
    }
    return li;
  }

  /** The steps in their order. */
  names(): string[] {
    return [...this.items.keys()];
  }
}

export function stateOf(li: HTMLLIElement): StepState {
  return li.dataset.state as StepState;
}

export function setState(li: HTMLLIElement, state: StepState): void {
  li.dataset.state = state;
  li.querySelector(".step-state")?.replaceWith(
    tr("span", STEP_LABEL[state], undefined, { class: "step-state" }),
  );
}

/** A line under a step (replacing its earlier one); none when `note` is undefined. */
export function setNote(li: HTMLLIElement, note?: Node): void {
  li.querySelector(".step-note")?.remove();
  if (note) li.append(h("p", { class: "step-note" }, note));
}
