// Token usage of a run summed per (provider, model), in first-seen order: the
// usage list of RUN_FINISHED and RUN_ERROR.
import { str, type JsonObject } from "../upstream/a2a-items.js";
import { compact, type UsageEntry } from "../events.js";

/** Integral numbers (6497.0 included) as integers; anything else undefined. */
export function count(v: unknown): number | undefined {
  return typeof v === "number" && Number.isFinite(v) && Number.isInteger(v) && v >= 0 ? v : undefined;
}

type Tally = UsageEntry & { inputTokens: number; outputTokens: number; totalTokens: number };

export class UsageTally {
  private readonly byModel = new Map<string, Tally>();

  add(usage: JsonObject): void {
    const provider = str(usage.provider);
    const model = str(usage.model);
    const key = `${provider ?? ""}\u0000${model ?? ""}`;
    const entry = this.byModel.get(key) ?? {
      provider,
      model,
      inputTokens: 0,
      outputTokens: 0,
      totalTokens: 0,
    };
    entry.inputTokens += count(usage.inputTokens) ?? 0;
    entry.outputTokens += count(usage.outputTokens) ?? 0;
    entry.totalTokens += count(usage.totalTokens) ?? 0;
    const cached = count(usage.cachedInputTokens);
    if (cached !== undefined) entry.cachedInputTokens = (entry.cachedInputTokens ?? 0) + cached;
    this.byModel.set(key, entry);
  }

  list(): UsageEntry[] | undefined {
    return this.byModel.size ? [...this.byModel.values()].map((u) => compact({ ...u })) : undefined;
  }
}
