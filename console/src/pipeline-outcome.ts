// How the pipeline run ended (pipeline_completed): completed, ended early or
// failed, with the run's own words on why and what is left; when stacks were
// left behind, a "Clean up" button that asks for a cleanupOnly run.
import { h } from "./dom.js";
import { tr, type MessageKey } from "./i18n.js";
import { num, str, type Json } from "./json.js";

export class OutcomeView {
  readonly root: HTMLElement;
  private button?: HTMLButtonElement;

  constructor(private readonly cleanUp: () => void) {
    this.root = h("div", { class: "outcome", role: "status", hidden: true });
  }

  /** pipeline_completed; `unfinished`: stacks whose cleanup the panel saw not finish. */
  completed(data: Json, unfinished: number): void {
    const state = data.failed === true ? "failed" : data.earlyExit === true ? "early_exit" : "completed";
    const key: MessageKey =
      state === "failed" ? "outcomeFailed" : state === "early_exit" ? "outcomeEarlyExit" : "outcomeCompleted";
    this.root.dataset.state = state;
    const reason = str(data.reason);
    this.root.replaceChildren(tr("h3", key), reason ? h("p", { class: "reason" }, reason) : "");
    this.root.hidden = false;
    // The run's count, or what the panel saw left when the run does not say.
    const left = Math.max(num(data.leftoverResourceCount) ?? 0, unfinished);
    if (left > 0) this.offerCleanUp(left);
  }

  private offerCleanUp(count: number): void {
    const button = tr("button", "cleanUp", undefined, { type: "button", class: "primary" });
    button.addEventListener("click", () => {
      button.disabled = true;
      this.cleanUp();
    });
    this.button = button;
    this.root.append(
      h("p", { class: "leftovers" }, tr("span", "leftovers", { count: String(count) }), " ", button),
    );
  }

  /** A cleanupOnly run ended: offered again while a deletion failed, else done. */
  cleanupEnded(failed: number): void {
    if (!this.button) return;
    if (failed > 0) {
      this.button.disabled = false;
      return;
    }
    this.button.closest(".leftovers")?.replaceWith(tr("p", "cleanupDone", undefined, { class: "leftovers" }));
    this.button = undefined;
  }
}
