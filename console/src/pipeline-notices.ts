// The pipeline panel's notices, oldest first: rollbacks (from which step to
// which, why, the fields made stale), context compaction inside a step,
// warnings (a lost cleanup record), each under the step it came from.
import { h } from "./dom.js";
import { i18nLabel, tr } from "./i18n.js";
import { num, str, strings, type Json } from "./json.js";

export class NoticesView {
  readonly root: HTMLElement;
  private readonly list: HTMLUListElement;

  constructor() {
    this.list = h("ul", { class: "notices" });
    this.root = h(
      "section",
      { class: "notices-wrap", hidden: true, ...i18nLabel("notices") },
      tr("h3", "notices"),
      this.list,
    );
  }

  private add(kind: string, step: string, ...content: Array<Node | null>): HTMLLIElement {
    const li = h(
      "li",
      { class: "notice", "data-kind": kind },
      step ? h("code", { class: "notice-step" }, step) : null,
      ...content,
    );
    this.list.appendChild(li);
    this.root.hidden = false;
    return li;
  }

  /** rollback_completed: a step asked to go back (complete_step), or an interrupt did. */
  rollback(data: Json, where: string): void {
    const from = str(data.fromStep) || where;
    const to = str(data.toStep) || str(data.toStepId);
    const stale = strings(data.staleFields);
    const count = num(data.cleanupResourceCount);
    this.add(
      "rollback",
      "",
      tr("strong", "rollbackFromTo", { from, to }),
      str(data.reason) ? h("p", { class: "reason" }, str(data.reason)) : null,
      stale.length ? h("p", { class: "stale" }, tr("span", "staleFields"), " ", stale.join(", ")) : null,
      count ? tr("p", "rollbackCleanup", { count: String(count) }) : null,
    );
  }

  /** context_compaction_started / context_compacted / context_compaction_failed. */
  compaction(eventType: string, data: Json, step: string): void {
    const original = num(data.originalTokens);
    const compacted = num(data.compactedTokens);
    const summary = str(data.summary);
    if (eventType === "context_compaction_started") {
      this.add("compaction", step, tr("strong", "compactionStarted"));
    } else if (eventType === "context_compacted") {
      this.add(
        "compaction",
        step,
        tr("strong", "compacted"),
        original !== undefined && compacted !== undefined
          ? h("span", {}, " ", tr("span", "tokens", { from: String(original), to: String(compacted) }))
          : null,
        summary
          ? h("details", {}, tr("summary", "compactionSummary"), h("p", { class: "body" }, summary))
          : null,
      );
    } else {
      const why = str(data.error) || str(data.reason) || summary;
      this.add(
        "compaction-failed",
        step,
        tr("strong", "compactionFailed"),
        why ? h("p", { class: "reason" }, why) : null,
      );
    }
  }

  /** pipeline_warning: e.g. the cleanup ledger could not be saved. */
  warning(data: Json, step: string): void {
    const what = [str(data.reason), str(data.operation), str(data.resourceId)].filter(Boolean).join(" · ");
    this.add(
      "warning",
      step,
      tr("strong", "warning"),
      str(data.message) ? h("p", { class: "reason" }, str(data.message)) : null,
      what ? h("p", { class: "details" }, what) : null,
    );
  }
}
