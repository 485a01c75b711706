// The tools a step that presents candidates may show them with (the
// reference's REPL/Web tools, injected here into confirm_and_select on every
// surface, see DECISIONS): show_architecture_diagram publishes a candidate's
// Mermaid diagram with its template (diagram_shown), show_candidate_detail its
// summary and cost items (candidate_detail_shown). Both only show what the
// evaluation produced; a failed candidate is not shown.
import { readFile } from "node:fs/promises";
import { ToolError } from "../errors.js";
import { readOnlyDescription, readOnlyPolicy } from "../tools/describe.js";
import type { Tool, ToolContext } from "../tools/types.js";
import { costFigures, diagramOf, type EvaluatedCandidate } from "./selection.js";

const TEMPLATE_MAX = 20_000;

const obj = (v: unknown): Record<string, unknown> =>
  v && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : {};

interface CandidateInput {
  candidate_index: number;
}

const candidateInputSchema = {
  type: "object",
  additionalProperties: false,
  required: ["candidate_index"],
  properties: { candidate_index: { type: "integer", minimum: 0 } },
} as const;

function candidateOf(evaluated: () => readonly EvaluatedCandidate[], index: number): EvaluatedCandidate {
  const entry = evaluated().find((c) => c.index === index);
  if (!entry) throw new ToolError(`There is no evaluated candidate ${index}.`);
  if (entry.failed) throw new ToolError(`Candidate ${index} failed its evaluation; it is not shown.`);
  return entry;
}

const nameOf = (entry: EvaluatedCandidate): string =>
  typeof entry.candidate.name === "string" ? entry.candidate.name : `candidate ${entry.index}`;

async function templateText(entry: EvaluatedCandidate, ctx: ToolContext): Promise<string> {
  const rel = obj(entry.template).path;
  if (typeof rel !== "string") return "";
  try {
    const text = await readFile(await ctx.workspace.resolveExisting(rel), "utf8");
    return text.slice(0, TEMPLATE_MAX);
  } catch {
    return "";
  }
}

export function showArchitectureDiagramTool(
  evaluated: () => readonly EvaluatedCandidate[],
): Tool<CandidateInput & { stage?: "draft" | "optimized" }> {
  return {
    name: "show_architecture_diagram",
    description:
      "Show the user a candidate's architecture diagram (Mermaid, drawn from its template) next to the options.",
    inputSchema: {
      ...candidateInputSchema,
      properties: { ...candidateInputSchema.properties, stage: { enum: ["draft", "optimized"] } },
    },
    ...readOnlyPolicy,
    describe: (input, lang) =>
      readOnlyDescription("show_architecture_diagram", lang, String(input.candidate_index)),
    async run(input, ctx) {
      const entry = candidateOf(evaluated, input.candidate_index);
      const name = nameOf(entry);
      const mermaid = diagramOf(entry) ?? "graph TD\n  empty[No resources]";
      ctx.progress({
        kind: "diagram",
        candidateName: name,
        candidateIndex: entry.index,
        templateContent: await templateText(entry, ctx),
        mermaidSource: mermaid,
        format: "mermaid",
        diagramStage: input.stage ?? "optimized",
        views: ["architecture"],
        ...(typeof entry.candidate.summary === "string"
          ? { architectureContext: entry.candidate.summary }
          : {}),
      });
      return { content: `The architecture diagram of ${name} is shown to the user.` };
    },
  };
}

export function showCandidateDetailTool(
  evaluated: () => readonly EvaluatedCandidate[],
): Tool<CandidateInput> {
  return {
    name: "show_candidate_detail",
    description:
      "Show the user a candidate's detail: its summary, cost items and monthly total, from its evaluation.",
    inputSchema: candidateInputSchema,
    ...readOnlyPolicy,
    describe: (input, lang) =>
      readOnlyDescription("show_candidate_detail", lang, String(input.candidate_index)),
    run(input, ctx) {
      const entry = candidateOf(evaluated, input.candidate_index);
      const detail = {
        candidateName: nameOf(entry),
        candidateIndex: entry.index,
        summary: typeof entry.candidate.summary === "string" ? entry.candidate.summary : "",
        ...costFigures(entry),
      };
      ctx.progress({
        kind: "candidate_detail",
        detailId: `detail-${ctx.toolUseId}`,
        detail,
        candidateIndex: entry.index,
      });
      return Promise.resolve({ content: `The detail of ${detail.candidateName} is shown to the user.` });
    },
  };
}
