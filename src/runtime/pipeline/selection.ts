// The candidate selection of a ui_mode: candidate_selection step: the options
// the model presented become an input request (candidates that failed their
// evaluation are never offered), rich-v1 options carry the diagram and the
// cost step's figures unchanged, and the user's answer (an option id, the
// option's number or name, or JSON {selected_candidate_index,
// parameter_overrides}) becomes the step's conclusion.
import { t, type Language } from "../../i18n/index.js";
import type { InputOption, InputRequest } from "../seam.js";

/** One entry of evaluated_candidates (the parallel sub-pipeline's conclusion). */
export interface EvaluatedCandidate {
  index: number;
  candidate: Record<string, unknown>;
  failed: boolean;
  error?: string;
  [field: string]: unknown;
}

export interface PresentedOption {
  name: string;
  summary?: string;
  candidate_index: number;
}

const obj = (v: unknown): Record<string, unknown> =>
  v && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
const num = (v: unknown): number | undefined => (typeof v === "number" && Number.isFinite(v) ? v : undefined);

/** Problems of the presented options: each must name a different candidate that did not fail. */
export function optionProblems(options: unknown, evaluated: readonly EvaluatedCandidate[]): string[] {
  if (!Array.isArray(options)) return [];
  const problems: string[] = [];
  const seen = new Set<number>();
  for (const [i, raw] of options.entries()) {
    const index = num(obj(raw).candidate_index);
    const entry = evaluated.find((c) => c.index === index);
    if (index === undefined || !entry)
      problems.push(`options/${i}: candidate_index ${String(index)} is not an evaluated candidate`);
    else if (entry.failed)
      problems.push(`options/${i}: candidate ${index} failed its evaluation and must not be offered`);
    else if (seen.has(index)) problems.push(`options/${i}: candidate ${index} is offered twice`);
    if (index !== undefined) seen.add(index);
  }
  return problems;
}

/** A compact Mermaid diagram: the candidate's own, else one drawn from its template's resource types. */
export function diagramOf(entry: EvaluatedCandidate): string | undefined {
  const own = entry.candidate.architecture_diagram;
  if (typeof own === "string" && own.trim()) return own.slice(0, 1600);
  const types = obj(entry.template).resource_types;
  if (!Array.isArray(types) || types.length === 0) return undefined;
  const nodes = types
    .map(String)
    .slice(0, 12)
    .map((type, i) => `  n${i}["${type.replace(/"/g, "'")}"]`);
  const edges = nodes.slice(1).map((_n, i) => `  n0 --> n${i + 1}`);
  return ["graph TD", ...nodes, ...edges].join("\n").slice(0, 1600);
}

/** The parallel step's conclusion (context field evaluated_candidates): the candidates to offer. */
export function evaluatedCandidates(contextValue: (field: string) => unknown): EvaluatedCandidate[] {
  const value = contextValue("evaluated_candidates");
  return Array.isArray(value) ? (value as EvaluatedCandidate[]) : [];
}

/** A candidate's figures from the cost step, as an option and its detail show them (12 items at most). */
export function costFigures(entry: EvaluatedCandidate) {
  const cost = obj(entry.cost);
  const total = num(cost.total_monthly_cost);
  const items = Array.isArray(cost.cost_items) ? cost.cost_items.map(obj) : [];
  return {
    ...(total !== undefined ? { totalMonthlyCost: total } : {}),
    ...(typeof cost.currency === "string" ? { currency: cost.currency } : {}),
    costItems: items.slice(0, 12).map((item) => ({
      name: typeof item.name === "string" ? item.name : "",
      ...(typeof item.spec === "string" ? { spec: item.spec } : {}),
      monthlyCost: num(item.monthly_cost) ?? 0,
    })),
  };
}

/** The options offered to the user; rich-v1 adds diagram and cost figures from the cost step. */
export function selectionOptions(
  presented: readonly PresentedOption[],
  evaluated: readonly EvaluatedCandidate[],
  rich: boolean,
): InputOption[] {
  const out: InputOption[] = [];
  for (const option of presented) {
    const entry = evaluated.find((c) => c.index === option.candidate_index && !c.failed);
    if (!entry || out.some((o) => o.candidateIndex === entry.index)) continue;
    const base: InputOption = {
      id: String(entry.index),
      label: option.name.slice(0, 500),
      ...(option.summary ? { description: option.summary.slice(0, 600) } : {}),
      candidateIndex: entry.index,
    };
    if (rich) {
      const diagram = diagramOf(entry);
      Object.assign(base, { ...(diagram ? { architectureDiagram: diagram } : {}), ...costFigures(entry) });
    }
    out.push(base);
  }
  return out;
}

export function selectionRequest(args: {
  inputId: string;
  toolUseId: string;
  prompt: string;
  options: InputOption[];
  lang: Language;
  validationError?: string;
}): InputRequest {
  const prompt = (args.validationError ? `${args.validationError}\n\n${args.prompt}` : args.prompt).slice(
    0,
    1000,
  );
  const selected = { type: "string", enum: args.options.map((o) => o.id) };
  return {
    inputId: args.inputId,
    kind: "candidate_selection",
    toolUseId: args.toolUseId,
    toolName: "confirm_and_select",
    title: t(args.lang, "runtime.pipeline.selection.title"),
    purpose: t(args.lang, "runtime.pipeline.selection.purpose"),
    effect: "read",
    isReadOnly: true,
    prompt,
    safeSummary: prompt,
    options: args.options,
    allowFreeText: true,
    freeTextPrompt: t(args.lang, "runtime.pipeline.selection.freeText"),
    responseSchema: {
      type: "object",
      properties: { selectedId: selected, freeText: { type: "string", minLength: 1 } },
      minProperties: 1,
      additionalProperties: false,
    },
    language: args.lang,
  };
}

/** The pause of a judge failure: the user confirms that the run may go on. */
export function pauseRequest(args: { inputId: string; toolUseId: string; lang: Language }): InputRequest {
  const prompt = t(args.lang, "runtime.pipeline.pause.prompt");
  return {
    inputId: args.inputId,
    kind: "pipeline_pause_confirmation",
    toolUseId: args.toolUseId,
    toolName: "pipeline",
    title: t(args.lang, "runtime.pipeline.pause.title"),
    purpose: prompt,
    effect: "read",
    isReadOnly: true,
    prompt,
    safeSummary: prompt,
    options: [{ id: "continue", label: t(args.lang, "runtime.pipeline.pause.continue") }],
    allowFreeText: false,
    responseSchema: {
      type: "object",
      properties: { selectedId: { type: "string", enum: ["continue"] } },
      required: ["selectedId"],
      additionalProperties: false,
    },
    language: args.lang,
  };
}

export interface Choice {
  option: InputOption;
  parameterOverrides?: Record<string, unknown>;
}

/**
 * The option an answer names: an option id, its position (1-based), its
 * name, or JSON {selected_candidate_index, parameter_overrides}; undefined
 * when the answer names none.
 */
export function parseChoice(
  answer: { selectedId?: string; freeText?: string },
  options: readonly InputOption[],
): Choice | undefined {
  if (answer.selectedId !== undefined) {
    const option = options.find((o) => o.id === answer.selectedId);
    return option ? { option } : undefined;
  }
  const text = (answer.freeText ?? "").trim();
  if (!text) return undefined;
  if (text.startsWith("{")) {
    try {
      const json = obj(JSON.parse(text));
      const index = num(json.selected_candidate_index) ?? num(json.selected_evaluated_candidate_index);
      const option = options.find((o) => o.candidateIndex === index);
      if (!option) return undefined;
      const overrides = obj(json.parameter_overrides);
      return { option, ...(Object.keys(overrides).length ? { parameterOverrides: overrides } : {}) };
    } catch {
      return undefined;
    }
  }
  const position = /^\d+$/.test(text) ? Number(text) : undefined;
  if (position !== undefined && position >= 1 && position <= options.length)
    return { option: options[position - 1] };
  const lower = text.toLowerCase();
  const option = options.find((o) => o.id === text || o.label.toLowerCase() === lower);
  return option ? { option } : undefined;
}

/** The confirm_and_select conclusion for a choice: the plan the deploying step works from. */
export function selectedPlan(
  choice: Choice,
  evaluated: readonly EvaluatedCandidate[],
): Record<string, unknown> {
  const entry = evaluated.find((c) => c.index === choice.option.candidateIndex) as EvaluatedCandidate;
  const template = obj(entry.template);
  const cost = obj(entry.cost);
  return {
    candidate_index: entry.index,
    name: choice.option.label,
    template_path: template.path,
    parameters: { ...obj(template.parameters), ...(choice.parameterOverrides ?? {}) },
    ...(cost.total_monthly_cost !== undefined ? { total_monthly_cost: cost.total_monthly_cost } : {}),
    ...(typeof cost.currency === "string" ? { currency: cost.currency } : {}),
    candidate: entry.candidate,
  };
}

/**
 * What the selection prompt says first: why it is asked again (the rollback's
 * reason) and which candidates are not offered because their evaluation failed.
 */
export function selectionNotes(
  lang: Language,
  evaluated: readonly EvaluatedCandidate[],
  askedAgainBecause?: string,
): string[] {
  const notes: string[] = [];
  if (askedAgainBecause)
    notes.push(t(lang, "runtime.pipeline.selection.again", { reason: askedAgainBecause.slice(0, 300) }));
  for (const entry of evaluated) {
    if (!entry.failed) continue;
    const name = typeof entry.candidate.name === "string" ? entry.candidate.name : `candidate ${entry.index}`;
    notes.push(
      t(lang, "runtime.pipeline.selection.dropped", {
        name,
        error: (entry.error ?? "").split("\n")[0].slice(0, 300),
      }),
    );
  }
  return notes;
}
