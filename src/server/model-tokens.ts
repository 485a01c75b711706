// Token counts by provider and model: what a turn (A2A) or a run (AG-UI) adds
// to the token metrics, summed over its model calls.

export interface ModelTokens {
  provider: string;
  model: string;
  inputTokens: number;
  outputTokens: number;
}

/** Adds one model call's usage to the sums kept by provider and model. */
export function addModelTokens(
  sums: Map<string, ModelTokens>,
  usage: { provider?: string; model?: string; inputTokens?: number; outputTokens?: number },
): void {
  const provider = usage.provider ?? "";
  const model = usage.model ?? "";
  const key = `${provider}\u0000${model}`;
  const entry = sums.get(key) ?? { provider, model, inputTokens: 0, outputTokens: 0 };
  entry.inputTokens += usage.inputTokens ?? 0;
  entry.outputTokens += usage.outputTokens ?? 0;
  sums.set(key, entry);
}
