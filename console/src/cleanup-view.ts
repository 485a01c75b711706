// The pipeline panel's cleanup section: per stack the run deletes,
// cleanup_started -> cleanup_progress (a progress bar and the stack's status)
// -> cleanup_completed or cleanup_failed (with the last error). It also
// knows which stacks are still there, for the "Clean up" offer.
import { h } from "./dom.js";
import { i18nLabel, tr, type MessageKey } from "./i18n.js";
import { num, str, type Json } from "./json.js";

type CleanupState = "started" | "in_progress" | "completed" | "failed";

const STATE_LABEL: Record<CleanupState, MessageKey> = {
  started: "cleanupStarted",
  in_progress: "cleanupStarted",
  completed: "cleanupCompleted",
  failed: "cleanupFailed",
};

interface ResourceView {
  el: HTMLElement;
  progress: HTMLProgressElement;
  state: HTMLElement;
  status: HTMLElement;
  error: HTMLElement;
  current: CleanupState;
  stackStatus: string;
}

const EVENT_STATE: Record<string, CleanupState> = {
  cleanup_started: "started",
  cleanup_progress: "in_progress",
  cleanup_completed: "completed",
  cleanup_failed: "failed",
};

export class CleanupView {
  readonly root: HTMLElement;
  private readonly list: HTMLElement;
  private readonly resources = new Map<string, ResourceView>();

  constructor() {
    this.list = h("div", { class: "cleanup-list" });
    this.root = h(
      "section",
      { class: "cleanup-wrap", hidden: true, ...i18nLabel("cleanup") },
      tr("h3", "cleanup"),
      this.list,
    );
  }

  /** True for the four cleanup_* event types (handled). */
  apply(eventType: string, data: Json): boolean {
    const state = EVENT_STATE[eventType];
    if (!state) return false;
    const id = str(data.resourceId);
    if (!id) return true;
    const view = this.view(id, str(data.resourceName) || id, str(data.regionId));
    view.current = state;
    view.el.dataset.state = state;
    view.state.replaceWith(
      (view.state = tr("span", STATE_LABEL[state], undefined, { class: "cleanup-state" })),
    );
    const percentage = num(data.progressPercentage);
    if (state === "started") view.progress.value = 0;
    if (percentage !== undefined) view.progress.value = percentage;
    if (state === "completed") view.progress.value = 100;
    // A failure reports no stack status: the last one seen stays.
    view.stackStatus = str(data.stackStatus) || str(data.progressStatus) || view.stackStatus;
    const percent = `${view.progress.value}%`;
    view.status.textContent = view.stackStatus ? `${view.stackStatus} (${percent})` : percent;
    const lastError = str(data.lastError);
    view.error.hidden = !(state === "failed" && lastError);
    if (state === "failed" && lastError)
      view.error.replaceChildren(tr("strong", "lastError"), " ", lastError);
    return true;
  }

  private view(id: string, name: string, region: string): ResourceView {
    let view = this.resources.get(id);
    if (view) return view;
    const progress = h("progress", { max: 100, value: 0, ...i18nLabel("cleanupOf", { name }) });
    const state = h("span", { class: "cleanup-state" });
    const status = h("span", { class: "stack-status" });
    const error = h("p", { class: "last-error" });
    error.hidden = true;
    const el = h(
      "div",
      { class: "cleanup-item", "data-resource": id },
      h("h4", {}, name, " ", h("code", {}, id), region ? ` ${region}` : ""),
      progress,
      " ",
      state,
      " ",
      status,
      error,
    );
    this.list.appendChild(el);
    this.root.hidden = false;
    this.resources.set(
      id,
      (view = { el, progress, state, status, error, current: "started", stackStatus: "" }),
    );
    return view;
  }

  /** How many stacks the cleanup has not deleted (started, still running or failed). */
  unfinished(): number {
    return [...this.resources.values()].filter((r) => r.current !== "completed").length;
  }

  /** How many deletions failed. */
  failed(): number {
    return [...this.resources.values()].filter((r) => r.current === "failed").length;
  }
}
