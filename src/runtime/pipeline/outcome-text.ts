// What the user reads when a run ends: one paragraph for the outcome (the
// localised outcome line, or the step's own message for an early exit such
// as a cancelled deployment), and, when resources the run created could not
// be deleted, what is left (stack, region, why) and how to delete it. The
// handoff summary adds the decided context fields for the normal chat that
// follows.
import { t, type Language } from "../../i18n/index.js";
import type { LedgerEntry } from "./ledger.js";

const ROS_CONSOLE = "https://ros.console.aliyun.com/";

/** Lines naming what is left, and how to delete it (empty when nothing is). */
export function leftoverLines(lang: Language, leftovers: readonly LedgerEntry[]): string[] {
  if (leftovers.length === 0) return [];
  return [
    t(lang, "runtime.pipeline.leftovers.title", { count: leftovers.length }),
    ...leftovers.map((e) =>
      t(lang, e.lastError ? "runtime.pipeline.leftovers.itemFailed" : "runtime.pipeline.leftovers.item", {
        id: e.resourceId,
        name: e.resourceName ?? e.resourceId,
        region: e.regionId ?? "",
        error: (e.lastError ?? "").split("\n")[0].slice(0, 300),
      }),
    ),
    t(lang, "runtime.pipeline.leftovers.howto", { console: ROS_CONSOLE }),
  ];
}

/** The outcome paragraph: its line (or the early exit's own reason), then what is left. */
export function outcomeText(args: {
  lang: Language;
  pipeline: string;
  outcome: string;
  reason?: string;
  leftovers?: readonly LedgerEntry[];
}): string {
  const head =
    args.reason ?? t(args.lang, `runtime.pipeline.outcome.${args.outcome}`, { pipeline: args.pipeline });
  return [head, ...leftoverLines(args.lang, args.leftovers ?? [])].join("\n");
}
